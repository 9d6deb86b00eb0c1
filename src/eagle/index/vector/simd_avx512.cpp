// One SIMD level of the distance kernels and the HNSW core: AVX-512 (F, BW, VL, DQ).
// Standard headers come before the target pragma so their code stays baseline;
// everything in the .inc files is compiled for this level, in its own namespace.
// GCC 12 warns about the deliberately undefined vectors inside its own
// _mm512_reduce_add_ps / _mm512_undefined_* (a false positive in the system header).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
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
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")
#define EAGLE_ISA_LEVEL 2
namespace eagle::index::simd::avx512_level {
#include "eagle/index/vector/kernels_impl.inc"
}  // namespace eagle::index::simd::avx512_level
namespace eagle::index::detail::avx512_level {
using namespace eagle::index::simd::avx512_level;
#include "eagle/index/vector/hnsw_core.inc"
}  // namespace eagle::index::detail::avx512_level
#undef EAGLE_ISA_LEVEL
#pragma GCC pop_options

namespace eagle::index::simd {
const Kernels& kernels_avx512() {
  static const Kernels k = avx512_level::make_kernels(Isa::avx512);
  return k;
}
}  // namespace eagle::index::simd

namespace eagle::index::detail {
const HnswCore& hnsw_core_avx512() {
  static const HnswCore c = avx512_level::make_core();
  return c;
}
}  // namespace eagle::index::detail
