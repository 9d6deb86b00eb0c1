#pragma once
// Vector indexes behind one interface: FlatIndex (the exact oracle) and HnswIndex
// (graph ANN with filtered search). Row ids are dense and assigned by the caller in
// insertion order; deletions are the caller's business and reach the index only as
// the `allowed` bitset of a search.
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <vector>

#include "eagle/core/bitset.h"
#include "eagle/core/file_map.h"
#include "eagle/core/schema.h"

namespace eagle::index {

// Higher score is better: cosine similarity, inner product, or -squared L2.
struct VectorHit {
  uint32_t row;
  float score;
  bool operator==(const VectorHit&) const = default;
};

struct VectorSearchParams {
  size_t k = 10;
  uint32_t ef = 0;  // 0 = the index default (HnswParams::ef_search); ignored by flat
};

// Rows are addressed by uint32 and HNSW keeps a flag in the top bit of its ids.
inline constexpr size_t kMaxVectorRows = (size_t{1} << 31) - 1;
inline constexpr uint32_t kMaxVectorDim = 1u << 16;

// One linker's working memory for VectorIndex::plan_link / apply_link.
class LinkTask {
 public:
  virtual ~LinkTask() = default;
};

class VectorIndex {
 public:
  virtual ~VectorIndex() = default;

  // Appends one vector: `row` must equal size(). Cosine normalises internally; a
  // non-finite component is an invalid_argument error.
  virtual void add(uint32_t row, const float* vec) = 0;
  // Appends `count` vectors (row-major, dim() floats each) starting at `first_row`
  // (== size()). HNSW builds with `threads` workers; the result is a valid graph
  // either way (not bit-identical across thread counts).
  virtual void add_batch(uint32_t first_row, size_t count, const float* vecs, unsigned threads = 1);
  // Capacity hint so a bulk load does not reallocate.
  virtual void reserve(size_t /*rows*/) {}
  // Deferred linking, for an index that builds a graph (HNSW): add_unlinked stores the
  // vector at once (searches find it by an exact scan of the stored, unlinked rows),
  // and link_pending links up to `max_rows` of them into the graph later, in row order,
  // so the graph is the one add() would have built. A builder thread does the linking
  // while the writer goes on (Collection). An index without a graph adds at once.
  virtual void add_unlinked(uint32_t row, const float* vec) { add(row, vec); }
  virtual size_t link_pending(size_t /*max_rows*/) { return 0; }  // rows linked
  virtual size_t pending() const { return 0; }                    // rows stored, not linked
  // Deferred linking by several linkers at once (Collection: the builder, and a writer
  // waiting for room). plan_link claims the next unclaimed pending row and plans its
  // links: it only reads the index, so it runs beside searches and other plans (the
  // caller's shared hold). apply_link writes the plan (an exclusive hold); rows are
  // applied in claim order, so it returns false, changing nothing, while an earlier
  // claim is not applied yet. A linker alone builds what link_pending builds. A task
  // holds one linker's working memory; an index without a graph has none (nullptr).
  virtual std::unique_ptr<LinkTask> new_link_task() const { return nullptr; }
  virtual bool plan_link(LinkTask& /*task*/) const { return false; }  // false: nothing left to claim
  virtual bool apply_link(LinkTask& /*task*/) { return true; }

  virtual size_t size() const = 0;
  virtual uint32_t dim() const = 0;
  virtual Metric metric() const = 0;
  virtual VectorIndexKind kind() const = 0;

  // Top p.k rows, sorted by score descending then row ascending. allowed == nullptr
  // means every row; otherwise only rows whose bit is set are returned (bits past
  // allowed->size() count as unset). Safe to call from several threads at once on a
  // const index; add/add_batch/add_unlinked/link_pending must not run concurrently
  // with searches.
  virtual std::vector<VectorHit> search(const float* query, const VectorSearchParams& p,
                                        const Bitset* allowed = nullptr) const = 0;

  // Copies row `row`'s vector as the index stores it (dim() floats: the normalised
  // vector for cosine; fp16 precision for f16/sq8 HNSW storage, which is all a search
  // of it ever sees). Compaction rebuilds indexes from these.
  virtual void stored_vector(uint32_t row, float* out) const = 0;

  // Bytes held by the index (vectors, graph, scratch), for stats and benchmarks.
  virtual size_t memory_bytes() const = 0;
  // Of those, the bytes read in place from a mapped file (page cache, not heap).
  virtual size_t mapped_bytes() const { return 0; }

  // Versioned little-endian binary with checksums; load_vector_index validates
  // everything and throws eagle::Error (invalid_argument) on corrupt or truncated
  // input.
  virtual void save(std::ostream& out) const = 0;
};

// Validates the schema (dim in 1..kMaxVectorDim) and returns an empty index.
std::unique_ptr<VectorIndex> make_vector_index(const VectorFieldSchema& s);
// `map`: the file `in` reads, mapped; then an HNSW index reads its node blocks in
// place (page cache, not heap) instead of copying them. Writes to such an index copy
// them first. verify_mapped = false: the mapped sections are neither checksummed nor
// walked (reading them back touches no page), for a file this process just wrote or
// one whose bytes a checksum of the whole file covers (a segment file of layout 3).
std::unique_ptr<VectorIndex> load_vector_index(std::istream& in, std::shared_ptr<const FileMap> map = nullptr,
                                               bool verify_mapped = true);

}  // namespace eagle::index
