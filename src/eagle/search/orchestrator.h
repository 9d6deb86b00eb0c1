#pragma once
// RetrieverOrchestrator (seed: retriever_orchestrator.py): per query, QUERY_ASSEMBLE
// -> CLASSIFY_QUERY (or the core default route, G4) -> scope union -> per plan:
// QUERY_DENSE_EXPAND -> encode -> dense ANN with the plan's filters (+ the lexical leg
// when hybrid) -> fuse -> RERANK; then RETRIEVE_SUPPLEMENT -> merge_rrf ->
// dedupe_cross_collection (G32) -> RRF_POST_MERGE -> graph and parent-document
// expansion -> RERANK_MERGED per the rerank policy -> near-duplicate collapse ->
// final_top_k. A plan that throws
// is skipped with a warning and a plan_failed audit; the query still answers.
// G4, G32: the seed's rule codes, docs/glossary.md.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "eagle/encode/encoder.h"
#include "eagle/search/fusion.h"
#include "eagle/search/hookbus.h"
#include "eagle/search/telemetry.h"
#include "eagle/search/types.h"
#include "eagle/store/collection.h"

namespace eagle::search {

// What the pipeline needs from the document registry (SQLite/PostgreSQL backends
// implement it): tags -> document ids (namespace-scoped) and the catalog of
// collections the scoped documents used at ingest.
class DocumentCatalog {
 public:
  virtual ~DocumentCatalog() = default;
  // within_kbs (non-empty): a scoped request's knowledge bases; documents of others
  // neither match nor count (an existence oracle otherwise).
  virtual std::vector<std::string> ids_for_tags(const std::vector<std::string>& tags, const std::string& ns,
                                                size_t limit, const std::vector<std::string>& within_kbs) = 0;
  virtual std::vector<std::string> collections_used(const std::vector<std::string>& kb_names,
                                                    const std::vector<std::string>& document_ids,
                                                    const std::string& ns,
                                                    const std::vector<std::string>& within_kbs) = 0;
};

enum class RerankPolicy { domain, general, none };
enum class HybridMode { true_hybrid, alpha };

struct PipelineConfig {
  // The chunk fields the build's plugins stamp (plugin/plugin.h): filters may name
  // them, and the indexed ones are facets (a string list matches any of its values).
  std::vector<FieldSchema> plugin_fields;
  std::string core_text_collection = "eagle_text";
  std::string core_text_encoder = "glove";        // what the core text collection's plans use
  // The label for a text collection that records none (pipeline.text_encoder; not
  // moved by a reembed of the core text collection).
  std::string default_text_encoder = "glove";
  std::string core_visual_collection = "eagle_visual";
  std::string core_visual_encoder = "qwen3-vl";
  size_t recall_top_k = 20;
  int rrf_k = 60;
  size_t final_top_k = 5;
  std::set<std::string> hybrid_text_collections = {"eagle_text"};
  HybridMode hybrid_mode = HybridMode::true_hybrid;
  double hybrid_alpha = 0.6;
  HybridOptions hybrid;
  size_t max_scope_documents = 500;
  // A request with allowed_kbs (a scoped token) scores BM25 over those KBs' rows alone.
  bool isolate_statistics = true;
  bool parent_doc_retrieval = true;
  bool graph_expansion = true;
  // The connect_to relations graph expansion follows (edges given as {target, relation});
  // plain-id edges have no relation and are always followed. "cites" brings the table or
  // figure a paragraph cites, "child" a summary's chunks. "parent", "previous" and
  // "next" (a chunk's section summary and neighbours) are left to the drill-down: each
  // followed edge adds a hit at its parent's score.
  std::vector<std::string> expansion_relations = {"cites", "child"};
  size_t max_expansion = 50;  // expanded nodes per query (graph + drill-down)
  bool collapse_duplicates = true;    // collapse_near_duplicates before the final trim
  // Chunk types left out of a search that names none in a type or chunk_type facet or in
  // its filter (reference lists: dense with a paper's terms, never its answer).
  std::vector<std::string> exclude_chunk_types = {"references"};
  double duplicate_similarity = 0.9;  // its Jaccard threshold
  std::map<std::string, RerankPolicy> rerank_policy;  // per namespace; unset -> resolved
  std::string general_reranker;                       // registry label; empty = none
  std::map<std::string, std::string> collection_encoders;  // for scope-union plans
};

using CollectionProvider = std::function<store::Collection*(const std::string& name)>;

class Orchestrator {
 public:
  Orchestrator(CollectionProvider collections, encode::EncoderRegistry& encoders, HookBus& bus,
               PipelineConfig config, std::shared_ptr<TelemetrySink> sink = nullptr,
               DocumentCatalog* documents = nullptr);

