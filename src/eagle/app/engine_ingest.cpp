// Engine::ingest: every input format through one streamed, all-or-nothing write.
//
// The input is read, chunked, stamped, embedded and staged one slice at a time
// (ingest.commit_rows rows of whole documents), so memory holds one slice plus the
// collections themselves, whatever the input's size; the registry records wait in an
// unnamed temporary file. The slices are parts of one store transaction, committed
// once at the end: an ingest that fails or is killed part-way leaves the store as it
// was (store::TxnId).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <unordered_map>
#include <unordered_set>

#include <spdlog/spdlog.h>

#include "eagle/app/engine.h"
#include "eagle/biomed/ingest/chunker.h"
#include "eagle/biomed/ingest/compound_cards.h"
#include "eagle/biomed/ingest/doc_profile.h"
#include "eagle/biomed/ingest/spl.h"
#include "eagle/core/error.h"
#include "eagle/core/read_ahead.h"
#include "eagle/core/utf8.h"
#include "eagle/encode/chem/chem.h"
#include "eagle/encode/chem/chem_encoder.h"
#include "eagle/ingest/article/article_chunker.h"
#include "eagle/ingest/corpus_reader.h"
#include "eagle/ingest/formats.h"
#include "eagle/ingest/tiles/image_store.h"
#include "eagle/ingest/tiles/tiles.h"

