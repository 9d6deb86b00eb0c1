#pragma once
// Eagle's own HNSW (Malkov & Yashunin): layered graph, heuristic neighbour selection,
// incremental adds at any time, multi-threaded bulk build, and filtered search that
// plans per query from the number of allowed rows (see docs/vector.md).
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

// How HNSW stores vectors. fp16 halves the bytes the search touches; its rounding
// (relative 2^-11 per component) moves cosine scores by ~1e-4. Cosine vectors are unit
// length so fp16 cannot overflow there; IP and L2 default to fp32.
enum class VectorStorage : uint8_t { f32 = 0, f16 = 1 };

// The filtered-search planner. With s = allowed/size and ef0 = max(ef, k), the graph
// search needs a beam of ef0 / s to meet ~ef0 allowed rows. The planner scans the
// allowed rows exactly (recall 1) when
//   allowed <= exact_min_rows, or ef0 / s > max_beam, or allowed <= beam * exact_rows_per_beam
// (an exact distance over a listed row costs ~1/exact_rows_per_beam of a beam slot of
// graph search, which computes ~2M random-access distances per expanded node).
struct FilterPlannerParams {
  size_t exact_min_rows = 2000;
  double exact_rows_per_beam = 24;
  size_t max_beam = 4096;
};

struct HnswOptions {
  // Unset: f16 for cosine, f32 for IP and L2.
  std::optional<VectorStorage> storage;
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

  size_t size() const override;
  uint32_t dim() const override;
  Metric metric() const override;
  VectorIndexKind kind() const override { return VectorIndexKind::hnsw; }

  std::vector<VectorHit> search(const float* query, const VectorSearchParams& p,
                                const Bitset* allowed = nullptr) const override;
  // What search() will do for these arguments.
  SearchPlan plan(const VectorSearchParams& p, const Bitset* allowed) const;
  // search() with a forced plan (tests and benchmarks compare the two paths).
  std::vector<VectorHit> search_with_plan(const float* query, const VectorSearchParams& p, const Bitset* allowed,
                                          const SearchPlan& plan) const;

  size_t memory_bytes() const override;
  void save(std::ostream& out) const override;
  static std::unique_ptr<HnswIndex> load_body(vio::Reader& in, const vio::CommonHeader& h);

  const HnswParams& params() const { return params_; }
  VectorStorage storage() const { return storage_; }
  const FilterPlannerParams& planner() const { return opts_.planner; }
  void set_planner(const FilterPlannerParams& p) { opts_.planner = p; }
  int max_level() const;
  // Mean layer-0 out-degree (graph statistics for tests and benchmarks).
  double mean_degree() const;

 private:
  class ScratchLease;
  void validate_and_prepare(const float* vec, float* out) const;
  void write_node(uint32_t id, const float* prepared);
  int draw_level();
  void append_levels(size_t count);
  void ensure_capacity(size_t nodes);

  HnswParams params_;
  HnswOptions opts_;
  VectorStorage storage_;
  std::unique_ptr<detail::HnswGraph> g_;
  const detail::HnswCore* core_;
  std::mt19937_64 rng_;
  double level_mult_;
  std::unique_ptr<detail::HnswScratch> build_scratch_;
  mutable std::mutex scratch_mu_;
  mutable std::vector<std::unique_ptr<detail::HnswScratch>> scratch_free_;
};

}  // namespace eagle::index
