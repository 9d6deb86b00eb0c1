#include "eagle/index/lexical/bm25_index.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "bm25_test_support.h"
#include "eagle/core/error.h"

using namespace eagle::index;
using eagle::text::AnalyzerOptions;
using eagle::text::Stemmer;
using eagle::test_support::random_doc;
using eagle::test_support::raw_analyzer;

namespace {

void expect_same(const std::vector<LexicalHit>& fast, const std::vector<LexicalHit>& oracle,
                 const std::string& ctx) {
  ASSERT_EQ(fast.size(), oracle.size()) << ctx;
  for (size_t i = 0; i < fast.size(); ++i) {
    EXPECT_NEAR(fast[i].score, oracle[i].score, 1e-9) << ctx << " rank " << i;
    // Same document, unless two scores are tied up to the rounding of sums taken
    // in a different order.
    if (fast[i].doc != oracle[i].doc) {
      EXPECT_NEAR(fast[i].score, oracle[i].score, 1e-12) << ctx << " rank " << i;
    }
  }
}

}  // namespace

TEST(Bm25, ScoreMatchesTheFormulaByHand) {
  Bm25Index idx({0.9, 0.4}, raw_analyzer());
  idx.add("aspirin aspirin pain");   // dl 3, tf 2
  idx.add("ibuprofen pain fever");   // dl 3
  idx.add("aspirin");                // dl 1, tf 1
  auto hits = idx.search("aspirin", 10, TopKAlgorithm::exhaustive);
  ASSERT_EQ(hits.size(), 2u);
  const double N = 3, df = 2, avgdl = 7.0 / 3;
  const double idf = std::log(1 + (N - df + 0.5) / (df + 0.5));
  auto score = [&](double tf, double dl) {
    return idf * tf * 1.9 / (tf + 0.9 * (1 - 0.4 + 0.4 * dl / avgdl));
  };
  // doc 2 (short) vs doc 0 (tf 2, longer): compute and compare both.
  double s0 = score(2, 3), s2 = score(1, 1);
  std::vector<std::pair<double, DocId>> expect = {{s0, 0}, {s2, 2}};
  std::sort(expect.begin(), expect.end(), [](auto a, auto b) { return a.first > b.first; });
  EXPECT_EQ(hits[0].doc, expect[0].second);
  EXPECT_NEAR(hits[0].score, expect[0].first, 1e-12);
  EXPECT_NEAR(hits[1].score, expect[1].first, 1e-12);
}

// query_weight is the sum of the query terms' idf (repeats count; a term no document
// has weighs idf(df 0), the most): the biomed Tier-2 compares a drug mention's weight
// with its query's.
TEST(Bm25, QueryWeightSumsTheIdfOfTheQueryTerms) {
  Bm25Index idx({0.9, 0.4}, raw_analyzer());
  EXPECT_EQ(idx.query_weight("aspirin"), 0.0);  // empty index
  idx.add("aspirin aspirin pain");
  idx.add("ibuprofen pain fever");
  idx.add("aspirin");
  auto idf = [](double df) { return std::log(1 + (3 - df + 0.5) / (df + 0.5)); };
  EXPECT_NEAR(idx.query_weight("aspirin"), idf(2), 1e-12);
  EXPECT_NEAR(idx.query_weight("aspirin fever unknownterm"), idf(2) + idf(1) + idf(0), 1e-12);
  EXPECT_NEAR(idx.query_weight("fever fever"), 2 * idf(1), 1e-12);
  EXPECT_NEAR(idx.query_weight("unknownterm"), idf(0), 1e-12);
  EXPECT_GT(idf(0), idf(1));
}

TEST(Bm25, RepeatedQueryTermsCountAsQueryTf) {
  Bm25Index idx({0.9, 0.4}, raw_analyzer());
  idx.add("egfr mutation");
  idx.add("kras mutation");
  auto once = idx.search("egfr", 1);
  auto twice = idx.search("egfr egfr", 1);
  ASSERT_EQ(once.size(), 1u);
  EXPECT_NEAR(twice[0].score, 2 * once[0].score, 1e-12);
}

TEST(Bm25, MaxScoreEqualsOracleOnRandomCorpora) {
  std::mt19937 rng(12345);
  for (int corpus = 0; corpus < 12; ++corpus) {
    Bm25Params p{0.5 + 0.2 * (corpus % 5), 0.2 * (corpus % 6)};
    Bm25Index idx(p, raw_analyzer());
    int vocab = 20 + corpus * 40;
    int ndocs = 50 + corpus * 300;
    for (int d = 0; d < ndocs; ++d) idx.add(random_doc(rng, vocab, 1, 60));
    for (int q = 0; q < 60; ++q) {
      std::string query = random_doc(rng, vocab, 1, 12);
      for (size_t k : {1, 3, 10, 100, 1000}) {
        auto fast = idx.search(query, k, TopKAlgorithm::maxscore);
        auto oracle = idx.search(query, k, TopKAlgorithm::exhaustive);
        expect_same(fast, oracle,
                    "corpus " + std::to_string(corpus) + " query '" + query + "' k " + std::to_string(k));
      }
    }
  }
}

