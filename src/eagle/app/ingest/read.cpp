// The read, structure and chunk stages: inputs -> documents and rows of the slice
// (run.h). Structured files are read by their kind (ingest/formats.h) or by a
// plugin's reader; text corpora through the corpus reader.
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "eagle/app/ingest/run.h"
#include "eagle/core/error.h"
#include "eagle/core/utf8.h"
#include "eagle/ingest/corpus_reader.h"
#include "eagle/ingest/formats.h"

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

uint64_t file_bytes(const fs::path& p) {
  std::error_code ec;
  const auto n = fs::file_size(p, ec);
  return ec ? 0 : n;
}

}  // namespace

// Every input: a text corpus, a structured file, or a folder of both.
std::vector<IngestRun::Work> IngestRun::plan_work(const std::vector<std::string>& inputs) {
  const ingest::FileKind forced = format_ == "auto" ? ingest::FileKind::unknown : ingest::file_kind_from_name(format_);
  const bool text_only = format_ == "beir" || format_ == "jsonl" || format_ == "folder";
  if (!text_only && format_ != "auto" && !ingest::is_structured(forced)) {
    std::string known;
    for (const auto& f : engine_.ingest_formats()) known += (known.empty() ? "" : ", ") + f;
    if (const auto last = known.rfind(", "); last != std::string::npos) known.replace(last, 2, " or ");
    fail(ErrorCode::invalid_argument, "unknown input format '" + format_ + "': expected " + known);
  }
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
      for (const auto& link : scan.links_out) skip(link.string() + ": a link that leads out of the folder; not followed");
      for (const auto& [f, kind] : scan.structured)
        work.push_back({f, kind, false, fs::relative(f, p).generic_string(), file_bytes(f), true});
      // The folder's text and JSONL files (all of it when it holds nothing else).
      if (forced == ingest::FileKind::unknown && (scan.structured.empty() || scan.has_text_files))
        work.push_back({p, ingest::FileKind::unknown, true, "", ingest::input_bytes(p)});
    } else {
      const auto kind = forced != ingest::FileKind::unknown ? forced : ingest::detect_file_kind(p);
      if (ingest::is_structured(kind) || (kind == ingest::FileKind::unknown && p.extension() == ".xml"))
        work.push_back({p, kind, false, p.filename().string(), file_bytes(p)});
      else
        work.push_back({p, ingest::FileKind::unknown, true, "", ingest::input_bytes(p)});
    }
  }
  return work;
}

// An image file that a JATS, HTML or Markdown document of this ingest shows as a
// figure is that document's figure tile, not an image document of its own (a PMC
// package).
std::set<fs::path> IngestRun::figure_images_of(const std::vector<Work>& work) const {
  std::set<fs::path> figure_images;
  if (!config().visual.figure_files) return figure_images;
  std::set<fs::path> image_folders;
  for (const auto& w : work)
    if (w.kind == ingest::FileKind::image) image_folders.insert(w.file.parent_path());
  for (const auto& w : work) {
    if (!figures_from_files(w.kind) || !image_folders.count(w.file.parent_path())) continue;
    try {
      for (const auto& article : ingest::read_documents(w.file, w.kind, w.document_id, true))
        for (const auto& b : article.blocks)
          if (b.kind == ingest::BlockKind::figure && !b.graphic.empty())
            if (auto f = ingest::figure_file(w.file, b.graphic); !f.empty()) figure_images.insert(f);
    } catch (const Error&) {
      // The document's own pass reports it.
    }
  }
  return figure_images;
}

void IngestRun::read_inputs(const std::vector<std::string>& inputs) {
  const auto work = plan_work(inputs);
  for (const auto& w : work) total_bytes_ += w.bytes;
  const auto figure_images = figure_images_of(work);
  std::unordered_map<std::string, std::vector<std::string>> hashes_seen;  // in this ingest
  for (const auto& w : work) {
    if (w.text) {
      read_text(w.file.string(), format_ == "auto" ? "auto" : format_, w.bytes);
      continue;
    }
    bytes_read_ += w.bytes;
    current_sha256_.clear();
    read_from_file_.clear();
    if (unchanged(w, hashes_seen)) continue;
    read_structured(w, figure_images);
    if (!read_from_file_.empty()) hashes_seen[current_sha256_] = read_from_file_;
    report_progress();
  }
}

// A plugin's whole-ingest format: every input through its reader.
void IngestRun::read_format(const InputFormat& f, const std::vector<std::string>& inputs) {
  for (const auto& in : inputs) total_bytes_ += file_bytes(in);
  for (const auto& in : inputs) {
    bytes_read_ += file_bytes(in);
    f.read(*this, in);
  }
}