namespace eagle::app {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The formats whose figures name image files beside the document (JATS xlink:href,
// HTML img src, Markdown ![](...)): those files become the documents' figure tiles,
// and the same test keeps them from being ingested as image documents too.
bool figures_from_files(ingest::FileKind kind) {
  return kind == ingest::FileKind::jats || kind == ingest::FileKind::html || kind == ingest::FileKind::markdown;
}

// Scalar metadata of a source record that the chunk schema has a field for, with
// the field's type; the rest stays in the source (never an error).
void copy_known_fields(const json& meta, const CollectionSchema& schema, json& row) {
  if (!meta.is_object()) return;
  for (const auto& f : schema.fields) {
    auto it = meta.find(f.name);
    if (it == meta.end() || it->is_null() || row.contains(f.name)) continue;
    const bool ok = (f.type == FieldType::string && it->is_string()) ||
                    (f.type == FieldType::int64 && it->is_number_integer()) ||
                    (f.type == FieldType::float64 && it->is_number()) ||
                    (f.type == FieldType::boolean && it->is_boolean()) ||
                    (f.type == FieldType::string_list && it->is_array() &&
                     std::all_of(it->begin(), it->end(), [](const json& e) { return e.is_string(); })) ||
                    f.type == FieldType::json;
    if (ok) row[f.name] = *it;
  }
}

// An unchanged file's report names at most this many of its documents (a PubMed file
// may hold thousands).
constexpr size_t kUnchangedIdsShown = 5;

// The document profile (TDR, docs/glossary.md) reads this much of a structured
// document's text to decide whether it is biomedical.
constexpr size_t kProfileSampleBytes = 20000;

// Documents written to the registry in one database transaction at the end of an
// ingest (DocumentRegistry::WriteBatch).
constexpr size_t kRegistryBatch = 1024;

// A slice is staged once its image tiles hold this many encoded bytes, whatever its
// row count (a folder of long PDFs would otherwise hold every page image at once).
constexpr size_t kSliceImageBytes = 64u << 20;

bool has_ext(const fs::path& p, const char* ext) { return p.extension() == ext; }

// auto: a .csv makes the ingest a compound table; anything else is read file by
// file, each by its own kind (ingest/formats.h): SPL labels, JATS, PubMed, PDF and
// HTML documents, and text corpora (BEIR, JSONL, Markdown, text).
std::string detect_format(const std::vector<std::string>& inputs, const std::string& format) {
  if (format != "auto") return format;
  for (const auto& in : inputs)
    if (has_ext(fs::path(in), ".csv")) return "compounds";
  return format;
}

std::string read_file_bytes(const fs::path& file) {
  std::FILE* f = std::fopen(file.c_str(), "rb");
  if (!f) fail(ErrorCode::not_found, "cannot read " + file.string() + ": " + std::strerror(errno));
  std::string bytes;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.append(buf, n);
  const bool bad = std::ferror(f);
  std::fclose(f);
  if (bad) fail(ErrorCode::unavailable, "cannot read " + file.string());
  return bytes;
}

void add_collection(registry::DocumentRecord& r, const std::string& collection) {
  if (std::find(r.collections_used.begin(), r.collections_used.end(), collection) == r.collections_used.end())
    r.collections_used.push_back(collection);
}

uint64_t file_bytes(const fs::path& p) {
  std::error_code ec;
  const auto n = fs::file_size(p, ec);
  return ec ? 0 : n;
}

// The registry records of an ingest until its commit, in an unnamed temporary file:
// a million documents cost disk, not memory, and a killed ingest leaves nothing behind.
class DocumentSpill {
 public:
  DocumentSpill() : file_(std::tmpfile()) {
    if (!file_)
      fail(ErrorCode::unavailable,
           std::string("cannot create a temporary file for the ingest's document list: ") + std::strerror(errno));
  }
  ~DocumentSpill() { std::fclose(file_); }
  DocumentSpill(const DocumentSpill&) = delete;
  DocumentSpill& operator=(const DocumentSpill&) = delete;

  // `brands`: the brand / generic pairs a label states (null for other documents).
  // `source_sha256`: the SHA-256 of the file the document was read from ("" when none).
  void write(const registry::DocumentRecord& d, const std::vector<registry::BrandName>* brands = nullptr,
             const std::vector<std::string>* tags = nullptr, const std::string& source_sha256 = "") {
    json j = {{"document_id", d.document_id}, {"name", d.name},
              {"file_name", d.file_name},     {"document_name", d.document_name},
              {"kb_name", d.kb_name},         {"plugin_namespace", d.plugin_namespace},
              {"source_type", d.source_type}, {"source_uri", d.source_uri},
              {"collections_used", d.collections_used}};
    if (d.year) j["year"] = *d.year;
    if (brands) {
      j["brands"] = json::array();
      for (const auto& b : *brands) j["brands"].push_back({b.brand, b.generic});
    }
    if (tags) j["tags"] = *tags;
    if (!source_sha256.empty()) j["sha256"] = source_sha256;
    const std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    if (std::fwrite(line.data(), 1, line.size(), file_) != line.size())
      fail(ErrorCode::unavailable, std::string("cannot write the ingest's temporary document list: ") +
                                       std::strerror(errno));
    ++count_;
  }
  size_t count() const { return count_; }

  // Calls fn(record, brands, tags, sha256) for each record written, in order (brands /
  // tags null when the record was written without; sha256 "" when none). The list is
  // read and parsed by a second thread a batch ahead, so the caller's registry writes
  // (the end of a bulk ingest, on one core) overlap the parsing.
  template <typename F>
  void for_each(F&& fn) {
    if (std::fflush(file_) != 0 || std::fseek(file_, 0, SEEK_SET) != 0)
      fail(ErrorCode::unavailable, std::string("cannot read the ingest's temporary document list: ") +
                                       std::strerror(errno));
    constexpr size_t kBatch = 1024;
    read_ahead<std::vector<Spilled>>(
        /*depth=*/2,
        [&](auto&& push) {
          struct LineBuffer {
            char* data = nullptr;
            size_t cap = 0;
            ~LineBuffer() { std::free(data); }
          } line;
          std::vector<Spilled> batch;
          while (::getline(&line.data, &line.cap, file_) > 0) {
            batch.push_back(parse(line.data));
            if (batch.size() == kBatch && !push(std::exchange(batch, {}))) return;
          }
          if (std::ferror(file_)) fail(ErrorCode::unavailable, "cannot read the ingest's temporary document list");
          if (!batch.empty()) push(std::move(batch));
        },
        [&](std::vector<Spilled>& batch) {
          for (auto& e : batch)
            fn(e.d, e.brands ? &*e.brands : nullptr, e.tags ? &*e.tags : nullptr, std::as_const(e.sha256));
        });
  }

 private:
  struct Spilled {
    registry::DocumentRecord d;
    std::optional<std::vector<registry::BrandName>> brands;
    std::optional<std::vector<std::string>> tags;
    std::string sha256;
  };
  static Spilled parse(const char* line) {
    const json j = json::parse(line);
    Spilled e;
    auto& d = e.d;
    d.document_id = j.at("document_id").get<std::string>();
    d.name = j.at("name").get<std::string>();
    d.file_name = j.at("file_name").get<std::string>();
    d.document_name = j.at("document_name").get<std::string>();
    d.kb_name = j.at("kb_name").get<std::string>();
    d.plugin_namespace = j.at("plugin_namespace").get<std::string>();
    d.source_type = j.at("source_type").get<std::string>();
    d.source_uri = j.at("source_uri").get<std::string>();
    d.collections_used = j.at("collections_used").get<std::vector<std::string>>();
    if (j.contains("year")) d.year = j["year"].get<int64_t>();
    if (j.contains("brands")) {
      e.brands.emplace();
      for (const auto& b : j["brands"]) e.brands->push_back({b.at(0).get<std::string>(), b.at(1).get<std::string>()});
    }
    if (j.contains("tags")) e.tags = j["tags"].get<std::vector<std::string>>();
    e.sha256 = j.value("sha256", std::string());
    return e;
  }

  std::FILE* file_;
  size_t count_ = 0;
};

// What one slice of the input holds before it is embedded and staged.
struct Slice {
  std::vector<json> rows;            // collection rows, without the vector
  std::vector<std::string> embed;    // what the encoder sees for each row (text or SMILES)
  std::vector<size_t> document_of;   // row -> index in `documents`
  std::vector<registry::DocumentRecord> documents;
  std::unordered_set<std::string> ids;  // text record ids read into this slice
  // A drug label's brand / generic pairs, by document id (written to the registry).
  std::unordered_map<std::string, std::vector<registry::BrandName>> brands;
  // A source record's tags, by document id (the registry's keywords).
  std::unordered_map<std::string, std::vector<std::string>> tags;
  // The SHA-256 of the file each structured document came from, by document id.
  std::unordered_map<std::string, std::string> source_sha256;
  // TDR: the profile of the input or document each row came from; unset: decided per row.
  std::vector<std::optional<biomed::DocumentProfile>> profile;
  // Rows of a drug label: they go to the biomedical text slot whatever the profile (TDR) says.
  std::vector<bool> label_row;
  // Image tiles (rows of the visual collection): the encoded image and its extension;
  // empty for a text row.
  std::vector<std::string> image, image_ext;
  size_t image_bytes = 0;

  void add(json row, std::string embed_text, std::optional<biomed::DocumentProfile> input_profile = std::nullopt,
           bool label = false) {
    rows.push_back(std::move(row));
    embed.push_back(std::move(embed_text));
    document_of.push_back(documents.size() - 1);  // the document added last
    profile.push_back(input_profile);
    label_row.push_back(label);
    image.emplace_back();
    image_ext.emplace_back();
  }
  // An image tile of the document added last: its row, its image to embed and keep.
  void add_tile(json row, ingest::ImageTile&& tile) {
    add(std::move(row), std::string());
    image_bytes += tile.encoded.size();
    image.back() = std::move(tile.encoded);
    image_ext.back() = std::move(tile.extension);
  }
  bool is_tile(size_t i) const { return !image[i].empty(); }
};

// Tenancy: a scoped ingest into knowledge base K keeps its documents as "K:<id>", so
// equal ids of two tenants never meet, and an id another tenant holds answers exactly
// as an absent one: both are ingested, under the tenant's own name (a refusal would
// tell that the id exists). An id already "K:..." stays; a document K itself holds
// under the plain id (ingested before this rule, or by an unscoped token into K)
// keeps it, so a re-ingest replaces it as before.
std::string kb_qualified(const std::string& kb, const std::string& id) {
  const std::string prefix = kb + ":";
  return id.starts_with(prefix) ? id : prefix + id;
}

// Renames a slice's documents and their rows (ids, document ids, the chunk a tile
// came from, connect_to targets) for a scoped ingest into `kb`; `keep_plain` says a
// document keeps its id.
void qualify_slice(Slice& s, const std::string& kb, const std::function<bool(const std::string&)>& keep_plain) {
  std::unordered_map<std::string, std::string> document_id, row_id;
  std::vector<bool> renamed(s.documents.size(), false);
  for (size_t j = 0; j < s.documents.size(); ++j) {
    auto& d = s.documents[j];
    if (keep_plain(d.document_id)) continue;
    const std::string qualified = kb_qualified(kb, d.document_id);
    if (qualified == d.document_id) continue;
    document_id.emplace(d.document_id, qualified);
    d.document_id = qualified;
    renamed[j] = true;
  }
  if (document_id.empty()) return;
  for (size_t i = 0; i < s.rows.size(); ++i) {
    if (!renamed[s.document_of[i]]) continue;
    const auto it = s.rows[i].find("id");
    if (it == s.rows[i].end() || !it->is_string()) continue;
    const std::string id = it->get<std::string>();
    row_id.emplace(id, kb_qualified(kb, id));
  }
  auto rename = [](const std::unordered_map<std::string, std::string>& names, json& field) {
    if (!field.is_string()) return;
    if (auto it = names.find(field.get<std::string>()); it != names.end()) field = it->second;
  };
  for (auto& row : s.rows) {
    if (row.contains("id")) rename(row_id, row["id"]);
    if (row.contains("document_id")) rename(document_id, row["document_id"]);
    if (row.contains("source_chunk_id")) rename(row_id, row["source_chunk_id"]);
    if (row.contains("connect_to") && row["connect_to"].is_array())
      for (auto& edge : row["connect_to"]) {
        if (edge.is_string()) rename(row_id, edge);
        else if (edge.is_object() && edge.contains("target")) rename(row_id, edge["target"]);
      }
  }
  auto rekey = [&](auto& by_document) {
    std::remove_reference_t<decltype(by_document)> out;
    for (auto& [k, v] : by_document) {
      auto it = document_id.find(k);
      out.emplace(it == document_id.end() ? k : it->second, std::move(v));
    }
    by_document = std::move(out);
  };
  rekey(s.brands);
  rekey(s.tags);
  rekey(s.source_sha256);
}

// A collection the ingest writes, with its encoder, prepared at its first rows.
struct Target {
  std::string collection, encoder;
  store::Collection* coll = nullptr;  // null until its first rows are staged (created then)
  CollectionSchema schema;
  encode::Encoder* enc = nullptr;
  size_t rows = 0;
  bool visual = false;  // the visual collection: rows are image tiles
};

}  // namespace

IngestReport Engine::ingest(const std::vector<std::string>& inputs, const IngestOptions& opts,
                            const ProgressFn& progress) {
  require_writer("ingest");
  // Ingests run one at a time (what exists and the recorded encoders stay as read
  // here). Deletes and tag changes interleave: each slice's staging takes the writer
  // lock, so a DELETE waits for one slice, not for the whole ingest.
  std::lock_guard ingesting(ingest_mu_);
  const uint64_t deletes_at_start = deletes_.load();
  IngestReport rep;
  const std::string format = detect_format(inputs, opts.format);
  const auto& bo = cfg_.biomed.options;
  const bool compounds = format == "compounds";
  // Plain text goes to the core text collection with the core pipeline's encoder
  // (the one its default route queries with).
  const biomed::CollectionEncoder core{bo.core_text.collection, cfg_.pipeline.text_encoder};
  const auto& slot = compounds ? bo.chemical : format == "spl" ? bo.text_biomed : core;
  const std::string default_collection = opts.collection.empty() ? slot.collection : opts.collection;
  rep.collection = default_collection;
  if (!valid_collection_name(default_collection))
    fail(ErrorCode::invalid_argument, "invalid collection name '" + default_collection + "'");
  // A scoped caller (a token limited to KBs) may write only its KBs.
  if (!opts.scope.kb_names.empty() && !opts.scope.allows(opts.kb_name))
    fail(ErrorCode::permission_denied, "this token may not write knowledge base '" + opts.kb_name + "'");
  // TDR (doc_profile.py): with the biomed namespace and no explicit collection,
  // biomedical text goes to the biomedical collection and its encoder, general text
  // (corporate memos, licences) to the core collection, instead of through PubMedBERT.
  const bool tdr = !compounds && format != "spl" && opts.plugin_namespace == "biomed" && opts.collection.empty() &&
                   opts.encoder.empty() && bo.document_profile_routing;
  const size_t commit_rows = std::max<size_t>(1, cfg_.ingest_commit_rows);

  // Each target's collection and encoder (the recorded one wins; a different one is
  // refused), checked at its first rows, before anything of them is written.
  std::vector<Target> targets;
  auto target_index = [&](const std::string& collection, const std::string& fallback, bool visual = false) -> size_t {
    for (size_t i = 0; i < targets.size(); ++i)
      if (targets[i].collection == collection) {
        if (targets[i].visual != visual)
          fail(ErrorCode::invalid_argument, "collection '" + collection + "' cannot hold both text and image tiles");
        return i;
      }
    Target t;
    t.collection = collection;
    t.visual = visual;
    // An explicit --encoder (for text); else the recorded one, else the slot's.
    t.encoder = visual ? std::string() : opts.encoder;
    if (catalog_->exists(collection)) {
      const auto& recorded = catalog_->get(collection).schema().vector.encoder;
      if (t.encoder.empty()) t.encoder = recorded.empty() ? fallback : recorded;
      if (!recorded.empty() && recorded != t.encoder)
        fail(ErrorCode::invalid_argument, "collection '" + collection + "' holds '" + recorded +
                                              "' vectors; cannot add '" + t.encoder + "' vectors");
    } else if (t.encoder.empty()) {
      t.encoder = fallback;
    }
    t.enc = &encoders_.encoder(t.encoder);
    if (catalog_->exists(collection))
      check_encoder_identity(catalog_->get(collection).schema(), *t.enc);
    const auto want = visual      ? encode::Modality::image
                      : compounds ? encode::Modality::molecule
                                  : encode::Modality::text;
    if (t.enc->info().modality != want)
      fail(ErrorCode::invalid_argument, "encoder '" + t.encoder + "' does not embed " +
                                            (visual ? "images" : compounds ? "molecules" : "text") + " (collection '" +
                                            collection + "')");
    if (catalog_->exists(collection)) {
      t.coll = &catalog_->get(collection);
      t.schema = t.coll->schema();
      if (visual && !t.schema.field_index("image"))
        fail(ErrorCode::invalid_argument, "collection '" + collection + "' is not a visual collection (no image field)");
    } else if (visual) {
      // seed retrieval.txt §6.2: IP, HNSW M=16, efConstruction=256, ef=64, its own settings.
      t.schema = visual_schema(collection, t.enc->info().dim, t.enc->info().metric);
      t.schema.vector.encoder = t.encoder;
      t.schema.vector.encoder_identity = t.enc->info().identity;
      t.schema.vector.hnsw = cfg_.visual.hnsw;
      t.schema.vector.index = cfg_.visual.index_type == "flat" ? VectorIndexKind::flat : VectorIndexKind::hnsw;
      t.schema.text_length_norm = cfg_.visual.bm25_b;
    } else {
      t.schema = compounds ? encode::compound_schema(collection)
                           : chunk_schema(collection, t.enc->info().dim, t.enc->info().metric);
      t.schema.vector.encoder = t.encoder;
      t.schema.vector.encoder_identity = t.enc->info().identity;
      t.schema.vector.hnsw = cfg_.hnsw;
    }
    targets.push_back(std::move(t));
    return targets.size() - 1;
  };

  const store::TxnId txn = store::new_txn_id();
  std::vector<store::Collection*> written;
  auto participant = [&](store::Collection* c) {
    if (std::find(written.begin(), written.end(), c) == written.end()) written.push_back(c);
  };
  std::vector<std::string> created;  // collections this ingest made (dropped again if it fails)
  DocumentSpill spill;
  size_t rows_done = 0;
  uint64_t total_bytes = 0, bytes_read = 0;
  auto report_progress = [&]() {
    if (!progress) return;
    // The total is estimated from the bytes read so far (exact once the input is read).
    const size_t estimate =
        bytes_read && total_bytes > bytes_read
            ? static_cast<size_t>(static_cast<double>(rows_done) * static_cast<double>(total_bytes) /
                                  static_cast<double>(bytes_read))
            : rows_done;
    progress(rows_done, std::max(estimate, rows_done));
  };

  // Knowledge base names of scoped tokens: "K:" starts only K's documents' ids.
  std::set<std::string> token_kbs;
  for (const auto& t : cfg_.auth_tokens)
    if (t.contains("kb_names"))
      for (const auto& k : t["kb_names"]) token_kbs.insert(k.get<std::string>());
  const bool scoped = !opts.scope.kb_names.empty();

  // Chunk stamps, routing, embedding and staging of one slice.
  auto stage_slice = [&](Slice& s) {
    if (s.rows.empty()) return;
    if (scoped) {
      qualify_slice(s, opts.kb_name, [&](const std::string& id) {
        auto old = registry().get(id);
        return old && old->kb_name == opts.kb_name;
      });
    } else {
      for (const auto& d : s.documents) {
        const auto colon = d.document_id.find(':');
        if (colon == std::string::npos) continue;
        const std::string prefix = d.document_id.substr(0, colon);
        if (prefix != opts.kb_name && token_kbs.count(prefix))
          fail(ErrorCode::invalid_argument, "document id '" + d.document_id + "': ids starting with '" + prefix +
                                                ":' are kept for knowledge base '" + prefix + "' (its scoped tokens' documents)");
      }
    }
    // Plugin stamps at ingest (CHUNK, TRANSFORM): biomed adds primary_drugs and
    // biomed_section to chunks that lack them.
    if (opts.plugin_namespace != "core") {
      ensure_plugin(opts.plugin_namespace);
      if (bus_.has_subscribers(search::HookPoint::CHUNK, opts.plugin_namespace)) {
        json batch = json::array();
        for (auto& r : s.rows) batch.push_back(std::move(r));
        search::HookContext ctx;
        ctx.plugin_namespace = opts.plugin_namespace;
        batch = bus_.transform<search::HookPoint::CHUNK>(ctx, std::move(batch));
        if (!batch.is_array() || batch.size() != s.rows.size())
          fail(ErrorCode::internal, "a CHUNK subscriber changed the number of chunks");
        for (size_t i = 0; i < s.rows.size(); ++i) s.rows[i] = std::move(batch[i]);
      }
    }
    search::HookContext hctx;
    hctx.plugin_namespace = opts.plugin_namespace;
    const std::string& ns = opts.plugin_namespace;
    // CLASSIFY_CHUNK (ALL): each subscriber returns fields for the chunk; they fill its
    // gaps and never override a field the source or CHUNK set.
    if (bus_.has_subscribers(search::HookPoint::CLASSIFY_CHUNK, ns))
      for (auto& r : s.rows)
        for (auto& fields : bus_.all<search::HookPoint::CLASSIFY_CHUNK>(hctx, r)) {
          if (!fields.is_object())
            fail(ErrorCode::internal, "a CLASSIFY_CHUNK subscriber returned " + fields.dump() + ", not an object");
          for (auto& [k, v] : fields.items())
            if (!r.contains(k) || r[k].is_null()) r[k] = std::move(v);
        }
    // INGEST_ROUTE_SELECTORS (FIRST): a subscriber may send a chunk to a collection
    // ({"collection": name, "encoder": label (optional)}); the others are routed below.
    std::vector<std::pair<size_t, std::vector<size_t>>> routes;  // target, rows
    std::vector<bool> selected(s.rows.size(), false);
    // Image tiles go to the visual collection with the visual encoder (eagle_visual, the
    // core visual collection of the G4 default route), whatever --collection names for the text.
    // CLASSIFY_VISUAL (FIRST) may send a tile elsewhere (biomed: a radiology or
    // pathology figure to its medical slot). A medical slot without its model never
    // falls back to the general visual encoder (seed, biomed-retrieval.txt
    // "Hard rule"): the tile is left out and the report says why.
    {
      std::vector<size_t> tiles;
      std::map<size_t, std::vector<size_t>> classified;
      const bool classify = bus_.has_subscribers(search::HookPoint::CLASSIFY_VISUAL, ns);
      for (size_t i = 0; i < s.rows.size(); ++i) {
        if (!s.is_tile(i)) continue;
        selected[i] = true;
        std::optional<json> sel;
        if (classify) sel = bus_.first<search::HookPoint::CLASSIFY_VISUAL>(hctx, s.rows[i]);
        if (!sel) {
          tiles.push_back(i);
          continue;
        }
        if (!sel->is_object() || !sel->contains("collection") || !(*sel)["collection"].is_string() ||
            !sel->contains("encoder") || !(*sel)["encoder"].is_string())
          fail(ErrorCode::internal, "a CLASSIFY_VISUAL subscriber returned " + sel->dump() +
                                        "; expected {\"collection\": name, \"encoder\": label}");
        const std::string label = (*sel)["encoder"].get<std::string>();
        if (!encoders_.has_encoder(label)) {
          rep.skipped.push_back(s.rows[i].value("id", std::string()) + ": a " + sel->value("modality", std::string("medical")) +
                                " image needs encoder '" + label + "', which is not configured; it is not embedded by the "
                                "general visual encoder instead (set encoders." + label + ")");
          continue;
        }
        classified[target_index((*sel)["collection"].get<std::string>(), label, true)].push_back(i);
      }
      if (!tiles.empty()) routes.emplace_back(target_index(bo.visual.collection, cfg_.visual.encoder, true), std::move(tiles));
      for (auto& [ti, idx] : classified) routes.emplace_back(ti, std::move(idx));
    }
    if (bus_.has_subscribers(search::HookPoint::INGEST_ROUTE_SELECTORS, ns)) {
      std::map<size_t, std::vector<size_t>> by_target;
      for (size_t i = 0; i < s.rows.size(); ++i) {
        if (selected[i]) continue;
        auto sel = bus_.first<search::HookPoint::INGEST_ROUTE_SELECTORS>(hctx, s.rows[i]);
        if (!sel) continue;
        if (!sel->is_object() || !sel->contains("collection") || !(*sel)["collection"].is_string() ||
            (*sel)["collection"].get<std::string>().empty() ||
            (sel->contains("encoder") && !(*sel)["encoder"].is_string()))
          fail(ErrorCode::internal, "an INGEST_ROUTE_SELECTORS subscriber returned " + sel->dump() +
                                        "; expected {\"collection\": name, \"encoder\": label (optional)}");
        const std::string collection = (*sel)["collection"].get<std::string>();
        const std::string encoder = sel->value("encoder", std::string());
        by_target[target_index(collection, encoder.empty() ? default_encoder(collection) : encoder)].push_back(i);
        selected[i] = true;
      }
      for (auto& [ti, idx] : by_target) routes.emplace_back(ti, std::move(idx));
    }
    // A drug label's rows go to the biomedical text slot (unless --collection names one).
    if (opts.collection.empty()) {
      std::vector<size_t> labels;
      for (size_t i = 0; i < s.rows.size(); ++i)
        if (!selected[i] && s.label_row[i]) {
          labels.push_back(i);
          selected[i] = true;
        }
      if (!labels.empty())
        routes.emplace_back(target_index(bo.text_biomed.collection, bo.text_biomed.encoder), std::move(labels));
    }
    // Each other row's target collection.
    if (tdr) {
      const auto& kb = knowledge();
      biomed::ProfileOptions po;
      po.min_density = bo.profile_min_density;
      std::vector<size_t> bio, general;
      for (size_t i = 0; i < s.rows.size(); ++i) {
        if (selected[i]) continue;
        auto profile = s.profile[i];
        if (!profile)
          profile = biomed::classify_document_profile(
                        s.embed[i], [&](std::string_view t) { return kb.match_entities(t).size(); }, po)
                        .profile;
        (*profile == biomed::DocumentProfile::biomedical ? bio : general).push_back(i);
      }
      if (!bio.empty()) routes.emplace_back(target_index(bo.text_biomed.collection, bo.text_biomed.encoder), bio);
      if (!general.empty()) routes.emplace_back(target_index(core.collection, core.encoder), general);
    } else {
      std::vector<size_t> all;
      for (size_t i = 0; i < s.rows.size(); ++i)
        if (!selected[i]) all.push_back(i);
      const std::string fallback = opts.collection.empty() ? slot.encoder : default_encoder(default_collection);
      if (!all.empty()) routes.emplace_back(target_index(default_collection, fallback), std::move(all));
    }
    // A scoped caller may not replace a document that lives in another KB (its ids are
    // qualified above, so this holds unless an id of another KB was given K's prefix).
    if (!opts.scope.kb_names.empty())
      for (const auto& d : s.documents)
        if (auto old = registry().get(d.document_id); old && !opts.scope.allows(old->kb_name))
          fail(ErrorCode::permission_denied,
               "document '" + d.document_id + "' belongs to a knowledge base this token may not write");

    for (auto& [ti, idx] : routes) {
      Target& t = targets[ti];
      // Embed; only the target schema's fields are kept (a source may carry more).
      std::vector<store::Record> batch;
      batch.reserve(idx.size());
      std::set<size_t> dropped;  // image tiles the encoder refused (--skip-bad)
      const size_t per_call = std::max<size_t>(1, std::min<size_t>(t.enc->info().max_batch, 256));
      for (size_t start = 0; start < idx.size(); start += per_call) {
        const size_t end = std::min(idx.size(), start + per_call);
        std::vector<std::string> texts;
        if (!t.visual)
          for (size_t i = start; i < end; ++i) texts.push_back(std::move(s.embed[idx[i]]));
        std::optional<std::vector<encode::Embedding>> given;
        // A hook's vectors: one per input, each of the collection's dimension.
        auto check_given = [&](const char* hook, size_t inputs, const char* what) {
          if (given && (given->size() != inputs || std::any_of(given->begin(), given->end(), [&](const auto& v) {
                          return v.size() != t.schema.vector.dim;
                        })))
            fail(ErrorCode::internal, std::string("an ") + hook + " subscriber returned " + std::to_string(given->size()) +
                                          " vectors for " + std::to_string(inputs) + " " + what + ", or not of dimension " +
                                          std::to_string(t.schema.vector.dim) + " (" + t.collection + ")");
        };
        if (t.visual) {
          // Image tiles: the encoder sees the kept bytes, which the image store keeps
          // (durable before the commit that names them) and the row names.
          std::vector<std::string_view> images;
          for (size_t i = start; i < end; ++i) images.push_back(s.image[idx[i]]);
          // EMBED_VISUAL (FIRST): a subscriber may embed the images itself.
          if (bus_.has_subscribers(search::HookPoint::EMBED_VISUAL, ns))
            given = bus_.first<search::HookPoint::EMBED_VISUAL>(hctx, images, t.encoder);
          check_given("EMBED_VISUAL", images.size(), "images");
          if (!given) {
            try {
              given = t.enc->encode_images(images);
            } catch (const Error&) {
              if (!opts.skip_bad) throw;
              // One by one: an image the encoder refuses (its own size limit, a remote
              // 4xx) is reported and left out; the others are kept.
              given.emplace();
              for (size_t k = 0; k < images.size(); ++k) {
                try {
                  given->push_back(t.enc->encode_images({images[k]}).at(0));
                } catch (const Error& e) {
                  given->emplace_back();
                  dropped.insert(idx[start + k]);
                  rep.skipped.push_back(s.rows[idx[start + k]].value("id", std::string()) + ": " + e.what());
                }
              }
            }
          }
          for (size_t i = start; i < end; ++i) {
            s.rows[idx[i]]["image"] = image_store().put(s.image[idx[i]], s.image_ext[idx[i]]);
            std::string().swap(s.image[idx[i]]);
          }
        } else if (bus_.has_subscribers(search::HookPoint::EMBED_TEXT, ns)) {
          // EMBED_TEXT (FIRST): a subscriber may embed the texts itself; else the encoder.
          given = bus_.first<search::HookPoint::EMBED_TEXT>(hctx, texts, t.encoder);
          check_given("EMBED_TEXT", texts.size(), "texts");
        }
        auto vecs = given ? std::move(*given) : t.enc->encode(texts, encode::EncodeMode::document);
        json rows = json::array();
        for (size_t i = start; i < end; ++i) {
          if (dropped.count(idx[i])) continue;
          json& src = s.rows[idx[i]];
          json row = json::object();
          for (auto& [k, v] : src.items())
            if (k == "id" || k == "text" || (t.schema.field_index(k) && !v.is_null())) row[k] = std::move(v);
          row["vector"] = std::move(vecs[i - start]);
          rows.push_back(std::move(row));
        }
        // UPSERT_VECTORS (TRANSFORM): the rows, vectors included, just before the write.
        if (bus_.has_subscribers(search::HookPoint::UPSERT_VECTORS, ns)) {
          const size_t n = rows.size();
          rows = bus_.transform<search::HookPoint::UPSERT_VECTORS>(hctx, std::move(rows));
          if (!rows.is_array() || rows.size() != n)
            fail(ErrorCode::internal, "an UPSERT_VECTORS subscriber changed the number of rows");
        }
        // Validated here like any row: a subscriber's bad value is refused before the log.
        for (const auto& row : rows) batch.push_back(store::record_from_json(row, t.schema));
      }
      std::erase_if(idx, [&](size_t i) { return dropped.count(i) > 0; });
      if (idx.empty()) continue;
      for (size_t i : idx) add_collection(s.documents[s.document_of[i]], t.collection);
      t.rows += idx.size();

      const auto doc_field = t.schema.field_index("document_id");
      auto doc_of = [&](const store::Record& r) {
        if (doc_field)
          if (const auto* d = std::get_if<std::string>(&r.values[*doc_field])) return *d;
        return r.id;
      };
      std::vector<std::string> docs;
      std::set<std::string> new_ids, seen_docs;
      for (const auto& r : batch) {
        new_ids.insert(r.id);
        if (seen_docs.insert(doc_of(r)).second) docs.push_back(doc_of(r));
      }
      std::unique_lock writer(write_mu_);
      if (!t.coll) {
        std::unique_lock state(state_mu_);
        t.coll = &catalog_->create(t.schema);
        created.push_back(t.collection);
      }
      participant(t.coll);
      // A document ingested again loses its current chunks everywhere (replaced ids
      // in the target collection are overwritten by the staged rows themselves).
      std::vector<std::pair<store::Collection*, std::vector<std::string>>> stale;
      if (doc_field) {
        for (auto* c : document_collections()) {
          std::vector<std::string> ids;
          for (auto& [id, doc] : c->ids_where_in("document_id", docs))
            if (c != t.coll || !new_ids.count(id)) ids.push_back(id);
          if (!ids.empty()) stale.emplace_back(c, std::move(ids));
        }
      }
      // A scoped caller may overwrite or delete only rows of its own KBs, whatever
      // their document: a row id or a stale chunk of another KB is refused.
      if (!opts.scope.kb_names.empty()) {
        auto check = [&](store::Collection* c, const std::string& id) {
          auto row = c->get(id);
          if (!row) return;
          const auto kb = c->schema().field_index("kb_name");
          const auto* v = kb ? std::get_if<std::string>(&row->values[*kb]) : nullptr;
          if (!opts.scope.allows(v ? *v : std::string()))
            fail(ErrorCode::permission_denied,
                 "row '" + id + "' belongs to a knowledge base this token may not write");
        };
        for (const auto& r : batch) check(t.coll, r.id);
        for (auto& [c, ids] : stale)
          for (const auto& id : ids) check(c, id);
      }
      // Staged rows are hidden, so searches go on while a slice is staged.
      std::vector<std::string> own_stale;
      for (auto& [c, ids] : stale) {
        if (c == t.coll) {
          own_stale = std::move(ids);
        } else {
          participant(c);
          c->stage(txn, ids, {});
        }
      }
      t.coll->stage(txn, own_stale, std::move(batch));
    }
    for (const auto& d : s.documents) {
      auto b = s.brands.find(d.document_id);
      auto t = s.tags.find(d.document_id);
      auto h = s.source_sha256.find(d.document_id);
      spill.write(d, b == s.brands.end() ? nullptr : &b->second, t == s.tags.end() ? nullptr : &t->second,
                  h == s.source_sha256.end() ? std::string() : h->second);
    }
    for (const auto& r : routes) rows_done += r.second.size();  // tiles left out above are not rows
    report_progress();
    s = Slice{};
  };

  // TDR, unit input: the input is biomedical when at least half of its first
  // profile_sample_documents readable documents are (a read that stops early).
  auto profile_of_input = [&](const std::string& input, const ingest::ReadOptions& read) {
    struct SampleFull {};
    ingest::ReadOptions sample = read;
    sample.skip_bad = true;  // the real pass reports bad records
    sample.progress = nullptr;
    const auto& kb = knowledge();
    biomed::ProfileOptions po;
    po.min_density = bo.profile_min_density;
    size_t seen = 0, biomedical = 0;
    std::vector<ingest::BadRecord> ignored;
    try {
      ingest::stream_corpus(input, sample, [&](Document&& d) {
        auto p = biomed::classify_document_profile(
            d.indexed_text(), [&](std::string_view t) { return kb.match_entities(t).size(); }, po);
        biomedical += p.profile == biomed::DocumentProfile::biomedical;
        if (++seen >= bo.profile_sample_documents) throw SampleFull{};
      }, ignored);
    } catch (const SampleFull&) {
    }
    return 2 * biomedical >= seen && seen > 0 ? biomed::DocumentProfile::biomedical : biomed::DocumentProfile::general;
  };

  auto record_for = [&](const std::string& id) {
    registry::DocumentRecord r;
    r.document_id = id;
    r.kb_name = opts.kb_name;
    r.plugin_namespace = opts.plugin_namespace;
    return r;
  };
  // Whether a text record's id was read before in this ingest (in this slice, or
  // staged by an earlier one): duplicate ids would make results ambiguous.
  auto seen_before = [&](const Slice& s, const std::string& id) {
    if (s.ids.count(id)) return true;
    for (const auto& t : targets)
      if (t.coll && (t.coll->staged(txn, id) || (scoped && t.coll->staged(txn, kb_qualified(opts.kb_name, id)))))
        return true;
    return false;
  };

  try {
    Slice slice;
    auto slice_full = [&]() {
      if (slice.rows.size() >= commit_rows || slice.image_bytes >= kSliceImageBytes) stage_slice(slice);
    };
    // The file being read (its SHA-256) and the documents read from it so far.
    std::string current_sha256;
    std::vector<std::string> read_from_file;
    // One drug label (SPL): its sections, summaries and brand names.
    auto ingest_label = [&](const fs::path& file) {
      biomed::SplLabel label;
      try {
        label = biomed::parse_spl_file(file);
      } catch (const Error& e) {
        if (!opts.skip_bad) throw;
        rep.skipped.push_back(e.what());
        return;
      }
      label.file_name = repair_utf8(label.file_name);  // shown, not matched (see ingest_articles)
      label.source_uri = repair_utf8(label.source_uri);
      biomed::ChunkOptions co;
      co.kb_name = opts.kb_name;
      auto chunks = biomed::chunk_label(label, co);
      if (chunks.empty()) {
        rep.skipped.push_back(file.string() + ": no section text (indexing document?)");
        return;
      }
      auto r = record_for(label.document_id);
      // The name carries every drug name of the label so the entity supplement's
      // registry lookup (name ILIKE %term%) finds it by brand or generic name.
      r.name = label.display_title();
      for (const auto& n : label.product_names) r.name += " | " + n;
      for (const auto& n : label.generic_names) r.name += " | " + n;
      // Every label records its pairs (an empty list clears a re-ingested label's).
      auto& brands = slice.brands[label.document_id];
      for (const auto& p : label.product_names)
        for (const auto& g : label.generic_names) brands.push_back({p, g});
      r.file_name = label.file_name;
      r.document_name = label.display_title();
      r.source_type = "label";
      if (label.year() > 0) r.year = label.year();
      r.source_uri = label.source_uri;
      slice.documents.push_back(std::move(r));
      if (!current_sha256.empty()) slice.source_sha256[label.document_id] = current_sha256;
      read_from_file.push_back(label.document_id);
      for (auto& c : chunks) {
        std::string text = c.value("text", std::string());
        slice.add(std::move(c), std::move(text), std::nullopt, /*label=*/true);
      }
      slice_full();
    };
    // Image tiles: a PDF's pages, an image file.
    ingest::TileOptions tile_options;
    tile_options.page_dpi = cfg_.visual.page_dpi;
    tile_options.jpeg_quality = cfg_.visual.jpeg_quality;
    tile_options.max_text_chars = cfg_.visual.tile_text_chars;
    // Stages a tile of `article` with the document's metadata.
    auto add_tile_of = [&](const ingest::Article& article) {
      return [&](ingest::ImageTile&& tile) {
        auto row = ingest::tile_row(tile, opts.kb_name, article.source_type, article.year, article.file_name,
                                    article.title.empty() ? article.id : article.title, article.source_uri);
        slice.add_tile(std::move(row), std::move(tile));
      };
    };
    auto add_tiles_of = [&](const fs::path& file, const ingest::Article& article, const std::vector<json>& rows) {
      std::string bytes;
      try {
        bytes = read_file_bytes(file);
        ingest::pdf_page_tiles(bytes, article, rows, tile_options, add_tile_of(article));
      } catch (const Error& e) {
        // The text is read; the page images are not: reported, the text kept.
        if (!opts.skip_bad) throw;
        rep.skipped.push_back(file.string() + ": page images: " + e.what());
      }
    };
    // The figures of a JATS, HTML or Markdown document whose image files sit beside it.
    auto add_figure_files_of = [&](const fs::path& file, const ingest::Article& article, const std::vector<json>& rows) {
      try {
        ingest::figure_file_tiles(file, article, rows, tile_options, add_tile_of(article));
      } catch (const Error& e) {
        // The text is read; a figure's image is not: reported, the text kept.
        if (!opts.skip_bad) throw;
        rep.skipped.push_back(file.string() + ": figure images: " + e.what());
      }
    };
    auto ingest_image = [&](const fs::path& file, const std::string& document_id) {
      ingest::ImageTile tile;
      try {
        tile = ingest::image_file_tile(file, document_id, tile_options);
      } catch (const Error& e) {
        if (!opts.skip_bad) throw;
        rep.skipped.push_back(e.what());
        return;
      }
      slice_full();
      auto r = record_for(document_id);
      r.file_name = repair_utf8(file.filename().string());
      r.source_uri = repair_utf8(file.string());
      r.name = r.file_name;
      r.document_name = r.file_name;
      r.source_type = "image";
      slice.documents.push_back(std::move(r));
      if (!current_sha256.empty()) slice.source_sha256[document_id] = current_sha256;
      read_from_file.push_back(document_id);
      auto row = ingest::tile_row(tile, opts.kb_name, "image", std::nullopt, slice.documents.back().file_name,
                                  slice.documents.back().file_name, slice.documents.back().source_uri);
      slice.add_tile(std::move(row), std::move(tile));
    };
    // The documents of one JATS, PubMed, PDF or HTML file, chunked by their structure.
    std::unordered_set<std::string> documents_seen;  // ids of the structured documents read so far
    ingest::ArticleChunkOptions article_options;
    article_options.kb_name = opts.kb_name;
    article_options.max_chars = cfg_.ingest_chunk_chars;
    article_options.summary_chars = cfg_.ingest_summary_chars;
    auto ingest_articles = [&](const fs::path& file, ingest::FileKind kind, const std::string& document_id) {
      std::vector<ingest::Article> articles;
      try {
        articles = ingest::read_documents(file, kind, document_id, opts.repair_utf8);
      } catch (const Error& e) {
        if (!opts.skip_bad) throw;
        rep.skipped.push_back(e.what());
        return;
      }
      for (auto& article : articles) {
        // Names from the file system are shown, not matched: a bad byte in them (a
        // Latin-1 folder name) becomes U+FFFD rather than failing the registry write.
        article.file_name = repair_utf8(article.file_name);
        article.source_uri = repair_utf8(article.source_uri);
        if (documents_seen.count(article.id)) {
          if (!opts.skip_bad)
            fail(ErrorCode::conflict, "duplicate document id '" + article.id + "' in " + file.string());
          rep.skipped.push_back(file.string() + ": duplicate document id '" + article.id + "'");
          continue;
        }
        auto rows = ingest::chunk_article(article, article_options);
        if (rows.empty()) {
          rep.skipped.push_back(file.string() + ": " + article.id + " has no text (a scanned PDF?)");
          continue;
        }
        documents_seen.insert(article.id);
        slice_full();  // a document's chunks stay in one slice
        // TDR decides once per document, so a paper's sections stay in one collection
        // (the drill-down and graph expansion stay inside a collection).
        std::optional<biomed::DocumentProfile> profile;
        if (tdr) {
          std::string sample = article.title;
          for (const auto& row : rows) {
            if (sample.size() >= kProfileSampleBytes) break;
            sample += "\n" + row["text"].get<std::string>();
          }
          const auto& kb = knowledge();
          biomed::ProfileOptions po;
          po.min_density = bo.profile_min_density;
          profile = biomed::classify_document_profile(
                        sample, [&](std::string_view t) { return kb.match_entities(t).size(); }, po)
                        .profile;
        }
        auto r = record_for(article.id);
        r.document_name = article.title;
        r.name = article.title.empty() ? article.id : article.title;
        r.file_name = article.file_name;
        r.source_type = article.source_type;
        r.source_uri = article.source_uri;
        if (article.year) r.year = *article.year;
        slice.documents.push_back(std::move(r));
        if (!article.tags.empty()) slice.tags[article.id] = article.tags;
        if (!current_sha256.empty()) slice.source_sha256[article.id] = current_sha256;
        read_from_file.push_back(article.id);
        // A PDF's pages as image tiles of the visual collection, beside its text.
        if (article.format == "pdf" && cfg_.visual.page_images) add_tiles_of(file, article, rows);
        if (figures_from_files(kind) && cfg_.visual.figure_files) add_figure_files_of(file, article, rows);
        for (auto& row : rows) {
          std::string text = row["text"].get<std::string>();
          slice.add(std::move(row), std::move(text), profile);
        }
      }
    };
    static const CollectionSchema kChunkFields = chunk_schema("chunk_fields", 1);
    // A text corpus (BEIR folder, JSONL, .txt files; Markdown only with --format folder)
    // through the corpus reader.
    auto ingest_text = [&](const std::string& input, const std::string& text_format, uint64_t input_size) {
      ingest::ReadOptions ro;
      ro.format = ingest::parse_input_format(text_format);
      ro.skip_bad = opts.skip_bad;
      ro.repair_utf8 = opts.repair_utf8;
      // With --format auto, Markdown is read file by file as structured documents.
      ro.markdown_files = text_format != "auto";
      const uint64_t bytes_before = bytes_read;
      ro.progress = [&](uint64_t, uint64_t bytes, uint64_t) { bytes_read = bytes_before + bytes; };
      const auto input_profile = tdr && bo.document_profile_unit == "input"
                                     ? std::optional(profile_of_input(input, ro))
                                     : std::nullopt;
      std::vector<ingest::BadRecord> skipped;
      ingest::stream_corpus(
          input, ro,
          [&](Document&& d) {
            if (seen_before(slice, d.id)) {
              if (!opts.skip_bad)
                fail(ErrorCode::conflict, "duplicate document id '" + d.id + "' in " + input);
              rep.skipped.push_back(input + ": duplicate document id '" + d.id + "'");
              return;
            }
            slice.ids.insert(d.id);
            // PARSE (TRANSFORM): the parsed document ({id, title, text, metadata}) before
            // it becomes rows; a subscriber may clean its text or add metadata (not its id).
            if (bus_.has_subscribers(search::HookPoint::PARSE, opts.plugin_namespace)) {
              search::HookContext pctx;
              pctx.plugin_namespace = opts.plugin_namespace;
              json doc = {{"id", d.id}, {"title", d.title}, {"text", d.text},
                          {"metadata", json::parse(d.metadata_json, nullptr, false)}};
              doc = bus_.transform<search::HookPoint::PARSE>(pctx, std::move(doc));
              if (!doc.is_object() || doc.value("id", std::string()) != d.id || !doc["title"].is_string() ||
                  !doc["text"].is_string())
                fail(ErrorCode::internal, "a PARSE subscriber returned a document without its id '" + d.id +
                                              "', title and text as strings");
              d.title = doc["title"].get<std::string>();
              d.text = doc["text"].get<std::string>();
              if (doc.contains("metadata") && doc["metadata"].is_object()) d.metadata_json = doc["metadata"].dump();
            }
            auto meta = json::parse(d.metadata_json, nullptr, false);
            if (!meta.is_object()) meta = json::object();
            // One document_id per source document, shared by its chunks: a Markdown
            // file's sections, or JSONL chunks that name their document. A record that
            // names none is its own document.
            const auto doc_it = meta.find("document_id");
            const std::string document_id =
                doc_it != meta.end() && doc_it->is_string() && !doc_it->get<std::string>().empty()
                    ? doc_it->get<std::string>()
                    : d.id;
            json row = {{"id", d.id}, {"text", d.indexed_text()}, {"document_id", document_id}};
            if (!opts.kb_name.empty()) row["kb_name"] = opts.kb_name;
            // The source's chunk fields (typed) go on the row before any plugin stamps, so
            // CHUNK subscribers fill gaps and never override them; `section` feeds the
            // biomed section stamp. The rest of the source's metadata (journal, authors,
            // DOI, nested maps) is kept whole in `metadata`. The write keeps only the
            // target schema's fields.
            if (!d.title.empty()) row["document_name"] = d.title;
            copy_known_fields(meta, kChunkFields, row);
            json rest = json::object();
            for (const auto& [k, v] : meta.items())
              if (!kChunkFields.field_index(k) && k != "tags" && k != "section") rest[k] = v;
            if (!rest.empty()) row["metadata"] = std::move(rest);
            if (meta.contains("section")) row["section"] = meta["section"];
            // A new document starts: the slice may be staged first (a document's chunks
            // are never split across slices, so replacing its stale chunks sees them all).
            const bool same_document =
                !slice.documents.empty() && slice.documents.back().document_id == document_id;
            if (!same_document) {
              slice_full();
              auto rec = record_for(document_id);
              // A record that is its document names it by its title; a chunk of a larger
              // document (a Markdown section) does not: its title is a heading.
              rec.document_name = meta.value("document_name", document_id == d.id ? d.title : std::string());
              rec.name = !rec.document_name.empty() ? rec.document_name
                         : meta.contains("file_name") ? meta.value("file_name", document_id)
                                                      : document_id;
              rec.source_type = meta.value("source_type", std::string());
              if (meta.contains("year") && meta["year"].is_number_integer()) rec.year = meta["year"].get<int64_t>();
              rec.file_name = meta.value("file_name", std::string());
              rec.source_uri = meta.value("source_uri", std::string());
              // The record's own knowledge base, unless the ingest names one.
              if (rec.kb_name.empty() && row.contains("kb_name")) rec.kb_name = row["kb_name"].get<std::string>();
              slice.documents.push_back(std::move(rec));
              // The reader checked them (a list of non-empty strings).
              if (meta.contains("tags")) slice.tags[document_id] = meta["tags"].get<std::vector<std::string>>();
            }
            std::string text = row["text"].get<std::string>();
            slice.add(std::move(row), std::move(text), input_profile);
          },
          skipped);
      for (const auto& bad : skipped)
        rep.skipped.push_back(bad.file + (bad.line ? ":" + std::to_string(bad.line) : std::string()) + ": " +
                              bad.message);
      bytes_read = bytes_before + input_size;
    };

    if (compounds) {
      biomed::CompoundCardOptions co;
      co.kb_name = opts.kb_name;
      for (const auto& in : inputs) total_bytes += file_bytes(in);
      for (const auto& in : inputs) {
        bytes_read += file_bytes(in);
        for (auto& card : biomed::read_compound_cards_file(in, co)) {
          const std::string id = card.row.value("id", std::string());
          if (card.smiles.empty()) {
            rep.skipped.push_back(in + ": " + id + " has no SMILES");
            continue;
          }
          try {
            encode::chem::Molecule::from_smiles(card.smiles);
          } catch (const Error& e) {
            // Compound tables carry structures RDKit refuses; counted and reported, never fatal.
            rep.skipped.push_back(in + ": " + id + " " + card.row.value("document_name", std::string()) + ": " +
                                  e.what());
            continue;
          }
          auto r = record_for(id);
          r.name = card.row.value("document_name", id);
          r.document_name = r.name;
          r.file_name = card.row.value("file_name", std::string());
          r.source_type = "compound";
          slice.documents.push_back(std::move(r));
          card.row["name"] = card.row.value("document_name", id);
          card.row["smiles"] = card.smiles;
          slice.add(std::move(card.row), card.smiles);
          slice_full();
        }
      }
    } else {
      // Every input: a text corpus, a structured file, or a folder of both.
      const ingest::FileKind forced = format == "auto" ? ingest::FileKind::unknown : ingest::file_kind_from_name(format);
      const bool text_only = format == "beir" || format == "jsonl" || format == "folder";
      if (!text_only && format != "auto" && !ingest::is_structured(forced))
        fail(ErrorCode::invalid_argument, "unknown input format '" + format +
                                              "': expected auto, beir, jsonl, folder, spl, jats, pubmed, pdf, html, markdown "
                                              "or compounds");
      struct Work {
        fs::path file;
        ingest::FileKind kind;   // unknown: an .xml of no known vocabulary (reported)
        bool text = false;       // a text input for the corpus reader
        std::string document_id; // structured files: the path below the input folder
        uint64_t bytes;
        bool in_folder = false;  // found in a folder (not named by the caller)
      };
      std::vector<Work> work;
      for (const auto& in : inputs) {
        const fs::path p(in);
        std::error_code ec;
        if (!fs::exists(p, ec)) fail(ErrorCode::not_found, "no such file or folder: " + in);
        const bool dir = fs::is_directory(p, ec);
        if (text_only || (dir && fs::exists(p / "corpus.jsonl", ec))) {
          work.push_back({p, ingest::FileKind::unknown, true, "", ingest::input_bytes(p)});
        } else if (dir) {
          const auto scan = ingest::scan_folder(p, forced);
          for (const auto& link : scan.links_out)
            rep.skipped.push_back(link.string() + ": a link that leads out of the folder; not followed");
          for (const auto& [f, kind] : scan.structured)
            work.push_back({f, kind, false, fs::relative(f, p).generic_string(), file_bytes(f), true});
          // The folder's text and JSONL files (all of it when it holds nothing else).
          if (forced == ingest::FileKind::unknown && (scan.structured.empty() || scan.has_text_files))
            work.push_back({p, ingest::FileKind::unknown, true, "", ingest::input_bytes(p)});
        } else {
          const auto kind = forced != ingest::FileKind::unknown ? forced : ingest::detect_file_kind(p);
          if (ingest::is_structured(kind) || (kind == ingest::FileKind::unknown && has_ext(p, ".xml")))
            work.push_back({p, kind, false, p.filename().string(), file_bytes(p)});
          else
            work.push_back({p, ingest::FileKind::unknown, true, "", ingest::input_bytes(p)});
        }
      }
      for (const auto& w : work) total_bytes += w.bytes;
      // An image file that a JATS, HTML or Markdown document of this ingest shows as a
      // figure is that document's figure tile, not an image document of its own (a PMC
      // package).
      std::set<fs::path> figure_images;
      if (cfg_.visual.figure_files) {
        std::set<fs::path> image_folders;
        for (const auto& w : work)
          if (w.kind == ingest::FileKind::image) image_folders.insert(w.file.parent_path());
        for (const auto& w : work) {
          if (!figures_from_files(w.kind) || !image_folders.count(w.file.parent_path()))
            continue;
          try {
            for (const auto& article : ingest::read_documents(w.file, w.kind, w.document_id, true))
              for (const auto& b : article.blocks)
                if (b.kind == ingest::BlockKind::figure && !b.graphic.empty())
                  if (auto f = ingest::figure_file(w.file, b.graphic); !f.empty()) figure_images.insert(f);
          } catch (const Error&) {
            // The document's own pass reports it.
          }
        }
      }
      std::unordered_map<std::string, std::vector<std::string>> hashes_seen;  // in this ingest
      // Whether a document the registry knows still has rows (a dropped collection
      // leaves records behind; their file is read again).
      auto has_rows = [&](const std::string& id) {
        for (auto* c : document_collections())
          if (!c->ids_where_equals("document_id", id).empty()) return true;
        return false;
      };
      for (const auto& w : work) {
        if (w.text) {
          ingest_text(w.file.string(), format == "auto" ? "auto" : format, w.bytes);
          continue;
        }
        bytes_read += w.bytes;
        // Dedup (Eagle-RAG's): a structured file whose bytes were ingested into this KB
        // and namespace before, and whose documents still have rows, is not read again.
        current_sha256.clear();
        read_from_file.clear();
        if (w.kind != ingest::FileKind::unknown) {
          try {
            current_sha256 = ingest::file_sha256(w.file);
          } catch (const Error& e) {
            if (!opts.skip_bad) throw;
            rep.skipped.push_back(e.what());
            continue;
          }
          if (!opts.reindex) {
            std::vector<std::string> same;
            if (auto it = hashes_seen.find(current_sha256); it != hashes_seen.end()) same = it->second;
            // Every document read from the file before must still have rows (a dropped
            // collection loses them; a deleted document takes the file's hash with it).
            bool whole = true;
            for (const auto& id : registry().find_by_source_hash(current_sha256, opts.kb_name, opts.plugin_namespace)) {
              whole = whole && has_rows(id);
              same.push_back(id);
            }
            if (!whole) same.clear();
            if (!same.empty()) {
              std::string ids;
              for (size_t i = 0; i < same.size() && i < kUnchangedIdsShown; ++i) ids += (i ? ", " : "") + same[i];
              if (same.size() > kUnchangedIdsShown) ids += ", ... (" + std::to_string(same.size()) + " documents)";
              rep.unchanged.push_back(w.file.string() + ": same bytes as document " + ids);
              report_progress();
              continue;
            }
          }
        }
        // The document id comes from the file's path: it must be text, as the corpus
        // reader requires of a .txt file's name.
        std::string document_id = w.document_id;
        if (auto bad = first_invalid_utf8(document_id)) {
          const std::string what = w.file.string() + ": the file name is not valid UTF-8 (byte " +
                                   std::to_string(*bad) + "; give --repair-utf8 to replace the bad bytes with "
                                   "U+FFFD, or --skip-bad)";
          if (opts.repair_utf8) {
            document_id = repair_utf8(document_id);
          } else if (opts.skip_bad) {
            rep.skipped.push_back(what);
            continue;
          } else {
            fail(ErrorCode::invalid_argument, what);
          }
        }
        if (w.kind == ingest::FileKind::unknown) {
          const std::string root = ingest::xml_root_of(w.file);
          const std::string what = w.file.string() + ": not an SPL label, JATS article or PubMed XML (" +
                                   (root.empty() ? std::string("no root element") : "root <" + root + ">") + ")";
          // A folder holds what it holds (barcode lists beside labels): its other XML
          // files are skipped and reported; a file named on its own is an error.
          if (!opts.skip_bad && !w.in_folder) fail(ErrorCode::invalid_argument, what);
          rep.skipped.push_back(what);
        } else if (w.kind == ingest::FileKind::spl) {
          ingest_label(w.file);
        } else if (w.kind == ingest::FileKind::image) {
          if (!figure_images.count(w.file)) ingest_image(w.file, document_id);
        } else {
          ingest_articles(w.file, w.kind, document_id);
        }
        if (!read_from_file.empty()) hashes_seen[current_sha256] = read_from_file;
        report_progress();
      }
    }
    stage_slice(slice);
    if (rows_done == 0) return rep;  // nothing was staged, nothing created

    // The commit point: every staged row appears at once, in every collection. The
    // commit records are durable before searches are held back for the swap.
    std::unique_lock writer(write_mu_);
    catalog_->commit(txn, written, [&](const std::function<bool()>& publish) {
      std::unique_lock state(state_mu_);
      publish();
    });
  } catch (...) {
    for (auto* c : written) c->abort(txn);
    for (const auto& name : created) {
      try {
        std::unique_lock state(state_mu_);
        if (catalog_->get(name).count() == 0) catalog_->drop(name);
      } catch (const std::exception& e) {
        spdlog::warn("could not drop collection '{}' made by a failed ingest: {}", name, e.what());
      }
    }
    throw;
  }
  rep.collection.clear();
  for (const auto& t : targets) {
    if (!t.rows) continue;
    rep.collection += (rep.collection.empty() ? "" : " + ") + t.collection;
    rep.encoder += (rep.encoder.empty() ? "" : " + ") + t.encoder;
    rep.per_collection.push_back({t.collection, t.rows});
    rep.encoders_used.push_back({t.collection, t.encoder});
  }
  // A checkpoint that came due is written with searches running again.
  for (auto* c : written) c->checkpoint_if_due();
  // The registry follows the collection writes. A document deleted while this ingest
  // ran (a DELETE between its commit and here) gets no registry row back.
  const bool deleted_meanwhile = deletes_.load() != deletes_at_start;
  bool brands_written = false;
  auto write_registry_row = [&](registry::DocumentRecord& d, const std::vector<registry::BrandName>* brands,
                                const std::vector<std::string>* tags, const std::string& source_sha256) {
    if (deleted_meanwhile) {
      bool has_rows = false;
      for (auto* c : document_collections())
        has_rows = has_rows || !c->ids_where_equals("document_id", d.document_id).empty();
      if (!has_rows) return;
    }
    if (auto old = registry().get(d.document_id))
      for (const auto& c : old->collections_used)
        if (catalog_->exists(c) && !catalog_->get(c).ids_where_equals("document_id", d.document_id).empty())
          add_collection(d, c);
    registry().upsert(d);
    ++writes_;
    if (!source_sha256.empty()) registry().set_source_hash(d.document_id, source_sha256);
    if (tags) registry().set_keywords(d.document_id, d.plugin_namespace, *tags);
    if (brands) {
      registry().set_brands(d.document_id, *brands);
      brands_written = true;
    }
  };
  // Documents go to the registry kRegistryBatch at a time, each group one database
  // commit (one commit a document cost a third of a large ingest's time); the writer
  // lock is let go between groups. An error unwinds through the batch, which keeps
  // the rows written before it (WriteBatch).
  std::unique_lock<std::mutex> registry_writer;
  std::optional<registry::DocumentRegistry::WriteBatch> registry_batch;
  auto end_batch = [&] {
    registry_batch->commit();
    registry_batch.reset();
    registry_writer.unlock();
  };
  size_t batched = 0;
  spill.for_each([&](registry::DocumentRecord& d, const std::vector<registry::BrandName>* brands,
                     const std::vector<std::string>* tags, const std::string& source_sha256) {
    if (!registry_batch) {
      registry_writer = std::unique_lock(write_mu_);
      registry_batch.emplace(registry());
    }
    write_registry_row(d, brands, tags, source_sha256);
    if (++batched % kRegistryBatch == 0) end_batch();
  });
  if (registry_batch) end_batch();
  // The labels' brand names are known to the next search at once.
  if (brands_written) refresh_brands();
  // Fast opens: the next process loads a segment instead of replaying the log. The
  // segment is written while searches go on.
  if (cfg_.checkpoint_after_ingest)
    for (auto* c : written) c->checkpoint();
  rep.documents = spill.count();
  rep.rows = rows_done;
  if (progress) progress(rows_done, rows_done);
  return rep;
}

}  // namespace eagle::app
