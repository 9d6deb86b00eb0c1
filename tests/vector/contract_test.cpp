// One suite over every VectorIndex implementation and metric, through the interface
// only (the Xapian habit: each API test against every backend). HNSW assertions are
// recall-tolerant; flat must be exact.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "eagle/core/error.h"
#include "eagle/core/file_map.h"
#include "eagle/index/vector/flat_index.h"
#include "vector_test_util.h"

namespace eagle::index {
namespace {

struct Case {
  VectorIndexKind kind;
  Metric metric;
};

class VectorIndexContract : public ::testing::TestWithParam<Case> {
 protected:
  static constexpr size_t kDim = 24;
  static constexpr size_t kRows = 4000;

  void SetUp() override {
    data_ = testing::clustered(kRows, kDim, 40, 91);
    queries_ = testing::clustered(40, kDim, 40, 91);
    idx_ = make_vector_index(testing::schema(kDim, GetParam().metric, GetParam().kind));
    idx_->add_batch(0, kRows, data_.data());
  }

  // Exact for flat; at least `floor` for HNSW.
  void expect_matches_oracle(const std::vector<VectorHit>& got, const std::vector<VectorHit>& truth,
                             double floor = 0.9) {
    if (GetParam().kind == VectorIndexKind::flat) {
      ASSERT_EQ(got.size(), truth.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].row, truth[i].row);
    } else {
      recall_sum_ += testing::recall(got, truth);
      ++recall_n_;
      recall_floor_ = floor;
    }
  }
  void TearDown() override {
    if (recall_n_) {
      EXPECT_GE(recall_sum_ / recall_n_, recall_floor_);
    }
  }

