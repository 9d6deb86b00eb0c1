// The seed's failure classes, decided from the run, the route and where the gold lives.
#include "eagle/eval/failure_class.h"

#include <gtest/gtest.h>

#include <map>

using namespace eagle::eval;

TEST(FailureClass, OkRankingRouteAndCorpusGapsAreToldApart) {
  const std::map<std::string, std::vector<std::string>> stored = {
      {"g-text", {"eagle_text_biomed"}}, {"g-chem", {"eagle_chemical"}}};
  FailureEvidence e;
  e.holders = [&](const std::string& id) {
    auto it = stored.find(id);
    return it == stored.end() ? std::vector<std::string>{} : it->second;
  };
  e.routed = {"eagle_text_biomed"};
  e.ranked = {"a", "b", "c", "d", "e", "g-text"};
  e.relevant = {"g-text"};
  EXPECT_EQ(classify_failure(e, 5), FailureClass::ranking_gap);  // 6th
  EXPECT_EQ(classify_failure(e, 6), FailureClass::ok);
  e.relevant = {"g-chem"};  // stored, but in a collection the route did not search
  EXPECT_EQ(classify_failure(e), FailureClass::query_route_gap);
  e.relevant = {"absent"};
  EXPECT_EQ(classify_failure(e), FailureClass::gold_corpus_gap);
  e.relevant = {"absent", "g-chem", "g-text"};  // one searched holder is enough
  EXPECT_EQ(classify_failure(e), FailureClass::ranking_gap);
  EXPECT_EQ(failure_class_name(FailureClass::query_route_gap), "query_route_gap");
}
