// The flat index against a scalar brute force in double: exact rows, scores within 1e-4.
#include <gtest/gtest.h>

#include <sstream>

#include "eagle/core/error.h"
#include "eagle/index/vector/flat_index.h"
#include "vector_test_util.h"

namespace eagle::index {
namespace {

// Same rows in the same order, scores within 1e-4. Where two rows' true scores are
// closer than fp32 can tell apart (1e-5), either order is right: the returned row's
// true score must then equal the expected one to that precision.
void expect_same_hits(const std::vector<VectorHit>& got, const std::vector<VectorHit>& want, Metric metric,
                      const std::vector<float>& data, size_t dim, const float* q) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i].score, want[i].score, 1e-4 * (1 + std::fabs(want[i].score))) << "rank " << i;
    if (got[i].row != want[i].row) {
      const double s = testing::brute_score(metric, q, data.data() + got[i].row * dim, dim);
      EXPECT_NEAR(s, want[i].score, 1e-5 * (1 + std::fabs(want[i].score)))
          << "rank " << i << ": row " << got[i].row << " instead of " << want[i].row;
    }
  }
}

class FlatMetricTest : public ::testing::TestWithParam<Metric> {};

TEST_P(FlatMetricTest, EqualsBruteForceWithAndWithoutAllowedSets) {
  const Metric metric = GetParam();
  for (size_t dim : {1, 2, 7, 33, 100}) {
    // In one dimension every cosine is exactly +-1: all ties, decided by rounding.
    if (metric == Metric::cosine && dim == 1) continue;
    const size_t n = 3000;
    auto data = testing::uniform(n, dim, 100 + dim);
    FlatIndex flat(static_cast<uint32_t>(dim), metric);
    for (size_t r = 0; r < n; ++r) flat.add(static_cast<uint32_t>(r), data.data() + r * dim);
    ASSERT_EQ(flat.size(), n);
    auto queries = testing::uniform(20, dim, 7 + dim);
    const Bitset sparse = testing::random_allowed(n, 0.01, 1);
    const Bitset dense = testing::random_allowed(n, 0.6, 2);
    for (size_t q = 0; q < 20; ++q) {
      const float* qv = queries.data() + q * dim;
      for (size_t k : {1, 10, 50}) {
        VectorSearchParams p;
        p.k = k;
        SCOPED_TRACE("dim " + std::to_string(dim) + " k " + std::to_string(k));
        expect_same_hits(flat.search(qv, p), testing::brute_topk(metric, data, dim, qv, k), metric, data, dim,
                         qv);
        expect_same_hits(flat.search(qv, p, &sparse), testing::brute_topk(metric, data, dim, qv, k, &sparse),
                         metric, data, dim, qv);
        expect_same_hits(flat.search(qv, p, &dense), testing::brute_topk(metric, data, dim, qv, k, &dense),
                         metric, data, dim, qv);
        for (const auto& h : flat.search(qv, p, &sparse)) EXPECT_TRUE(sparse.test(h.row));
      }
    }
  }
}

TEST_P(FlatMetricTest, BatchSearchEqualsSingleSearches) {
  const Metric metric = GetParam();
  const size_t n = 5000, dim = 24;
  auto data = testing::clustered(n, dim, 20, 3);
  FlatIndex flat(dim, metric);
  flat.add_batch(0, n, data.data());
  auto queries = testing::uniform(37, dim, 9);
  const Bitset allowed = testing::random_allowed(n, 0.3, 4);
  VectorSearchParams p;
  p.k = 15;
  for (const Bitset* a : {static_cast<const Bitset*>(nullptr), &allowed}) {
    auto batch = flat.search_batch(queries.data(), 37, p, a, 3);
    ASSERT_EQ(batch.size(), 37u);
    for (size_t q = 0; q < 37; ++q) EXPECT_EQ(batch[q], flat.search(queries.data() + q * dim, p, a));
  }
}

INSTANTIATE_TEST_SUITE_P(AllMetrics, FlatMetricTest,
                         ::testing::Values(Metric::cosine, Metric::ip, Metric::l2),
                         [](const auto& info) { return std::string(metric_name(info.param)); });

TEST(FlatIndex, TiesAreOrderedByRow) {
  FlatIndex flat(3, Metric::ip);
  const float v[3] = {1, 2, 3};
  for (uint32_t r = 0; r < 6; ++r) flat.add(r, v);
  VectorSearchParams p;
  p.k = 4;
  auto hits = flat.search(v, p);
  ASSERT_EQ(hits.size(), 4u);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(hits[i].row, i);
}

