#pragma once
// Eagle's configuration: documented defaults, then a YAML file, then EAGLE_*
// environment variables, then command-line flags (each later source wins).
// Every option is one entry of a table, so the YAML key, the environment variable,
// the documentation and the default printed by `eagle config` cannot drift apart.
#include <any>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "eagle/store/merge_policy.h"
#include "eagle/app/build_paths.h"
#include "eagle/core/schema.h"
#include "eagle/index/lexical/bm25_index.h"
#include "eagle/text/analyzer.h"
#include "eagle/answer/options.h"
#include "eagle/answer/evidence.h"

namespace eagle::app {

struct Config {
  std::string data_dir = "eagle-data";
  index::Bm25Params bm25;
  text::AnalyzerOptions analyzer;
  index::TopKAlgorithm topk_algorithm = index::TopKAlgorithm::maxscore;
  size_t top_k = 10;
  size_t run_depth = 1000;
  bool skip_bad = false;
  bool repair_utf8 = false;  // invalid UTF-8 in ingested text becomes U+FFFD instead of an error
  // Ingest writes in commits of about this many rows (whole documents each), so a
  // server's searches wait at most one commit; the ingest ends with a checkpoint so
  // the next open loads a segment instead of replaying the log.
  size_t ingest_commit_rows = 1024;
  // Structured documents (JATS, PubMed, PDF, HTML): paragraphs packed into chunks of at
  // most this many bytes (tables and figures whole), and each section summary's length.
  size_t ingest_chunk_chars = 1500;
  size_t ingest_summary_chars = 200;
  bool checkpoint_after_ingest = true;
  // A collection checkpoints by itself once its log passes this many bytes.
  uint64_t checkpoint_wal_bytes = 64ull << 20;
  // Which segments a checkpoint merges (store/merge_policy.h).
  store::MergePolicy merges;
  // Sealed segments' vectors and graphs mapped, not copied (CollectionOptions::map_vectors).
  bool map_vectors = true;
  // New rows linked into the graph by a builder thread (CollectionOptions::background_linking).
  bool background_linking = true;
  uint64_t max_unlinked_rows = 8192;
  bool writer_links = true;  // CollectionOptions::writer_links
  uint32_t builder_threads = 1;  // CollectionOptions::builder_threads
  // `eagle serve` (docs/http-api.md).
  struct Server {
    std::string host = "127.0.0.1";
    int port = 8686;
    size_t threads = 16;                      // HTTP worker threads (searches run on them in parallel)
    size_t max_body_bytes = 64ull << 20;      // 413 beyond
    std::string ingest_root;                  // POST /ingest {"path"} resolves under it; empty = refused
    std::vector<std::string> allowed_hosts;   // Host header allow-list; empty = loopback names + server.host
    std::vector<std::string> allowed_origins; // Origin allow-list; empty = none (browsers' cross-site calls refused)
    double request_timeout_s = 30;            // deadline for reading a body, and for writing an answer
    double header_timeout_s = 10;             // deadline for a request's headers (also the keep-alive idle limit)
    size_t max_connections = 10000;          // open connections; more are closed as accepted
    size_t io_threads = 1;                    // threads reading and writing sockets (handlers run on `threads`)
    int ingest_nice = 10;                     // niceness of the ingest task thread (0..19)
  } server;
  // MCP (`eagle mcp` on stdio, /mcp on `eagle serve`).
  struct Mcp {
    int discover_ttl_ms = 300000;  // how long a client may cache server/discover and tools/list
    size_t max_sessions = 1000;    // stateful (2025-11-25) HTTP sessions; the idlest is dropped beyond
    size_t max_sessions_per_token = 100;  // one token's; beyond, its own idlest is dropped
    double session_idle_s = 3600;  // an HTTP session unused this long is dropped (404 afterwards)
  } mcp;
  // auth.tokens: [{name, token_env, kb_names?}] (JSON; the YAML list is converted).
  nlohmann::json auth_tokens = nlohmann::json::array();
  // The `encoders:` section, label -> settings (see encode/registry_config.h); kept
  // as JSON because its shape depends on each encoder's type.
  nlohmann::json encoders = nlohmann::json::object();
  // Files made on first use and kept across runs and stores (the converted GloVe
  // vectors, the compiled biomed vocabulary): empty = $XDG_CACHE_HOME/eagle, else
  // $HOME/.cache/eagle, else DATA_DIR/cache; never the working directory (cache_dir_of).
  std::string cache_dir;
  // The embedded default text encoder ("glove"): GloVe 6B 100d from the npm asset,
  // converted once to `glove_file` (empty = CACHE_DIR/glove100.eaglewv, glove_file_of).
  std::string glove_json = build_glove_json();
  std::string glove_file;
  // Query pipeline (seed: router.*).
  struct Pipeline {
    std::string text_encoder = "glove";
    size_t recall_top_k = 20;       // per-plan recall (collection_recall_top_k)
    size_t final_top_k = 5;
    int rrf_k = 60;
    std::string hybrid_mode = "true_hybrid";  // true_hybrid (dense + BM25 fused) | alpha (the seed's)
    std::string hybrid_fusion = "weighted";  // weighted | rrf
    // Tuned on SciFact train and BioASQ dev (docs/benchmarks.md): the static dense leg
    // helps where it agrees with BM25 and only adds noise where it does not.
    double dense_weight = 0.2;               // weighted fusion: share of the dense leg
    bool adaptive_fusion = true;             // scale dense_weight by top-10 agreement
    double agreement_min = 0.2;              // adaptive: ignore the dense leg below this agreement
    double hybrid_alpha = 0.6;               // the seed's alpha hybrid
    size_t max_scope_documents = 500;
    // tenancy.isolate_statistics: a search by a token limited to knowledge bases scores
    // BM25 with those KBs' statistics alone (else the collection's).
    bool isolate_statistics = true;
    bool parent_doc_retrieval = true;
    bool graph_expansion = true;
    std::vector<std::string> expansion_relations = {"cites", "child"};  // connect_to relations followed
    bool collapse_duplicates = true;     // near-duplicate collapse (search/fusion.h)
    std::vector<std::string> exclude_chunk_types = {"references"};  // left out unless a facet or filter names chunk types
    double duplicate_similarity = 0.9;   // Jaccard of word 3-shingles
    std::string telemetry_file;              // JSONL sink; empty = none
    // Namespace of searches that name none: core, biomed, or auto (biomed when the
    // caller's documents include biomed ones, else core).
    std::string plugin_namespace = "auto";
    std::map<std::string, std::string> rerank_policy;  // namespace -> domain | general | none
    std::string general_reranker;                     // reranker label; empty = none
  } pipeline;
  // The answer stage (POST /query, eagle query, MCP core_query): generation.* and the
  // seed's rerank.text.
  answer::GenerationOptions generation;
  // Evidence strength on every search and answer (answer/evidence.h): evidence.*.
  answer::EvidenceOptions evidence;
  // Sessions of /query (Eagle-RAG's), kept in the registry by a writer engine.
  struct Sessions {
    bool enabled = true;
    size_t max_per_owner = 1000;  // one owner's least recently used go beyond
    size_t max_turns = 200;       // a session beyond refuses the next turn (409)
  } sessions;
  // HNSW settings of the collections an ingest creates (seed: M=16, efConstruction=256,
  // ef=64); a collection keeps the settings it was created with.
  HnswParams hnsw;
  // The visual collection (seed retrieval.txt §6.2, §10.3): its encoder (the
  // seed's Qwen3-VL slot; without a model, the embedded dct-lowfreq-v1 descriptor stands
  // in), its index, and the page tiles an ingest of a PDF makes.
  struct Visual {
    std::string encoder = "qwen3-vl";
    std::string index_type = "hnsw";  // hnsw | flat (the seed's diskann is not built)
    HnswParams hnsw;                  // seed: M=16, efConstruction=256, ef=64
    double bm25_b = 1.0;              // length normalisation of the tiles' text (see visual_schema)
    bool page_images = true;          // a PDF's pages become page tiles
    bool figure_files = true;         // JATS/HTML/Markdown figures whose image files sit beside them become figure tiles
    double page_dpi = 72;             // rendering resolution of a page tile
    int jpeg_quality = 85;            // a page tile is kept as JPEG at this quality
    size_t tile_text_chars = 8000;    // a page tile's indexed text is cut at a word beyond this
  } visual;
  // The document registry: empty = SQLite at <data_dir>/registry.db; else a URL
  // (sqlite:PATH, postgresql://...; see registry/registry.h).
  std::string registry_url;
  // Each plugin's settings, by its name (plugin/plugin.h): a value of the plugin's
  // own type, read with settings_of<T>(cfg, name).
  std::map<std::string, std::any> plugin_settings;
};

// A plugin's settings: its defaults until an option sets one.
template <class T>
T& settings_of(Config& cfg, const std::string& plugin) {
  auto& a = cfg.plugin_settings[plugin];
  if (!a.has_value()) a = T{};
  return std::any_cast<T&>(a);
}
template <class T>
const T& settings_of(const Config& cfg, const std::string& plugin) {
  static const T defaults{};
  const auto it = cfg.plugin_settings.find(plugin);
  return it == cfg.plugin_settings.end() ? defaults : std::any_cast<const T&>(it->second);
}

struct ConfigOption {
  std::string key;  // YAML path, dotted: "bm25.k1"
  std::string doc;
  std::function<void(Config&, const std::string&)> set;  // throws eagle::Error
  std::function<std::string(const Config&)> get;
  std::string env_name() const;  // EAGLE_BM25_K1
};

const std::vector<ConfigOption>& config_options();

// Bounds on counts a request may ask for: sizes from requests are bounded, so no
// request can ask for unbounded work.
inline constexpr size_t kMaxTopK = 10000;

// Loads defaults <- file (if given, else $EAGLE_CONFIG, else ./eagle.yaml when
// present) <- environment. Unknown keys and bad values are errors naming the key.
Config load_config(const std::optional<std::filesystem::path>& file);
void set_option(Config& cfg, const std::string& key, const std::string& value);

// The documented default configuration as YAML (what `eagle config` prints).
std::string describe_config(const Config& cfg);

// Where the caches go: cache_dir, else $XDG_CACHE_HOME/eagle (an absolute path, as the
// XDG spec requires), else $HOME/.cache/eagle, else DATA_DIR/cache.
std::string cache_dir_of(const Config& cfg);
// glove.file, else CACHE_DIR/glove100.eaglewv.
std::string glove_file_of(const Config& cfg);

// Option values (what an option's setter reads and its getter prints), for the
// plugins' options as for the core's: each failure names the key.
double to_double(const std::string& key, const std::string& v);
size_t to_count(const std::string& key, const std::string& v, size_t max);  // in [1, max]
bool to_bool(const std::string& key, const std::string& v);
std::string fmt(double d);
std::vector<std::string> split_list(const std::string& v);  // comma-separated, trimmed
std::string join_list(const std::vector<std::string>& v);
// "a, b, c": a list for a message.
std::string join_words(const std::vector<std::string>& v);

}  // namespace eagle::app
