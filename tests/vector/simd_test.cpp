// Every SIMD level of the distance kernels against the scalar level, on odd lengths
// and unaligned pointers; the fp16 conversions bit for bit.
#include "eagle/index/vector/simd.h"

#include <gtest/gtest.h>

#include <cstdio>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "vector_test_util.h"

namespace eagle::index {
namespace {

using simd::Isa;

// The kernel levels this CPU can run. A level it cannot run is untested here, and the
// output says so (once) rather than passing as if it had been checked.
std::vector<Isa> levels() {
  static bool said = false;
  std::vector<Isa> v;
  for (Isa i : {Isa::scalar, Isa::avx2, Isa::avx512}) {
    if (simd::isa_supported(i)) v.push_back(i);
    else if (!said) std::printf("[   NOTE   ] %s kernels NOT tested: this CPU lacks them\n", std::string(simd::isa_name(i)).c_str());
  }
  said = true;
  return v;
}

constexpr size_t kDims[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 100, 127, 257, 769};

void expect_close(float got, float want, const char* what, size_t n) {
  EXPECT_NEAR(got, want, 1e-5f * (1.0f + std::fabs(want))) << what << " n=" << n;
}

TEST(SimdKernels, DetectionIsConsistent) {
  EXPECT_TRUE(simd::isa_supported(Isa::scalar));
  EXPECT_TRUE(simd::isa_supported(simd::active_isa()));
  EXPECT_EQ(simd::kernels().isa, simd::active_isa());
  for (Isa i : levels()) EXPECT_EQ(simd::kernels(i).isa, i);
}

TEST(SimdKernels, Fp32MatchesScalarOnOddLengthsAndUnalignedData) {
  const auto& ref = simd::kernels(Isa::scalar);
  for (Isa isa : levels()) {
    const auto& k = simd::kernels(isa);
    for (size_t n : kDims) {
      // +1 offsets make the pointers unaligned.
      auto a = testing::uniform(n + 1, 1, 11 + n, -2.0f, 2.0f);
      auto b = testing::uniform(n + 1, 1, 97 + n, -2.0f, 2.0f);
      const float* pa = a.data() + 1;
      const float* pb = b.data() + 1;
      double dot = 0, l2 = 0;
      for (size_t i = 0; i < n; ++i) {
        dot += static_cast<double>(pa[i]) * pb[i];
        l2 += (static_cast<double>(pa[i]) - pb[i]) * (static_cast<double>(pa[i]) - pb[i]);
      }
      SCOPED_TRACE(std::string(simd::isa_name(isa)));
      expect_close(k.dot_f32(pa, pb, n), ref.dot_f32(pa, pb, n), "dot", n);
      expect_close(k.l2sq_f32(pa, pb, n), ref.l2sq_f32(pa, pb, n), "l2", n);
      expect_close(k.dot_f32(pa, pb, n), static_cast<float>(dot), "dot vs double", n);
      expect_close(k.l2sq_f32(pa, pb, n), static_cast<float>(l2), "l2 vs double", n);
    }
  }
}

TEST(SimdKernels, RowKernelsMatchSingleCalls) {
  for (Isa isa : levels()) {
    const auto& k = simd::kernels(isa);
    const size_t n = 37, rows = 13, stride = 41;
    auto base = testing::uniform(rows * stride, 1, 5);
    auto q = testing::uniform(n, 1, 6);
    std::vector<float> out(rows);
    k.dot_f32_rows(q.data(), base.data(), stride, rows, n, out.data());
    for (size_t r = 0; r < rows; ++r) EXPECT_EQ(out[r], k.dot_f32(q.data(), base.data() + r * stride, n));
    k.l2sq_f32_rows(q.data(), base.data(), stride, rows, n, out.data());
    for (size_t r = 0; r < rows; ++r) EXPECT_EQ(out[r], k.l2sq_f32(q.data(), base.data() + r * stride, n));
  }
}

TEST(SimdKernels, Fp16DistancesMatchScalar) {
  const auto& ref = simd::kernels(Isa::scalar);
  for (Isa isa : levels()) {
    const auto& k = simd::kernels(isa);
    for (size_t n : kDims) {
      auto q = testing::uniform(n + 1, 1, 3 + n, -1.5f, 1.5f);
      auto vf = testing::uniform(n + 1, 1, 7 + n, -1.5f, 1.5f);
      std::vector<uint16_t> v(n + 1);
      ref.f32_to_f16(vf.data(), v.data(), n + 1);
      SCOPED_TRACE(std::string(simd::isa_name(isa)));
      expect_close(k.dot_f16(q.data() + 1, v.data() + 1, n), ref.dot_f16(q.data() + 1, v.data() + 1, n),
                   "dot16", n);
      expect_close(k.l2sq_f16(q.data() + 1, v.data() + 1, n), ref.l2sq_f16(q.data() + 1, v.data() + 1, n),
                   "l2_16", n);
    }
  }
}

TEST(SimdKernels, Int8DistancesMatchScalar) {
  const auto& ref = simd::kernels(Isa::scalar);
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int> code(-127, 127);
  for (Isa isa : levels()) {
    const auto& k = simd::kernels(isa);
    for (size_t n : kDims) {
      auto q = testing::uniform(n + 1, 1, 5 + n, -1.0f, 1.0f);
      std::vector<int8_t> c(n + 1);
      for (auto& x : c) x = static_cast<int8_t>(code(rng));
      const float scale = 0.0037f;
      double dot = 0, l2 = 0;
      for (size_t i = 0; i < n; ++i) {
        dot += static_cast<double>(q[i + 1]) * c[i + 1];
        const double d = q[i + 1] - static_cast<double>(scale) * c[i + 1];
        l2 += d * d;
      }
      SCOPED_TRACE(std::string(simd::isa_name(isa)));
      expect_close(k.dot_i8(q.data() + 1, c.data() + 1, scale, n),
                   ref.dot_i8(q.data() + 1, c.data() + 1, scale, n), "dot_i8", n);
      expect_close(k.l2sq_i8(q.data() + 1, c.data() + 1, scale, n),
                   ref.l2sq_i8(q.data() + 1, c.data() + 1, scale, n), "l2_i8", n);
      expect_close(k.dot_i8(q.data() + 1, c.data() + 1, scale, n), static_cast<float>(scale * dot),
                   "dot_i8 vs double", n);
      expect_close(k.l2sq_i8(q.data() + 1, c.data() + 1, scale, n), static_cast<float>(l2), "l2_i8 vs double",
                   n);
    }
  }
}

TEST(SimdKernels, HalfToFloatIsExactForEveryBitPattern) {
  std::vector<uint16_t> all(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  for (Isa isa : levels()) {
    std::vector<float> out(all.size());
    simd::kernels(isa).f16_to_f32(all.data(), out.data(), all.size());
    for (size_t i = 0; i < all.size(); ++i) {
      const float s = simd::f16_to_f32_scalar(all[i]);
      if (std::isnan(s)) {
        ASSERT_TRUE(std::isnan(out[i])) << i;
      } else {
        ASSERT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(s)) << std::hex << i;
      }
    }
  }
  // Spot values.
  EXPECT_EQ(simd::f16_to_f32_scalar(0x3c00), 1.0f);
  EXPECT_EQ(simd::f16_to_f32_scalar(0xc000), -2.0f);
  EXPECT_EQ(simd::f16_to_f32_scalar(0x7bff), 65504.0f);
  EXPECT_EQ(simd::f16_to_f32_scalar(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(simd::f16_to_f32_scalar(0x7c00)));
}

TEST(SimdKernels, FloatToHalfRoundsLikeTheHardware) {
  std::vector<float> in;
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    float f = std::bit_cast<float>(bits(rng));
    if (!std::isnan(f)) in.push_back(f);
  }
  std::uniform_real_distribution<float> small(-70000.0f, 70000.0f);
  for (int i = 0; i < 50000; ++i) in.push_back(small(rng));
  std::uniform_real_distribution<float> tiny(-1e-4f, 1e-4f);
  for (int i = 0; i < 50000; ++i) in.push_back(tiny(rng));
  // Exact ties between two halves, in the normal and subnormal ranges.
  for (uint32_t h = 0; h < 0x7bff; h += 7) {
    const float a = simd::f16_to_f32_scalar(static_cast<uint16_t>(h));
    const float b = simd::f16_to_f32_scalar(static_cast<uint16_t>(h + 1));
    in.push_back((a + b) / 2);
    in.push_back(-(a + b) / 2);
  }
  for (float f :
       {0.0f, -0.0f, 65504.0f, 65519.0f, 65520.0f, 1e9f, -1e9f, std::numeric_limits<float>::infinity(),
        -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::denorm_min()})
    in.push_back(f);
  for (Isa isa : levels()) {
    std::vector<uint16_t> out(in.size());
    simd::kernels(isa).f32_to_f16(in.data(), out.data(), in.size());
    for (size_t i = 0; i < in.size(); ++i)
      ASSERT_EQ(out[i], simd::f32_to_f16_scalar(in[i])) << simd::isa_name(isa) << " " << in[i];
  }
  EXPECT_EQ(simd::f32_to_f16_scalar(1.0f), 0x3c00);
  EXPECT_EQ(simd::f32_to_f16_scalar(65520.0f), 0x7c00);  // rounds up to infinity
  EXPECT_EQ(simd::f32_to_f16_scalar(65519.0f), 0x7bff);
}

}  // namespace
}  // namespace eagle::index
