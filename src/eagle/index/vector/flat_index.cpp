#include "eagle/index/vector/flat_index.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <cmath>
#include <exception>
#include <string>
#include <thread>

#include "eagle/core/error.h"
#include "eagle/index/vector/simd.h"
#include "eagle/index/vector/vector_io.h"

namespace eagle::index {

namespace vector_detail {

void normalize(const float* in, float* out, size_t dim) {
  double ss = 0;
  for (size_t i = 0; i < dim; ++i) ss += static_cast<double>(in[i]) * in[i];
  const double norm = std::sqrt(ss);
  const float inv = norm > 0 ? static_cast<float>(1.0 / norm) : 0.0f;
  for (size_t i = 0; i < dim; ++i) out[i] = in[i] * inv;
}

void check_finite(const float* v, size_t dim, const char* what) {
  for (size_t i = 0; i < dim; ++i)
    if (!std::isfinite(v[i]))
      fail(ErrorCode::invalid_argument,
           std::string(what) + " has a non-finite component at position " + std::to_string(i));
}

size_t count_allowed(const Bitset& allowed, size_t rows) {
  if (allowed.size() <= rows) return allowed.count();
  const auto& w = allowed.words();
  size_t c = 0;
  for (size_t i = 0; i < rows / 64; ++i) c += static_cast<size_t>(std::popcount(w[i]));
  if (rows % 64) c += static_cast<size_t>(std::popcount(w[rows / 64] & ((uint64_t{1} << (rows % 64)) - 1)));
  return c;
}

}  // namespace vector_detail

using vector_detail::ranks_before;

namespace {

constexpr size_t kBlockRows = 256;  // 100 KB of 100-d rows: stays in L2 across a batch of queries

struct RanksBefore {
  bool operator()(const VectorHit& a, const VectorHit& b) const { return ranks_before(a, b); }
};

// Bounded heap whose top is the worst hit kept.
inline void offer(std::vector<VectorHit>& heap, size_t k, uint32_t row, float score) {
  if (heap.size() < k) {
    heap.push_back({row, score});
    std::push_heap(heap.begin(), heap.end(), RanksBefore{});
  } else if (ranks_before({row, score}, heap.front())) {
    std::pop_heap(heap.begin(), heap.end(), RanksBefore{});
    heap.back() = {row, score};
    std::push_heap(heap.begin(), heap.end(), RanksBefore{});
  }
}

}  // namespace

FlatIndex::FlatIndex(uint32_t dim, Metric metric) : dim_(dim), metric_(metric) {
  if (dim == 0 || dim > kMaxVectorDim)
    fail(ErrorCode::invalid_argument,
         "vector dimension must be in 1.." + std::to_string(kMaxVectorDim) + ", got " + std::to_string(dim));
}

void FlatIndex::prepare(const float* vec, float* out, const char* what) const {
  vector_detail::check_finite(vec, dim_, what);
  if (metric_ == Metric::tanimoto)
    for (uint32_t i = 0; i < dim_; ++i)
      if (vec[i] < 0) fail(ErrorCode::invalid_argument, std::string(what) + " has a negative component (TANIMOTO)");
  if (metric_ == Metric::cosine)
    vector_detail::normalize(vec, out, dim_);
  else
    std::copy(vec, vec + dim_, out);
}

void FlatIndex::add(uint32_t row, const float* vec) {
  add_batch(row, 1, vec, 1);
}

void FlatIndex::add_batch(uint32_t first_row, size_t count, const float* vecs, unsigned /*threads*/) {
  if (first_row != rows_)
    fail(ErrorCode::invalid_argument, "vector rows must be added in order: expected row " +
                                          std::to_string(rows_) + ", got " + std::to_string(first_row));
  if (rows_ + count > kMaxVectorRows) fail(ErrorCode::invalid_argument, "too many vectors for one index");
  for (size_t i = 0; i < count; ++i) vector_detail::check_finite(vecs + i * dim_, dim_, "vector");
  const size_t old = data_.size();
  data_.resize(old + count * dim_);
  for (size_t i = 0; i < count; ++i) prepare(vecs + i * dim_, data_.data() + old + i * dim_, "vector");
  if (metric_ == Metric::tanimoto)
    for (size_t i = 0; i < count; ++i) sq_norms_.push_back(simd::kernels().dot_f32(row(static_cast<uint32_t>(rows_ + i)), row(static_cast<uint32_t>(rows_ + i)), dim_));
  rows_ += count;
}

void FlatIndex::search_block(const float* q, size_t k, const Bitset* allowed, size_t begin, size_t end,
                             std::vector<VectorHit>& heap, float* scores, uint32_t* ids) const {
  const auto& kern = simd::kernels();
  const bool l2 = metric_ == Metric::l2;
  if (metric_ == Metric::tanimoto) {
    // Exact Tanimoto from the dot product and the stored squared norms.
    const float qn = kern.dot_f32(q, q, dim_);
    for (size_t r = begin; r < end; ++r) {
      if (allowed && !allowed->test(r)) continue;
      const float dot = kern.dot_f32(q, row(static_cast<uint32_t>(r)), dim_);
      const float den = qn + sq_norms_[r] - dot;
      const float s = den > 0 ? dot / den : 0.0f;
      if (heap.size() < k || s >= heap.front().score) offer(heap, k, static_cast<uint32_t>(r), s);
    }
    return;
  }
  if (!allowed) {
    const size_t cnt = end - begin;
    if (l2)
      kern.l2sq_f32_rows(q, row(static_cast<uint32_t>(begin)), dim_, cnt, dim_, scores);
    else
      kern.dot_f32_rows(q, row(static_cast<uint32_t>(begin)), dim_, cnt, dim_, scores);
    for (size_t i = 0; i < cnt; ++i) {
      const float s = l2 ? -scores[i] : scores[i];
      if (heap.size() < k || s >= heap.front().score) offer(heap, k, static_cast<uint32_t>(begin + i), s);
    }
    return;
  }
  size_t cnt = 0;
  const auto& words = allowed->words();
  for (size_t r = begin; r < end;) {
    const size_t wi = r >> 6;
    if (wi >= words.size()) break;
    uint64_t w = words[wi] >> (r & 63);
    const size_t lim = std::min<size_t>(end - r, 64 - (r & 63));
    if (lim < 64) w &= (uint64_t{1} << lim) - 1;
    while (w) {
      ids[cnt++] = static_cast<uint32_t>(r + static_cast<size_t>(std::countr_zero(w)));
      w &= w - 1;
    }
    r += lim;
  }
  for (size_t i = 0; i < cnt; ++i) {
    const float* v = row(ids[i]);
    const float s = l2 ? -kern.l2sq_f32(q, v, dim_) : kern.dot_f32(q, v, dim_);
    if (heap.size() < k || s >= heap.front().score) offer(heap, k, ids[i], s);
  }
}

std::vector<VectorHit> FlatIndex::search(const float* query, const VectorSearchParams& p,
                                         const Bitset* allowed) const {
  return std::move(search_batch(query, 1, p, allowed, 1).front());
}

std::vector<std::vector<VectorHit>> FlatIndex::search_batch(const float* queries, size_t nq,
                                                            const VectorSearchParams& p,
                                                            const Bitset* allowed, unsigned threads) const {
  std::vector<float> qs(nq * dim_);
  for (size_t i = 0; i < nq; ++i) prepare(queries + i * dim_, qs.data() + i * dim_, "query vector");
  std::vector<std::vector<VectorHit>> out(nq);
  const size_t k = std::min(p.k, rows_);
  if (k == 0 || nq == 0) return out;

  auto work = [&](size_t q_begin, size_t q_end) {
    std::vector<float> scores(kBlockRows);
    std::vector<uint32_t> ids(kBlockRows);
    for (size_t q = q_begin; q < q_end; ++q) out[q].reserve(k);
    for (size_t b = 0; b < rows_; b += kBlockRows) {
      const size_t e = std::min(rows_, b + kBlockRows);
      for (size_t q = q_begin; q < q_end; ++q)
        search_block(qs.data() + q * dim_, k, allowed, b, e, out[q], scores.data(), ids.data());
    }
    for (size_t q = q_begin; q < q_end; ++q) std::sort_heap(out[q].begin(), out[q].end(), RanksBefore{});
  };

  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(nq)));
  if (threads == 1) {
    // Queries in groups of 16 so a block of rows is reused while it is in cache.
    for (size_t q = 0; q < nq; q += 16) work(q, std::min(nq, q + 16));
    return out;
  }
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(threads);
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      try {
        const size_t lo = nq * t / threads, hi = nq * (t + 1) / threads;
        for (size_t q = lo; q < hi; q += 16) work(q, std::min(hi, q + 16));
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
  }
  for (auto& th : pool) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

