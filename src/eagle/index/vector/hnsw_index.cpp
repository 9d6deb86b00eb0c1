#include "eagle/index/vector/hnsw_index.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>

#include "eagle/core/error.h"
#include "eagle/index/vector/flat_index.h"
#include "eagle/index/vector/hnsw_graph.h"
#include "eagle/index/vector/vector_io.h"

namespace eagle::index {

using detail::Cand;
using detail::HnswGraph;
using detail::HnswScratch;
using detail::kNoNode;

std::string_view storage_name(VectorStorage s) {
  switch (s) {
    case VectorStorage::f32: return "f32";
    case VectorStorage::f16: return "f16";
    case VectorStorage::sq8: return "sq8";
  }
  return "unknown";
}

namespace detail {

MappedBuffer::~MappedBuffer() {
  if (data_ && !owner_) munmap(data_, bytes_);
}

void MappedBuffer::borrow(const uint8_t* p, size_t bytes, std::shared_ptr<const void> owner) {
  if (data_ && !owner_) munmap(data_, bytes_);
  data_ = const_cast<uint8_t*>(p);  // read-only pages: only grow() (which copies) may lead to a write
  bytes_ = bytes;
  owner_ = std::move(owner);
}

namespace {

constexpr size_t kHugePage = size_t{2} << 20;

// A fresh mapping of `bytes` (a multiple of 2 MB) that starts on a 2 MB boundary, so
// transparent huge pages can back all of it.
void* map_aligned(size_t bytes) {
  void* raw = mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return MAP_FAILED;
  const auto base = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t start = (base + kHugePage - 1) & ~(kHugePage - 1);
  if (start > base) munmap(raw, start - base);
  const uintptr_t end = start + bytes, raw_end = base + bytes + kHugePage;
  if (raw_end > end) munmap(reinterpret_cast<void*>(end), raw_end - end);
  return reinterpret_cast<void*>(start);
}

}  // namespace

void MappedBuffer::grow(size_t bytes) {
  if (bytes <= bytes_ && !owner_) return;
  if (owner_) {
    // Borrowed pages are read-only: the data moves to memory of its own.
    const uint8_t* from = data_;
    const size_t n = bytes_;
    const auto keep = std::move(owner_);  // mapped until copied
    owner_.reset();
    data_ = nullptr;
    bytes_ = 0;
    grow(std::max(bytes, n));
    if (n) std::memcpy(data_, from, n);
    return;
  }
  // Small indexes (most collections) get 4 KB pages: a huge page would make even a
  // ten-row index hold 2 MB resident. Large ones get 2 MB-aligned huge pages.
  constexpr size_t kHugeFrom = size_t{16} << 20;
  size_t want = std::max({bytes, bytes_ + bytes_ / 2, size_t{1} << 16});
  const bool huge = want >= kHugeFrom;
  const size_t unit = huge ? kHugePage : 4096;
  want = (want + unit - 1) / unit * unit;
  void* p = MAP_FAILED;
  if (!data_) {
    p = huge ? map_aligned(want)
             : mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  } else {
    // Extend in place if the address space after us is free (and keeps the alignment
    // huge pages need), else move the pages, without copying, to a fresh range.
    const bool aligned = reinterpret_cast<uintptr_t>(data_) % kHugePage == 0;
    if (!huge || aligned) p = mremap(data_, bytes_, want, 0);
    if (p == MAP_FAILED) {
      void* target = huge ? map_aligned(want) : MAP_FAILED;
      p = huge ? (target == MAP_FAILED ? MAP_FAILED
                                       : mremap(data_, bytes_, want, MREMAP_MAYMOVE | MREMAP_FIXED, target))
               : mremap(data_, bytes_, want, MREMAP_MAYMOVE);
      if (p == MAP_FAILED && target != MAP_FAILED) munmap(target, want);
    }
  }
  if (p == MAP_FAILED) fail(ErrorCode::unavailable, "out of memory growing a vector index");
  // The graph walk touches a few lines of random nodes: with 4 KB pages nearly every
  // one is a TLB miss (and a costly nested page walk under virtualisation). Huge
  // pages cover a large index with a few dozen TLB entries; on GloVe-100 this more
  // than doubled queries/s.
  if (huge) madvise(p, want, MADV_HUGEPAGE);
  data_ = static_cast<uint8_t*>(p);
  bytes_ = want;
}

}  // namespace detail

std::string_view plan_kind_name(SearchPlan::Kind k) {
  switch (k) {
    case SearchPlan::Kind::graph: return "graph";
    case SearchPlan::Kind::filtered_graph: return "filtered_graph";
    case SearchPlan::Kind::exact: return "exact";
  }
  return "unknown";
}

namespace {

void validate_params(const HnswParams& p) {
  if (p.m < 2 || p.m > detail::kMaxM)
    fail(ErrorCode::invalid_argument,
         "HNSW M must be in 2.." + std::to_string(detail::kMaxM) + ", got " + std::to_string(p.m));
  if (p.ef_construction < 1) fail(ErrorCode::invalid_argument, "HNSW efConstruction must be >= 1");
  if (p.ef_search < 1) fail(ErrorCode::invalid_argument, "HNSW ef must be >= 1");
}

}  // namespace

// Hands out per-thread scratch from a small pool, so concurrent searches on a const
// index never share working memory and a warm query allocates nothing.
class HnswIndex::ScratchLease {
 public:
  explicit ScratchLease(const HnswIndex& idx) : idx_(idx) {
    std::lock_guard lock(idx_.scratch_mu_);
    if (!idx_.scratch_free_.empty()) {
      s_ = std::move(idx_.scratch_free_.back());
      idx_.scratch_free_.pop_back();
    }
    if (!s_) s_ = std::make_unique<HnswScratch>();
  }
  ~ScratchLease() {
    std::lock_guard lock(idx_.scratch_mu_);
    idx_.scratch_free_.push_back(std::move(s_));
  }
  HnswScratch& operator*() { return *s_; }

