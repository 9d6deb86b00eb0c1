// Segmented BM25 (search_segments): several indexes with deleted and uncommitted
// documents searched as one must return exactly what one index over the live
// documents returns (the oracle: an index built from those documents alone), and
// the impacts that bound MaxScore must be each term's exact Pareto front.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>

#include "bm25_test_support.h"
#include "eagle/index/lexical/bm25_index.h"

using namespace eagle::index;
using eagle::Bitset;
using eagle::text::AnalyzerOptions;
using eagle::text::Stemmer;
using eagle::test_support::random_doc;
using eagle::test_support::raw_analyzer;

namespace {

// Documents cut into segments at random points, some hidden, with the oracle over
// the live ones (in segment order).
struct Segmented {
  std::vector<Bm25Index> indexes;
  std::vector<Bitset> hidden;
  std::vector<LexicalSegment> segments;
  Bm25Index oracle;
  std::vector<std::pair<uint32_t, DocId>> oracle_origin;  // oracle doc -> (segment, doc)

  Segmented(const std::vector<std::string>& texts, size_t nsegments, double hidden_share, Bm25Params p,
            std::mt19937& rng)
      : oracle(p, raw_analyzer()) {
    std::set<size_t> cuts;
    while (cuts.size() + 1 < nsegments) cuts.insert(std::uniform_int_distribution<size_t>(1, texts.size() - 1)(rng));
    cuts.insert(texts.size());
    size_t from = 0;
    for (size_t to : cuts) {
      indexes.emplace_back(p, raw_analyzer());
      hidden.emplace_back(to - from);
      for (size_t i = from; i < to; ++i) indexes.back().add(texts[i]);
      from = to;
    }
    for (uint32_t s = 0; s < indexes.size(); ++s) {
      LiveDocs live{&hidden[s], 0, 0};
      for (DocId d = 0; d < indexes[s].size(); ++d) {
        if (std::uniform_real_distribution<double>(0, 1)(rng) < hidden_share) {
          hidden[s].set(d);
          ++live.hidden_docs;
          live.hidden_len += indexes[s].doc_len(d);
        }
      }
      segments.push_back({&indexes[s], live, nullptr});
    }
    size_t i = 0;
    for (uint32_t s = 0; s < indexes.size(); ++s)
      for (DocId d = 0; d < indexes[s].size(); ++d, ++i)
        if (!hidden[s].test(d)) {
          oracle.add(texts[i]);
          oracle_origin.emplace_back(s, d);
        }
  }
};

void expect_oracle(const Segmented& seg, const std::vector<SegmentHit>& got, const std::vector<LexicalHit>& want,
                   const std::string& ctx) {
  ASSERT_EQ(got.size(), want.size()) << ctx;
  for (size_t r = 0; r < got.size(); ++r) {
    EXPECT_NEAR(got[r].score, want[r].score, 1e-9) << ctx << " rank " << r;
    const auto origin = seg.oracle_origin[want[r].doc];
    if (origin != std::make_pair(got[r].segment, got[r].doc)) {  // only a tie may swap two documents
      EXPECT_NEAR(got[r].score, want[r].score, 1e-12) << ctx << " rank " << r;
    }
  }
}

}  // namespace

TEST(Bm25Impacts, AreEachTermsParetoFrontOfTfAndLength) {
  std::mt19937 rng(4242);
  Bm25Index idx({}, raw_analyzer());
  std::vector<std::string> texts;
  for (int d = 0; d < 3000; ++d) idx.add(texts.emplace_back(random_doc(rng, 60, 1, 80)));
  // Brute force: every (tf, dl) of every term, then the non-dominated ones.
  std::map<std::string, std::vector<Impact>> all;
  for (const auto& t : texts) {
    std::map<std::string, uint32_t> tf;
    uint32_t len = 0;
    for (const auto& term : idx.analyzer().terms(t)) ++tf[term], ++len;
    for (const auto& [term, n] : tf) all[term].push_back({n, len});
  }
  for (const auto& [term, pairs] : all) {
    std::vector<std::pair<uint32_t, uint32_t>> front;
    for (const auto& a : pairs) {
      bool dominated = false;
      for (const auto& b : pairs)
        dominated = dominated || (b.tf >= a.tf && b.doc_len <= a.doc_len && (b.tf > a.tf || b.doc_len < a.doc_len));
      if (!dominated) front.emplace_back(a.tf, a.doc_len);
    }
    std::sort(front.begin(), front.end());
    front.erase(std::unique(front.begin(), front.end()), front.end());
    std::vector<std::pair<uint32_t, uint32_t>> got;
    for (const auto& i : idx.impacts(term)) got.emplace_back(i.tf, i.doc_len);
    EXPECT_EQ(got, front) << term;
  }
}