// Dedup (Eagle-RAG's): a structured file whose bytes were ingested into this KB and
// namespace before, and whose documents still have rows, is not read again (unless
// --reindex). Sets current_sha256_; true when the file is left (reported unchanged)
// or skipped.
bool IngestRun::unchanged(const Work& w, std::unordered_map<std::string, std::vector<std::string>>& hashes_seen) {
  if (w.kind == ingest::FileKind::unknown) return false;
  try {
    current_sha256_ = ingest::file_sha256(w.file);
  } catch (const Error& e) {
    if (!opts_.skip_bad) throw;
    skip(e.what());
    return true;
  }
  if (opts_.reindex) return false;
  std::vector<std::string> same;
  if (auto it = hashes_seen.find(current_sha256_); it != hashes_seen.end()) same = it->second;
  // Whether a document the registry knows still has rows (a dropped collection
  // leaves records behind; their file is read again).
  auto has_rows = [&](const std::string& id) {
    for (auto* c : engine_.document_collections())
      if (!c->ids_where_equals("document_id", id).empty()) return true;
    return false;
  };
  // Every document read from the file before must still have rows (a dropped
  // collection loses them; a deleted document takes the file's hash with it).
  bool whole = true;
  for (const auto& id : engine_.registry().find_by_source_hash(current_sha256_, opts_.kb_name, opts_.plugin_namespace)) {
    whole = whole && has_rows(id);
    same.push_back(id);
  }
  if (!whole || same.empty()) return false;
  std::string ids;
  for (size_t i = 0; i < same.size() && i < kUnchangedIdsShown; ++i) ids += (i ? ", " : "") + same[i];
  if (same.size() > kUnchangedIdsShown) ids += ", ... (" + std::to_string(same.size()) + " documents)";
  rep_.unchanged.push_back(w.file.string() + ": same bytes as document " + ids);
  report_progress();
  return true;
}

void IngestRun::read_structured(const Work& w, const std::set<fs::path>& figure_images) {
  // The document id comes from the file's path: it must be text, as the corpus
  // reader requires of a .txt file's name.
  std::string document_id = w.document_id;
  if (auto bad = first_invalid_utf8(document_id)) {
    const std::string what = w.file.string() + ": the file name is not valid UTF-8 (byte " + std::to_string(*bad) +
                             "; give --repair-utf8 to replace the bad bytes with U+FFFD, or --skip-bad)";
    if (opts_.repair_utf8) {
      document_id = repair_utf8(document_id);
    } else if (opts_.skip_bad) {
      skip(what);
      return;
    } else {
      fail(ErrorCode::invalid_argument, what);
    }
  }
  const FileReader* reader = ext_.reader_of(w.kind);
  if (w.kind == ingest::FileKind::unknown || (w.kind == ingest::FileKind::spl && !reader)) {
    const std::string root = ingest::xml_root_of(w.file);
    std::string known = "JATS article or PubMed XML";
    if (const auto* spl = ext_.reader_of(ingest::FileKind::spl)) known = spl->description + ", " + known;
    else known = "a " + known;
    const std::string what = w.file.string() + ": not " + known + " (" +
                             (root.empty() ? std::string("no root element") : "root <" + root + ">") + ")";
    // A folder holds what it holds (barcode lists beside labels): its other XML
    // files are skipped and reported; a file named on its own is an error.
    if (!opts_.skip_bad && !w.in_folder) fail(ErrorCode::invalid_argument, what);
    skip(what);
  } else if (reader) {
    reader->read(*this, w.file);
  } else if (w.kind == ingest::FileKind::image) {
    if (!figure_images.count(w.file)) read_image(w.file, document_id);
  } else {
    read_articles(w.file, w.kind, document_id);
  }
}

// Stages a tile of `article` with the document's metadata.
std::function<void(ingest::ImageTile&&)> IngestRun::add_tile_of(const ingest::Article& article) {
  return [this, &article](ingest::ImageTile&& tile) {
    auto row = ingest::tile_row(tile, opts_.kb_name, article.source_type, article.year, article.file_name,
                                article.title.empty() ? article.id : article.title, article.source_uri);
    slice_.add_tile(std::move(row), std::move(tile));
  };
}

// A PDF's pages as image tiles of the visual collection, beside its text.
void IngestRun::add_page_tiles(const fs::path& file, const ingest::Article& article, const std::vector<json>& rows) {
  try {
    const std::string bytes = read_file_bytes(file);
    ingest::pdf_page_tiles(bytes, article, rows, tile_options_, add_tile_of(article));
  } catch (const Error& e) {
    // The text is read; the page images are not: reported, the text kept.
    if (!opts_.skip_bad) throw;
    skip(file.string() + ": page images: " + e.what());
  }
}

