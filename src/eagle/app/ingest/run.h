#pragma once
// One ingest as a pipeline of stages over slices of the input:
//   read      (read.cpp)    inputs -> files and corpora, each read by its kind or a
//                           plugin's reader; unchanged files are left (dedup by SHA-256)
//   structure + chunk       articles, labels, corpora -> documents and rows of a Slice
//   stamp     (stage.cpp)   CHUNK and CLASSIFY_CHUNK subscribers fill the rows' fields
//   route     (route.cpp)   tiles, INGEST_ROUTE_SELECTORS, readers' and the namespace's
//                           routing -> a target collection per row
//   embed     (stage.cpp)   EMBED_* subscribers or the target's encoder, UPSERT_VECTORS
//   stage     (stage.cpp)   rows staged in the store transaction, stale chunks dropped
//   commit    (commit.cpp)  every collection at once, then the registry in batches
// The input is read, chunked, stamped, embedded and staged one slice at a time
// (ingest.commit_rows rows of whole documents), so memory holds one slice plus the
// collections themselves, whatever the input's size; the registry records wait in an
// unnamed temporary file. The slices are parts of one store transaction, committed
// once at the end: an ingest that fails or is killed part-way leaves the store as it
// was (store::TxnId).
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "eagle/app/engine.h"
#include "eagle/app/ingest/extension.h"
#include "eagle/app/ingest/slice.h"
#include "eagle/app/ingest/spill.h"
#include "eagle/ingest/article/article_chunker.h"
#include "eagle/ingest/corpus_reader.h"
#include "eagle/ingest/tiles/tiles.h"
#include "eagle/store/collection.h"

namespace eagle::app {

// An unchanged file's report names at most this many of its documents (a PubMed file
// may hold thousands).
constexpr size_t kUnchangedIdsShown = 5;
// The namespace's routing rule reads this much of a structured document's text.
constexpr size_t kRouteSampleBytes = 20000;
// Documents written to the registry in one database transaction at the end of an
// ingest (DocumentRegistry::WriteBatch).
constexpr size_t kRegistryBatch = 1024;
// A slice is staged once its image tiles hold this many encoded bytes, whatever its
// row count (a folder of long PDFs would otherwise hold every page image at once).
constexpr size_t kSliceImageBytes = 64u << 20;

// A collection the ingest writes, with its encoder, prepared at its first rows.
struct IngestTarget {
  std::string collection, encoder;
  store::Collection* coll = nullptr;  // null until its first rows are staged (created then)
  CollectionSchema schema;
  encode::Encoder* enc = nullptr;
  size_t rows = 0;
  bool visual = false;  // the visual collection: rows are image tiles
};

class IngestRun {
 public:
  IngestRun(Engine& engine, const IngestOptions& opts, IngestExtensions extensions, const ProgressFn& progress);
  IngestReport run(const std::vector<std::string>& inputs);

  // What a reader (core or a plugin's) works with.
  const IngestOptions& options() const { return opts_; }
  const Config& config() const;
  Engine& engine() { return engine_; }
  Slice& slice() { return slice_; }
  // A new registry record in this ingest's KB and namespace.
  registry::DocumentRecord record_for(const std::string& id) const;
  // Adds a document to the slice (its rows follow with slice().add), remembering the
  // file it came from for the dedup.
  void add_document(registry::DocumentRecord r);
  // Stages the slice when it is full: call before a new document, whose rows then
  // stay in one slice.
  void slice_full();
  // A bad input the caller allowed to skip (--skip-bad) or a note: in the report.
  void skip(std::string what) { rep_.skipped.push_back(std::move(what)); }