  RetrievalResponse retrieve(const RetrievalRequest& request) const;

  // Exposed for tests: the core default route (G4: core collections only) and the
  // resolved rerank policy.
  RouteDecision default_route(const RetrievalRequest& request) const;
  // What a plan the orchestrator builds recalls: the recall depth, or the hits asked
  // for when they are more.
  size_t recall_depth(const RetrievalRequest& request) const { return std::max(config_.recall_top_k, request.top_k); }
  RerankPolicy resolve_rerank_policy(const std::string& ns) const;
  const PipelineConfig& config() const { return config_; }
  // The encoder the core text collection's plans use (after `eagle reembed` gave its
  // vectors another label). Not thread-safe: call with searches held back.
  void set_core_text_encoder(std::string label) { config_.core_text_encoder = std::move(label); }
  void set_core_visual_encoder(std::string label) { config_.core_visual_encoder = std::move(label); }

 private:
  struct Scope {
    std::string expr;  // "(kb_name in {scope_kbs} or document_id in {scope_docs})" with bound params
    store::TemplateParams params;
    std::vector<std::string> document_ids;
    bool capped = false;
  };
  Scope build_scope(const RetrievalRequest& req, HookContext& ctx, Telemetry& tel) const;
  // The stages of retrieve() (orchestrator.cpp says what each does).
  RouteDecision decide_route(const RetrievalRequest& req, HookContext& ctx, bool image_only) const;
  void add_scope_union(const RetrievalRequest& req, const Scope& scope, const HookContext& ctx,
                       RouteDecision& route) const;
  void exclude_chunk_types(const RetrievalRequest& req, HitList& merged, Telemetry& tel) const;
  void rerank_merged(RerankPolicy policy, HookContext& ctx, const std::string& query, const RetrievalRequest& req,
                     HitList& merged, Telemetry& tel) const;
  // The rows a request's BM25 statistics come from, as a filter over the scope's
  // parameters: a scoped token's own knowledge bases (tenancy.isolate_statistics), else
  // empty (the collection's).
  std::string statistics_filter(const RetrievalRequest& req) const;
  HitList run_plan(const CollectionQueryPlan& plan, const std::string& query, const Scope& scope,
                   const RetrievalRequest& req, HookContext& ctx, bool lazy) const;
  // Fills text and metadata of lazy hits from their collections' rows.
  void materialize(HitList& hits) const;
  // A caption row (type caption) stands for its table or figure (its caption_of edge):
  // each is replaced in place by that row, keeping its score; a table already listed
  // keeps the better place; a caption whose table is gone or out of scope is dropped.
  HitList resolve_captions(HitList hits, const Scope& scope, bool explain, Telemetry& tel) const;
  HitList expand(HitList hits, const RouteDecision& route, const RetrievalRequest& req, const Scope& scope,
                 Telemetry& tel) const;

  CollectionProvider collections_;
  encode::EncoderRegistry& encoders_;
  HookBus& bus_;
  PipelineConfig config_;
  // From config_, made once: the schema a filter is checked against (the chunk fields
  // and the plugins'), and the fields a request may facet on (list fields apart).
  CollectionSchema filter_schema_;
  std::set<std::string> facet_fields_, list_facet_fields_;
  std::shared_ptr<TelemetrySink> sink_;
  DocumentCatalog* documents_;
};

// A collection row as a pipeline hit (text, metadata from the scalar fields).
ScoredHit hit_from_record(const store::Record& r, const CollectionSchema& schema, const std::string& collection,
                          double score);
ScoredHit hit_from_row(const std::string& id, const std::string& text, ValuesView values,
                       const CollectionSchema& schema, const std::string& collection, double score);

// Bounds on requests: sizes from requests are bounded, so no request can ask for
// unbounded work.
inline constexpr size_t kMaxFinalTopK = 1000;
inline constexpr size_t kMaxQueryBytes = 16384;
// A query image (PNG or JPEG bytes): a photographed page or a figure at full
// resolution fits; the decoder bounds its pixels too.
inline constexpr size_t kMaxQueryImageBytes = 20u << 20;
// A query image decodes to at most this many pixels (48 MB as RGB; a 12-megapixel photo
// fits), tighter than an ingested image, so a small compressed file cannot make every
// concurrent search decode 150 MB.
inline constexpr uint64_t kMaxQueryImagePixels = 16'000'000;

}  // namespace eagle::search