// The figures of a JATS, HTML or Markdown document whose image files sit beside it.
void IngestRun::add_figure_files(const fs::path& file, const ingest::Article& article, const std::vector<json>& rows) {
  try {
    ingest::figure_file_tiles(file, article, rows, tile_options_, add_tile_of(article));
  } catch (const Error& e) {
    // The text is read; a figure's image is not: reported, the text kept.
    if (!opts_.skip_bad) throw;
    skip(file.string() + ": figure images: " + e.what());
  }
}

void IngestRun::read_image(const fs::path& file, const std::string& document_id) {
  ingest::ImageTile tile;
  try {
    tile = ingest::image_file_tile(file, document_id, tile_options_);
  } catch (const Error& e) {
    if (!opts_.skip_bad) throw;
    skip(e.what());
    return;
  }
  slice_full();
  auto r = record_for(document_id);
  r.file_name = repair_utf8(file.filename().string());
  r.source_uri = repair_utf8(file.string());
  r.name = r.file_name;
  r.document_name = r.file_name;
  r.source_type = "image";
  add_document(std::move(r));
  const auto& d = slice_.documents.back();
  auto row = ingest::tile_row(tile, opts_.kb_name, "image", std::nullopt, d.file_name, d.file_name, d.source_uri);
  slice_.add_tile(std::move(row), std::move(tile));
}

// The documents of one JATS, PubMed, PDF, HTML or Markdown file, chunked by their structure.
void IngestRun::read_articles(const fs::path& file, ingest::FileKind kind, const std::string& document_id) {
  std::vector<ingest::Article> articles;
  try {
    articles = ingest::read_documents(file, kind, document_id, opts_.repair_utf8);
  } catch (const Error& e) {
    if (!opts_.skip_bad) throw;
    skip(e.what());
    return;
  }
  const Config& cfg = config();
  for (auto& article : articles) {
    // Names from the file system are shown, not matched: a bad byte in them (a
    // Latin-1 folder name) becomes U+FFFD rather than failing the registry write.
    article.file_name = repair_utf8(article.file_name);
    article.source_uri = repair_utf8(article.source_uri);
    if (documents_seen_.count(article.id)) {
      if (!opts_.skip_bad) fail(ErrorCode::conflict, "duplicate document id '" + article.id + "' in " + file.string());
      skip(file.string() + ": duplicate document id '" + article.id + "'");
      continue;
    }
    auto rows = ingest::chunk_article(article, article_options_);
    if (rows.empty()) {
      skip(file.string() + ": " + article.id + " has no text (a scanned PDF?)");
      continue;
    }
    documents_seen_.insert(article.id);
    slice_full();  // a document's chunks stay in one slice
    // The routing rule decides once per document, so a paper's sections stay in one
    // collection (the drill-down and graph expansion stay inside a collection).
    std::optional<IngestRoute> to;
    if (routing_) {
      std::string sample = article.title;
      for (const auto& row : rows) {
        if (sample.size() >= kRouteSampleBytes) break;
        sample += "\n" + row["text"].get<std::string>();
      }
      to = ext_.routing->route(sample);
    }
    auto r = record_for(article.id);
    r.document_name = article.title;
    r.name = article.title.empty() ? article.id : article.title;
    r.file_name = article.file_name;
    r.source_type = article.source_type;
    r.source_uri = article.source_uri;
    if (article.year) r.year = *article.year;
    add_document(std::move(r));
    if (!article.tags.empty()) slice_.tags[article.id] = article.tags;
    if (article.format == "pdf" && cfg.visual.page_images) add_page_tiles(file, article, rows);
    if (figures_from_files(kind) && cfg.visual.figure_files) add_figure_files(file, article, rows);
    for (auto& row : rows) {
      std::string text = row["text"].get<std::string>();
      slice_.add(std::move(row), std::move(text), to);
    }
  }
}

// Whether a text record's id was read before in this ingest (in this slice, or
// staged by an earlier one): duplicate ids would make results ambiguous.
bool IngestRun::seen_before(const std::string& id) const {
  if (slice_.ids.count(id)) return true;
  for (const auto& t : targets_)
    if (t.coll && (t.coll->staged(txn_, id) || (scoped_ && t.coll->staged(txn_, kb_qualified(opts_.kb_name, id)))))
      return true;
  return false;
}

