// One SIMD level of the distance kernels and the HNSW core: the portable baseline (x86-64-v2: SSE4.2).
// Standard headers come before the target pragma so their code stays baseline;
// everything in the .inc files is compiled for this level, in its own namespace.
#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "eagle/index/vector/hnsw_graph.h"
#include "eagle/index/vector/simd.h"

#pragma GCC push_options

#define EAGLE_ISA_LEVEL 0
namespace eagle::index::simd::scalar_level {
#include "eagle/index/vector/kernels_impl.inc"
}  // namespace eagle::index::simd::scalar_level
namespace eagle::index::detail::scalar_level {
using namespace eagle::index::simd::scalar_level;
#include "eagle/index/vector/hnsw_core.inc"
}  // namespace eagle::index::detail::scalar_level
#undef EAGLE_ISA_LEVEL
#pragma GCC pop_options

namespace eagle::index::simd {
const Kernels& kernels_scalar() {
  static const Kernels k = scalar_level::make_kernels(Isa::scalar);
  return k;
}
}  // namespace eagle::index::simd

namespace eagle::index::detail {
const HnswCore& hnsw_core_scalar() {
  static const HnswCore c = scalar_level::make_core();
  return c;
}
}  // namespace eagle::index::detail
