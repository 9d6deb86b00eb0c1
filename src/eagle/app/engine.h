#pragma once
// The engine a command runs on: the store's collections (catalog), the document
// registry, the encoders, the HookBus with its plugins, and the query pipeline.
// `eagle ingest`, `eagle search` and `eagle entities` all go through one Engine, so
// what the CLI does is what an embedding application gets.
#include <atomic>
#include <chrono>
#include <map>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <optional>
#include <string>
#include <vector>

#include "eagle/app/config.h"
#include "eagle/app/ingest/extension.h"
#include "eagle/app/ingest/slice.h"
#include "eagle/app/query.h"
#include "eagle/answer/extractive.h"
#include "eagle/ingest/tiles/image_store.h"
#include "eagle/encode/encoder.h"
#include "eagle/plugin/plugin.h"
#include "eagle/registry/registry.h"
#include "eagle/search/hookbus.h"
#include "eagle/search/orchestrator.h"
#include "eagle/core/rw_mutex.h"
#include "eagle/store/collection.h"
#include "eagle/store/store_lock.h"

namespace eagle::app {

// The embedded encoders: `glove` (GloVe 6B 100d, converted once from the npm asset),
// the seed's core text slot (text-embedding-v4) on the same GloVe vectors unless
// `encoders:` configures it, `molformer` on RDKit Morgan fingerprints and the general
// visual slot (qwen3-vl) on the embedded image descriptor unless configured; then each
// plugin's slots (Plugin::add_encoders). Configured labels always win.
encode::EncoderRegistry build_encoder_registry(const Config& cfg);
// The GloVe vectors' file, converted from the npm asset on first use: what the text
// slots left to a stand-in embed with.
std::string glove_vectors_file(const Config& cfg);
// What stands in for `label` when it is one of the seed's slots the configuration maps
// to no model: "the embedded GloVe vectors" for the text slots (text-embedding-v4 and
// the plugins' own), "the embedded dct-lowfreq-v1 image descriptor" for the general
// visual slot (qwen3-vl); empty for any other label. `eagle encoders` and the ingest
// report say so.
std::string stand_in_of(const Config& cfg, const std::string& label);
// What the text slots left to a stand-in run on.
inline constexpr const char* kGloveStandIn = "the embedded GloVe vectors";

// The knowledge bases a caller may see (a token's kb_names); empty = all. Every
// document read, listing, tag change, ingest and delete checks it; searches get it
// forced into their scope (RetrievalRequest::allowed_kbs).
struct AccessScope {
  std::vector<std::string> kb_names;
  bool allows(const std::string& kb) const;
};

// A listing's kind: empty = every kind but compound cards (thousands of them would
// bury the documents; they are listed apart), "all" = every kind, else that
// source_type only.
void apply_document_kind(registry::DocumentQuery& q, const std::string& kind);

struct IngestOptions {
  AccessScope scope;           // a scoped caller may not replace documents of other KBs
  std::string collection;      // empty: eagle_text, or a plugin's slot for its formats
  std::string encoder;         // empty: the collection's recorded encoder, else the slot's default
  std::string kb_name;
  std::string plugin_namespace = "core";
  std::string format = "auto";  // auto | beir | jsonl | folder | jats | pubmed | pdf | html | markdown | a plugin's
  bool skip_bad = false;
  // A structured file (SPL, JATS, PubMed, PDF, HTML, Markdown) whose bytes were ingested before
  // into the same KB and namespace is reported as unchanged, not read again (dedup by
  // SHA-256); reindex reads it anyway (after a change of chunking settings).
  bool reindex = false;
  bool repair_utf8 = false;  // invalid UTF-8 becomes U+FFFD instead of an error naming file and offset
};

struct IngestReport {
  std::string collection;  // "a + b" when the document profile split the input
  std::string encoder;
  std::vector<std::pair<std::string, size_t>> per_collection;  // rows written to each
  std::vector<std::pair<std::string, std::string>> encoders_used;  // collection -> encoder label
  size_t documents = 0;
  size_t rows = 0;
  std::vector<std::string> skipped;  // "FILE:LINE: message" or "FILE: message"
  // "FILE: same bytes as document(s) ID, ..." per structured file not read again.
  std::vector<std::string> unchanged;
};

using ProgressFn = std::function<void(size_t done, size_t total)>;

// What `eagle reembed` did.
struct ReembedReport {
  std::string collection;
  std::string encoder_before, encoder;    // labels
  std::string identity_before, identity;  // encode::EncoderInfo::identity (empty: not recorded)
  uint32_t dim_before = 0, dim = 0;
  size_t rows = 0;         // rows re-embedded (0 when unchanged)
  bool unchanged = false;  // the vectors were already the encoder's as configured now
};

// How a command opens the store. write: the process owns it (StoreLock on
// DATA_DIR/LOCK; a second writer fails at once). read_only: a reader beside a
// possible writer; nothing in the store is created, truncated, deleted or rewritten.
enum class StoreAccess { read_only, write };

struct DocumentChunk {
  std::string id;
  std::string collection;
  std::string text;
  nlohmann::json metadata;  // the row's scalar fields
};

struct DocumentView {
  registry::DocumentRecord record;
  std::vector<std::string> tags;  // in the record's namespace
  std::vector<DocumentChunk> chunks;  // every collection, ingest (row) order
};

struct CollectionInfo {
  std::string name;
  size_t rows = 0;     // live rows
  size_t deleted = 0;  // tombstones until the next compaction
  uint32_t dimension = 0;
  std::string metric, encoder, index;
  std::string encoder_identity;  // what made the vectors (type, model, fingerprint), as recorded
  std::string stand_in;          // what runs in the encoder's slot when it is not that model; "" when it is
  uint64_t log_bytes = 0;
  uint64_t last_lsn = 0;
};

// A tile's kept image (Engine::tile_image).
struct TileImage {
  std::string image_id;
  std::string media_type;  // image/jpeg | image/png
  std::string bytes;
};

// Thread-safe: searches run in parallel (the store's state under a shared lock);
// ingest, delete, tagging and checkpoints are serialised, prepare their work outside
// the state lock and hold it exclusively only to swap in each commit, so a reader
// sees every document whole or not at all.
class IngestRun;

class Engine {
 public:
  explicit Engine(Config cfg, StoreAccess access = StoreAccess::write, const std::string& owner = "eagle");
  ~Engine();