void FlatIndex::save(std::ostream& out) const {
  vio::Writer w(out);
  w.bytes(vio::kMagic, sizeof(vio::kMagic));
  w.pod<uint32_t>(vio::kVersion);
  w.pod<uint8_t>(static_cast<uint8_t>(VectorIndexKind::flat));
  w.pod<uint8_t>(static_cast<uint8_t>(metric_));
  w.pod<uint16_t>(0);
  w.pod<uint32_t>(dim_);
  w.pod<uint64_t>(rows_);
  w.end_section();
  w.bytes(data_.data(), rows_ * dim_ * sizeof(float));
  w.end_section();
  w.finish();
}

std::unique_ptr<FlatIndex> FlatIndex::load_body(vio::Reader& in, const vio::CommonHeader& h) {
  in.end_section("header");
  if (h.rows > kMaxVectorRows) vio::corrupt("row count");
  auto idx = std::make_unique<FlatIndex>(h.dim, static_cast<Metric>(h.metric));
  in.expect_bytes(uint64_t{h.rows} * h.dim * sizeof(float), "vectors");
  idx->data_.resize(h.rows * h.dim);
  in.bytes(idx->data_.data(), idx->data_.size() * sizeof(float), "vectors");
  in.end_section("vectors");
  for (size_t r = 0; r < h.rows; ++r)
    for (size_t i = 0; i < h.dim; ++i)
      if (!std::isfinite(idx->data_[r * h.dim + i])) vio::corrupt("non-finite vector component");
  idx->rows_ = h.rows;
  if (idx->metric_ == Metric::tanimoto)
    for (size_t r = 0; r < h.rows; ++r)
      idx->sq_norms_.push_back(simd::kernels().dot_f32(idx->row(static_cast<uint32_t>(r)), idx->row(static_cast<uint32_t>(r)), h.dim));
  return idx;
}

void FlatIndex::stored_vector(uint32_t r, float* out) const {
  if (r >= size()) fail(ErrorCode::invalid_argument, "row out of range");
  std::memcpy(out, row(r), dim_ * sizeof(float));
}

}  // namespace eagle::index
