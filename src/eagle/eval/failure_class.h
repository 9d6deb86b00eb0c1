#pragma once
// The seed's failure diagnosis taxonomy (biomed-retrieval.txt, "failure_class"), for
// each query of an evaluation against a store:
//   ok               a relevant document is in the first `ok_depth` hits (Hit@5 in
//                    the seed's smoke set);
//   gold_corpus_gap  no relevant document is in the store at all;
//   query_route_gap  relevant documents are stored, but only in collections the
//                    query's route did not search;
//   ranking_gap      a searched collection holds a relevant document, ranked below
//                    ok_depth or not recalled.
// The seed's other two classes, gold_over_specified and term_metric_strict, judge the
// gold itself (expected terms, over-narrow gold) and need annotations BEIR qrels do
// not have; they are never assigned here.
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace eagle::eval {

enum class FailureClass { ok, ranking_gap, query_route_gap, gold_corpus_gap };
std::string_view failure_class_name(FailureClass c);

struct FailureEvidence {
  std::vector<std::string> relevant;    // ids judged relevant (> 0)
  std::vector<std::string> ranked;      // the run's ids, best first
  std::set<std::string> routed;         // collections the route searched
  // The collections of the store that hold a row with this id.
  std::function<std::vector<std::string>(const std::string& id)> holders;
};

FailureClass classify_failure(const FailureEvidence& e, size_t ok_depth = 5);

}  // namespace eagle::eval
