#pragma once
// Eagle's own HNSW (Malkov & Yashunin): layered graph, heuristic neighbour selection,
// incremental adds at any time, multi-threaded bulk build, and filtered search that
// plans per query from the number of allowed rows (see docs/vector.md).
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

#include "eagle/index/vector/simd.h"
#include "eagle/index/vector/vector_index.h"

namespace eagle::index {

namespace vio {
class Reader;
struct CommonHeader;
}  // namespace vio
namespace detail {
struct HnswGraph;
struct HnswScratch;
struct HnswCore;
}  // namespace detail

// How HNSW stores vectors (docs/vector.md). The graph walk is bound by memory
// latency, so fewer bytes per visited vector means more queries per second:
//   f32: exact.
//   f16: half the bytes; rounding (2^-11 relative) moves scores by ~1e-4.
//   sq8: the walk reads int8 codes with one scale per vector (a quarter of fp32); an
//        fp16 copy re-ranks the beam, selects neighbours and serves exact scans, so
//        results and scores have fp16 precision. The default for cosine, whose unit
//        vectors fit fp16; IP and L2 (any magnitude) default to f32.
enum class VectorStorage : uint8_t { f32 = 0, f16 = 1, sq8 = 2 };
std::string_view storage_name(VectorStorage s);

// The filtered-search planner. With s = allowed/size and ef0 = max(ef, k), the graph
// search needs a beam of ef0 / s to meet ~ef0 allowed rows. The planner scans the
// allowed rows exactly (recall 1) when
//   allowed <= exact_min_rows, or ef0 / s > max_beam, or allowed <= beam * exact_rows_per_beam
// (on GloVe-100, 340k rows, one exact distance over a listed row took 16-22 ns and one
// beam slot of filtered graph search 850-1000 ns: a ratio of ~50; the exact scan also
// has recall 1, so near-ties go to it).
struct FilterPlannerParams {
  size_t exact_min_rows = 2000;
  double exact_rows_per_beam = 48;
  size_t max_beam = 4096;
};

struct HnswOptions {
  // Unset: f16 for cosine (unit vectors), f32 for IP and L2 (any magnitude).
  std::optional<VectorStorage> storage;
  // sq8: re-rank the best max(k, rerank_depth) of the beam with the fp16 copy (0: the
  // whole beam). On GloVe-100 a depth of 20 already gives the recall of the whole beam.
  uint32_t rerank_depth = 32;
  FilterPlannerParams planner;
  uint64_t seed = 0x5eed;  // level generator
  // Unset: simd::active_isa().
  std::optional<simd::Isa> isa;
};

struct SearchPlan {
  enum class Kind : uint8_t { graph, filtered_graph, exact } kind = Kind::graph;
  size_t beam = 0;          // ef used on layer 0 (graph kinds)
  size_t allowed_rows = 0;  // rows that may be returned
};
std::string_view plan_kind_name(SearchPlan::Kind k);

class HnswIndex final : public VectorIndex {
 public:
  explicit HnswIndex(const VectorFieldSchema& s, HnswOptions opts = {});
  ~HnswIndex() override;
  HnswIndex(const HnswIndex&) = delete;
  HnswIndex& operator=(const HnswIndex&) = delete;

  void add(uint32_t row, const float* vec) override;
  void add_batch(uint32_t first_row, size_t count, const float* vecs, unsigned threads = 1) override;
  void reserve(size_t rows) override;
  void add_unlinked(uint32_t row, const float* vec) override;
  size_t link_pending(size_t max_rows) override;
  size_t pending() const override { return pending_; }
  std::unique_ptr<LinkTask> new_link_task() const override;
  bool plan_link(LinkTask& task) const override;
  bool apply_link(LinkTask& task) override;

  size_t size() const override;
  uint32_t dim() const override;
  Metric metric() const override;
  VectorIndexKind kind() const override { return VectorIndexKind::hnsw; }

  std::vector<VectorHit> search(const float* query, const VectorSearchParams& p,
                                const Bitset* allowed = nullptr) const override;
  // What search() will do for these arguments.
  SearchPlan plan(const VectorSearchParams& p, const Bitset* allowed) const;
  // search() with a forced plan (tests and benchmarks compare the two paths).
  std::vector<VectorHit> search_with_plan(const float* query, const VectorSearchParams& p,
                                          const Bitset* allowed, const SearchPlan& plan) const;

  void stored_vector(uint32_t row, float* out) const override;
  size_t memory_bytes() const override;
  size_t mapped_bytes() const override;
  void save(std::ostream& out) const override;
  static std::unique_ptr<HnswIndex> load_body(vio::Reader& in, const vio::CommonHeader& h);

  const HnswParams& params() const { return params_; }
  VectorStorage storage() const { return storage_; }
  const FilterPlannerParams& planner() const { return opts_.planner; }
  void set_planner(const FilterPlannerParams& p) { opts_.planner = p; }
  // sq8 re-ranking depth (HnswOptions::rerank_depth); not safe during searches.
  void set_rerank_depth(uint32_t depth);
  int max_level() const;
  // Mean layer-0 out-degree (graph statistics for tests and benchmarks).
  double mean_degree() const;

 private:
  class ScratchLease;
  void validate_and_prepare(const float* vec, float* out) const;
  int draw_level();
  void encode_node(uint32_t id, const float* prepared);
  void append_levels(size_t count);
  void ensure_capacity(size_t nodes);

  HnswParams params_;
  HnswOptions opts_;
  VectorStorage storage_;
  std::unique_ptr<detail::HnswGraph> g_;
  // Rows [g_->size, g_->size + pending_) are stored (vector and level) but not linked
  // into the graph yet (add_unlinked); searches scan them exactly.
  size_t pending_ = 0;
  // Rows [g_->size, max(g_->size, claimed_)) are claimed by a planned link (plan_link),
  // not applied yet. Advanced by plans under a shared hold, so atomic.
  mutable std::atomic<size_t> claimed_{0};
  const detail::HnswCore* core_;
  std::mt19937_64 rng_;
  double level_mult_;
  std::unique_ptr<detail::HnswScratch> build_scratch_;
  mutable std::mutex scratch_mu_;
  mutable std::vector<std::unique_ptr<detail::HnswScratch>> scratch_free_;
};

}  // namespace eagle::index
