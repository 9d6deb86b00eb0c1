#pragma once
// Distance kernels for the vector indexes, selected once at run time: the build
// targets a portable x86-64-v2 baseline (SSE4.2), so AVX2/FMA/F16C and AVX-512
// code lives in separate translation units compiled under `#pragma GCC target` and
// is only called when __builtin_cpu_supports says the CPU has it.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace eagle::index::simd {

enum class Isa : uint8_t { scalar = 0, avx2 = 1, avx512 = 2 };

std::string_view isa_name(Isa isa);
// The best level this CPU supports.
Isa detected_isa();
// What the indexes use: detected_isa(), lowered by the environment variable
// EAGLE_SIMD=scalar|avx2|avx512 (for benchmarks and tests; never raised above the CPU).
Isa active_isa();
bool isa_supported(Isa isa);

struct Kernels {
  Isa isa;
  float (*dot_f32)(const float* a, const float* b, size_t n);
  float (*l2sq_f32)(const float* a, const float* b, size_t n);
  // q is fp32, v is IEEE binary16 bits.
  float (*dot_f16)(const float* q, const uint16_t* v, size_t n);
  float (*l2sq_f16)(const float* q, const uint16_t* v, size_t n);
  // q is fp32, c int8 codes of a vector scale * c: scale * dot(q, c), |q - scale * c|^2.
  float (*dot_i8)(const float* q, const int8_t* c, float scale, size_t n);
  float (*l2sq_i8)(const float* q, const int8_t* c, float scale, size_t n);
  // Round-to-nearest-even, identical bits on every level.
  void (*f32_to_f16)(const float* in, uint16_t* out, size_t n);
  void (*f16_to_f32)(const uint16_t* in, float* out, size_t n);
  // out[i] = dot(q, base + i * stride) (or l2sq) for i < count: the flat scan.
  void (*dot_f32_rows)(const float* q, const float* base, size_t stride, size_t count, size_t n, float* out);
  void (*l2sq_f32_rows)(const float* q, const float* base, size_t stride, size_t count, size_t n, float* out);
};

// The table of one level (isa_supported(isa) must hold) and the active one.
const Kernels& kernels(Isa isa);
const Kernels& kernels();

// Scalar binary16 conversion with the F16C instructions' results (round to nearest
// even, subnormals, inf; NaN becomes a quiet NaN). After F. Giesen's branch-light
// conversions; they assume the default MXCSR (no FTZ/DAZ).
inline uint16_t f32_to_f16_scalar(float value) {
  uint32_t f = std::bit_cast<uint32_t>(value);
  const uint32_t sign = f & 0x80000000u;
  f ^= sign;
  uint32_t o;
  if (f >= (127u + 16u) << 23) {  // overflows binary16: inf, or NaN (quieted)
    o = f > (255u << 23) ? 0x7e00u | ((f >> 13) & 0x3ffu) : 0x7c00u;
  } else if (f < (113u << 23)) {  // subnormal or zero: let the FPU round in the adder
    constexpr uint32_t kMagicBits = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    const float sum = std::bit_cast<float>(f) + std::bit_cast<float>(kMagicBits);
    o = std::bit_cast<uint32_t>(sum) - kMagicBits;
  } else {
    const uint32_t mant_odd = (f >> 13) & 1u;
    f += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + mant_odd;
    o = f >> 13;
  }
  return static_cast<uint16_t>(o | (sign >> 16));
}

inline float f16_to_f32_scalar(uint16_t h) {
  constexpr uint32_t kShiftedExp = 0x7c00u << 13;
  uint32_t o = static_cast<uint32_t>(h & 0x7fffu) << 13;
  const uint32_t exp = kShiftedExp & o;
  o += (127u - 15u) << 23;
  if (exp == kShiftedExp) {
    o += (128u - 16u) << 23;  // inf / NaN
  } else if (exp == 0) {      // zero / subnormal: renormalise through the FPU
    o += 1u << 23;
    o = std::bit_cast<uint32_t>(std::bit_cast<float>(o) - std::bit_cast<float>(113u << 23));
  }
  return std::bit_cast<float>(o | (static_cast<uint32_t>(h & 0x8000u) << 16));
}

}  // namespace eagle::index::simd
