#pragma once
// Internal to the vector module: the HNSW graph's storage and per-query scratch,
// shared by hnsw_index.cpp (planning, growth, I/O) and the per-ISA search/insert
// cores (hnsw_core.inc compiled once per SIMD level). Not part of the public API.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "eagle/core/bitset.h"
#include "eagle/core/schema.h"
#include "eagle/index/vector/simd.h"

namespace eagle::index::detail {

// The per-ISA translation units instantiate many large templates, and GCC's unit
// growth limit then stops inlining small helpers; a helper whose only effect is a
// prefetch is "pure" to GCC, so an out-of-line call to it is deleted outright. Hot
// helpers are therefore forced inline.
#define EAGLE_HOT_INLINE inline __attribute__((always_inline))

inline constexpr uint32_t kNoNode = 0xffffffffu;
// The beam keeps "already expanded" in the top bit of a node id (ids are < 2^31).
inline constexpr uint32_t kExpandedBit = 0x80000000u;
inline constexpr int kMaxLevel = 31;
inline constexpr uint32_t kMaxM = 128;  // so a layer-0 list (2M ids) fits a stack buffer

// How a node's vector is held in its block (VectorStorage's values).
enum : uint8_t { kStoreF32 = 0, kStoreF16 = 1, kStoreSq8 = 2 };

// Memory that grows without copying: an anonymous mapping extended with mremap. Pages
// never written are never resident, and the start is page (so cache line) aligned.
class MappedBuffer {
 public:
  MappedBuffer() = default;
  MappedBuffer(const MappedBuffer&) = delete;
  MappedBuffer& operator=(const MappedBuffer&) = delete;
  ~MappedBuffer();
  // Makes at least `bytes` addressable (new bytes are zero); may move the data. A
  // borrowed buffer is copied into memory of its own first.
  void grow(size_t bytes);
  // Reads the `bytes` at `p` in place: part of a mapped file (read-only) that `owner`
  // keeps mapped. Nothing may write them until grow() has made a copy.
  void borrow(const uint8_t* p, size_t bytes, std::shared_ptr<const void> owner);
  bool borrowed() const { return owner_ != nullptr; }
  uint8_t* data() const { return data_; }
  size_t capacity() const { return bytes_; }

 private:
  uint8_t* data_ = nullptr;
  size_t bytes_ = 0;
  std::shared_ptr<const void> owner_;  // set while borrowed
};

// One node of layer 0 is one block of node_bytes (a multiple of 64, so blocks start
// on cache lines): [vector as searched: vec_bytes][u32 count][2M u32 neighbour ids].
// The vector is fp32, fp16, or (sq8) int8 codes followed by their fp32 scale. A
// neighbour's distance therefore reads ceil(vec_bytes / 64) lines (2 for sq8 at 100
// dimensions), and its list shares the block. sq8 also keeps an fp16 copy of every
// vector in `rerank` (exact scans, re-ranking the beam, neighbour selection). Upper
// layers (about 1/M of the nodes) keep [count][M ids] per level in `upper`, found
// through `upper_offset`.
struct HnswGraph {
  uint32_t dim = 0;
  uint32_t padded_dim = 0;  // multiple of 8; padding components are zero
  Metric metric = Metric::cosine;
  uint8_t store = kStoreF32;
  uint32_t m = 16;
  uint32_t m0 = 32;
  uint32_t ef_construction = 256;
  size_t vec_bytes = 0;
  size_t node_bytes = 0;
  // sq8: the search re-ranks the best max(k, rerank_depth) of the beam with the fp16
  // copy (0: the whole beam).
  uint32_t rerank_depth = 0;

  MappedBuffer nodes;
  MappedBuffer rerank;  // sq8 only: padded_dim fp16 per node
  size_t capacity = 0;  // nodes
  size_t size = 0;      // nodes (including ones being inserted by add_batch)
  std::vector<uint8_t> levels;
  std::vector<uint32_t> upper_offset;  // in u32 words; kNoNode for level-0-only nodes
  std::vector<uint32_t> upper;
  uint32_t entry = kNoNode;
  int max_level = -1;