  const Config& config() const { return cfg_; }
  StoreAccess access() const { return access_; }
  store::Catalog& catalog() { return *catalog_; }
  // Opened on first use: commands that never need it (a failing ingest, a core
  // search) leave the registry file untouched.
  registry::DocumentRegistry& registry();
  encode::EncoderRegistry& encoders() { return encoders_; }
  // The hook bus: an embedding application subscribes its own plugin's hooks here
  // (query and ingest points; docs/architecture.md lists them).
  search::HookBus& hooks() { return bus_; }
  search::CollectionProvider collections();

  // Reads the inputs, embeds them, writes them to their collection (created on first
  // use) and records each document in the registry. Everything is read, validated and
  // embedded before the first write, so a bad record (without skip_bad) or a failing
  // encoder leaves the store unchanged. Each collection's write is atomic; when the
  // document profile splits the input over two collections they are two writes, and
  // the registry rows follow the collection writes.
  // A document ingested again replaces all of its chunks (in every collection), in the
  // same commit as its new ones. Rows are committed in batches of whole documents
  // (ingest.commit_rows); the ingest ends with a checkpoint (ingest.checkpoint).
  IngestReport ingest(const std::vector<std::string>& inputs, const IngestOptions& opts, const ProgressFn& progress = {});

  // The query pipeline; a plugin attaches on first use of its namespace (or at
  // start: preload()).
  search::RetrievalResponse search(const search::RetrievalRequest& req);
  // A search, then an answer over its top_n passages (app/query.h): generated by the
  // configured chat model, else extractive; a model that fails or is busy degrades to
  // the extractive answer with a warning in the generate step. Thread-safe.
  QueryResult query(const QueryRequest& req, const QueryEvents& events = {});
  // A query kept in a session (Eagle-RAG's sessions, in the registry): the session's
  // last generation.history_turns turns go to the model, and the turn is appended;
  // an empty session_id starts a session (titled by the question). not_found when
  // the owner has no such session (another owner's is absent too), conflict when it
  // holds sessions.max_turns. A read-only engine keeps none (invalid_argument when
  // one is named); so does sessions.enabled false.
  QueryResult converse(QueryRequest req, const SessionCall& session, const QueryEvents& events = {});
  // The owner's sessions, most recently used first; total = how many it has.
  std::vector<registry::SessionRecord> list_sessions(const std::string& owner, size_t limit, size_t offset,
                                                     size_t* total = nullptr);
  // The owner's session and its last `last_turns` turns, oldest first; nullopt when it
  // has none such.
  std::optional<std::pair<registry::SessionRecord, std::vector<registry::SessionTurn>>> session(
      const std::string& session_id, const std::string& owner, size_t last_turns);
  // Deletes the owner's session; the number of turns it held, nullopt when none such.
  std::optional<size_t> delete_session(const std::string& session_id, const std::string& owner);
  // Whether a turn may be added to the owner's session, before anything is answered:
  // invalid_argument when this engine keeps no sessions, not_found when the owner has
  // no such session, conflict when it holds sessions.max_turns.
  registry::SessionRecord check_session(const std::string& session_id, const std::string& owner);
  // The registry connection sessions are kept on (sessions_registry_).
  registry::DocumentRegistry& session_registry();
  // The plugin of namespace `ns` attached to this engine (its hooks subscribed on
  // first use); null for core. invalid_argument for a namespace no plugin has.
  plugin::Instance* plugin_instance(const std::string& ns);
  // A hold on the store's state as searches take it: collections found under it stay
  // the same objects until it is let go (a reembed swaps them exclusively).
  std::shared_lock<RwMutex> hold_state() { return std::shared_lock<RwMutex>(state_mu_); }
  // The --format names an ingest takes (the core's and the plugins'), and the
  // modality a format's rows are embedded from (text unless a plugin's format says).
  std::vector<std::string> ingest_formats();
  encode::Modality ingest_modality(const std::string& format);
  // A new text collection's schema: the chunk fields of the core and of every plugin.
  CollectionSchema text_schema(const std::string& collection, const encode::EncoderInfo& encoder) const;
  // Opens every collection and the registry, and loads the namespace's plugin, so
  // the first request does not pay for it (a server calls it before it is ready).
  void preload(const std::string& plugin_namespace);

