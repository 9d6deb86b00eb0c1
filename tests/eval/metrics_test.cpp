// Metrics against values computed by hand, following trec_eval's definitions.
#include "eagle/eval/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "eagle/core/error.h"

using namespace eagle::eval;

namespace {
double lg(double x) { return std::log2(x); }
}

TEST(Metrics, BinaryRelevanceByHand) {
  Qrels qrels;
  qrels["q1"] = {{"d1", 1}, {"d3", 1}, {"d9", 1}};  // d9 never retrieved
  eagle::eval::Run run;
  run["q1"] = {{"d1", 0.9}, {"d2", 0.8}, {"d3", 0.7}, {"d4", 0.6}};
  MetricSet m;
  m.ndcg_cuts = {3, 10};
  m.recall_cuts = {1, 3, 10};
  m.precision_cuts = {1, 2, 10};
  m.hit_cuts = {1, 2};
  auto r = evaluate(qrels, run, m);
  ASSERT_EQ(r.queries, 1u);
  const double dcg3 = 1 / lg(2) + 1 / lg(4);
  const double idcg3 = 1 / lg(2) + 1 / lg(3) + 1 / lg(4);
  EXPECT_NEAR(r.mean("ndcg_cut_3"), dcg3 / idcg3, 1e-12);
  EXPECT_NEAR(r.mean("ndcg_cut_10"), dcg3 / idcg3, 1e-12);
  EXPECT_NEAR(r.mean("recall_1"), 1.0 / 3, 1e-12);
  EXPECT_NEAR(r.mean("recall_3"), 2.0 / 3, 1e-12);
  EXPECT_NEAR(r.mean("P_1"), 1.0, 1e-12);
  EXPECT_NEAR(r.mean("P_2"), 0.5, 1e-12);
  EXPECT_NEAR(r.mean("P_10"), 0.2, 1e-12);  // divides by 10, not by 4 retrieved
  EXPECT_NEAR(r.mean("hit_1"), 1.0, 1e-12);
  EXPECT_NEAR(r.mean("recip_rank"), 1.0, 1e-12);
  EXPECT_NEAR(r.mean("map"), (1.0 / 1 + 2.0 / 3) / 3, 1e-12);
}

TEST(Metrics, GradedRelevanceUsesLinearGainAndIdealOverAllJudged) {
  Qrels qrels;
  qrels["q"] = {{"a", 2}, {"b", 1}, {"c", 3}, {"z", 0}};
  eagle::eval::Run run;
  run["q"] = {{"b", 3.0}, {"z", 2.0}, {"a", 1.0}};
  MetricSet m;
  m.ndcg_cuts = {2, 5};
  auto r = evaluate(qrels, run, m);
  const double dcg2 = 1 / lg(2) + 0 / lg(3);
  const double idcg2 = 3 / lg(2) + 2 / lg(3);
  EXPECT_NEAR(r.mean("ndcg_cut_2"), dcg2 / idcg2, 1e-12);
  const double dcg5 = 1 / lg(2) + 2 / lg(4);
  const double idcg5 = 3 / lg(2) + 2 / lg(3) + 1 / lg(4);
  EXPECT_NEAR(r.mean("ndcg_cut_5"), dcg5 / idcg5, 1e-12);
  EXPECT_NEAR(r.mean("recip_rank"), 1.0, 1e-12);
}

TEST(Metrics, TiesAreBrokenByDecreasingDocnoLikeTrecEval) {
  Qrels qrels;
  qrels["q"] = {{"doc1", 1}};
  eagle::eval::Run run;
  // Equal scores: trec_eval ranks "doc2" before "doc1" (strcmp descending), so the
  // relevant doc1 is at rank 2 whatever order the run lists them in.
  run["q"] = {{"doc1", 5.0}, {"doc2", 5.0}};
  auto r = evaluate(qrels, run);
  EXPECT_NEAR(r.mean("recip_rank"), 0.5, 1e-12);
  EXPECT_NEAR(r.mean("ndcg_cut_10"), (1 / lg(3)) / 1.0, 1e-12);
}

TEST(Metrics, MeansAreOverJudgedQueriesAndMissingRunsCountZero) {
  Qrels qrels;
  qrels["q1"] = {{"d1", 1}};
  qrels["q2"] = {{"d2", 1}};
  qrels["q3"] = {{"d3", 0}};  // no relevant document: not averaged (trec_eval)
  eagle::eval::Run run;
  run["q1"] = {{"d1", 1.0}};
  run["q_unjudged"] = {{"d9", 1.0}};
  auto r = evaluate(qrels, run);
  EXPECT_EQ(r.queries, 2u);
  EXPECT_NEAR(r.mean("recip_rank"), 0.5, 1e-12);
  EXPECT_NEAR(r.mean("ndcg_cut_10"), 0.5, 1e-12);
}

TEST(Metrics, RunFileRoundTripKeepsTrecOrderAndTies) {
  eagle::eval::Run run;
  run["q"] = {{"a", 1.0000001}, {"b", 1.0000004}, {"c", 2.5}};
  std::ostringstream out;
  write_trec_run(out, run, "tag");
  // Both near-ties print as 1.000000: ranks follow trec_eval's docno order.
  EXPECT_EQ(out.str(),
            "q Q0 c 1 2.500000 tag\n"
            "q Q0 b 2 1.000000 tag\n"
            "q Q0 a 3 1.000000 tag\n");
  auto path = std::filesystem::temp_directory_path() / "eagle_metrics_run.txt";
  std::ofstream(path) << out.str();
  auto back = read_trec_run(path);
  ASSERT_EQ(back["q"].size(), 3u);
  std::filesystem::remove(path);
  EXPECT_DOUBLE_EQ(round_score_for_run(1.0000004), 1.0);
}

TEST(Metrics, QrelsWithHeaderAndBadLinesReportPositions) {
  auto path = std::filesystem::temp_directory_path() / "eagle_qrels.tsv";
  std::ofstream(path) << "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t2\n";
  auto q = load_qrels(path);
  EXPECT_EQ(q["q1"]["d2"], 2);
  std::ofstream(path) << "q1\td1\t1\nq1 d2 x\n";
  try {
    load_qrels(path);
    FAIL() << "expected an error";
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find(":2:"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

TEST(Metrics, PerQueryCsvHasOneRowPerQuery) {
  Qrels qrels;
  qrels["q1"] = {{"d1", 1}};
  qrels["q,2"] = {{"d2", 1}};
  eagle::eval::Run run;
  run["q1"] = {{"d1", 1.0}};
  auto r = evaluate(qrels, run);
  std::ostringstream csv;
  write_per_query_csv(csv, r);
  auto s = csv.str();
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 3);
  EXPECT_NE(s.find("\"q,2\""), std::string::npos);
}