TEST(Bm25, MaxScoreEqualsOracleAcrossManyWindows) {
  // Large enough for several 4096-doc windows, with rare terms that skip windows.
  std::mt19937 rng(777);
  Bm25Index idx({}, raw_analyzer());
  for (int d = 0; d < 20000; ++d) {
    std::string text = random_doc(rng, 400, 1, 25);
    if (d % 997 == 0) text += " rareterm";
    idx.add(text);
  }
  for (int q = 0; q < 80; ++q) {
    std::string query = random_doc(rng, 400, 1, 10) + (q % 3 == 0 ? " rareterm" : "");
    for (size_t k : {1, 10, 100}) {
      expect_same(idx.search(query, k), idx.search(query, k, TopKAlgorithm::exhaustive),
                  "query '" + query + "' k " + std::to_string(k));
    }
  }
}

TEST(Bm25, AllowedSetRestrictsBothSearchersIdentically) {
  std::mt19937 rng(31);
  Bm25Index idx({}, raw_analyzer());
  for (int d = 0; d < 9000; ++d) idx.add(random_doc(rng, 150, 1, 30));
  for (double pass : {0.001, 0.05, 0.5, 1.0}) {
    eagle::Bitset allowed(idx.size());
    for (uint32_t d = 0; d < idx.size(); ++d)
      if (std::uniform_real_distribution<double>(0, 1)(rng) < pass) allowed.set(d);
    for (int q = 0; q < 20; ++q) {
      auto query = random_doc(rng, 150, 1, 8);
      auto fast = idx.search(query, 10, TopKAlgorithm::maxscore, &allowed);
      auto oracle = idx.search(query, 10, TopKAlgorithm::exhaustive, &allowed);
      expect_same(fast, oracle, query);
      for (const auto& h : fast) EXPECT_TRUE(allowed.test(h.doc));
    }
  }
}

TEST(Bm25, DocumentsAddedAfterASearchAreFoundWithFreshStatistics) {
  std::mt19937 rng(99);
  Bm25Index idx({}, raw_analyzer());
  for (int d = 0; d < 300; ++d) idx.add(random_doc(rng, 100, 5, 40));
  auto before = idx.search("w1 w2 w3", 10);
  ASSERT_FALSE(before.empty());
  DocId added = idx.add("zebrafish w1 w1 w1");
  auto hits = idx.search("zebrafish", 10);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].doc, added);
  for (int d = 0; d < 500; ++d) idx.add(random_doc(rng, 100, 5, 40));
  for (int q = 0; q < 30; ++q) {
    auto query = random_doc(rng, 100, 2, 8);
    expect_same(idx.search(query, 20), idx.search(query, 20, TopKAlgorithm::exhaustive), query);
  }
}

TEST(Bm25, SaveAndLoadGiveIdenticalResults) {
  std::mt19937 rng(5);
  Bm25Index idx({1.2, 0.75}, AnalyzerOptions{});
  for (int d = 0; d < 700; ++d) idx.add(random_doc(rng, 200, 3, 50));
  std::stringstream buf;
  idx.save(buf);
  auto loaded = Bm25Index::load(buf);
  EXPECT_EQ(loaded.size(), idx.size());
  EXPECT_DOUBLE_EQ(loaded.params().k1, 1.2);
  EXPECT_DOUBLE_EQ(loaded.params().b, 0.75);
  for (int q = 0; q < 20; ++q) {
    auto query = random_doc(rng, 200, 2, 8);
    auto a = idx.search(query, 10), b = loaded.search(query, 10);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].doc, b[i].doc);
      EXPECT_DOUBLE_EQ(a[i].score, b[i].score);
    }
  }
  // The loaded index keeps growing.
  DocId d = loaded.add("brandnewterm");
  EXPECT_EQ(loaded.search("brandnewterm", 1).at(0).doc, d);
}

TEST(Bm25, CorruptOrTruncatedFilesAreErrors) {
  Bm25Index idx;
  idx.add("some text here");
  std::stringstream buf;
  idx.save(buf);
  std::string bytes = buf.str();
  std::stringstream truncated(bytes.substr(0, bytes.size() / 2));
  EXPECT_THROW(Bm25Index::load(truncated), eagle::Error);
  std::stringstream garbage("not an index at all");
  EXPECT_THROW(Bm25Index::load(garbage), eagle::Error);
}

TEST(Bm25, EmptyQueriesAndIndexesReturnNothing) {
  Bm25Index idx;
  EXPECT_TRUE(idx.search("anything", 10).empty());
  idx.add("text");
  EXPECT_TRUE(idx.search("", 10).empty());
  EXPECT_TRUE(idx.search("the of and", 10).empty());  // only stop words
  EXPECT_TRUE(idx.search("text", 0).empty());
  EXPECT_THROW(Bm25Index({-1, 0.4}), eagle::Error);
}