  // `pipeline.namespace: auto`: the namespace that holds the caller's data. An explicit
  // namespace (core or a plugin's) is returned as is; auto is the first plugin's
  // namespace that the documents within `kb_names` (empty: all) are in, else core.
  // invalid_argument for any other name. Counts are cached for a second and dropped on this engine's writes.
  std::string resolve_namespace(const std::string& configured, const std::vector<std::string>& kb_names = {});
  // Documents per plugin namespace within `kb_names` (namespaces with none left out).
  std::map<std::string, size_t> namespace_counts(const std::vector<std::string>& kb_names = {});

  // Document lifecycle. A document outside `scope` is not_found (its existence is
  // not revealed).
  std::optional<DocumentView> document(const std::string& document_id, const AccessScope& scope = {});
  // Removes every chunk of the document from every collection and its registry row;
  // returns the chunks removed as its view (document()) lists them: caption rows go
  // too, uncounted. not_found when absent.
  size_t delete_document(const std::string& document_id, const AccessScope& scope = {});
  std::vector<std::string> set_tags(const std::string& document_id, const std::string& plugin_namespace,
                                    const std::vector<std::string>& tags, const AccessScope& scope = {});
  std::vector<registry::DocumentRecord> list_documents(const registry::DocumentQuery& q, size_t* total = nullptr);
  std::vector<registry::NameCount> knowledge_bases(const AccessScope& scope = {});
  std::vector<registry::NameCount> tags(std::optional<std::string> plugin_namespace, const AccessScope& scope = {});
  // With a scope (a token limited to knowledge bases): only the collections holding
  // rows of its KBs, and only those rows counted; the tombstones, log bytes and log
  // position (other tenants' write activity) are left at 0. A collection without a
  // row of the scope is not_found, as one that does not exist.
  std::vector<CollectionInfo> collection_infos(const AccessScope& scope = {});
  CollectionInfo collection_info(const std::string& name, const AccessScope& scope = {});
  // Where the visual collection's tiles keep their images (DATA_DIR/images).
  ingest::ImageStore image_store() const;
  // The kept image of a tile of the visual collection, by its image_id (the row id):
  // what a client shows for a hit. nullopt when there is no such tile or it lies
  // outside `scope` (its existence is not revealed); data_loss when the kept file no
  // longer matches its name.
  std::optional<TileImage> tile_image(const std::string& image_id, const AccessScope& scope = {});

