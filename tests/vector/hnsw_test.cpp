// HNSW against the flat oracle: recall-tolerant assertions, filtered search at many
// selectivities, incremental adds, multi-threaded build, persistence and its
// validation, concurrent searches.
#include <gtest/gtest.h>

#include <cstdio>

#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "eagle/core/error.h"
#include "eagle/index/vector/flat_index.h"
#include "eagle/index/vector/hnsw_index.h"
#include "vector_test_util.h"

namespace eagle::index {
namespace {

constexpr size_t kDim = 40;
constexpr size_t kRows = 10000;
constexpr size_t kQueries = 100;

struct Built {
  std::vector<float> data;
  std::vector<float> queries;
  std::unique_ptr<FlatIndex> flat;
  std::unique_ptr<HnswIndex> hnsw;
};

// One index per metric, built once for the whole binary.
const Built& built(Metric metric) {
  static std::map<Metric, Built> cache;
  auto it = cache.find(metric);
  if (it != cache.end()) return it->second;
  Built b;
  b.data = testing::clustered(kRows, kDim, 80, 11);
  b.queries =
      testing::clustered(kQueries, kDim, 80, 11 + 1000);  // other points, same centres? no: new centres
  // Queries near the data: perturbed data points.
  auto noise = testing::uniform(kQueries, kDim, 12, -0.2f, 0.2f);
  for (size_t q = 0; q < kQueries; ++q)
    for (size_t d = 0; d < kDim; ++d)
      b.queries[q * kDim + d] = b.data[(q * 97) * kDim + d] + noise[q * kDim + d];
  b.flat = std::make_unique<FlatIndex>(kDim, metric);
  b.flat->add_batch(0, kRows, b.data.data());
  b.hnsw = std::make_unique<HnswIndex>(testing::schema(kDim, metric, VectorIndexKind::hnsw));
  b.hnsw->add_batch(0, kRows, b.data.data());
  return cache.emplace(metric, std::move(b)).first->second;
}

double mean_recall(const VectorIndex& idx, const FlatIndex& flat, const std::vector<float>& queries,
                   const VectorSearchParams& p, const Bitset* allowed = nullptr) {
  double sum = 0;
  const size_t nq = queries.size() / flat.dim();
  for (size_t q = 0; q < nq; ++q) {
    const float* qv = queries.data() + q * flat.dim();
    sum += testing::recall(idx.search(qv, p, allowed), flat.search(qv, p, allowed));
  }
  return sum / static_cast<double>(nq);
}

class HnswMetricTest : public ::testing::TestWithParam<Metric> {};

TEST_P(HnswMetricTest, RecallAgainstFlat) {
  const auto& b = built(GetParam());
  EXPECT_EQ(b.hnsw->size(), kRows);
  EXPECT_GT(b.hnsw->mean_degree(), 4.0);
  VectorSearchParams p;
  p.k = 10;
  const double r = mean_recall(*b.hnsw, *b.flat, b.queries, p);
  EXPECT_GE(r, 0.9) << "recall@10 at the default ef";
  p.ef = 256;
  EXPECT_GE(mean_recall(*b.hnsw, *b.flat, b.queries, p), std::max(r, 0.97))
      << "a wider beam does not lose recall";
}

TEST_P(HnswMetricTest, ResultsAreSortedWithSensibleScores) {
  const auto& b = built(GetParam());
  VectorSearchParams p;
  p.k = 20;
  for (size_t q = 0; q < 10; ++q) {
    const float* qv = b.queries.data() + q * kDim;
    auto hits = b.hnsw->search(qv, p);
    ASSERT_EQ(hits.size(), 20u);
    for (size_t i = 1; i < hits.size(); ++i) EXPECT_TRUE(vector_detail::ranks_before(hits[i - 1], hits[i]));
    for (const auto& h : hits) {
      const double want = testing::brute_score(GetParam(), qv, b.data.data() + h.row * kDim, kDim);
      // fp16 vectors (cosine: f16, or sq8 re-ranked by its fp16 copy): ~1e-3 at most.
      EXPECT_NEAR(h.score, want, 2e-3 * (1 + std::fabs(want)));
    }
  }
}

TEST_P(HnswMetricTest, FilteredRecallAtEverySelectivity) {
  const auto& b = built(GetParam());
  VectorSearchParams p;
  p.k = 10;
  for (double pass : {0.001, 0.005, 0.01, 0.03, 0.1, 0.3, 0.5, 0.9}) {
    const Bitset allowed = testing::random_allowed(kRows, pass, static_cast<uint64_t>(pass * 1e6));
    double sum = 0;
    for (size_t q = 0; q < kQueries; ++q) {
      const float* qv = b.queries.data() + q * kDim;
      auto hits = b.hnsw->search(qv, p, &allowed);
      auto truth = b.flat->search(qv, p, &allowed);
      EXPECT_EQ(hits.size(), truth.size());
      for (const auto& h : hits)
        ASSERT_TRUE(allowed.test(h.row)) << "disallowed row returned at pass " << pass;
      sum += testing::recall(hits, truth);
    }
    EXPECT_GE(sum / kQueries, 0.95) << "pass rate " << pass << " plan "
                                    << plan_kind_name(b.hnsw->plan(p, &allowed).kind);
  }
}

INSTANTIATE_TEST_SUITE_P(AllMetrics, HnswMetricTest,
                         ::testing::Values(Metric::cosine, Metric::ip, Metric::l2),
                         [](const auto& info) { return std::string(metric_name(info.param)); });

TEST(HnswFiltered, GraphPathKeepsRecallWhenForced) {
  const auto& b = built(Metric::cosine);
  VectorSearchParams p;
  p.k = 10;
  for (double pass : {0.01, 0.05, 0.1, 0.3, 0.5, 0.9}) {
    const Bitset allowed = testing::random_allowed(kRows, pass, 77);
    SearchPlan plan;
    plan.kind = SearchPlan::Kind::filtered_graph;
    plan.allowed_rows = allowed.count();
    plan.beam = static_cast<size_t>(std::ceil(64 / pass));
    double sum = 0;
    for (size_t q = 0; q < kQueries; ++q) {
      const float* qv = b.queries.data() + q * kDim;
      auto hits = b.hnsw->search_with_plan(qv, p, &allowed, plan);
      for (const auto& h : hits) ASSERT_TRUE(allowed.test(h.row));
      sum += testing::recall(hits, b.flat->search(qv, p, &allowed));
    }
    EXPECT_GE(sum / kQueries, 0.95) << "pass " << pass;
  }
}

TEST(HnswFiltered, ExactPlanEqualsFlatOnFp32Storage) {
  const auto& b = built(Metric::l2);
  ASSERT_EQ(b.hnsw->storage(), VectorStorage::f32);
  const Bitset allowed = testing::random_allowed(kRows, 0.02, 5);
  VectorSearchParams p;
  p.k = 10;
  EXPECT_EQ(b.hnsw->plan(p, &allowed).kind, SearchPlan::Kind::exact);
  for (size_t q = 0; q < 20; ++q) {
    const float* qv = b.queries.data() + q * kDim;
    auto hits = b.hnsw->search(qv, p, &allowed);
    auto truth = b.flat->search(qv, p, &allowed);
    ASSERT_EQ(hits.size(), truth.size());
    for (size_t i = 0; i < hits.size(); ++i) {
      EXPECT_EQ(hits[i].row, truth[i].row);
      EXPECT_NEAR(hits[i].score, truth[i].score, 1e-3 * (1 + std::fabs(truth[i].score)));
    }
  }
}

TEST(HnswFiltered, DeletedRowsAreNeverReturned) {
  const auto& b = built(Metric::cosine);
  Bitset allowed(kRows, true);
  for (size_t r = 0; r < kRows; r += 3) allowed.reset(r);       // a third of the rows deleted
  for (size_t q = 0; q < kQueries; ++q) allowed.reset(q * 97);  // and every query's source point
  VectorSearchParams p;
  p.k = 10;
  double sum = 0;
  for (size_t q = 0; q < kQueries; ++q) {
    const float* qv = b.queries.data() + q * kDim;
    auto hits = b.hnsw->search(qv, p, &allowed);
    ASSERT_EQ(hits.size(), 10u);
    for (const auto& h : hits) ASSERT_TRUE(allowed.test(h.row));
    sum += testing::recall(hits, b.flat->search(qv, p, &allowed));
  }
  EXPECT_GE(sum / kQueries, 0.95);
  // A bitset sized before later adds: rows past its end count as not allowed.
  Bitset short_set(kRows / 2, true);
  for (size_t q = 0; q < 10; ++q)
    for (const auto& h : b.hnsw->search(b.queries.data() + q * kDim, p, &short_set))
      EXPECT_LT(h.row, kRows / 2);
  Bitset none(kRows);
  EXPECT_TRUE(b.hnsw->search(b.queries.data(), p, &none).empty());
}

TEST(HnswPlanner, ChoosesByCardinality) {
  const auto& b = built(Metric::cosine);
  VectorSearchParams p;
  p.k = 10;
  p.ef = 64;
  EXPECT_EQ(b.hnsw->plan(p, nullptr).kind, SearchPlan::Kind::graph);
  EXPECT_EQ(b.hnsw->plan(p, nullptr).beam, 64u);
  Bitset all(kRows, true);
  EXPECT_EQ(b.hnsw->plan(p, &all).kind, SearchPlan::Kind::graph);
  EXPECT_EQ(b.hnsw->plan(p, &all).allowed_rows, kRows);
  Bitset few = testing::random_allowed(kRows, 0.01, 1);
  EXPECT_EQ(b.hnsw->plan(p, &few).kind, SearchPlan::Kind::exact);
  EXPECT_EQ(b.hnsw->plan(p, &few).allowed_rows, few.count());
  Bitset most = testing::random_allowed(kRows, 0.9, 1);
  auto plan = b.hnsw->plan(p, &most);
  EXPECT_EQ(plan.kind, SearchPlan::Kind::filtered_graph);
  EXPECT_GE(plan.beam, 64u);
  EXPECT_LE(plan.beam, 64u * 10 / 8);
  // The thresholds are configurable.
  HnswIndex idx(testing::schema(4, Metric::l2, VectorIndexKind::hnsw));
  FilterPlannerParams pp;
  pp.exact_min_rows = 0;
  pp.exact_rows_per_beam = 0;
  idx.set_planner(pp);
  auto data = testing::uniform(3000, 4, 1);
  idx.add_batch(0, 3000, data.data());
  Bitset half = testing::random_allowed(3000, 0.5, 2);
  EXPECT_EQ(idx.plan(p, &half).kind, SearchPlan::Kind::filtered_graph);
  EXPECT_EQ(idx.plan(p, &half).beam, static_cast<size_t>(std::ceil(64.0 * 3000 / half.count())));
}

TEST(HnswIndex, IncrementalAddsAfterSearches) {
  const size_t n = 6000, dim = 24;
  auto data = testing::clustered(n, dim, 40, 21);
  HnswIndex idx(testing::schema(dim, Metric::l2, VectorIndexKind::hnsw));
  FlatIndex flat(dim, Metric::l2);
  VectorSearchParams p;
  p.k = 10;
  for (size_t r = 0; r < n / 2; ++r) idx.add(static_cast<uint32_t>(r), data.data() + r * dim);
  flat.add_batch(0, n / 2, data.data());
  auto queries = testing::clustered(50, dim, 40, 21);
  EXPECT_GE(mean_recall(idx, flat, queries, p), 0.9);
  // Interleave adds with searches: each new vector is immediately its own nearest.
  for (size_t r = n / 2; r < n; ++r) {
    idx.add(static_cast<uint32_t>(r), data.data() + r * dim);
    if (r % 97 == 0) {
      VectorSearchParams one;
      one.k = 1;
      auto hits = idx.search(data.data() + r * dim, one);
      ASSERT_EQ(hits.size(), 1u);
      EXPECT_FLOAT_EQ(hits[0].score, 0.0f);
    }
  }
  flat.add_batch(static_cast<uint32_t>(n / 2), n / 2, data.data() + n / 2 * dim);
  EXPECT_EQ(idx.size(), n);
  EXPECT_GE(mean_recall(idx, flat, queries, p), 0.9);
}

TEST(HnswIndex, MultiThreadedBuildIsAValidGraph) {
  const size_t n = 8000, dim = 32;
  auto data = testing::clustered(n, dim, 60, 31);
  HnswIndex idx(testing::schema(dim, Metric::cosine, VectorIndexKind::hnsw));
  idx.add_batch(0, n / 2, data.data(), 2);
  idx.add_batch(static_cast<uint32_t>(n / 2), n / 2, data.data() + n / 2 * dim, 3);
  FlatIndex flat(dim, Metric::cosine);
  flat.add_batch(0, n, data.data());
  auto queries = testing::clustered(60, dim, 60, 31);
  VectorSearchParams p;
  p.k = 10;
  EXPECT_GE(mean_recall(idx, flat, queries, p), 0.9);
  // load validates the structure: ids in range, no self links, counts within capacity.
  std::stringstream ss;
  idx.save(ss);
  EXPECT_NO_THROW(load_vector_index(ss));
}

TEST(HnswIndex, DeferredLinkingBuildsTheGraphAddWould) {
  for (auto [metric, storage] : {std::pair{Metric::cosine, VectorStorage::sq8}, std::pair{Metric::l2, VectorStorage::f32}}) {
    SCOPED_TRACE(std::string(metric_name(metric)));
    const size_t n = 1500, dim = 20;
    auto data = testing::clustered(n, dim, 30, 43);
    HnswOptions opts;
    opts.storage = storage;
    const auto schema = testing::schema(dim, metric, VectorIndexKind::hnsw, 12, 80, 40);
    HnswIndex added(schema, opts), deferred(schema, opts);
    for (uint32_t r = 0; r < n; ++r) added.add(r, data.data() + size_t{r} * dim);
    // Stored in runs, linked in uneven slices, as a writer and the builder interleave.
    size_t linked = 0;
    for (uint32_t r = 0; r < n; ++r) {
      deferred.add_unlinked(r, data.data() + size_t{r} * dim);
      if (r % 97 == 0) linked += deferred.link_pending(r % 7);
    }
    EXPECT_EQ(deferred.size(), n);
    EXPECT_EQ(deferred.pending(), n - linked);
    std::stringstream unfinished;
    EXPECT_THROW(deferred.save(unfinished), Error) << "a graph with rows not linked is never saved";
    EXPECT_EQ(deferred.link_pending(n), n - linked);
    EXPECT_EQ(deferred.pending(), 0u);
    std::stringstream a, b;
    added.save(a);
    deferred.save(b);
    EXPECT_EQ(a.str(), b.str()) << "the same graph, byte for byte";
  }
}

TEST(HnswIndex, RowsNotLinkedAreFoundByAnExactScan) {
  // fp32 storage, so the exact scan's scores equal the flat oracle's.
  const size_t n = 3000, dim = 16;
  auto data = testing::clustered(n, dim, 25, 44);
  HnswOptions opts;
  opts.storage = VectorStorage::f32;
  HnswIndex idx(testing::schema(dim, Metric::l2, VectorIndexKind::hnsw, 12, 80, 40), opts);
  FlatIndex flat(dim, Metric::l2);
  flat.add_batch(0, n, data.data());
  // Nothing linked: every search is an exact scan, the flat index's results exactly.
  for (uint32_t r = 0; r < n; ++r) idx.add_unlinked(r, data.data() + size_t{r} * dim);
  const Bitset allowed = testing::random_allowed(n, 0.3, 7);
  VectorSearchParams p;
  p.k = 10;
  for (size_t q = 0; q < 30; ++q) {
    const float* qv = data.data() + q * 89 * dim;
    EXPECT_EQ(idx.search(qv, p), flat.search(qv, p));
    EXPECT_EQ(idx.search(qv, p, &allowed), flat.search(qv, p, &allowed));
  }
  // Half linked: each row not linked is its own nearest neighbour, at distance 0, and
  // an allowed set excluding it keeps it out.
  idx.link_pending(n / 2);
  for (uint32_t r = n / 2; r < n; r += 101) {
    auto hits = idx.search(data.data() + size_t{r} * dim, p);
    ASSERT_FALSE(hits.empty());
    EXPECT_EQ(hits[0].row, r);
    EXPECT_FLOAT_EQ(hits[0].score, 0.0f);
    Bitset others(n);
    for (size_t i = 0; i < n; ++i)
      if (i != r) others.set(i);
    for (const auto& h : idx.search(data.data() + size_t{r} * dim, p, &others)) EXPECT_NE(h.row, r);
  }
}

TEST(HnswIndex, SaveLoadRoundTripGivesIdenticalResults) {
  for (auto [metric, storage] :
       {std::pair{Metric::cosine, VectorStorage::sq8}, std::pair{Metric::ip, VectorStorage::f16},
        std::pair{Metric::l2, VectorStorage::f32}, std::pair{Metric::l2, VectorStorage::sq8}}) {
    SCOPED_TRACE(std::string(metric_name(metric)) + " " + std::string(storage_name(storage)));
    const size_t n = 3000, dim = 20;
    auto data = testing::clustered(n, dim, 30, 41);
    HnswOptions opts;
    opts.storage = storage;
    HnswIndex idx(testing::schema(dim, metric, VectorIndexKind::hnsw, 12, 80, 40), opts);
    idx.add_batch(0, n, data.data());
    std::stringstream ss;
    idx.save(ss);
    const std::string bytes = ss.str();
    std::stringstream again;
    idx.save(again);
    EXPECT_EQ(again.str(), bytes) << "saving is deterministic";
    std::stringstream in(bytes);
    auto loaded = load_vector_index(in);
    ASSERT_EQ(loaded->kind(), VectorIndexKind::hnsw);
    auto* h = dynamic_cast<HnswIndex*>(loaded.get());
    ASSERT_NE(h, nullptr);
    EXPECT_EQ(h->params().m, 12u);
    EXPECT_EQ(h->params().ef_construction, 80u);
    EXPECT_EQ(h->params().ef_search, 40u);
    EXPECT_EQ(h->storage(), idx.storage());
    EXPECT_EQ(h->max_level(), idx.max_level());
    const Bitset allowed = testing::random_allowed(n, 0.4, 3);
    VectorSearchParams p;
    p.k = 10;
    for (size_t q = 0; q < 50; ++q) {
      const float* qv = data.data() + q * 13 * dim;
      EXPECT_EQ(loaded->search(qv, p), idx.search(qv, p));
      EXPECT_EQ(loaded->search(qv, p, &allowed), idx.search(qv, p, &allowed));
    }
    // The loaded index keeps growing.
    auto more = testing::clustered(500, dim, 30, 42);
    loaded->add_batch(static_cast<uint32_t>(n), 500, more.data());
    if (metric != Metric::ip) {  // under IP a vector need not be its own best match
      VectorSearchParams one;
      one.k = 1;
      EXPECT_EQ(loaded->search(more.data() + 123 * dim, one).at(0).row, n + 123);
    }
  }
}

std::string saved_small_index(VectorIndexKind kind) {
  auto data = testing::clustered(400, 12, 10, 51);
  auto idx = make_vector_index(testing::schema(12, Metric::cosine, kind, 8, 40));
  idx->add_batch(0, 400, data.data());
  std::stringstream ss;
  idx->save(ss);
  return ss.str();
}

TEST(VectorPersistence, CorruptOrTruncatedInputIsAnError) {
  for (VectorIndexKind kind : {VectorIndexKind::flat, VectorIndexKind::hnsw}) {
    const std::string good = saved_small_index(kind);
    {
      std::stringstream ss(good);
      EXPECT_NO_THROW(load_vector_index(ss));
    }
    std::mt19937_64 rng(7);
    // Every prefix of the header, then a sample of longer ones.
    std::vector<size_t> cuts;
    for (size_t i = 0; i < 120 && i < good.size(); ++i) cuts.push_back(i);
    for (int i = 0; i < 200; ++i) cuts.push_back(rng() % good.size());
    for (size_t cut : cuts) {
      std::stringstream ss(good.substr(0, cut));
      EXPECT_THROW(load_vector_index(ss), Error) << "truncated at " << cut;
    }
    for (int i = 0; i < 300; ++i) {
      std::string bad = good;
      const size_t pos = rng() % bad.size();
      bad[pos] = static_cast<char>(bad[pos] ^ (1 + rng() % 255));
      std::stringstream ss(bad);
      try {
        load_vector_index(ss);
        ADD_FAILURE() << "a flipped byte at " << pos << " was accepted";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      }
    }
  }
  std::stringstream junk("definitely not an index");
  EXPECT_THROW(load_vector_index(junk), Error);
  std::stringstream empty;
  EXPECT_THROW(load_vector_index(empty), Error);
}

TEST(HnswIndex, ConcurrentSearchesMatchSerialOnes) {
  const auto& b = built(Metric::cosine);
  const Bitset allowed = testing::random_allowed(kRows, 0.2, 8);
  VectorSearchParams p;
  p.k = 10;
  std::vector<std::vector<VectorHit>> serial(kQueries), filtered(kQueries);
  for (size_t q = 0; q < kQueries; ++q) {
    serial[q] = b.hnsw->search(b.queries.data() + q * kDim, p);
    filtered[q] = b.hnsw->search(b.queries.data() + q * kDim, p, &allowed);
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 3; ++rep)
        for (size_t q = t; q < kQueries; q += 2) {
          if (b.hnsw->search(b.queries.data() + q * kDim, p) != serial[q]) ++mismatches;
          if (b.hnsw->search(b.queries.data() + q * kDim, p, &allowed) != filtered[q]) ++mismatches;
        }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(HnswIndex, EdgeCasesAndChecks) {
  EXPECT_THROW(HnswIndex(testing::schema(0, Metric::l2, VectorIndexKind::hnsw)), Error);
  EXPECT_THROW(HnswIndex(testing::schema(kMaxVectorDim + 1, Metric::l2, VectorIndexKind::hnsw)), Error);
  EXPECT_THROW(HnswIndex(testing::schema(8, Metric::l2, VectorIndexKind::hnsw, 1)), Error);
  EXPECT_THROW(HnswIndex(testing::schema(8, Metric::l2, VectorIndexKind::hnsw, 16, 0)), Error);
  EXPECT_THROW(make_vector_index(testing::schema(0, Metric::ip, VectorIndexKind::flat)), Error);

  HnswIndex idx(testing::schema(5, Metric::ip, VectorIndexKind::hnsw));
  EXPECT_EQ(idx.dim(), 5u);
  EXPECT_EQ(idx.kind(), VectorIndexKind::hnsw);
  const float q[5] = {1, 0, 0, 0, 0};
  VectorSearchParams p;
  EXPECT_TRUE(idx.search(q, p).empty());
  Bitset none;
  EXPECT_TRUE(idx.search(q, p, &none).empty());
  const float one[5] = {0.5f, 1, 2, 3, 4};
  EXPECT_THROW(idx.add(3, one), Error);
  idx.add(0, one);
  auto hits = idx.search(q, p);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_FLOAT_EQ(hits[0].score, 0.5f);
  const float inf[5] = {0, 0, std::numeric_limits<float>::infinity(), 0, 0};
  EXPECT_THROW(idx.add(1, inf), Error);
  EXPECT_THROW(idx.search(inf, p), Error);
  EXPECT_EQ(idx.size(), 1u);

  // k > size returns every row; k == 0 nothing.
  auto data = testing::uniform(50, 5, 3);
  idx.add_batch(1, 50, data.data());
  p.k = 100;
  hits = idx.search(q, p);
  EXPECT_EQ(hits.size(), 51u);
  p.k = 0;
  EXPECT_TRUE(idx.search(q, p).empty());

  // fp16 storage refuses what fp16 cannot hold.
  HnswOptions opts;
  opts.storage = VectorStorage::f16;
  HnswIndex f16(testing::schema(2, Metric::l2, VectorIndexKind::hnsw), opts);
  const float big[2] = {1e6f, 0};
  EXPECT_THROW(f16.add(0, big), Error);
  EXPECT_GT(idx.memory_bytes(), 51u * 5 * 4);
}

TEST(HnswIndex, EverySimdLevelBuildsAGoodGraph) {
  const size_t n = 3000, dim = 33;
  auto data = testing::clustered(n, dim, 30, 61);
  FlatIndex flat(dim, Metric::cosine);
  flat.add_batch(0, n, data.data());
  auto queries = testing::clustered(40, dim, 30, 61);
  for (simd::Isa isa : {simd::Isa::scalar, simd::Isa::avx2, simd::Isa::avx512}) {
    if (!simd::isa_supported(isa)) {
      std::printf("[   NOTE   ] HNSW with %s kernels NOT tested: this CPU lacks them\n", std::string(simd::isa_name(isa)).c_str());
      continue;
    }
    for (VectorStorage st : {VectorStorage::sq8, VectorStorage::f16, VectorStorage::f32}) {
      HnswOptions opts;
      opts.isa = isa;
      opts.storage = st;
      HnswIndex idx(testing::schema(dim, Metric::cosine, VectorIndexKind::hnsw, 12, 64), opts);
      idx.add_batch(0, n, data.data());
      VectorSearchParams p;
      p.k = 10;
      EXPECT_GE(mean_recall(idx, flat, queries, p), 0.9) << simd::isa_name(isa) << " " << storage_name(st);
    }
  }
}

TEST(VectorIndexFactory, MakesTheSchemaKind) {
  auto flat = make_vector_index(testing::schema(3, Metric::l2, VectorIndexKind::flat));
  EXPECT_EQ(flat->kind(), VectorIndexKind::flat);
  auto hnsw = make_vector_index(testing::schema(3, Metric::cosine, VectorIndexKind::hnsw));
  EXPECT_EQ(hnsw->kind(), VectorIndexKind::hnsw);
  EXPECT_EQ(hnsw->metric(), Metric::cosine);
  EXPECT_EQ(dynamic_cast<HnswIndex&>(*hnsw).storage(), VectorStorage::f16);
  auto ip = make_vector_index(testing::schema(3, Metric::ip, VectorIndexKind::hnsw));
  EXPECT_EQ(dynamic_cast<HnswIndex&>(*ip).storage(), VectorStorage::f32);
}

}  // namespace
}  // namespace eagle::index