TEST(FlatIndex, EdgeCases) {
  FlatIndex flat(4, Metric::cosine);
  const float q[4] = {1, 0, 0, 0};
  VectorSearchParams p;
  EXPECT_TRUE(flat.search(q, p).empty());  // empty index
  const float a[4] = {1, 1, 0, 0}, b[4] = {0, 0, 0, 0};
  flat.add(0, a);
  flat.add(1, b);  // a zero vector is allowed; its cosine is 0
  p.k = 10;        // k > size
  auto hits = flat.search(q, p);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].row, 0u);
  EXPECT_NEAR(hits[0].score, std::sqrt(0.5), 1e-6);
  EXPECT_EQ(hits[1].score, 0.0f);
  p.k = 0;
  EXPECT_TRUE(flat.search(q, p).empty());
  Bitset none(2);
  p.k = 5;
  EXPECT_TRUE(flat.search(q, p, &none).empty());
  Bitset short_set(1, true);  // rows past the bitset's size are not allowed
  hits = flat.search(q, p, &short_set);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].row, 0u);
}

TEST(FlatIndex, RejectsBadInput) {
  EXPECT_THROW(FlatIndex(0, Metric::l2), Error);
  EXPECT_THROW(FlatIndex(kMaxVectorDim + 1, Metric::l2), Error);
  FlatIndex flat(2, Metric::l2);
  const float ok[2] = {1, 2};
  const float bad[2] = {1, std::nanf("")};
  EXPECT_THROW(flat.add(1, ok), Error);  // rows must be dense
  try {
    flat.add(0, bad);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
  }
  EXPECT_EQ(flat.size(), 0u);
  flat.add(0, ok);
  VectorSearchParams p;
  EXPECT_THROW(flat.search(bad, p), Error);
}

TEST(FlatIndex, SaveLoadRoundTrip) {
  const size_t n = 777, dim = 19;
  auto data = testing::uniform(n, dim, 5);
  FlatIndex flat(dim, Metric::l2);
  flat.add_batch(0, n, data.data());
  std::stringstream ss;
  flat.save(ss);
  auto loaded = load_vector_index(ss);
  ASSERT_EQ(loaded->kind(), VectorIndexKind::flat);
  EXPECT_EQ(loaded->size(), n);
  EXPECT_EQ(loaded->dim(), dim);
  EXPECT_EQ(loaded->metric(), Metric::l2);
  VectorSearchParams p;
  p.k = 7;
  for (size_t q = 0; q < 10; ++q)
    EXPECT_EQ(loaded->search(data.data() + q * dim, p), flat.search(data.data() + q * dim, p));
}

}  // namespace
}  // namespace eagle::index

// TANIMOTO (fingerprints as 0/1 floats): the flat index equals the brute force, with
// and without an allowed set; HNSW refuses the metric.
TEST(FlatTanimoto, EqualsBruteForceOnRandomFingerprints) {
  std::mt19937 rng(17);
  const size_t n = 700, dim = 256;
  std::vector<float> data(n * dim);
  for (auto& x : data) x = (rng() % 5 == 0) ? 1.0f : 0.0f;
  eagle::VectorFieldSchema s;
  s.dim = dim;
  s.metric = eagle::Metric::tanimoto;
  s.index = eagle::VectorIndexKind::flat;
  auto idx = eagle::index::make_vector_index(s);
  idx->add_batch(0, n, data.data());
  eagle::Bitset allowed(n);
  for (size_t r = 0; r < n; r += 3) allowed.set(r);
  for (int q = 0; q < 20; ++q) {
    const float* query = data.data() + (rng() % n) * dim;
    const eagle::Bitset* cases[] = {nullptr, &allowed};
    for (const eagle::Bitset* a : cases) {
      eagle::index::VectorSearchParams p;
      p.k = 10;
      auto got = idx->search(query, p, a);
      auto want = eagle::index::testing::brute_topk(eagle::Metric::tanimoto, data, dim, query, 10, a);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i].score, want[i].score, 1e-5);
    }
  }
  s.index = eagle::VectorIndexKind::hnsw;
  EXPECT_THROW(eagle::index::make_vector_index(s), eagle::Error);
}
