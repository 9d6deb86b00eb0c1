#include "eagle/index/vector/simd.h"

#include <cpuid.h>

#include <cstdlib>
#include <string>

#include "eagle/core/error.h"
#include "eagle/index/vector/hnsw_graph.h"

namespace eagle::index::simd {

// Defined in simd_<level>.cpp.
const Kernels& kernels_scalar();
const Kernels& kernels_avx2();
const Kernels& kernels_avx512();

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::scalar: return "scalar";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
  }
  return "unknown";
}

Isa detected_isa() {
  static const Isa isa = [] {
    __builtin_cpu_init();
    // F16C from CPUID (leaf 1, ECX): clang's __builtin_cpu_supports does not know it.
    unsigned a = 0, b = 0, c = 0, d = 0;
    const bool f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
    if (avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
      return Isa::avx512;
    return avx2 ? Isa::avx2 : Isa::scalar;
  }();
  return isa;
}

bool isa_supported(Isa isa) {
  return static_cast<uint8_t>(isa) <= static_cast<uint8_t>(detected_isa());
}

Isa active_isa() {
  static const Isa isa = [] {
    const Isa best = detected_isa();
    const char* env = std::getenv("EAGLE_SIMD");
    if (!env || !*env) return best;
    const std::string want(env);
    Isa asked = best;
    if (want == "scalar")
      asked = Isa::scalar;
    else if (want == "avx2")
      asked = Isa::avx2;
    else if (want == "avx512")
      asked = Isa::avx512;
    return isa_supported(asked) ? asked : best;
  }();
  return isa;
}

const Kernels& kernels(Isa isa) {
  if (!isa_supported(isa))
    fail(ErrorCode::invalid_argument, "this CPU does not support SIMD level " + std::string(isa_name(isa)));
  switch (isa) {
    case Isa::avx512: return kernels_avx512();
    case Isa::avx2: return kernels_avx2();
    case Isa::scalar: break;
  }
  return kernels_scalar();
}

const Kernels& kernels() {
  static const Kernels& k = kernels(active_isa());
  return k;
}

}  // namespace eagle::index::simd

namespace eagle::index::detail {

const HnswCore& hnsw_core_scalar();
const HnswCore& hnsw_core_avx2();
const HnswCore& hnsw_core_avx512();

const HnswCore& hnsw_core(simd::Isa isa) {
  if (!simd::isa_supported(isa))
    fail(ErrorCode::invalid_argument,
         "this CPU does not support SIMD level " + std::string(simd::isa_name(isa)));
  switch (isa) {
    case simd::Isa::avx512: return hnsw_core_avx512();
    case simd::Isa::avx2: return hnsw_core_avx2();
    case simd::Isa::scalar: break;
  }
  return hnsw_core_scalar();
}

}  // namespace eagle::index::detail
