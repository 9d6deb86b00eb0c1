#include "eagle/index/vector/vector_index.h"

#include <cstring>
#include <istream>
#include <string>

#include "eagle/core/error.h"
#include "eagle/index/vector/flat_index.h"
#include "eagle/index/vector/hnsw_index.h"
#include "eagle/index/vector/vector_io.h"

namespace eagle::index {

void VectorIndex::add_batch(uint32_t first_row, size_t count, const float* vecs, unsigned /*threads*/) {
  for (size_t i = 0; i < count; ++i) add(static_cast<uint32_t>(first_row + i), vecs + i * dim());
}

std::unique_ptr<VectorIndex> make_vector_index(const VectorFieldSchema& s) {
  if (static_cast<uint8_t>(s.metric) > static_cast<uint8_t>(Metric::tanimoto))
    fail(ErrorCode::invalid_argument, "unknown vector metric");
  if (s.metric == Metric::tanimoto && s.index != VectorIndexKind::flat)
    fail(ErrorCode::invalid_argument, "the TANIMOTO metric needs a flat (exact) index");
  switch (s.index) {
    case VectorIndexKind::flat: return std::make_unique<FlatIndex>(s.dim, s.metric);
    case VectorIndexKind::hnsw: return std::make_unique<HnswIndex>(s);
  }
  fail(ErrorCode::invalid_argument, "unknown vector index kind");
}

std::unique_ptr<VectorIndex> load_vector_index(std::istream& in, std::shared_ptr<const FileMap> map,
                                               bool verify_mapped) {
  vio::Reader r(in, std::move(map), verify_mapped);
  char magic[sizeof(vio::kMagic)];
  r.bytes(magic, sizeof(magic), "magic");
  if (std::memcmp(magic, vio::kMagic, sizeof(magic)) != 0)
    fail(ErrorCode::invalid_argument, "not an Eagle vector index (bad magic)");
  const auto version = r.pod<uint32_t>("version");
  if (version != vio::kVersion)
    fail(ErrorCode::invalid_argument, "unsupported vector index version " + std::to_string(version));
  vio::CommonHeader h;
  h.kind = r.pod<uint8_t>("header");
  h.metric = r.pod<uint8_t>("header");
  r.pod<uint16_t>("header");
  h.dim = r.pod<uint32_t>("header");
  h.rows = r.pod<uint64_t>("header");
  // Fields are range-checked only after the header checksum matched (load_body), but
  // the kind decides how many header fields follow.
  if (h.metric > static_cast<uint8_t>(Metric::tanimoto)) vio::corrupt("metric");
  if (h.metric == static_cast<uint8_t>(Metric::tanimoto) && h.kind != static_cast<uint8_t>(VectorIndexKind::flat))
    vio::corrupt("metric");
  if (h.dim == 0 || h.dim > kMaxVectorDim) vio::corrupt("dimension");
  switch (h.kind) {
    case static_cast<uint8_t>(VectorIndexKind::flat): return FlatIndex::load_body(r, h);
    case static_cast<uint8_t>(VectorIndexKind::hnsw): return HnswIndex::load_body(r, h);
    default: vio::corrupt("index kind");
  }
}

}  // namespace eagle::index
