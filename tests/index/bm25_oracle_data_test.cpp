// The fast top-k equals the exhaustive oracle on every query of SciFact train and
// BioASQ dev, at k = 10 and k = 100; and the corpus cut into segments with some
// documents deleted, searched as one (search_segments), equals one index over the
// live documents: the same top 100 ids, scores to 1e-9.
#include <gtest/gtest.h>

#include "shared_data.h"

#include <cstdlib>
#include <filesystem>

#include "eagle/eval/beir.h"
#include "eagle/eval/lexical_run.h"
#include "eagle/ingest/corpus_reader.h"

namespace fs = std::filesystem;
using namespace eagle::index;

namespace {
void check_dataset(const std::string& name, const std::string& split) {
  const fs::path dir = eagle::testing::shared_data() / name;
  ASSERT_TRUE(fs::exists(dir / "corpus.jsonl"))
      << "shared data missing: " << dir << " (tests need ../shared/data beside the checkout)";
  auto set = eagle::eval::load_beir(dir, split);
  eagle::ingest::ReadOptions ro;
  auto docs = eagle::ingest::read_corpus(dir, ro).documents;
  auto idx = eagle::eval::build_bm25(docs, {}, {});
  size_t compared = 0;
  for (const auto& q : set.queries) {
    for (size_t k : {size_t{10}, size_t{100}}) {
      auto fast = idx.search(q.text, k, TopKAlgorithm::maxscore);
      auto oracle = idx.search(q.text, k, TopKAlgorithm::exhaustive);
      ASSERT_EQ(fast.size(), oracle.size()) << q.id;
      for (size_t i = 0; i < fast.size(); ++i) {
        ASSERT_NEAR(fast[i].score, oracle[i].score, 1e-5) << q.id << " rank " << i;
        if (fast[i].doc != oracle[i].doc) {  // only a tie to rounding may swap order
          ASSERT_NEAR(fast[i].score, oracle[i].score, 1e-9) << q.id << " rank " << i;
        }
      }
      ++compared;
    }
  }
  EXPECT_EQ(compared, set.queries.size() * 2);
  EXPECT_GT(set.queries.size(), 100u);
}

void check_segmented(const std::string& name, const std::string& split) {
  const fs::path dir = eagle::testing::shared_data() / name;
  ASSERT_TRUE(fs::exists(dir / "corpus.jsonl")) << "shared data missing: " << dir;
  auto set = eagle::eval::load_beir(dir, split);
  eagle::ingest::ReadOptions ro;
  auto docs = eagle::ingest::read_corpus(dir, ro).documents;
  // Seven segments of unequal sizes; every 29th document deleted.
  const std::vector<double> cuts = {0.02, 0.1, 0.35, 0.4, 0.75, 0.9, 1.0};
  std::vector<Bm25Index> indexes;
  std::vector<eagle::Bitset> hidden;
  Bm25Index oracle;
  std::vector<std::pair<uint32_t, DocId>> origin;  // oracle doc -> (segment, doc)
  size_t from = 0;
  for (double cut : cuts) {
    const size_t to = static_cast<size_t>(cut * static_cast<double>(docs.size()));
    auto& idx = indexes.emplace_back();
    for (size_t i = from; i < to; ++i) idx.add(docs[i].indexed_text());
    auto& h = hidden.emplace_back(to - from);
    for (size_t i = from; i < to; ++i) {
      if (i % 29 == 3) h.set(i - from);
      else {
        oracle.add(docs[i].indexed_text());
        origin.emplace_back(static_cast<uint32_t>(indexes.size() - 1), static_cast<DocId>(i - from));
      }
    }
    from = to;
  }
  std::vector<LexicalSegment> segments;
  for (size_t s = 0; s < indexes.size(); ++s) {
    LiveDocs live{&hidden[s], static_cast<uint32_t>(hidden[s].count()), 0};
    hidden[s].for_each([&](size_t d) { live.hidden_len += indexes[s].doc_len(static_cast<DocId>(d)); });
    segments.push_back({&indexes[s], live, nullptr});
  }
  size_t compared = 0;
  for (const auto& q : set.queries) {
    const auto terms = oracle.analyzer().terms(q.text);
    const auto want = oracle.search_terms(terms, 100, TopKAlgorithm::exhaustive);
    const auto got = search_segments(segments, terms, 100, TopKAlgorithm::maxscore);
    ASSERT_EQ(got.size(), want.size()) << q.id;
    for (size_t r = 0; r < got.size(); ++r) {
      ASSERT_NEAR(got[r].score, want[r].score, 1e-9) << q.id << " rank " << r;
      if (origin[want[r].doc] != std::make_pair(got[r].segment, got[r].doc)) {  // only a tie may swap
        ASSERT_NEAR(got[r].score, want[r].score, 1e-12) << q.id << " rank " << r;
      }
    }
    ++compared;
  }
  EXPECT_EQ(compared, set.queries.size());
}
}  // namespace

TEST(Bm25OracleOnData, SciFactTrain) { check_dataset("scifact", "train"); }
TEST(Bm25OracleOnData, BioAsqDev) { check_dataset("bioasq", "dev"); }
TEST(Bm25OracleOnData, SegmentsWithDeletesEqualOneIndexOnSciFactTrain) { check_segmented("scifact", "train"); }
TEST(Bm25OracleOnData, SegmentsWithDeletesEqualOneIndexOnBioAsqDev) { check_segmented("bioasq", "dev"); }