TEST(Bm25Segments, EqualOneIndexOverTheLiveDocumentsOnRandomCorpora) {
  std::mt19937 rng(2026);
  for (int corpus = 0; corpus < 10; ++corpus) {
    const Bm25Params p{0.5 + 0.2 * (corpus % 5), 0.15 * (corpus % 7)};
    const int vocab = 30 + corpus * 50;
    std::vector<std::string> texts;
    for (int d = 0; d < 400 + corpus * 900; ++d) texts.push_back(random_doc(rng, vocab, 0, 60));
    Segmented seg(texts, 1 + corpus % 6 * 2, corpus % 3 == 0 ? 0.0 : 0.02 * corpus, p, rng);
    for (int q = 0; q < 40; ++q) {
      const auto terms = seg.oracle.analyzer().terms(random_doc(rng, vocab, 1, 10));
      for (size_t k : {1, 10, 100, 5000}) {
        const auto want = seg.oracle.search_terms(terms, k, TopKAlgorithm::exhaustive);
        const std::string ctx = "corpus " + std::to_string(corpus) + " k " + std::to_string(k);
        expect_oracle(seg, search_segments(seg.segments, terms, k, TopKAlgorithm::maxscore), want, ctx + " maxscore");
        expect_oracle(seg, search_segments(seg.segments, terms, k, TopKAlgorithm::exhaustive), want,
                      ctx + " exhaustive");
      }
      double want_weight = 0;  // each analysed term is its own one-term query
      for (const auto& t : terms) want_weight += seg.oracle.query_weight(t);
      EXPECT_NEAR(query_weight_segments(seg.segments, terms), want_weight, 1e-9);
    }
  }
}

TEST(Bm25Segments, AFilterRestrictsTheResultsButNotTheStatistics) {
  std::mt19937 rng(7);
  std::vector<std::string> texts;
  for (int d = 0; d < 6000; ++d) texts.push_back(random_doc(rng, 200, 1, 40));
  Segmented seg(texts, 4, 0.05, {}, rng);
  // The same filter on both sides: a random half of the documents.
  std::vector<Bitset> allowed;
  for (const auto& idx : seg.indexes) allowed.emplace_back(idx.size());
  Bitset oracle_allowed(seg.oracle.size());
  for (uint32_t s = 0; s < seg.indexes.size(); ++s) {
    for (DocId d = 0; d < seg.indexes[s].size(); ++d)
      if (rng() % 2) allowed[s].set(d);
    seg.segments[s].allowed = &allowed[s];
  }
  for (DocId d = 0; d < seg.oracle.size(); ++d)
    if (allowed[seg.oracle_origin[d].first].test(seg.oracle_origin[d].second)) oracle_allowed.set(d);
  for (int q = 0; q < 40; ++q) {
    const auto terms = seg.oracle.analyzer().terms(random_doc(rng, 200, 1, 8));
    const auto want = seg.oracle.search_terms(terms, 20, TopKAlgorithm::exhaustive, &oracle_allowed);
    expect_oracle(seg, search_segments(seg.segments, terms, 20), want, "filtered");
  }
}

// One index with hidden documents (a collection's deleted and staged rows) scores as
// if they were never added: a staged ingest does not move committed scores.
TEST(Bm25Segments, HiddenDocumentsNeitherCountNorReturn) {
  Bm25Index idx({0.9, 0.4}, raw_analyzer());
  idx.add("aspirin pain");
  const DocId staged = idx.add("aspirin aspirin aspirin fever fever");
  idx.add("ibuprofen pain");
  Bm25Index without({0.9, 0.4}, raw_analyzer());
  without.add("aspirin pain");
  without.add("ibuprofen pain");
  Bitset hidden(idx.size());
  hidden.set(staged);
  const LiveDocs live{&hidden, 1, idx.doc_len(staged)};
  for (const char* q : {"aspirin", "pain", "fever", "aspirin pain ibuprofen"}) {
    const auto got = idx.search(q, 10, TopKAlgorithm::maxscore, nullptr, live);
    const auto want = without.search(q, 10, TopKAlgorithm::exhaustive);
    ASSERT_EQ(got.size(), want.size()) << q;
    for (size_t r = 0; r < got.size(); ++r) {
      EXPECT_NE(got[r].doc, staged) << q;
      EXPECT_EQ(got[r].score, want[r].score) << q;  // the same arithmetic: equal to the bit
    }
    EXPECT_EQ(idx.query_weight(q, live), without.query_weight(q)) << q;
  }
  EXPECT_TRUE(idx.search("fever", 10, TopKAlgorithm::maxscore, nullptr, live).empty());
}