  // Rebuilds the vectors of `collection` with encoder `label` (empty: the label the
  // collection records), from each row's text (a compound's SMILES for a molecule
  // encoder), and records the encoder's identity: after a label was configured as
  // another model, or to move a collection to another encoder (its plans then use
  // that label). Atomic: searches go on against the old vectors meanwhile and see the
  // old collection or the new one, never a mix; a crash at any point leaves one of
  // them whole. Ingests and compactions wait until it is done; deletes and tag
  // changes do not (rows deleted meanwhile are dropped from the rebuilt collection
  // before the swap). Rows keep their ids, text and fields. Collections already made
  // by `label` as configured now are left alone (unchanged). `progress` is called
  // between pages with no engine lock held (it may call back into the engine).
  ReembedReport reembed(const std::string& collection, const std::string& label = {},
                        const ProgressFn& progress = {});

  // `eagle repair`: cuts each collection's corrupt log at its first bad frame (the
  // intact records before it are kept; the rest is kept aside in *.damaged* files).
  // Run before any collection is opened, with the store's write lock.
  std::vector<std::pair<std::string, store::LogRepair>> repair();
  // Writes a segment of every collection (fast opens) / also drops deleted rows and
  // the kept images no row names any more (returns how many images went).
  void checkpoint();
  size_t compact();

 // Where plain text goes (the core text collection, the core pipeline's encoder) and
  // where image tiles go (the core visual collection, the visual encoder).
  IngestRoute core_text_route() const;
  IngestRoute visual_route() const;

 private:
  friend class IngestRun;  // the ingest's stages (app/ingest/run.h)
  // What the plugins add to an ingest in namespace `ns` (readers, formats, routing).
  IngestExtensions ingest_extensions(const std::string& ns);
  // Tells each attached plugin that an ingest wrote documents' brand names.
  void plugins_after_ingest();
  void ensure_plugin(const std::string& ns);
  // The pipeline without the evidence: `req.plugin_namespace` resolved in place (auto),
  // the response's namespace step in its metadata.
  search::RetrievalResponse retrieve(search::RetrievalRequest& req);
  // The answer stage's steps (engine_query.cpp): rerank.text before the top_n cut (its
  // step; the fused order kept on failure), then section summaries swapped for the
  // whole chunk they restate.
  nlohmann::json rerank_passages(const std::string& query, search::HitList& hits, size_t top_n,
                                 std::vector<std::string>& warnings);
  void quote_whole_chunks(search::HitList& hits, const std::vector<std::string>& allowed_kbs);
  // The question's index terms (compounds folded) with their idf in the first text
  // hit's collection (the caller's statistics), and its entities when `entities`.
  answer::QuestionTerms question_terms(const search::RetrievalRequest& req, const search::HitList& hits, bool entities);
  // The evidence of `hits` for `req` (answer/evidence.h), the level over the first top_n.
 public:
  // `collect_all_signals`: also the signals the model gives no weight (for calibration).
  answer::Evidence evidence_of(const search::RetrievalRequest& req, const search::HitList& hits, size_t top_n,
                               bool collect_all_signals = false);

