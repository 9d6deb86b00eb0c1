#include "eagle/app/engine.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <shared_mutex>

#include "eagle/core/error.h"
#include "eagle/encode/chem/chem_encoder.h"
#include "eagle/encode/registry_config.h"
#include "eagle/encode/static/word_vectors.h"
#include "eagle/biomed/ingest/chunker.h"
#include "eagle/biomed/ingest/compound_cards.h"
#include "eagle/biomed/ingest/doc_profile.h"
#include "eagle/biomed/ingest/spl.h"
#include "eagle/encode/chem/chem.h"
#include "eagle/ingest/corpus_reader.h"
#include "eagle/search/registry_catalog.h"

#include <spdlog/spdlog.h>

namespace eagle::app {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The seed's text slots that fall back to the embedded GloVe vectors when the
// configuration does not map them to a model.
const char* const kGloveTextSlots[] = {"pubmedbert", "medcpt-query", "medcpt-article", "text-embedding-v4"};

search::PipelineConfig pipeline_config_of(const Config& cfg) {
  search::PipelineConfig p;
  p.core_text_encoder = cfg.pipeline.text_encoder;
  p.recall_top_k = cfg.pipeline.recall_top_k;
  p.final_top_k = cfg.pipeline.final_top_k;
  p.rrf_k = cfg.pipeline.rrf_k;
  p.hybrid.fusion = cfg.pipeline.hybrid_fusion == "rrf" ? search::HybridFusion::rrf : search::HybridFusion::weighted;
  p.hybrid.rrf_k = cfg.pipeline.rrf_k;
  p.hybrid.dense_weight = cfg.pipeline.dense_weight;
  p.hybrid.adaptive = cfg.pipeline.adaptive_fusion;
  p.hybrid.agreement_min = cfg.pipeline.agreement_min;
  p.hybrid_alpha = cfg.pipeline.hybrid_alpha;
  p.max_scope_documents = cfg.pipeline.max_scope_documents;
  p.parent_doc_retrieval = cfg.pipeline.parent_doc_retrieval;
  p.graph_expansion = cfg.pipeline.graph_expansion;
  for (const auto& c : cfg.biomed.options.hybrid_text_collections) p.hybrid_text_collections.insert(c);
  return p;
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

}  // namespace

search::PipelineConfig pipeline_config(const Config& cfg) { return pipeline_config_of(cfg); }

encode::EncoderRegistry build_encoder_registry(const Config& cfg) {
  encode::EncoderRegistry reg;
  encode::add_from_config(reg, cfg.encoders);
  auto glove_file = [&]() {
    if (!fs::exists(cfg.glove_file)) {
      if (!fs::exists(cfg.glove_json))
        fail(ErrorCode::not_found, "GloVe vectors not found at " + cfg.glove_json +
                                       " (scripts/setup.sh installs them; or set glove.json)");
      std::fprintf(stderr, "converting %s -> %s (once)...\n", cfg.glove_json.c_str(), cfg.glove_file.c_str());
      auto n = encode::convert_wink_json(cfg.glove_json, cfg.glove_file);
      std::fprintf(stderr, "converted %zu words\n", n);
    }
    return cfg.glove_file;
  };
  if (!reg.has_encoder("glove")) reg.add(encode::make_glove_encoder("glove", glove_file()));
  for (const char* slot : kGloveTextSlots)
    if (!reg.has_encoder(slot) && !reg.has_reranker(slot)) reg.add(encode::make_glove_encoder(slot, glove_file()));
  if (!reg.has_encoder("molformer")) reg.add(encode::make_chem_encoder("molformer"));
  return reg;
}

std::string resolve_vocab_dir(const Config& cfg) {
  if (!cfg.biomed.vocab_dir.empty()) {
    if (!fs::is_directory(cfg.biomed.vocab_dir))
      fail(ErrorCode::not_found, "biomed.vocab_dir '" + cfg.biomed.vocab_dir + "' is not a folder");
    return cfg.biomed.vocab_dir;
  }
  for (const auto& p : {fs::path("../shared/data/vocab"), fs::path(EAGLE_SOURCE_DIR) / "../shared/data/vocab"})
    if (fs::is_directory(p)) return p.lexically_normal().string();
  fail(ErrorCode::not_found,
       "no vocabulary folder: set biomed.vocab_dir (DrugBank CSVs, genes_human.tsv, MeSH, DOID, UMLS RRF)");
}

bool AccessScope::allows(const std::string& kb) const {
  return kb_names.empty() || std::find(kb_names.begin(), kb_names.end(), kb) != kb_names.end();
}

Engine::Engine(Config cfg, StoreAccess access, const std::string& owner) : cfg_(std::move(cfg)), access_(access) {
  store::CollectionOptions copts;
  copts.bm25 = cfg_.bm25;
  copts.analyzer = cfg_.analyzer;
  copts.read_only = access_ == StoreAccess::read_only;
  copts.checkpoint_wal_bytes = cfg_.checkpoint_wal_bytes;
  // The writer's lock comes first: nothing of the store is touched before we own it.
  if (access_ == StoreAccess::write) lock_.emplace(store::StoreLock::acquire(cfg_.data_dir, owner));
  catalog_ = std::make_unique<store::Catalog>(fs::path(cfg_.data_dir) / "collections", copts);
  registry_url_ =
      cfg_.registry_url.empty() ? "sqlite:" + (fs::path(cfg_.data_dir) / "registry.db").string() : cfg_.registry_url;
  // A reader of a store whose registry does not exist yet sees an empty one (and
  // creates nothing).
  if (access_ == StoreAccess::read_only && cfg_.registry_url.empty() &&
      !fs::exists(fs::path(cfg_.data_dir) / "registry.db"))
    registry_url_ = "sqlite::memory:";
  encoders_ = build_encoder_registry(cfg_);
  if (!cfg_.pipeline.telemetry_file.empty())
    sink_ = std::make_shared<search::JsonlFileSink>(cfg_.pipeline.telemetry_file);
}

Engine::~Engine() = default;

void Engine::require_writer(const char* what) const {
  if (access_ != StoreAccess::write)
    fail(ErrorCode::conflict, std::string("cannot ") + what + ": the store is open read-only");
}

registry::DocumentRegistry& Engine::registry() {
  std::call_once(registry_once_, [&] {
    registry_ = registry::open_registry(registry_url_, access_ == StoreAccess::read_only);
  });
  return *registry_;
}

search::CollectionProvider Engine::collections() {
  return [this](const std::string& name) -> store::Collection* { return catalog_->find(name); };
}

std::string Engine::default_encoder(const std::string& collection) const {
  const auto& o = cfg_.biomed.options;
  for (const auto* slot : {&o.text_biomed, &o.text_medcpt, &o.chemical, &o.radiology, &o.pathology, &o.visual})
    if (slot->collection == collection) return slot->encoder;
  return cfg_.pipeline.text_encoder;  // the core text collection and any other text collection
}

const biomed::EntityKnowledge& Engine::knowledge() {
  std::lock_guard init(init_mu_);
  if (!knowledge_) knowledge_ = load_knowledge(cfg_);
  return *knowledge_;
}

void Engine::ensure_plugin(const std::string& ns) {
  const bool ready = ns == "biomed" ? biomed_ready_.load() : core_ready_.load();
  if (ready) return;
  // The slow parts (the registry, the vocabulary) load without holding searches
  // back; only subscribing the hooks below excludes them.
  registry();
  if (ns == "biomed") knowledge();
  // Subscribing hooks changes what running searches read: exclusive.
  std::unique_lock state(state_mu_);
  ensure_plugin_locked(ns);
}

void Engine::ensure_plugin_locked(const std::string& ns) {
  std::lock_guard init(init_mu_);
  if (!orchestrator_) {
    // Scope tags and the scope-aware collection union read the registry.
    doc_catalog_ = std::make_unique<search::RegistryCatalog>(registry());
    orchestrator_ = std::make_unique<search::Orchestrator>(collections(), encoders_, bus_, pipeline_config_of(cfg_),
                                                           sink_, doc_catalog_.get());
    core_ready_ = true;
  }
  if (ns == "biomed" && !biomed_) {
    auto opts = cfg_.biomed.options;
    // The vectors a collection holds decide the encoder its plans use (a slot's
    // default label would not compare with them).
    for (auto* slot : {&opts.text_biomed, &opts.text_medcpt, &opts.core_text, &opts.chemical})
      if (auto* c = catalog_->find(slot->collection)) {
        const auto& recorded = c->schema().vector.encoder;
        if (!recorded.empty()) slot->encoder = recorded;
      }
    biomed_ = std::make_unique<biomed::BiomedPlugin>(knowledge(), collections(), encoders_, &registry(), opts);
    biomed_->register_hooks(bus_);
    biomed_ready_ = true;
  }
}

void Engine::preload(const std::string& ns) {
  for (const auto& name : catalog_->list()) catalog_->get(name);
  registry();
  ensure_plugin(ns);
}

search::RetrievalResponse Engine::search(const search::RetrievalRequest& req) {
  if (req.plugin_namespace != "core" && req.plugin_namespace != "biomed")
    fail(ErrorCode::invalid_argument, "unknown plugin namespace '" + req.plugin_namespace + "' (core or biomed)");
  ensure_plugin(req.plugin_namespace);
  std::shared_lock state(state_mu_);
  return orchestrator_->retrieve(req);
}

namespace {

bool has_ext(const fs::path& p, const char* ext) { return p.extension() == ext; }

// auto: a .csv is a compound table; an .xml file, or a folder whose files are .xml,
// holds SPL labels; anything else is a text corpus (BEIR, JSONL, folder).
std::string detect_format(const std::vector<std::string>& inputs, const std::string& format) {
  if (format != "auto") return format;
  for (const auto& in : inputs) {
    const fs::path p(in);
    if (has_ext(p, ".csv")) return "compounds";
    if (has_ext(p, ".xml")) return "spl";
    if (fs::is_directory(p) && !fs::exists(p / "corpus.jsonl")) {
      bool xml = false, other = false;
      for (const auto& e : fs::directory_iterator(p)) {
        if (!e.is_regular_file()) continue;
        (has_ext(e.path(), ".xml") ? xml : other) = true;
      }
      if (xml && !other) return "spl";
    }
  }
  return format;
}

std::vector<fs::path> xml_files(const std::vector<std::string>& inputs) {
  std::vector<fs::path> out;
  for (const auto& in : inputs) {
    if (fs::is_directory(in)) {
      std::vector<fs::path> found;
      for (const auto& e : fs::directory_iterator(in))
        if (e.is_regular_file() && has_ext(e.path(), ".xml")) found.push_back(e.path());
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::exists(in)) {
      out.emplace_back(in);
    } else {
      fail(ErrorCode::not_found, "no such file or folder: " + in);
    }
  }
  return out;
}

void add_collection(registry::DocumentRecord& r, const std::string& collection) {
  if (std::find(r.collections_used.begin(), r.collections_used.end(), collection) == r.collections_used.end())
    r.collections_used.push_back(collection);
}

}  // namespace

IngestReport Engine::ingest(const std::vector<std::string>& inputs, const IngestOptions& opts,
                            const ProgressFn& progress) {
  require_writer("ingest");
  // Ingests run one at a time (what exists and the recorded encoders stay as read
  // here). Deletes and tag changes interleave: each batch's commit below takes the
  // writer lock, so a DELETE waits for one batch, not for the whole ingest.
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
  rep.collection = opts.collection.empty() ? slot.collection : opts.collection;
  if (!valid_collection_name(rep.collection))
    fail(ErrorCode::invalid_argument, "invalid collection name '" + rep.collection + "'");

  // 1. Read everything first: a bad record stops the ingest before any write.
  std::vector<json> rows;            // one per collection row, without the vector
  std::vector<std::string> embed;    // what the encoder sees for each row (text or SMILES)
  std::vector<registry::DocumentRecord> documents;
  auto record_for = [&](const std::string& id) {
    registry::DocumentRecord r;
    r.document_id = id;
    r.kb_name = opts.kb_name;
    r.plugin_namespace = opts.plugin_namespace;
    return r;
  };
  if (format == "spl") {
    for (const auto& file : xml_files(inputs)) {
      biomed::SplLabel label;
      try {
        label = biomed::parse_spl_file(file);
      } catch (const Error& e) {
        if (!opts.skip_bad) throw;
        rep.skipped.push_back(e.what());
        continue;
      }
      biomed::ChunkOptions co;
      co.kb_name = opts.kb_name;
      auto chunks = biomed::chunk_label(label, co);
      if (chunks.empty()) {
        rep.skipped.push_back(file.string() + ": no section text (indexing document?)");
        continue;
      }
      for (auto& c : chunks) {
        embed.push_back(c.value("text", std::string()));
        rows.push_back(std::move(c));
      }
      auto r = record_for(label.document_id);
      // The name carries every drug name of the label so the entity supplement's
      // registry lookup (name ILIKE %term%) finds it by brand or generic name.
      r.name = label.display_title();
      for (const auto& n : label.product_names) r.name += " | " + n;
      for (const auto& n : label.generic_names) r.name += " | " + n;
      r.file_name = label.file_name;
      r.document_name = label.display_title();
      r.source_type = "label";
      if (label.year() > 0) r.year = label.year();
      r.source_uri = label.source_uri;
      documents.push_back(std::move(r));
    }
  } else if (compounds) {
    biomed::CompoundCardOptions co;
    co.kb_name = opts.kb_name;
    for (const auto& in : inputs) {
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
          rep.skipped.push_back(in + ": " + id + " " + card.row.value("document_name", std::string()) + ": " + e.what());
          continue;
        }
        auto r = record_for(id);
        r.name = card.row.value("document_name", id);
        r.document_name = r.name;
        r.file_name = card.row.value("file_name", std::string());
        r.source_type = "compound";
        documents.push_back(std::move(r));
        card.row["name"] = card.row.value("document_name", id);
        card.row["smiles"] = card.smiles;
        embed.push_back(card.smiles);
        rows.push_back(std::move(card.row));
      }
    }
  } else {
    for (const auto& input : inputs) {
      ingest::ReadOptions ro;
      ro.format = ingest::parse_input_format(format);
      ro.skip_bad = opts.skip_bad;
      ro.repair_utf8 = opts.repair_utf8;
      auto r = ingest::read_corpus(input, ro);
      for (const auto& bad : r.skipped)
        rep.skipped.push_back(bad.file + (bad.line ? ":" + std::to_string(bad.line) : std::string()) + ": " +
                              bad.message);
      for (auto& d : r.documents) {
        json row = {{"id", d.id}, {"text", d.indexed_text()}, {"document_id", d.id}};
        if (!opts.kb_name.empty()) row["kb_name"] = opts.kb_name;
        // The source's chunk fields (typed) go on the row before any plugin stamps, so
        // CHUNK subscribers fill gaps and never override them; `section` feeds the
        // biomed section stamp. The write keeps only the target schema's fields.
        if (!d.title.empty()) row["document_name"] = d.title;
        auto meta = json::parse(d.metadata_json, nullptr, false);
        static const CollectionSchema kChunkFields = chunk_schema("chunk_fields", 1);
        copy_known_fields(meta, kChunkFields, row);
        if (meta.is_object() && meta.contains("section")) row["section"] = meta["section"];
        auto rec = record_for(d.id);
        rec.name = d.title.empty() ? d.id : d.title;
        rec.document_name = d.title;
        if (meta.is_object()) {
          rec.source_type = meta.value("source_type", std::string());
          if (meta.contains("year") && meta["year"].is_number_integer()) rec.year = meta["year"].get<int64_t>();
          rec.file_name = meta.value("file_name", std::string());
          rec.source_uri = meta.value("source_uri", std::string());
        }
        embed.push_back(row["text"].get<std::string>());
        rows.push_back(std::move(row));
        documents.push_back(std::move(rec));
      }
    }
  }

  // Plugin stamps at ingest (CHUNK, TRANSFORM): biomed adds primary_drugs and
  // biomed_section to chunks that lack them.
  if (!rows.empty() && opts.plugin_namespace != "core") {
    ensure_plugin(opts.plugin_namespace);
    if (bus_.has_subscribers(search::HookPoint::CHUNK, opts.plugin_namespace)) {
      json batch = json::array();
      for (auto& r : rows) batch.push_back(std::move(r));
      search::HookContext ctx;
      ctx.plugin_namespace = opts.plugin_namespace;
      batch = bus_.transform<search::HookPoint::CHUNK>(ctx, std::move(batch));
      if (!batch.is_array() || batch.size() != rows.size())
        fail(ErrorCode::internal, "a CHUNK subscriber changed the number of chunks");
      for (size_t i = 0; i < rows.size(); ++i) rows[i] = std::move(batch[i]);
    }
  }

  if (rows.empty()) return rep;

  // TDR (doc_profile.py): with the biomed namespace and no explicit collection,
  // biomedical text goes to the biomedical collection and its encoder, general text
  // (corporate memos, licences) to the core collection, instead of through PubMedBERT.
  std::vector<std::vector<size_t>> groups;
  std::vector<biomed::CollectionEncoder> targets;
  const bool tdr = !compounds && format != "spl" && opts.plugin_namespace == "biomed" && opts.collection.empty() &&
                   opts.encoder.empty() && bo.document_profile_routing;
  if (tdr) {
    const auto& kb = knowledge();
    biomed::ProfileOptions po;
    po.min_density = bo.profile_min_density;
    std::vector<size_t> bio, general;
    for (size_t i = 0; i < rows.size(); ++i) {
      auto d = biomed::classify_document_profile(
          embed[i], [&](std::string_view t) { return kb.match_entities(t).size(); }, po);
      (d.profile == biomed::DocumentProfile::biomedical ? bio : general).push_back(i);
    }
    if (!bio.empty()) {
      groups.push_back(std::move(bio));
      targets.push_back(bo.text_biomed);
    }
    if (!general.empty()) {
      groups.push_back(std::move(general));
      targets.push_back(core);
    }
  } else {
    std::vector<size_t> all(rows.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    groups.push_back(std::move(all));
    targets.push_back({rep.collection, opts.encoder.empty() ? std::string() : opts.encoder});
  }

  // 2. Each group's collection and encoder (the recorded one wins; a different one is
  // refused), and its records, all prepared before anything is written.
  struct Prepared {
    store::Collection* coll = nullptr;  // null: created at write time from `schema`
    CollectionSchema schema;
    std::string collection, encoder;
    std::vector<store::Record> records;
    std::vector<size_t> rows;
  };
  std::vector<Prepared> prepared;
  size_t done = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    Prepared p;
    p.collection = targets[g].collection;
    p.encoder = opts.encoder;  // an explicit --encoder; else the recorded one, else the slot's
    const std::string fallback =
        tdr ? targets[g].encoder : (opts.collection.empty() ? slot.encoder : default_encoder(p.collection));
    if (catalog_->exists(p.collection)) {
      const auto& recorded = catalog_->get(p.collection).schema().vector.encoder;
      if (p.encoder.empty()) p.encoder = recorded.empty() ? fallback : recorded;
      if (!recorded.empty() && recorded != p.encoder)
        fail(ErrorCode::invalid_argument, "collection '" + p.collection + "' holds '" + recorded +
                                              "' vectors; cannot add '" + p.encoder + "' vectors");
    } else if (p.encoder.empty()) {
      p.encoder = fallback;
    }
    auto& encoder = encoders_.encoder(p.encoder);
    const auto want = compounds ? encode::Modality::molecule : encode::Modality::text;
    if (encoder.info().modality != want)
      fail(ErrorCode::invalid_argument, "encoder '" + p.encoder + "' does not embed " +
                                            (compounds ? "molecules" : "text"));
    // A new collection is created only at the write below, after every group embedded.
    if (catalog_->exists(p.collection)) {
      p.coll = &catalog_->get(p.collection);
      p.schema = p.coll->schema();
    } else {
      p.schema = compounds ? encode::compound_schema(p.collection)
                           : chunk_schema(p.collection, encoder.info().dim, encoder.info().metric);
      p.schema.vector.encoder = p.encoder;
    }
    const auto& schema = p.schema;
    // 3. Embed.
    const auto& idx = groups[g];
    const size_t batch = std::max<size_t>(1, std::min<size_t>(encoder.info().max_batch, 256));
    for (size_t start = 0; start < idx.size(); start += batch) {
      const size_t end = std::min(idx.size(), start + batch);
      std::vector<std::string> inputs_batch;
      for (size_t i = start; i < end; ++i) inputs_batch.push_back(embed[idx[i]]);
      auto vecs = encoder.encode(inputs_batch, encode::EncodeMode::document);
      for (size_t i = start; i < end; ++i) {
        const json& src = rows[idx[i]];
        json row = json::object();
        // Only the target schema's fields (a source may carry more).
        for (const auto& [k, v] : src.items())
          if (k == "id" || k == "text" || (schema.field_index(k) && !v.is_null())) row[k] = v;
        row["vector"] = std::move(vecs[i - start]);
        p.records.push_back(store::record_from_json(row, schema));
      }
      done += end - start;
      if (progress) progress(done, rows.size());
    }
    p.rows = idx;
    prepared.push_back(std::move(p));
  }

  // A scoped caller (a token limited to KBs) may write only its KBs and may not
  // replace a document that lives in another one.
  if (!opts.scope.kb_names.empty()) {
    if (!opts.scope.allows(opts.kb_name))
      fail(ErrorCode::permission_denied, "this token may not write knowledge base '" + opts.kb_name + "'");
    for (const auto& d : documents)
      if (auto old = registry().get(d.document_id); old && !opts.scope.allows(old->kb_name))
        fail(ErrorCode::permission_denied,
             "document '" + d.document_id + "' belongs to a knowledge base this token may not write");
  }

  // 4. One transaction over every collection it touches, staged in batches of whole
  // documents: a document ingested again loses its old chunks (in every collection)
  // at the commit, so no stale section survives and no reader sees the document twice
  // or not at all; an ingest that fails or is killed part-way leaves the collections
  // as they were (staged rows are hidden and replay skips an uncommitted transaction).
  // Deletes and tag changes interleave: each batch takes the writer lock, so a DELETE
  // waits for one batch, not for the whole ingest; searches wait only for the commit.
  rep.collection.clear();
  rep.encoder.clear();
  const store::TxnId txn = store::new_txn_id();
  std::vector<store::Collection*> written;
  auto participant = [&](store::Collection* c) {
    if (std::find(written.begin(), written.end(), c) == written.end()) written.push_back(c);
  };
  std::vector<std::string> created;  // collections this ingest made (dropped again if it fails)
  try {
    for (auto& p : prepared) {
      if (!p.coll) {
        std::unique_lock state(state_mu_);
        p.coll = &catalog_->create(p.schema);
        created.push_back(p.collection);
      }
      participant(p.coll);
      const auto doc_field = p.schema.field_index("document_id");
      auto doc_of = [&](const store::Record& r) {
        if (doc_field)
          if (const auto* d = std::get_if<std::string>(&r.values[*doc_field])) return *d;
        return r.id;
      };
      const size_t commit_rows = std::max<size_t>(1, cfg_.ingest_commit_rows);
      size_t start = 0;
      while (start < p.records.size()) {
        size_t end = std::min(p.records.size(), start + commit_rows);
        while (end < p.records.size() && doc_of(p.records[end]) == doc_of(p.records[end - 1])) ++end;
        std::vector<store::Record> batch(
            std::make_move_iterator(p.records.begin() + static_cast<std::ptrdiff_t>(start)),
            std::make_move_iterator(p.records.begin() + static_cast<std::ptrdiff_t>(end)));
        std::vector<std::string> docs;
        std::set<std::string> new_ids, seen_docs;
        for (const auto& r : batch) {
          new_ids.insert(r.id);
          if (seen_docs.insert(doc_of(r)).second) docs.push_back(doc_of(r));
        }
        std::unique_lock writer(write_mu_);
        // The documents' current chunks everywhere (replaced ids in the target
        // collection are overwritten by the staged rows themselves).
        std::vector<std::pair<store::Collection*, std::vector<std::string>>> stale;
        if (doc_field) {
          for (auto* c : document_collections()) {
            std::vector<std::string> ids;
            for (auto& [id, doc] : c->ids_where_in("document_id", docs))
              if (c != p.coll || !new_ids.count(id)) ids.push_back(id);
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
          for (const auto& r : batch) check(p.coll, r.id);
          for (auto& [c, ids] : stale)
            for (const auto& id : ids) check(c, id);
        }
        // Staged rows are hidden, so searches go on while a batch is staged.
        std::vector<std::string> own_stale;
        for (auto& [c, ids] : stale) {
          if (c == p.coll) {
            own_stale = std::move(ids);
          } else {
            participant(c);
            c->stage(txn, ids, {});
          }
        }
        p.coll->stage(txn, own_stale, std::move(batch));
        start = end;
      }
      rep.collection += (rep.collection.empty() ? "" : " + ") + p.collection;
      rep.encoder += (rep.encoder.empty() ? "" : " + ") + p.encoder;
      rep.per_collection.push_back({p.collection, p.rows.size()});
      // A row's document is its registry record (one per row for text formats).
      if (documents.size() == rows.size())
        for (size_t i : p.rows) add_collection(documents[i], p.collection);
      else
        for (auto& d : documents) add_collection(d, p.collection);
    }
    // The commit point: every staged row appears at once, in every collection.
    std::unique_lock writer(write_mu_);
    std::unique_lock state(state_mu_);
    catalog_->commit(txn, written);
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
  // A checkpoint that came due is written with searches running again.
  for (auto* c : written) c->checkpoint_if_due();
  // The registry follows the collection writes. A document deleted while this ingest
  // ran (a DELETE between its commit and here) gets no registry row back.
  const bool deleted_meanwhile = deletes_.load() != deletes_at_start;
  for (auto& d : documents) {
    std::lock_guard writer(write_mu_);
    if (deleted_meanwhile) {
      bool has_rows = false;
      for (auto* c : document_collections())
        has_rows = has_rows || !c->ids_where_equals("document_id", d.document_id).empty();
      if (!has_rows) continue;
    }
    if (auto old = registry().get(d.document_id))
      for (const auto& c : old->collections_used)
        if (catalog_->exists(c) && !catalog_->get(c).ids_where_equals("document_id", d.document_id).empty())
          add_collection(d, c);
    registry().upsert(d);
  }
  // Fast opens: the next process loads a segment instead of replaying the log. The
  // segment is written while searches go on.
  if (cfg_.checkpoint_after_ingest)
    for (auto* c : written) c->checkpoint();
  rep.documents = documents.size();
  rep.rows = rows.size();
  return rep;
}

std::vector<store::Collection*> Engine::document_collections() {
  std::vector<store::Collection*> out;
  for (const auto& name : catalog_->list())
    if (auto* c = catalog_->find(name); c && c->schema().field_index("document_id")) out.push_back(c);
  return out;
}

namespace {
registry::DocumentRecord record_in_scope(registry::DocumentRegistry& reg, const std::string& id,
                                         const AccessScope& scope) {
  auto rec = reg.get(id);
  // Out of scope reads as absent: a scoped caller learns nothing about other KBs.
  if (!rec || !scope.allows(rec->kb_name)) fail(ErrorCode::not_found, "no document '" + id + "'");
  return *rec;
}
}  // namespace

std::optional<DocumentView> Engine::document(const std::string& document_id, const AccessScope& scope) {
  auto rec = registry().get(document_id);
  if (!rec || !scope.allows(rec->kb_name)) return std::nullopt;
  DocumentView v;
  v.record = *rec;
  v.tags = registry().keywords(document_id, rec->plugin_namespace);
  // One filtered read per collection, in row order; a scoped caller sees only the
  // chunks of its knowledge bases.
  std::string filter = "document_id == {doc}";
  store::TemplateParams params = {{"doc", document_id}};
  if (!scope.kb_names.empty()) {
    filter += " and kb_name in {kbs}";
    params["kbs"] = scope.kb_names;
  }
  std::shared_lock state(state_mu_);
  for (auto* c : document_collections()) {
    if (!c->schema().field_index("kb_name") && !scope.kb_names.empty()) continue;
    for (auto& r : c->fetch(filter, params, store::kMaxSearchK)) {
      auto hit = search::hit_from_record(r, c->schema(), c->schema().name, 0);
      v.chunks.push_back({r.id, c->schema().name, std::move(r.text), std::move(hit.metadata)});
    }
  }
  return v;
}

size_t Engine::delete_document(const std::string& document_id, const AccessScope& scope) {
  require_writer("delete a document");
  std::lock_guard writer(write_mu_);
  auto rec = registry().get(document_id);
  std::vector<std::pair<store::Collection*, std::vector<std::string>>> chunks;
  for (auto* c : document_collections()) {
    auto ids = c->ids_where_equals("document_id", document_id);
    if (!ids.empty()) chunks.emplace_back(c, std::move(ids));
  }
  if (!rec && chunks.empty()) fail(ErrorCode::not_found, "no document '" + document_id + "'");
  if (rec && !scope.allows(rec->kb_name)) fail(ErrorCode::not_found, "no document '" + document_id + "'");
  if (!scope.kb_names.empty()) {
    // Chunks of a scoped delete must all lie in the caller's KBs.
    for (auto& [c, ids] : chunks)
      if (c->filter("document_id == {doc} and kb_name in {kbs}", {{"doc", document_id}, {"kbs", scope.kb_names}})
              .count() != ids.size())
        fail(ErrorCode::not_found, "no document '" + document_id + "'");
  }
  size_t removed = 0;
  {
    // Every collection at once: no search sees the document half deleted.
    std::unique_lock state(state_mu_);
    for (auto& [c, ids] : chunks) removed += c->remove(ids, /*auto_checkpoint=*/false);
  }
  for (auto& [c, ids] : chunks) c->checkpoint_if_due();
  if (rec) registry().remove(document_id);
  ++deletes_;
  return removed;
}

std::vector<std::string> Engine::set_tags(const std::string& document_id, const std::string& plugin_namespace,
                                          const std::vector<std::string>& tags, const AccessScope& scope) {
  require_writer("tag a document");
  std::lock_guard writer(write_mu_);
  record_in_scope(registry(), document_id, scope);
  registry().set_keywords(document_id, plugin_namespace, tags);
  return registry().keywords(document_id, plugin_namespace);
}

std::vector<registry::DocumentRecord> Engine::list_documents(const registry::DocumentQuery& q, size_t* total) {
  if (total) *total = registry().count(q);
  return registry().list(q);
}

std::vector<registry::NameCount> Engine::knowledge_bases(const AccessScope& scope) {
  return registry().knowledge_bases(scope.kb_names);
}

std::vector<registry::NameCount> Engine::tags(std::optional<std::string> plugin_namespace, const AccessScope& scope) {
  std::optional<std::string_view> ns;
  if (plugin_namespace) ns = *plugin_namespace;
  return registry().tags(ns, scope.kb_names);
}

CollectionInfo Engine::collection_info(const std::string& name) {
  auto* c = catalog_->find(name);
  if (!c) fail(ErrorCode::not_found, "no collection named '" + name + "'");
  auto d = c->describe();
  const auto& v = c->schema().vector;
  CollectionInfo i;
  i.name = name;
  i.rows = d.value("live", size_t{0});
  i.deleted = d.value("deleted", size_t{0});
  i.dimension = v.dim;
  i.metric = std::string(metric_name(v.metric));
  i.encoder = v.encoder;
  i.index = v.index == VectorIndexKind::hnsw ? "hnsw" : "flat";
  i.log_bytes = d.value("log_bytes", uint64_t{0});
  i.last_lsn = d.value("last_lsn", uint64_t{0});
  return i;
}

std::vector<CollectionInfo> Engine::collection_infos() {
  std::vector<CollectionInfo> out;
  for (const auto& name : catalog_->list()) out.push_back(collection_info(name));
  return out;
}

std::vector<std::pair<std::string, store::LogRepair>> Engine::repair() {
  require_writer("repair the store");
  std::vector<std::pair<std::string, store::LogRepair>> out;
  for (const auto& name : catalog_->list())
    for (auto& r : store::repair_logs(fs::path(cfg_.data_dir) / "collections" / name)) out.emplace_back(name, r);
  return out;
}

void Engine::checkpoint() {
  require_writer("checkpoint");
  std::lock_guard writer(write_mu_);
  for (const auto& name : catalog_->list()) catalog_->get(name).checkpoint();
}

void Engine::compact() {
  require_writer("compact");
  std::lock_guard writer(write_mu_);
  for (const auto& name : catalog_->list()) {
    auto& c = catalog_->get(name);
    // Compaction renumbers rows: searches wait for the swap only (inside compact()).
    c.compact();
  }
}

}  // namespace eagle::app