  std::vector<float> data_, queries_;
  std::unique_ptr<VectorIndex> idx_;
  double recall_sum_ = 0, recall_floor_ = 0.9;
  size_t recall_n_ = 0;
};

TEST_P(VectorIndexContract, DescribesItself) {
  EXPECT_EQ(idx_->kind(), GetParam().kind);
  EXPECT_EQ(idx_->metric(), GetParam().metric);
  EXPECT_EQ(idx_->dim(), kDim);
  EXPECT_EQ(idx_->size(), kRows);
  EXPECT_GT(idx_->memory_bytes(), kRows * kDim);
}

TEST_P(VectorIndexContract, TopKIsSortedUniqueAndAgreesWithTheOracle) {
  VectorSearchParams p;
  p.k = 10;
  for (size_t q = 0; q < 40; ++q) {
    const float* qv = queries_.data() + q * kDim;
    auto hits = idx_->search(qv, p);
    ASSERT_EQ(hits.size(), 10u);
    std::set<uint32_t> rows;
    for (size_t i = 0; i < hits.size(); ++i) {
      rows.insert(hits[i].row);
      if (i) {
        EXPECT_TRUE(vector_detail::ranks_before(hits[i - 1], hits[i]));
      }
    }
    EXPECT_EQ(rows.size(), hits.size());
    expect_matches_oracle(hits, testing::brute_topk(GetParam().metric, data_, kDim, qv, 10));
  }
}

TEST_P(VectorIndexContract, AllowedSetsAreHonouredAtEverySize) {
  VectorSearchParams p;
  p.k = 10;
  for (double pass : {0.002, 0.02, 0.2, 0.7}) {
    const Bitset allowed = testing::random_allowed(kRows, pass, static_cast<uint64_t>(pass * 1000));
    for (size_t q = 0; q < 20; ++q) {
      const float* qv = queries_.data() + q * kDim;
      auto hits = idx_->search(qv, p, &allowed);
      for (const auto& h : hits) ASSERT_TRUE(allowed.test(h.row));
      auto truth = testing::brute_topk(GetParam().metric, data_, kDim, qv, 10, &allowed);
      EXPECT_EQ(hits.size(), truth.size());
      expect_matches_oracle(hits, truth, 0.95);
    }
  }
}

TEST_P(VectorIndexContract, GrowsAfterSearchesAndSurvivesSaveLoad) {
  VectorSearchParams p;
  p.k = 5;
  idx_->search(queries_.data(), p);
  auto more = testing::clustered(300, kDim, 40, 92);
  EXPECT_THROW(idx_->add(static_cast<uint32_t>(kRows + 1), more.data()), Error);
  for (size_t i = 0; i < 300; ++i) idx_->add(static_cast<uint32_t>(kRows + i), more.data() + i * kDim);
  EXPECT_EQ(idx_->size(), kRows + 300);
  std::stringstream ss;
  idx_->save(ss);
  auto loaded = load_vector_index(ss);
  EXPECT_EQ(loaded->kind(), idx_->kind());
  EXPECT_EQ(loaded->size(), idx_->size());
  const Bitset allowed = testing::random_allowed(kRows + 300, 0.5, 9);
  for (size_t q = 0; q < 20; ++q) {
    EXPECT_EQ(loaded->search(more.data() + q * kDim, p), idx_->search(more.data() + q * kDim, p));
    EXPECT_EQ(loaded->search(more.data() + q * kDim, p, &allowed),
              idx_->search(more.data() + q * kDim, p, &allowed));
  }
}

// Loaded with its file mapped, an HNSW index reads its node blocks in place (the
// file may even be unlinked meanwhile) and answers as the index it was saved from; an
// add copies them first and goes on as usual.
TEST_P(VectorIndexContract, ReadsInPlaceFromAMappedFileAndCopiesBeforeAnAdd) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("eagle_contract_mapped_" + std::to_string(::getpid()) + "_" +
                     std::to_string(static_cast<int>(GetParam().kind)) + "_" + std::string(metric_name(GetParam().metric)) +
                     ".idx");
  {
    std::ofstream out(file, std::ios::binary);
    out << "header bytes before the index ";  // an index inside a larger file, as in a segment
    idx_->save(out);
  }
  std::ifstream in(file, std::ios::binary);
  in.seekg(30);
  auto loaded = load_vector_index(in, FileMap::open(file));
  in.close();
  std::filesystem::remove(file);
  const bool hnsw = GetParam().kind == VectorIndexKind::hnsw;
  EXPECT_EQ(loaded->mapped_bytes() > 0, hnsw);
  VectorSearchParams p;
  p.k = 10;
  const Bitset allowed = testing::random_allowed(kRows, 0.3, 17);
  for (size_t q = 0; q < 20; ++q) {
    EXPECT_EQ(loaded->search(queries_.data() + q * kDim, p), idx_->search(queries_.data() + q * kDim, p));
    EXPECT_EQ(loaded->search(queries_.data() + q * kDim, p, &allowed),
              idx_->search(queries_.data() + q * kDim, p, &allowed));
  }
  auto more = testing::clustered(50, kDim, 10, 93);
  for (size_t i = 0; i < 50; ++i) {
    loaded->add(static_cast<uint32_t>(kRows + i), more.data() + i * kDim);
    idx_->add(static_cast<uint32_t>(kRows + i), more.data() + i * kDim);
  }
  EXPECT_EQ(loaded->mapped_bytes(), 0u);
  std::vector<float> a(kDim), b(kDim);
  for (uint32_t r : {0u, static_cast<uint32_t>(kRows / 2), static_cast<uint32_t>(kRows + 49)}) {
    loaded->stored_vector(r, a.data());
    idx_->stored_vector(r, b.data());
    EXPECT_EQ(a, b) << "row " << r;
  }
  for (size_t q = 0; q < 20; ++q)
    EXPECT_EQ(loaded->search(more.data() + q * kDim, p), idx_->search(more.data() + q * kDim, p));
}

TEST_P(VectorIndexContract, EmptyAndOversizedRequests) {
  auto empty = make_vector_index(testing::schema(kDim, GetParam().metric, GetParam().kind));
  VectorSearchParams p;
  EXPECT_TRUE(empty->search(queries_.data(), p).empty());
  p.k = kRows + 50;
  p.ef = 16;
  auto all = idx_->search(queries_.data(), p);
  if (GetParam().kind == VectorIndexKind::flat) {
    EXPECT_EQ(all.size(), kRows);
  } else {
    EXPECT_GE(all.size(), kRows * 95 / 100);  // the beam is max(ef, k): nearly every row
  }
}

INSTANTIATE_TEST_SUITE_P(
    FlatAndHnsw, VectorIndexContract,
    ::testing::Values(Case{VectorIndexKind::flat, Metric::cosine}, Case{VectorIndexKind::flat, Metric::ip},
                      Case{VectorIndexKind::flat, Metric::l2}, Case{VectorIndexKind::hnsw, Metric::cosine},
                      Case{VectorIndexKind::hnsw, Metric::ip}, Case{VectorIndexKind::hnsw, Metric::l2}),
    [](const auto& info) {
      return std::string(info.param.kind == VectorIndexKind::flat ? "flat_" : "hnsw_") +
             std::string(metric_name(info.param.metric));
    });

}  // namespace
}  // namespace eagle::index
