#pragma once
// Fusion primitives of the core query pipeline (seed: rerank_fusion.py,
// hybrid_text_retriever.py), each tested against the seed's rule names.
#include <string>
#include <vector>

#include "eagle/search/telemetry.h"
#include "eagle/search/types.h"

namespace eagle::search {

// merge_rrf (seed biomed-retrieval.txt, "RRF merge & dedupe"): score[key] +=
// 1 / (k + rank), ranks 1-based. G8: an empty list
// contributes nothing. A single non-empty list passes through unchanged (no fusion
// math). Dedup key: node id, else source_chunk_id, else (document_id, path).
HitList merge_rrf(std::vector<HitList> lists, int k = 60, bool explain = false);

// dedupe_cross_collection (G32): when more than one plan succeeded, collapse
// duplicates by source_chunk_id, else (document_id, path), keeping the better-ranked
// hit; audits `rrf_dedupe` with the number removed.
HitList dedupe_cross_collection(HitList merged, int succeeded_plans, Telemetry* telemetry);

// Near-duplicate collapse: walking the hits in rank order until
// `keep` hits are kept, a hit is folded into an earlier kept hit when
//   - their texts are near-identical: Jaccard similarity of their word 3-shingles
//     >= `threshold` (identical chunks of two labels), or
//   - one is a section summary that restates the other, a chunk of the same document
//     under its path: the share of the summary's shingles in the chunk, or of the
//     chunk's in the summary, is >= `threshold`.
// The folded hit is listed in the kept hit's `duplicates` ({id, collection, score});
// hits past the kept ones are left as they are.
HitList collapse_near_duplicates(HitList hits, size_t keep, double threshold, Telemetry* telemetry = nullptr);

// inject_supplement_candidates: up to `min_new` supplement hits not already in
// `merged` go to the top, each with score += `boost` so they survive rerank trimming.
HitList inject_supplement_candidates(HitList merged, const HitList& supplement, size_t min_new = 2,
                                     double boost = 100.0);

// The seed's sparse_score: fraction of terms (lower-cased alphanumeric query tokens,
// hyphenated names kept, plus extra terms) found as substrings of the lower-cased text.
std::vector<std::string> sparse_terms_of(const std::string& query, const std::vector<std::string>& extra);
double sparse_score(const std::string& query, const std::string& text, const std::vector<std::string>& extra);

// Parity hybrid (hybrid_fuse_dense_sparse): over the dense candidates,
// alpha * dense + (1 - alpha) * overlap, dense = cosine mapped to [0, 1].
HitList alpha_hybrid(HitList dense, const std::string& query, const std::vector<std::string>& extra, double alpha);

// True hybrid: fuse a dense list and a BM25 list over the whole collection.
enum class HybridFusion { rrf, weighted };
struct HybridOptions {
  HybridFusion fusion = HybridFusion::weighted;
  int rrf_k = 60;
  double dense_weight = 0.3;  // weighted: w * minmax(dense) + (1 - w) * minmax(bm25)
  // Scales the dense weight per query by how much the two legs' top `agreement_depth`
  // hits overlap: a dense leg that disagrees with BM25 everywhere is mostly noise
  // (a weak static encoder on keyword-heavy questions), one that agrees refines it.
  bool adaptive = false;
  size_t agreement_depth = 10;
  double agreement_min = 0.0;  // below this overlap the dense leg is ignored for the query
};
HitList fuse_hybrid(HitList dense, HitList lexical, const HybridOptions& opts, bool explain);

// Sorts by score descending, ties by id (deterministic output).
void sort_hits(HitList& hits);

}  // namespace eagle::search
