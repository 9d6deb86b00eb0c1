#pragma once
// The exact vector index: contiguous fp32 rows scanned with the runtime-selected SIMD
// kernels. It is the oracle every approximate path is tested against, and the ground
// truth of bench_vector.
#include <memory>
#include <vector>

#include "eagle/index/vector/vector_index.h"

namespace eagle::index {

namespace vio {
class Reader;
struct CommonHeader;
}  // namespace vio

class FlatIndex final : public VectorIndex {
 public:
  FlatIndex(uint32_t dim, Metric metric);

  void add(uint32_t row, const float* vec) override;
  void add_batch(uint32_t first_row, size_t count, const float* vecs, unsigned threads = 1) override;
  void reserve(size_t rows) override { data_.reserve(rows * dim_); }

  size_t size() const override { return rows_; }
  uint32_t dim() const override { return dim_; }
  Metric metric() const override { return metric_; }
  VectorIndexKind kind() const override { return VectorIndexKind::flat; }

  std::vector<VectorHit> search(const float* query, const VectorSearchParams& p,
                                const Bitset* allowed = nullptr) const override;
  // Many queries (row-major, dim() floats each) at once, split over `threads`: rows are
  // scanned in cache-sized blocks shared by all of a thread's queries.
  std::vector<std::vector<VectorHit>> search_batch(const float* queries, size_t nq,
                                                   const VectorSearchParams& p,
                                                   const Bitset* allowed = nullptr,
                                                   unsigned threads = 1) const;

  void stored_vector(uint32_t r, float* out) const override;
  size_t memory_bytes() const override { return data_.capacity() * sizeof(float); }
  void save(std::ostream& out) const override;
  // Reads the rest of a file whose common header was read by load_vector_index.
  static std::unique_ptr<FlatIndex> load_body(vio::Reader& in, const vio::CommonHeader& h);

  // The stored rows (normalised for cosine), row-major.
  const float* row(uint32_t r) const { return data_.data() + static_cast<size_t>(r) * dim_; }

 private:
  // Copies `vec` into `out` as stored: validated finite, normalised for cosine.
  void prepare(const float* vec, float* out, const char* what) const;
  void search_block(const float* q, size_t k, const Bitset* allowed, size_t begin, size_t end,
                    std::vector<VectorHit>& heap, float* scores, uint32_t* ids) const;

  uint32_t dim_;
  Metric metric_;
  size_t rows_ = 0;
  std::vector<float> data_;
  std::vector<float> sq_norms_;  // |v|^2 per row, kept for the TANIMOTO metric only
};

// Helpers shared by the vector indexes.
namespace vector_detail {
// The vector scaled to unit length (a zero vector stays zero).
void normalize(const float* in, float* out, size_t dim);
// Throws invalid_argument naming `what` if a component is NaN or infinite.
void check_finite(const float* v, size_t dim, const char* what);
// Set bits of `allowed` below `rows`.
size_t count_allowed(const Bitset& allowed, size_t rows);
// "a ranks before b": higher score, then lower row.
inline bool ranks_before(const VectorHit& a, const VectorHit& b) {
  return a.score > b.score || (a.score == b.score && a.row < b.row);
}
}  // namespace vector_detail

}  // namespace eagle::index
