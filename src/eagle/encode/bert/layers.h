#pragma once
// The transformer layers the native runtimes share (BERT in bert.cpp, the CLIP/ViT
// towers in clip/): linear projections on the dispatched kernels, LayerNorm, the
// activations, and multi-head self-attention over packed query/key/value rows. Kept
// in one place so a fix or a faster kernel reaches every model, and parity with
// PyTorch is tested through each of them.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "eagle/encode/safetensors.h"

namespace eagle::encode::layers {

struct Linear {
  // [out][in], as PyTorch stores nn.Linear, while loading; prepare() turns it into
  // `packed` (kernels::pack_weights: the layout the kernels stream) and frees it.
  std::vector<float> w;
  std::vector<float> packed;
  std::vector<float> b;  // [out]; empty = no bias
  uint32_t in = 0, out = 0;
  void prepare();
};

struct Norm {
  std::vector<float> g, b;
};

// Random weights for benchmarks: N(0, 0.02) like Hugging Face's init, LayerNorms at
// identity.
class RandomWeights {
 public:
  explicit RandomWeights(uint64_t seed) : rng_(seed) {}
  std::vector<float> fill(size_t n);
  Linear linear(uint32_t out, uint32_t in);  // with a bias
  static Norm norm(uint32_t h);

 private:
  std::mt19937_64 rng_;
  std::normal_distribution<float> normal_{0.0f, 0.02f};
};

// `base`.weight [out][in] and, with `bias`, `base`.bias [out], shapes checked.
Linear read_linear(const SafeTensors& st, const std::string& base, uint32_t out, uint32_t in, bool bias = true);
// `base`.weight/.bias, or the old checkpoints' `base`.gamma/.beta, each [h].
Norm read_norm(const SafeTensors& st, const std::string& base, uint32_t h);
// A model folder's JSON file (config.json, open_clip_config.json, ...): not_found
// when it cannot be read, invalid_argument naming it when it does not parse.
nlohmann::json read_json_file(const std::filesystem::path& file);
// v / |v| (left as is when zero).
void l2_normalize(std::vector<float>& v);

// Y[t][out] = X[t][in] * W^T + b
void linear(const float* x, size_t tokens, const Linear& l, float* y);
void layer_norm(float* x, size_t tokens, uint32_t h, const Norm& n, float eps);

enum class Activation : uint8_t {
  gelu,        // exact erf form (HF "gelu", nn.GELU())
  quick_gelu,  // x * sigmoid(1.702 x): OpenAI CLIP's
  silu,        // x * sigmoid(x): SwiGLU's gate (UNI2)
};
void activate(Activation a, float* x, size_t n);
void add_in_place(float* x, const float* y, size_t n);

// Self-attention of B sequences of L rows each. `qkv` holds per row the queries, keys
// and values side by side ([T][3H], heads of d = H / heads columns each); `lengths[b]`
// is how many rows of sequence b are real (keys past it are masked out entirely, what
// an additive large-negative mask amounts to). Writes the context rows ([T][H]).
void self_attention(const float* qkv, size_t B, size_t L, const std::vector<size_t>& lengths, uint32_t H,
                    uint32_t heads, float* ctx);

}  // namespace eagle::encode::layers
