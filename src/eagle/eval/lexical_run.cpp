#include "eagle/eval/lexical_run.h"

namespace eagle::eval {

index::Bm25Index build_bm25(const std::vector<Document>& docs, index::Bm25Params params,
                            text::AnalyzerOptions analyzer,
                            const std::function<void(size_t)>& progress) {
  index::Bm25Index idx(params, analyzer);
  for (size_t i = 0; i < docs.size(); ++i) {
    idx.add(docs[i].indexed_text());
    if (progress && (i + 1) % 1000 == 0) progress(i + 1);
  }
  return idx;
}

Run run_bm25(const index::Bm25Index& idx, const std::vector<Document>& docs,
             const std::vector<Query>& queries, size_t depth, index::TopKAlgorithm algo) {
  Run run;
  for (const auto& q : queries) {
    auto& entries = run[q.id];
    for (const auto& h : idx.search(q.text, depth, algo))
      entries.push_back({docs[h.doc].id, round_score_for_run(h.score)});
  }
  return run;
}

}  // namespace eagle::eval
