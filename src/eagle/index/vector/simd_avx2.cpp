// One SIMD level of the distance kernels and the HNSW core: AVX2 + FMA + F16C.
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
#pragma GCC target("avx2,fma,f16c")
#define EAGLE_ISA_LEVEL 1
namespace eagle::index::simd::avx2_level {
#include "eagle/index/vector/kernels_impl.inc"
}  // namespace eagle::index::simd::avx2_level
namespace eagle::index::detail::avx2_level {
using namespace eagle::index::simd::avx2_level;
#include "eagle/index/vector/hnsw_core.inc"
}  // namespace eagle::index::detail::avx2_level
#undef EAGLE_ISA_LEVEL
#pragma GCC pop_options

namespace eagle::index::simd {
const Kernels& kernels_avx2() {
  static const Kernels k = avx2_level::make_kernels(Isa::avx2);
  return k;
}
}  // namespace eagle::index::simd

namespace eagle::index::detail {
const HnswCore& hnsw_core_avx2() {
  static const HnswCore c = avx2_level::make_core();
  return c;
}
}  // namespace eagle::index::detail