  __attribute__((always_inline)) const uint8_t* vec(uint32_t i) const {
    return nodes.data() + static_cast<size_t>(i) * node_bytes;
  }
  __attribute__((always_inline)) uint8_t* vec(uint32_t i) {
    return nodes.data() + static_cast<size_t>(i) * node_bytes;
  }
  __attribute__((always_inline)) const uint16_t* rerank_vec(uint32_t i) const {
    return reinterpret_cast<const uint16_t*>(rerank.data()) + static_cast<size_t>(i) * padded_dim;
  }
  __attribute__((always_inline)) uint16_t* rerank_vec(uint32_t i) {
    return reinterpret_cast<uint16_t*>(rerank.data()) + static_cast<size_t>(i) * padded_dim;
  }
  __attribute__((always_inline)) const uint32_t* links(uint32_t i, int level) const {
    if (level == 0) return reinterpret_cast<const uint32_t*>(vec(i) + vec_bytes);
    return upper.data() + upper_offset[i] + static_cast<size_t>(level - 1) * (m + 1);
  }
  __attribute__((always_inline)) uint32_t* links(uint32_t i, int level) {
    return const_cast<uint32_t*>(static_cast<const HnswGraph*>(this)->links(i, level));
  }
  __attribute__((always_inline)) uint32_t capacity_at(int level) const { return level == 0 ? m0 : m; }
};

struct Cand {
  float d;  // distance: lower is closer (-dot for cosine/IP, squared L2)
  uint32_t id;
};

// (d, id) order: the deterministic tie break everywhere. Defined here, outside the
// per-ISA `#pragma GCC target` regions, so std algorithm instantiations that use it are
// baseline code shared by every level and can inline it.
inline bool closer(const Cand& a, const Cand& b) {
  return a.d < b.d || (a.d == b.d && a.id < b.id);
}
struct Closer {
  bool operator()(const Cand& a, const Cand& b) const { return closer(a, b); }
};

// Per-search (and per-insert) working memory: reused, so a query allocates nothing
// once warm. The visited set is an epoch-tagged byte array: bumping the tag clears it,
// and only every 255 queries is it wiped for real.
struct HnswScratch {
  std::vector<uint8_t> visited;
  uint8_t tag = 0;
  std::vector<Cand> pool;   // the beam, sorted by distance
  std::vector<Cand> heap;   // top-k of allowed rows (filtered search, exact scan)
  std::vector<Cand> cands;  // heuristic input when pruning a neighbour list
  std::vector<Cand> picked;
  std::vector<Cand> result;
  std::vector<float> query;  // the padded (normalised) query or inserted vector
  std::vector<float> tmp;    // a decoded stored vector
  std::vector<float> tmp2;

  void begin(size_t nodes) {
    if (visited.size() < nodes) visited.resize(nodes + nodes / 4 + 64, 0);
    if (++tag == 0) {
      std::memset(visited.data(), 0, visited.size());
      tag = 1;
    }
  }
  size_t bytes() const {
    return visited.capacity() +
           (pool.capacity() + heap.capacity() + cands.capacity() + picked.capacity() + result.capacity()) *
               sizeof(Cand) +
           (query.capacity() + tmp.capacity() + tmp2.capacity()) * sizeof(float);
  }
};

// Locks for a multi-threaded build: striped byte spinlocks over node ids (a node's
// list is only ever locked alone, so stripes cannot deadlock), plus the entry point.
struct BuildSync {
  static constexpr size_t kStripes = 1 << 16;
  std::vector<std::atomic<uint8_t>> stripes = std::vector<std::atomic<uint8_t>>(kStripes);
  std::mutex entry_mu;

  void lock(uint32_t id) {
    auto& s = stripes[id & (kStripes - 1)];
    for (;;) {
      if (!s.exchange(1, std::memory_order_acquire)) return;
      while (s.load(std::memory_order_relaxed)) __builtin_ia32_pause();
    }
  }
  void unlock(uint32_t id) { stripes[id & (kStripes - 1)].store(0, std::memory_order_release); }
};

// A link planned apart from its writing, so several linkers can search the graph at
// once beside searches (a shared hold) and take turns only to write (an exclusive
// one): the neighbours picked for node `id` on each layer from `top` down to 0.
struct HnswLinkPlan {
  uint32_t id = 0;
  bool empty_graph = false;       // planned while the graph had no entry point
  int top = -1;                   // the highest layer planned
  std::vector<uint32_t> counts;   // per layer: neighbours picked
  std::vector<Cand> picked;       // layer lv's at [lv * kMaxM, lv * kMaxM + counts[lv])
};

// What each SIMD level provides (hnsw_core.inc).
struct HnswCore {
  // Greedy descent through the upper layers, then a beam of width `ef` on layer 0.
  // allowed == nullptr: `out` = the k closest of the beam. Otherwise every node is
  // traversed but only allowed ones are collected: `out` = the k closest allowed
  // nodes seen. `out` is sorted by (d, id).
  void (*search)(const HnswGraph& g, const float* q, size_t k, size_t ef, const Bitset* allowed,
                 HnswScratch& s, std::vector<Cand>& out);
  // Exact: every allowed node of [from, to) (all of them when allowed == nullptr).
  // Nodes past g.size (stored, not linked yet) may be scanned too.
  void (*scan)(const HnswGraph& g, const float* q, size_t k, const Bitset* allowed, size_t from, size_t to,
               HnswScratch& s, std::vector<Cand>& out);
  // Links node `id` (vector and level already stored) into the graph. sync != nullptr
  // when other threads insert at the same time.
  void (*insert)(HnswGraph& g, uint32_t id, HnswScratch& s, BuildSync* sync);
  // insert() in two halves. plan_link reads the graph only (node `id`'s vector and
  // level stored, id >= g.size). apply_link writes the plan (g.size already past it);
  // nodes linked since the plan are not among its neighbours, as in a parallel build.
  // plan then apply with nothing in between builds exactly what insert() builds.
  void (*plan_link)(const HnswGraph& g, uint32_t id, HnswScratch& s, HnswLinkPlan& plan);
  void (*apply_link)(HnswGraph& g, HnswLinkPlan& plan, HnswScratch& s);
};

const HnswCore& hnsw_core(simd::Isa isa);

}  // namespace eagle::index::detail