// The routing rule decided once for a whole input: from the routes of its first
// input_sample readable documents (a read that stops early).
std::optional<IngestRoute> IngestRun::route_of_input(const std::string& input, const ingest::ReadOptions& read) {
  if (!routing_ || ext_.routing->input_sample == 0) return std::nullopt;
  struct SampleFull {};
  ingest::ReadOptions sample = read;
  sample.skip_bad = true;  // the real pass reports bad records
  sample.progress = nullptr;
  std::vector<IngestRoute> routes;
  std::vector<ingest::BadRecord> ignored;
  try {
    ingest::stream_corpus(input, sample, [&](Document&& d) {
      routes.push_back(ext_.routing->route(d.indexed_text()));
      if (routes.size() >= ext_.routing->input_sample) throw SampleFull{};
    }, ignored);
  } catch (const SampleFull&) {
  }
  return ext_.routing->route_input(routes);
}

// A text corpus (BEIR folder, JSONL, .txt files; Markdown only with --format folder)
// through the corpus reader.
void IngestRun::read_text(const std::string& input, const std::string& text_format, uint64_t input_size) {
  ingest::ReadOptions ro;
  ro.format = ingest::parse_input_format(text_format);
  ro.skip_bad = opts_.skip_bad;
  ro.repair_utf8 = opts_.repair_utf8;
  // With --format auto, Markdown is read file by file as structured documents.
  ro.markdown_files = text_format != "auto";
  const uint64_t bytes_before = bytes_read_;
  ro.progress = [&](uint64_t, uint64_t bytes, uint64_t) { bytes_read_ = bytes_before + bytes; };
  const auto input_route = route_of_input(input, ro);
  std::vector<ingest::BadRecord> skipped;
  ingest::stream_corpus(
      input, ro,
      [&](Document&& d) {
        if (seen_before(d.id)) {
          if (!opts_.skip_bad) fail(ErrorCode::conflict, "duplicate document id '" + d.id + "' in " + input);
          skip(input + ": duplicate document id '" + d.id + "'");
          return;
        }
        slice_.ids.insert(d.id);
        add_text_record(std::move(d), input_route);
      },
      skipped);
  for (const auto& bad : skipped)
    skip(bad.file + (bad.line ? ":" + std::to_string(bad.line) : std::string()) + ": " + bad.message);
  bytes_read_ = bytes_before + input_size;
}

// One record of a text corpus: PARSE subscribers, then a row of its document.
void IngestRun::add_text_record(Document&& d, const std::optional<IngestRoute>& input_route) {
  static const CollectionSchema kChunkFields = chunk_schema("chunk_fields", 1, Metric::cosine, plugin::plugin_chunk_fields());
  auto& bus = engine_.bus_;
  // PARSE (TRANSFORM): the parsed document ({id, title, text, metadata}) before it
  // becomes rows; a subscriber may clean its text or add metadata (not its id).
  if (bus.has_subscribers(search::HookPoint::PARSE, opts_.plugin_namespace)) {
    json doc = {{"id", d.id}, {"title", d.title}, {"text", d.text},
                {"metadata", json::parse(d.metadata_json, nullptr, false)}};
    doc = bus.transform<search::HookPoint::PARSE>(hctx_, std::move(doc));
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
  // One document_id per source document, shared by its chunks: a Markdown file's
  // sections, or JSONL chunks that name their document. A record that names none is
  // its own document.
  const auto doc_it = meta.find("document_id");
  const std::string document_id =
      doc_it != meta.end() && doc_it->is_string() && !doc_it->get<std::string>().empty() ? doc_it->get<std::string>()
                                                                                          : d.id;
  json row = {{"id", d.id}, {"text", d.indexed_text()}, {"document_id", document_id}};
  if (!opts_.kb_name.empty()) row["kb_name"] = opts_.kb_name;
  // The source's chunk fields (typed) go on the row before any plugin stamps, so
  // CHUNK subscribers fill gaps and never override them; `section` feeds a plugin's
  // section stamp. The rest of the source's metadata (journal, authors, DOI, nested
  // maps) is kept whole in `metadata`. The write keeps only the target schema's fields.
  if (!d.title.empty()) row["document_name"] = d.title;
  copy_known_fields(meta, kChunkFields, row);
  json rest = json::object();
  for (const auto& [k, v] : meta.items())
    if (!kChunkFields.field_index(k) && k != "tags" && k != "section") rest[k] = v;
  if (!rest.empty()) row["metadata"] = std::move(rest);
  if (meta.contains("section")) row["section"] = meta["section"];
  // A new document starts: the slice may be staged first (a document's chunks are
  // never split across slices, so replacing its stale chunks sees them all).
  const bool same_document = !slice_.documents.empty() && slice_.documents.back().document_id == document_id;
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
    slice_.documents.push_back(std::move(rec));
    // The reader checked them (a list of non-empty strings).
    if (meta.contains("tags")) slice_.tags[document_id] = meta["tags"].get<std::vector<std::string>>();
  }
  std::string text = row["text"].get<std::string>();
  slice_.add(std::move(row), std::move(text), input_route);
}

}  // namespace eagle::app
