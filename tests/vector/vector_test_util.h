#pragma once
// Shared helpers of the vector tests: seeded data, a scalar brute-force oracle, recall.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "eagle/core/bitset.h"
#include "eagle/core/schema.h"
#include "eagle/index/vector/vector_index.h"

namespace eagle::index::testing {

// Gaussian clusters: what embeddings look like, and a data set HNSW can reach high
// recall on (uniform noise in many dimensions is not).
inline std::vector<float> clustered(size_t n, size_t dim, size_t clusters, uint64_t seed,
                                    float spread = 0.35f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> centres(clusters * dim);
  for (auto& c : centres) c = g(rng);
  std::uniform_int_distribution<size_t> pick(0, clusters - 1);
  std::vector<float> v(n * dim);
  for (size_t i = 0; i < n; ++i) {
    const size_t c = pick(rng);
    for (size_t d = 0; d < dim; ++d) v[i * dim + d] = centres[c * dim + d] + spread * g(rng);
  }
  return v;
}

inline std::vector<float> uniform(size_t n, size_t dim, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n * dim);
  for (auto& x : v) x = u(rng);
  return v;
}

// The plain definition of each score, in double, with no SIMD and no index.
inline double brute_score(Metric m, const float* a, const float* b, size_t dim) {
  double dot = 0, na = 0, nb = 0, l2 = 0;
  for (size_t i = 0; i < dim; ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
    const double d = static_cast<double>(a[i]) - b[i];
    l2 += d * d;
  }
  switch (m) {
    case Metric::cosine: return (na > 0 && nb > 0) ? dot / std::sqrt(na * nb) : 0.0;
    case Metric::ip: return dot;
    case Metric::l2: return -l2;
    case Metric::tanimoto: return (na + nb - dot) > 0 ? dot / (na + nb - dot) : 0.0;
  }
  return 0;
}

inline std::vector<VectorHit> brute_topk(Metric m, const std::vector<float>& data, size_t dim, const float* q,
                                         size_t k, const Bitset* allowed = nullptr) {
  std::vector<std::pair<double, uint32_t>> all;
  const size_t n = data.size() / dim;
  for (size_t r = 0; r < n; ++r)
    if (!allowed || allowed->test(r))
      all.push_back({brute_score(m, q, data.data() + r * dim, dim), static_cast<uint32_t>(r)});
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  std::vector<VectorHit> out;
  for (size_t i = 0; i < std::min(k, all.size()); ++i)
    out.push_back({all[i].second, static_cast<float>(all[i].first)});
  return out;
}

inline double recall(const std::vector<VectorHit>& got, const std::vector<VectorHit>& truth) {
  if (truth.empty()) return 1.0;
  size_t hit = 0;
  for (const auto& t : truth)
    for (const auto& g : got)
      if (g.row == t.row) {
        ++hit;
        break;
      }
  return static_cast<double>(hit) / static_cast<double>(truth.size());
}

inline Bitset random_allowed(size_t n, double pass, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  Bitset b(n);
  for (size_t i = 0; i < n; ++i)
    if (u(rng) < pass) b.set(i);
  return b;
}

inline VectorFieldSchema schema(uint32_t dim, Metric metric, VectorIndexKind kind, uint32_t m = 16,
                                uint32_t ef_construction = 128, uint32_t ef_search = 64) {
  VectorFieldSchema s;
  s.dim = dim;
  s.metric = metric;
  s.index = kind;
  s.hnsw.m = m;
  s.hnsw.ef_construction = ef_construction;
  s.hnsw.ef_search = ef_search;
  return s;
}

}  // namespace eagle::index::testing