 private:
  // read.cpp
  struct Work {
    std::filesystem::path file;
    ingest::FileKind kind;    // unknown: an .xml of no known vocabulary (reported)
    bool text = false;        // a text input for the corpus reader
    std::string document_id;  // structured files: the path below the input folder
    uint64_t bytes;
    bool in_folder = false;  // found in a folder (not named by the caller)
  };
  std::vector<Work> plan_work(const std::vector<std::string>& inputs);
  std::set<std::filesystem::path> figure_images_of(const std::vector<Work>& work) const;
  void read_inputs(const std::vector<std::string>& inputs);
  void read_format(const InputFormat& f, const std::vector<std::string>& inputs);
  bool unchanged(const Work& w, std::unordered_map<std::string, std::vector<std::string>>& hashes_seen);
  void read_structured(const Work& w, const std::set<std::filesystem::path>& figure_images);
  void read_articles(const std::filesystem::path& file, ingest::FileKind kind, const std::string& document_id);
  void read_image(const std::filesystem::path& file, const std::string& document_id);
  void read_text(const std::string& input, const std::string& text_format, uint64_t input_size);
  void add_text_record(Document&& d, const std::optional<IngestRoute>& input_route);
  std::function<void(ingest::ImageTile&&)> add_tile_of(const ingest::Article& article);
  void add_page_tiles(const std::filesystem::path& file, const ingest::Article& article,
                      const std::vector<nlohmann::json>& rows);
  void add_figure_files(const std::filesystem::path& file, const ingest::Article& article,
                        const std::vector<nlohmann::json>& rows);
  bool seen_before(const std::string& id) const;
  std::optional<IngestRoute> route_of_input(const std::string& input, const ingest::ReadOptions& read);
  void report_progress();

  // route.cpp
  size_t target_index(const std::string& collection, const std::string& fallback, bool visual = false);
  using Routes = std::vector<std::pair<size_t, std::vector<size_t>>>;  // target, rows
  Routes route(Slice& s);
  void route_tiles(Slice& s, std::vector<bool>& selected, Routes& routes);
  void route_selectors(Slice& s, std::vector<bool>& selected, Routes& routes);
  void route_rest(Slice& s, std::vector<bool>& selected, Routes& routes);

  // stage.cpp
  void stage_slice(Slice& s);
  void check_document_ids(Slice& s);
  void stamp(Slice& s);
  std::vector<store::Record> embed(Slice& s, IngestTarget& t, std::vector<size_t>& idx);
  std::vector<encode::Embedding> embed_tiles(Slice& s, IngestTarget& t, const std::vector<size_t>& idx, size_t start,
                                             size_t end, std::set<size_t>& dropped);
  void stage_rows(IngestTarget& t, std::vector<store::Record> batch);

  // commit.cpp
  void commit();
  void abort() noexcept;
  void write_registry();
  void finish_report();

  Engine& engine_;
  const IngestOptions& opts_;
  IngestExtensions ext_;
  ProgressFn progress_;
  search::HookContext hctx_;
  IngestReport rep_;
  uint64_t deletes_at_start_ = 0;
  std::string format_;
  const InputFormat* input_format_ = nullptr;  // a plugin's whole-ingest format
  IngestRoute slot_;                           // where rows go by default
  std::string default_collection_;
  bool routing_ = false;  // the namespace's routing rule decides rows without a route
  size_t commit_rows_ = 1;
  bool scoped_ = false;
  std::set<std::string> token_kbs_;  // KB names of scoped tokens: "K:" starts only K's ids

  std::vector<IngestTarget> targets_;
  store::TxnId txn_;
  std::vector<store::Collection*> written_;
  std::vector<std::string> created_;  // collections this ingest made (dropped again if it fails)
  DocumentSpill spill_;
  size_t rows_done_ = 0;
  uint64_t total_bytes_ = 0, bytes_read_ = 0;

  Slice slice_;
  // The file being read (its SHA-256) and the documents read from it so far.
  std::string current_sha256_;
  std::vector<std::string> read_from_file_;
  std::unordered_set<std::string> documents_seen_;  // ids of the structured documents read so far
  ingest::TileOptions tile_options_;
  ingest::ArticleChunkOptions article_options_;
};

}  // namespace eagle::app
