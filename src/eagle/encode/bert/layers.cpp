#include "eagle/encode/bert/layers.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "eagle/core/error.h"

#include "eagle/encode/bert/kernels.h"

namespace eagle::encode::layers {

void Linear::prepare() {
  packed = kernels::pack_weights(w, static_cast<int>(out), static_cast<int>(in));
  std::vector<float>().swap(w);
}

std::vector<float> RandomWeights::fill(size_t n) {
  std::vector<float> v(n);
  for (auto& x : v) x = normal_(rng_);
  return v;
}

Linear RandomWeights::linear(uint32_t out, uint32_t in) {
  Linear l;
  l.in = in;
  l.out = out;
  l.w = fill(static_cast<size_t>(out) * in);
  l.b = fill(out);
  return l;
}

Linear read_linear(const SafeTensors& st, const std::string& base, uint32_t out, uint32_t in, bool bias) {
  Linear l;
  l.in = in;
  l.out = out;
  l.w = st.read(base + ".weight", {out, in});
  if (bias) l.b = st.read(base + ".bias", {out});
  return l;
}

Norm read_norm(const SafeTensors& st, const std::string& base, uint32_t h) {
  if (st.has(base + ".weight")) return Norm{st.read(base + ".weight", {h}), st.read(base + ".bias", {h})};
  return Norm{st.read(base + ".gamma", {h}), st.read(base + ".beta", {h})};
}

nlohmann::json read_json_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) fail(ErrorCode::not_found, "cannot read " + file.string());
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    fail(ErrorCode::invalid_argument, file.string() + ": " + e.what());
  }
}

void l2_normalize(std::vector<float>& v) {
  double n = 0;
  for (float f : v) n += static_cast<double>(f) * f;
  if (n > 0)
    for (auto& f : v) f = static_cast<float>(f / std::sqrt(n));
}

Norm RandomWeights::norm(uint32_t h) { return Norm{std::vector<float>(h, 1.0f), std::vector<float>(h, 0.0f)}; }

void linear(const float* x, size_t tokens, const Linear& l, float* y) {
  kernels::linear(static_cast<int>(tokens), static_cast<int>(l.out), static_cast<int>(l.in), x, l.packed.data(), y);
  if (l.b.empty()) return;
  for (size_t t = 0; t < tokens; ++t) {
    float* row = y + t * l.out;
    for (uint32_t o = 0; o < l.out; ++o) row[o] += l.b[o];
  }
}

void layer_norm(float* x, size_t tokens, uint32_t h, const Norm& n, float eps) {
  for (size_t t = 0; t < tokens; ++t) {
    float* row = x + t * h;
    double mean = 0, var = 0;
    for (uint32_t i = 0; i < h; ++i) mean += row[i];
    mean /= h;
    for (uint32_t i = 0; i < h; ++i) {
      const double d = row[i] - mean;
      var += d * d;
    }
    var /= h;
    const float inv = static_cast<float>(1.0 / std::sqrt(var + eps));
    const float m = static_cast<float>(mean);
    for (uint32_t i = 0; i < h; ++i) row[i] = (row[i] - m) * inv * n.g[i] + n.b[i];
  }
}

// Compiled with -ffast-math so GCC vectorises erff/expf through glibc's libmvec.
void activate(Activation a, float* x, size_t n) {
  switch (a) {
    case Activation::gelu: {
      constexpr float kInvSqrt2 = 0.70710678118654752f;
#pragma omp simd
      for (size_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + erff(x[i] * kInvSqrt2));
      break;
    }
    case Activation::quick_gelu:
#pragma omp simd
      for (size_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + expf(-1.702f * x[i]));
      break;
    case Activation::silu:
#pragma omp simd
      for (size_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + expf(-x[i]));
      break;
  }
}

void add_in_place(float* x, const float* y, size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; ++i) x[i] += y[i];
}

void self_attention(const float* qkv, size_t B, size_t L, const std::vector<size_t>& lengths, uint32_t H,
                    uint32_t heads, float* ctx) {
  const uint32_t d = H / heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  // One job per (sequence, head), on Eagle's workers (AVX-512 path) or serially with
  // OpenBLAS threading each product. No OpenMP: its spinning workers fight OpenBLAS's
  // threads for the cores.
  kernels::parallel_for(static_cast<int>(B * heads), [&](int job, int) {
    // Per-thread scratch: independent of how many workers the pool has now.
    thread_local std::vector<float> scores;
    if (scores.size() < L * L) scores.resize(L * L);
    const size_t b = static_cast<size_t>(job) / heads;
    const uint32_t hd = static_cast<uint32_t>(job) % heads;
    const size_t len = lengths[b];
    const float* q = qkv + b * L * 3 * H + hd * d;
    const float* k = q + H;
    const float* v = q + 2 * H;
    kernels::gemm_nt(static_cast<int>(L), static_cast<int>(len), static_cast<int>(d), scale, q,
                     static_cast<int>(3 * H), k, static_cast<int>(3 * H), scores.data(), static_cast<int>(len));
    for (size_t i = 0; i < L; ++i) {
      float* row = scores.data() + i * len;
      float mx = row[0];
      for (size_t j = 1; j < len; ++j) mx = std::max(mx, row[j]);
      float sum = 0;
#pragma omp simd reduction(+ : sum)
      for (size_t j = 0; j < len; ++j) {
        row[j] = expf(row[j] - mx);
        sum += row[j];
      }
      const float inv = 1.0f / sum;
      for (size_t j = 0; j < len; ++j) row[j] *= inv;
    }
    kernels::gemm_nn(static_cast<int>(L), static_cast<int>(d), static_cast<int>(len), scores.data(),
                     static_cast<int>(len), v, static_cast<int>(3 * H), ctx + b * L * H + hd * d, static_cast<int>(H));
  });
}

}  // namespace eagle::encode::layers