 private:
  // metadata["evidence"] = {level, score, hits: [p...]} for the response's first hits
  // (answer/evidence.h), the level taken over the first top_n.
  void attach_evidence(const search::RetrievalRequest& req, search::RetrievalResponse& resp, size_t top_n);
  void ensure_plugin_locked(const std::string& ns);
  std::string default_encoder(const std::string& collection) const;
  void require_writer(const char* what) const;
  // Collections whose schema has a document_id field (where a document's chunks live).
  std::vector<store::Collection*> document_collections();

  Config cfg_;
  // pipeline_config(cfg_), made once: the core collections and the plugins' settings.
  search::PipelineConfig base_pipeline_;
  StoreAccess access_;
  std::optional<store::StoreLock> lock_;  // held for the Engine's life when access_ == write
  // state_mu_: searches shared, the swap of a commit exclusive. ingest_mu_ runs
  // ingests one at a time; write_mu_ orders each commit, delete, tag change and
  // checkpoint. init_mu_ guards lazy set-up (registry, vocabulary, plugins).
  // Lock order: ingest_mu_, attach_mu_, write_mu_, state_mu_, init_mu_.
  RwMutex state_mu_;
  std::mutex ingest_mu_;
  std::mutex write_mu_;
  std::atomic<uint64_t> deletes_{0};  // documents deleted so far (ingest's registry step, reembed's check)
  // namespace_counts' cache: key = the scope's KB names; dropped when writes_ moves.
  struct NamespaceCounts {
    uint64_t writes = 0;
    std::chrono::steady_clock::time_point at;
    std::map<std::string, size_t> counts;
  };
  std::atomic<uint64_t> writes_{0};     // registry writes by this engine (ingest commits, deletes)
  std::atomic<size_t> generations_{0};  // chat generations running (generation.max_concurrent)
  std::mutex ns_counts_mu_;
  std::map<std::string, NamespaceCounts> ns_counts_;
  std::recursive_mutex init_mu_;
  std::mutex attach_mu_;  // a plugin attaching (before state_mu_ in the lock order)
  std::atomic<bool> core_ready_{false};
  // Per plugin of builtin_plugins(), in order: attached, and its instance.
  std::unique_ptr<std::atomic<bool>[]> plugin_ready_;
  std::vector<std::unique_ptr<plugin::Instance>> instances_;
  std::once_flag registry_once_, sessions_once_;
  std::unique_ptr<store::Catalog> catalog_;
  std::unique_ptr<registry::DocumentRegistry> registry_;
  // Sessions on a connection of their own: an ingest's batch holds the documents'
  // connection in one long transaction, which a turn must not join (it would become
  // durable only when, and if, the batch commits).
  std::unique_ptr<registry::DocumentRegistry> sessions_registry_;
  std::string registry_url_;
  encode::EncoderRegistry encoders_;
  search::HookBus bus_;
  std::unique_ptr<search::DocumentCatalog> doc_catalog_;
  std::unique_ptr<search::Orchestrator> orchestrator_;
  std::shared_ptr<search::TelemetrySink> sink_;
};

}  // namespace eagle::app

namespace eagle::app {
// The pipeline settings of a configuration (pipeline.* and what each plugin adds).
search::PipelineConfig pipeline_config(const Config& cfg);
}  // namespace eagle::app