 private:
  const HnswIndex& idx_;
  std::unique_ptr<HnswScratch> s_;
};

HnswIndex::HnswIndex(const VectorFieldSchema& s, HnswOptions opts)
    : params_(s.hnsw),
      opts_(opts),
      g_(std::make_unique<HnswGraph>()),
      build_scratch_(std::make_unique<HnswScratch>()) {
  if (s.dim == 0 || s.dim > kMaxVectorDim)
    fail(ErrorCode::invalid_argument, "vector dimension must be in 1.." + std::to_string(kMaxVectorDim) +
                                          ", got " + std::to_string(s.dim));
  validate_params(params_);
  // Cosine vectors are unit length, so fp16 keeps them to ~1e-4: f16 nodes (384 bytes
  // at 100 dimensions) rather than sq8's codes plus the fp16 copy it re-ranks with
  // (464): same scores, a sixth less memory a row, ~5-10%
  // fewer queries/s (docs/vector.md).
  storage_ = opts.storage.value_or(s.metric == Metric::cosine ? VectorStorage::f16 : VectorStorage::f32);
  if (static_cast<uint8_t>(storage_) > static_cast<uint8_t>(VectorStorage::sq8))
    fail(ErrorCode::invalid_argument, "unknown HNSW vector storage");
  core_ = &detail::hnsw_core(opts.isa.value_or(simd::active_isa()));
  auto& g = *g_;
  g.dim = s.dim;
  g.padded_dim = (s.dim + 7) / 8 * 8;
  g.metric = s.metric;
  g.store = static_cast<uint8_t>(storage_);
  g.m = params_.m;
  g.m0 = 2 * params_.m;
  g.ef_construction = std::max(params_.ef_construction, params_.m);
  g.rerank_depth = opts.rerank_depth;
  switch (storage_) {
    case VectorStorage::f32: g.vec_bytes = static_cast<size_t>(g.padded_dim) * 4; break;
    case VectorStorage::f16: g.vec_bytes = static_cast<size_t>(g.padded_dim) * 2; break;
    case VectorStorage::sq8: g.vec_bytes = static_cast<size_t>(g.padded_dim) + 4; break;  // codes, scale
  }
  g.node_bytes = (g.vec_bytes + 4 * (1 + static_cast<size_t>(g.m0)) + 63) / 64 * 64;
  rng_.seed(opts.seed);
  level_mult_ = 1.0 / std::log(static_cast<double>(params_.m));
}

HnswIndex::~HnswIndex() = default;

void HnswIndex::stored_vector(uint32_t row, float* out) const {
  const auto& g = *g_;
  if (row >= size()) fail(ErrorCode::invalid_argument, "row out of range");
  std::vector<float> v(g.padded_dim);
  switch (g.store) {
    case detail::kStoreF32: std::memcpy(v.data(), g.vec(row), g.padded_dim * sizeof(float)); break;
    case detail::kStoreF16:
      simd::kernels().f16_to_f32(reinterpret_cast<const uint16_t*>(g.vec(row)), v.data(), g.padded_dim);
      break;
    case detail::kStoreSq8: simd::kernels().f16_to_f32(g.rerank_vec(row), v.data(), g.padded_dim); break;
  }
  std::memcpy(out, v.data(), g.dim * sizeof(float));
}

size_t HnswIndex::size() const {
  return g_->size + pending_;
}
uint32_t HnswIndex::dim() const {
  return g_->dim;
}
Metric HnswIndex::metric() const {
  return g_->metric;
}
int HnswIndex::max_level() const {
  return g_->max_level;
}

void HnswIndex::set_rerank_depth(uint32_t depth) {
  opts_.rerank_depth = depth;
  g_->rerank_depth = depth;
}

double HnswIndex::mean_degree() const {
  if (g_->size == 0) return 0;
  uint64_t total = 0;
  for (uint32_t i = 0; i < g_->size; ++i) total += g_->links(i, 0)[0];
  return static_cast<double>(total) / static_cast<double>(g_->size);
}

void HnswIndex::ensure_capacity(size_t nodes) {
  auto& g = *g_;
  if (nodes <= g.capacity) return;
  g.nodes.grow(nodes * g.node_bytes);
  if (g.store == detail::kStoreSq8) g.rerank.grow(nodes * g.padded_dim * sizeof(uint16_t));
  g.capacity = g.nodes.capacity() / g.node_bytes;
  if (g.store == detail::kStoreSq8)
    g.capacity = std::min(g.capacity, g.rerank.capacity() / (g.padded_dim * sizeof(uint16_t)));
}

void HnswIndex::reserve(size_t rows) {
  ensure_capacity(rows);
  g_->levels.reserve(rows);
  g_->upper_offset.reserve(rows);
}

void HnswIndex::validate_and_prepare(const float* vec, float* out) const {
  const auto& g = *g_;
  vector_detail::check_finite(vec, g.dim, "vector");
  if (g.metric == Metric::cosine)
    vector_detail::normalize(vec, out, g.dim);
  else
    std::copy(vec, vec + g.dim, out);
  if (g.store != detail::kStoreF32)
    for (uint32_t i = 0; i < g.dim; ++i)
      if (std::fabs(out[i]) > 65504.0f)
        fail(ErrorCode::invalid_argument, "vector component " + std::to_string(i) +
                                              " is outside the fp16 range of this HNSW index (|x| <= 65504)");
  std::fill(out + g.dim, out + g.padded_dim, 0.0f);
}

void HnswIndex::encode_node(uint32_t id, const float* prepared) {
  auto& g = *g_;
  uint8_t* node = g.vec(id);
  std::memset(node, 0, g.node_bytes);
  const auto& kern = simd::kernels();
  switch (g.store) {
    case detail::kStoreF32: std::memcpy(node, prepared, g.padded_dim * sizeof(float)); break;
    case detail::kStoreF16: kern.f32_to_f16(prepared, reinterpret_cast<uint16_t*>(node), g.padded_dim); break;
    case detail::kStoreSq8: {
      // Symmetric int8 with one scale per vector: no training, so adds never wait
      // for (or invalidate) a codebook.
      float amax = 0;
      for (uint32_t i = 0; i < g.dim; ++i) amax = std::max(amax, std::fabs(prepared[i]));
      const float scale = amax / 127.0f;
      const float inv = amax > 0 ? 127.0f / amax : 0.0f;
      auto* codes = reinterpret_cast<int8_t*>(node);
      for (uint32_t i = 0; i < g.dim; ++i)
        codes[i] = static_cast<int8_t>(std::clamp(std::nearbyint(prepared[i] * inv), -127.0f, 127.0f));
      std::memcpy(node + g.padded_dim, &scale, sizeof(float));
      kern.f32_to_f16(prepared, g.rerank_vec(id), g.padded_dim);
      break;
    }
  }
}

int HnswIndex::draw_level() {
  // -ln(U) * mult with U in (0, 1]: P(level >= l) = M^-l.
  const double u = 1.0 - std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
  const double l = -std::log(u) * level_mult_;
  return static_cast<int>(std::min<double>(l, detail::kMaxLevel));
}

void HnswIndex::append_levels(size_t count) {
  auto& g = *g_;
  for (size_t i = 0; i < count; ++i) {
    const int level = draw_level();
    g.levels.push_back(static_cast<uint8_t>(level));
    if (level > 0) {
      g.upper_offset.push_back(static_cast<uint32_t>(g.upper.size()));
      g.upper.resize(g.upper.size() + static_cast<size_t>(level) * (g.m + 1), 0);
    } else {
      g.upper_offset.push_back(kNoNode);
    }
  }
  if (g.upper.size() >= kNoNode) fail(ErrorCode::unavailable, "HNSW upper layers too large");
}

void HnswIndex::add(uint32_t row, const float* vec) {
  add_batch(row, 1, vec, 1);
}

void HnswIndex::add_unlinked(uint32_t row, const float* vec) {
  auto& g = *g_;
  const size_t at = g.size + pending_;
  if (row != at)
    fail(ErrorCode::invalid_argument, "vector rows must be added in order: expected row " + std::to_string(at) +
                                          ", got " + std::to_string(row));
  if (at + 1 > kMaxVectorRows) fail(ErrorCode::invalid_argument, "too many vectors for one index");
  std::vector<float> prepared(static_cast<size_t>(g.padded_dim));
  validate_and_prepare(vec, prepared.data());
  ensure_capacity(at + 1);
  encode_node(static_cast<uint32_t>(at), prepared.data());
  append_levels(1);
  ++pending_;
}

size_t HnswIndex::link_pending(size_t max_rows) {
  auto& g = *g_;
  const size_t n = std::min(max_rows, pending_);
  for (size_t i = 0; i < n; ++i) {
    // In row order, one at a time: the graph add_batch(threads = 1) would build.
    const auto id = static_cast<uint32_t>(g.size);
    g.size = size_t{id} + 1;
    --pending_;
    core_->insert(g, id, *build_scratch_, nullptr);
  }
  return n;
}

namespace {
struct HnswLinkTask final : LinkTask {
  detail::HnswScratch scratch;
  detail::HnswLinkPlan plan;
};
}  // namespace

std::unique_ptr<LinkTask> HnswIndex::new_link_task() const {
  return std::make_unique<HnswLinkTask>();
}

bool HnswIndex::plan_link(LinkTask& t) const {
  auto& task = static_cast<HnswLinkTask&>(t);
  const auto& g = *g_;
  const size_t end = g.size + pending_;
  size_t c = claimed_.load(std::memory_order_relaxed), id;
  do {
    id = std::max(c, g.size);  // link_pending and add advance g.size without claiming
    if (id >= end) return false;
  } while (!claimed_.compare_exchange_weak(c, id + 1, std::memory_order_relaxed));
  core_->plan_link(g, static_cast<uint32_t>(id), task.scratch, task.plan);
  return true;
}

bool HnswIndex::apply_link(LinkTask& t) {
  auto& task = static_cast<HnswLinkTask&>(t);
  auto& g = *g_;
  if (task.plan.id != g.size) return false;  // an earlier claim goes first
  g.size = size_t{task.plan.id} + 1;
  --pending_;
  core_->apply_link(g, task.plan, task.scratch);
  return true;
}

void HnswIndex::add_batch(uint32_t first_row, size_t count, const float* vecs, unsigned threads) {
  auto& g = *g_;
  link_pending(pending_);  // the batch's rows follow every stored one
  if (first_row != g.size)
    fail(ErrorCode::invalid_argument, "vector rows must be added in order: expected row " +
                                          std::to_string(g.size) + ", got " + std::to_string(first_row));
  if (g.size + count > kMaxVectorRows) fail(ErrorCode::invalid_argument, "too many vectors for one index");
  if (count == 0) return;
  // Validate everything before touching the graph, so a bad vector changes nothing.
  std::vector<float> prepared(static_cast<size_t>(g.padded_dim));
  for (size_t i = 0; i < count; ++i) validate_and_prepare(vecs + i * g.dim, prepared.data());

  ensure_capacity(g.size + count);
  for (size_t i = 0; i < count; ++i) {
    validate_and_prepare(vecs + i * g.dim, prepared.data());
    encode_node(static_cast<uint32_t>(g.size + i), prepared.data());
  }
  append_levels(count);

  const size_t first = g.size;
  threads = static_cast<unsigned>(std::max<size_t>(1, std::min<size_t>(threads, count / 256)));
  if (threads <= 1) {
    for (size_t i = 0; i < count; ++i) {
      g.size = first + i + 1;
      core_->insert(g, static_cast<uint32_t>(first + i), *build_scratch_, nullptr);
    }
    return;
  }
  // hnswlib-style parallel build: nodes are claimed in id order and linked under
  // per-node (striped) locks; the whole batch is already stored, so nothing moves.
  g.size = first + count;
  auto sync = std::make_unique<detail::BuildSync>();
  std::atomic<size_t> next{first};
  std::vector<std::exception_ptr> errors(threads);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      try {
        std::unique_ptr<HnswScratch> own;
        HnswScratch* s = build_scratch_.get();
        if (t) s = (own = std::make_unique<HnswScratch>()).get();
        for (size_t id; (id = next.fetch_add(1)) < first + count;)
          core_->insert(g, static_cast<uint32_t>(id), *s, sync.get());
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
  }
  for (auto& th : pool) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

SearchPlan HnswIndex::plan(const VectorSearchParams& p, const Bitset* allowed) const {
  const auto& g = *g_;
  const size_t ef = p.ef ? p.ef : params_.ef_search;
  const size_t ef0 = std::max(ef, p.k);
  SearchPlan plan;
  if (!allowed) {
    plan.kind = SearchPlan::Kind::graph;
    plan.beam = ef0;
    plan.allowed_rows = g.size;
    return plan;
  }
  const size_t c = vector_detail::count_allowed(*allowed, g.size);
  plan.allowed_rows = c;
  if (c == g.size) {  // nothing filtered out
    plan.kind = SearchPlan::Kind::graph;
    plan.beam = ef0;
    return plan;
  }
  const auto& pp = opts_.planner;
  const double sel = static_cast<double>(c) / static_cast<double>(std::max<size_t>(g.size, 1));
  const double beam = c ? std::ceil(static_cast<double>(ef0) / sel) : 0.0;
  if (c <= pp.exact_min_rows || c <= p.k || beam > static_cast<double>(pp.max_beam) ||
      static_cast<double>(c) <= beam * pp.exact_rows_per_beam) {
    plan.kind = SearchPlan::Kind::exact;
    return plan;
  }
  plan.kind = SearchPlan::Kind::filtered_graph;
  plan.beam = static_cast<size_t>(beam);
  return plan;
}

std::vector<VectorHit> HnswIndex::search(const float* query, const VectorSearchParams& p,
                                         const Bitset* allowed) const {
  return search_with_plan(query, p, allowed, plan(p, allowed));
}

std::vector<VectorHit> HnswIndex::search_with_plan(const float* query, const VectorSearchParams& p,
                                                   const Bitset* allowed, const SearchPlan& plan) const {
  const auto& g = *g_;
  vector_detail::check_finite(query, g.dim, "query vector");
  std::vector<VectorHit> hits;
  if (p.k == 0 || size() == 0) return hits;
  ScratchLease lease(*this);
  HnswScratch& s = *lease;
  s.query.resize(g.padded_dim);
  if (g.metric == Metric::cosine)
    vector_detail::normalize(query, s.query.data(), g.dim);
  else
    std::copy(query, query + g.dim, s.query.data());
  std::fill(s.query.begin() + g.dim, s.query.end(), 0.0f);

  std::vector<Cand>& out = s.result;
  out.clear();
  if (g.size > 0) switch (plan.kind) {
      case SearchPlan::Kind::graph: core_->search(g, s.query.data(), p.k, plan.beam, nullptr, s, out); break;
      case SearchPlan::Kind::filtered_graph:
        core_->search(g, s.query.data(), p.k, plan.beam, allowed, s, out);
        // A beam that met fewer allowed rows than asked for: the exact scan is the fallback.
        if (out.size() < std::min(p.k, plan.allowed_rows))
          core_->scan(g, s.query.data(), p.k, allowed, 0, g.size, s, out);
        break;
      case SearchPlan::Kind::exact: core_->scan(g, s.query.data(), p.k, allowed, 0, g.size, s, out); break;
    }
  if (pending_ > 0) {
    // Rows stored but not linked yet (add_unlinked): scanned exactly, merged in.
    std::vector<Cand> tail;
    core_->scan(g, s.query.data(), p.k, allowed, g.size, g.size + pending_, s, tail);
    out.insert(out.end(), tail.begin(), tail.end());
    std::sort(out.begin(), out.end(), detail::Closer{});
    if (out.size() > p.k) out.resize(p.k);
  }
  hits.reserve(out.size());
  for (const auto& c : out) hits.push_back({c.id, -c.d});
  return hits;
}

size_t HnswIndex::mapped_bytes() const {
  const auto& g = *g_;
  return (g.nodes.borrowed() ? g.nodes.capacity() : 0) + (g.rerank.borrowed() ? g.rerank.capacity() : 0);
}

size_t HnswIndex::memory_bytes() const {
  const auto& g = *g_;
  const size_t rows = size();
  size_t b = rows * g.node_bytes + (g.store == detail::kStoreSq8 ? rows * g.padded_dim * 2 : 0) +
             g.levels.capacity() + g.upper_offset.capacity() * 4 + g.upper.capacity() * 4 +
             build_scratch_->bytes();
  std::lock_guard lock(scratch_mu_);
  for (const auto& s : scratch_free_) b += s->bytes();
  return b;
}

// File layout (after the common header fields, all in the checksummed header section):
//   u32 m, u32 ef_construction, u32 ef_search, u8 storage, i8 max_level, u16 0,
//   u32 entry, u32 padded_dim, u64 upper_words, u64 seed, u32 node_bytes, u32 rerank_depth
// then sections: layer-0 nodes (rows * node_bytes), sq8 only: the fp16 copies
// (rows * padded_dim * 2), levels (rows bytes), upper lists (upper_words * 4).
void HnswIndex::save(std::ostream& out) const {
  const auto& g = *g_;
  if (pending_ > 0)
    fail(ErrorCode::internal, "an HNSW index is saved with " + std::to_string(pending_) + " rows not linked");
  vio::Writer w(out);
  w.bytes(vio::kMagic, sizeof(vio::kMagic));
  w.pod<uint32_t>(vio::kVersion);
  w.pod<uint8_t>(static_cast<uint8_t>(VectorIndexKind::hnsw));
  w.pod<uint8_t>(static_cast<uint8_t>(g.metric));
  w.pod<uint16_t>(0);
  w.pod<uint32_t>(g.dim);
  w.pod<uint64_t>(g.size);
  w.pod<uint32_t>(params_.m);
  w.pod<uint32_t>(params_.ef_construction);
  w.pod<uint32_t>(params_.ef_search);
  w.pod<uint8_t>(static_cast<uint8_t>(storage_));
  w.pod<int8_t>(static_cast<int8_t>(g.max_level));
  w.pod<uint16_t>(0);
  w.pod<uint32_t>(g.entry);
  w.pod<uint32_t>(g.padded_dim);
  w.pod<uint64_t>(g.upper.size());
  w.pod<uint64_t>(opts_.seed);
  w.pod<uint32_t>(static_cast<uint32_t>(g.node_bytes));
  w.pod<uint32_t>(g.rerank_depth);
  w.end_section();
  w.bytes(g.nodes.data(), g.size * g.node_bytes);
  w.end_section();
  if (g.store == detail::kStoreSq8) {
    w.bytes(g.rerank.data(), g.size * g.padded_dim * sizeof(uint16_t));
    w.end_section();
  }
  w.bytes(g.levels.data(), g.size);
  w.end_section();
  w.bytes(g.upper.data(), g.upper.size() * sizeof(uint32_t));
  w.end_section();
  w.finish();
}

std::unique_ptr<HnswIndex> HnswIndex::load_body(vio::Reader& in, const vio::CommonHeader& h) {
  VectorFieldSchema s;
  s.dim = h.dim;
  s.metric = static_cast<Metric>(h.metric);
  s.index = VectorIndexKind::hnsw;
  s.hnsw.m = in.pod<uint32_t>("header");
  s.hnsw.ef_construction = in.pod<uint32_t>("header");
  s.hnsw.ef_search = in.pod<uint32_t>("header");
  const auto storage = in.pod<uint8_t>("header");
  const int max_level = in.pod<int8_t>("header");
  in.pod<uint16_t>("header");
  const auto entry = in.pod<uint32_t>("header");
  const auto padded_dim = in.pod<uint32_t>("header");
  const auto upper_words = in.pod<uint64_t>("header");
  HnswOptions opts;
  opts.seed = in.pod<uint64_t>("header");
  const auto node_bytes = in.pod<uint32_t>("header");
  opts.rerank_depth = in.pod<uint32_t>("header");
  in.end_section("header");

  if (storage > static_cast<uint8_t>(VectorStorage::sq8)) vio::corrupt("storage type");
  if (h.rows > kMaxVectorRows) vio::corrupt("row count");
  opts.storage = static_cast<VectorStorage>(storage);
  std::unique_ptr<HnswIndex> idx;
  try {
    idx = std::make_unique<HnswIndex>(s, opts);
  } catch (const Error& e) {
    vio::corrupt(e.what());
  }
  auto& g = *idx->g_;
  if (padded_dim != g.padded_dim || node_bytes != g.node_bytes) vio::corrupt("node layout");
  const size_t rows = h.rows;
  if (rows == 0 ? (entry != kNoNode || max_level != -1)
                : (entry >= rows || max_level < 0 || max_level > detail::kMaxLevel))
    vio::corrupt("entry point");
  if (upper_words > static_cast<uint64_t>(rows) * detail::kMaxLevel * (g.m + 1)) vio::corrupt("upper size");

  in.expect_bytes(static_cast<uint64_t>(rows) * g.node_bytes + upper_words * sizeof(uint32_t) + rows, "graph");
  // With the file mapped, the node blocks (and sq8's fp16 copy) are read in place:
  // page cache, not heap. A later add() copies them first (MappedBuffer::grow).
  const uint8_t* mapped_nodes = rows ? in.borrow(rows * g.node_bytes, "graph") : nullptr;
  if (mapped_nodes) {
    g.nodes.borrow(mapped_nodes, rows * g.node_bytes, in.map());
    in.map()->advise_random(static_cast<size_t>(mapped_nodes - in.map()->data()), rows * g.node_bytes);
  } else {
    idx->ensure_capacity(rows);
    in.bytes(g.nodes.data(), rows * g.node_bytes, "graph");
  }
  in.end_section("graph");
  if (g.store == detail::kStoreSq8) {
    const size_t fp16_bytes = rows * g.padded_dim * sizeof(uint16_t);
    if (const uint8_t* p = mapped_nodes ? in.borrow(fp16_bytes, "fp16 vectors") : nullptr)
      g.rerank.borrow(p, fp16_bytes, in.map());
    else
      in.bytes(g.rerank.data(), fp16_bytes, "fp16 vectors");
    in.end_section("fp16 vectors");
  }
  if (mapped_nodes) g.capacity = rows;
  g.levels.resize(rows);
  in.bytes(g.levels.data(), rows, "levels");
  in.end_section("levels");
  g.upper.resize(upper_words);
  in.bytes(g.upper.data(), upper_words * sizeof(uint32_t), "upper layers");
  in.end_section("upper layers");

  // Structure: offsets follow from the levels; every id in range, no self links,
  // counts within capacity, and a node only linked on layers it lives on.
  g.upper_offset.resize(rows);
  uint64_t off = 0;
  for (size_t i = 0; i < rows; ++i) {
    if (g.levels[i] > max_level) vio::corrupt("node level above the top level");
    g.upper_offset[i] = g.levels[i] ? static_cast<uint32_t>(off) : kNoNode;
    off += static_cast<uint64_t>(g.levels[i]) * (g.m + 1);
  }
  if (off != upper_words) vio::corrupt("upper layer size");
  if (rows && g.levels[entry] != max_level) vio::corrupt("entry point level");
  std::vector<float> v(g.padded_dim);
  // A file this process just wrote, read back in place, is not walked: its pages stay
  // on disk until searches need them.
  const bool check_nodes = !mapped_nodes || in.verifies_borrowed();
  for (uint32_t i = 0; check_nodes && i < rows; ++i) {
    for (int lv = 0; lv <= g.levels[i]; ++lv) {
      const uint32_t* ll = g.links(i, lv);
      if (ll[0] > g.capacity_at(lv)) vio::corrupt("neighbour count");
      for (uint32_t j = 1; j <= ll[0]; ++j)
        if (ll[j] >= rows || ll[j] == i || g.levels[ll[j]] < lv) vio::corrupt("neighbour id");
    }
    switch (g.store) {
      case detail::kStoreF32: std::memcpy(v.data(), g.vec(i), g.padded_dim * sizeof(float)); break;
      case detail::kStoreF16:
        simd::kernels().f16_to_f32(reinterpret_cast<const uint16_t*>(g.vec(i)), v.data(), g.padded_dim);
        break;
      case detail::kStoreSq8: {
        simd::kernels().f16_to_f32(g.rerank_vec(i), v.data(), g.padded_dim);
        float scale;
        std::memcpy(&scale, g.vec(i) + g.padded_dim, sizeof(float));
        if (!std::isfinite(scale) || scale < 0) vio::corrupt("sq8 scale");
        break;
      }
    }
    for (uint32_t d = 0; d < g.padded_dim; ++d)
      if (!std::isfinite(v[d])) vio::corrupt("non-finite vector component");
  }
  g.size = rows;
  g.entry = entry;
  g.max_level = max_level;
  // New adds continue with a level stream of their own.
  idx->rng_.seed(opts.seed ^ (0x9e3779b97f4a7c15ull * (rows + 1)));
  return idx;
}

}  // namespace eagle::index
