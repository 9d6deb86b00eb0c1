#pragma once
// The query pipeline's small explicit types (ARCHITECTURE.md): a ScoredHit with its
// Explain, a CollectionQueryPlan, a RouteDecision, an ExpandedQuery.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace eagle::search {

// Per-hit explanation: rank and score in every leg the hit went through.
struct Explain {
  // {"dense": {rank, score}, "bm25": {...}, "rrf": {...}, ...}; null (no allocation)
  // until a leg is recorded, so hits without explain cost nothing here.
  nlohmann::json legs;
  void leg(const std::string& name, int rank, double score) { legs[name] = {{"rank", rank}, {"score", score}}; }
  void note(const std::string& name, const nlohmann::json& v) { legs[name] = v; }
};

struct ScoredHit {
  std::string id;          // node id (the collection row's id)
  std::string collection;  // where it came from
  double score = 0;
  std::string text;
  // Scalar fields of the row: an object once materialised; null (no allocation) on
  // a lazy hit, which only the orchestrator handles before materialising it.
  nlohmann::json metadata;
  Explain explain;
  bool is_image = false;
  // Lazy hits: a plan's legs carry only id, score and the collection row until the
  // orchestrator knows which hits survive (text and metadata are then filled in).
  static constexpr uint32_t kNoRow = UINT32_MAX;
  uint32_t row = kNoRow;
  bool materialized = true;
  // Set on a hit that graph expansion or the parent-document drill-down brought in:
  // "collection\x1fid" of the hit it was expanded from (it inherits that hit's score,
  // seed retrieval.txt §4.4, so a reranker must know where the score came from).
  std::string expanded_from;
  // Hits folded into this one by the near-duplicate collapse: [{id, collection, score}].
  nlohmann::json duplicates;

  // The seed's dedupe keys.
  std::string source_chunk_id() const { return field("source_chunk_id"); }
  std::string document_id() const { return field("document_id"); }
  std::string path() const { return field("path"); }
  std::string field(const char* name) const {
    if (!metadata.is_object()) return {};
    auto it = metadata.find(name);
    return it != metadata.end() && it->is_string() ? it->get<std::string>() : std::string();
  }
};

using HitList = std::vector<ScoredHit>;

struct CollectionQueryPlan {
  std::string collection;
  std::string encoder;       // encoder label (registry)
  size_t top_k = 20;         // recall depth of this plan
  bool hybrid = false;       // run the lexical leg and fuse
  std::string filter;        // extra Milvus-grammar filter for this plan (AND-ed with scope)
  nlohmann::json filter_params = nlohmann::json::object();
};

struct RouteDecision {
  std::vector<CollectionQueryPlan> plans;
  nlohmann::json hints = nlohmann::json::object();  // e.g. {"parent_doc_retrieval": false}
  std::string source = "core_default";              // classifier name, or core_default (G4, docs/glossary.md)
  nlohmann::json to_json() const;
};

struct ExpandedQuery {
  std::string dense_query;
  std::vector<std::string> sparse_terms;
  nlohmann::json intent;  // opaque to core; stashed for later hooks
  // No dense query exists for the plan's encoder (a compound named without a
  // structure for a molecule encoder): the plan runs its lexical leg alone, so the
  // compound is still found by name.
  bool lexical_only = false;
};

enum class RouteMode { text, visual, hybrid };
RouteMode parse_route_mode(const std::string& s);

struct ScopeFilter {
  std::vector<std::string> kb_names, document_ids, tags;
  bool empty() const { return kb_names.empty() && document_ids.empty() && tags.empty(); }
};

// What a caller asks (CLI, HTTP, MCP all build one of these).
struct RetrievalRequest {
  std::string query;
  size_t top_k = 5;  // final_top_k
  std::string kb_name;
  ScopeFilter scope_filter;
  std::vector<std::string> legacy_scope;  // document ids, post-filter
  std::map<std::string, nlohmann::json> facets;  // source_type, year, chunk_type, parent_section, type
  // A Milvus filter expression AND-ed with the scope. It must parse on its own (so it
  // cannot reach outside its parentheses) against the chunk fields.
  std::string filter;
  // Knowledge bases the caller may see (a token's kb_names): forced onto every leg,
  // expansion, drill-down and supplement. Empty = no restriction.
  std::vector<std::string> allowed_kbs;
  RouteMode route_mode = RouteMode::text;
  bool has_image = false;
  // A query image (PNG or JPEG bytes, at most kMaxQueryImageBytes): the visual
  // collection's dense leg embeds it (image -> image); `query` may then be empty.
  std::string image;
  std::string plugin_namespace = "core";
  bool explain = false;
  // Hits scoring below this are dropped after the final ranking (scores are on the
  // final stage's scale: docs/biomed.md "Scores").
  std::optional<double> min_score;
};

struct RetrievalResponse {
  HitList hits;
  RouteDecision route;
  nlohmann::json metadata = nlohmann::json::object();  // scope cap, timings, rerank decision
};

}  // namespace eagle::search
