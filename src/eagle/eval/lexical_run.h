#pragma once
// BM25 runs over a BEIR set: shared by `eagle eval`, `eagle bench` and bench_lexical.
#include <functional>
#include <vector>

#include "eagle/core/document.h"
#include "eagle/eval/beir.h"
#include "eagle/eval/metrics.h"
#include "eagle/index/lexical/bm25_index.h"

namespace eagle::eval {

index::Bm25Index build_bm25(const std::vector<Document>& docs, index::Bm25Params params,
                            text::AnalyzerOptions analyzer,
                            const std::function<void(size_t done)>& progress = {});

// Top `depth` per query, scores rounded as the run file stores them.
Run run_bm25(const index::Bm25Index& idx, const std::vector<Document>& docs,
             const std::vector<Query>& queries, size_t depth,
             index::TopKAlgorithm algo = index::TopKAlgorithm::maxscore);

}  // namespace eagle::eval
