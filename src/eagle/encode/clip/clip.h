#pragma once
// Native CLIP-style runtime, in the BERT runtime's style: fp32 on the same
// dispatched kernels and shared layers (bert/layers.h).
//
// The image tower is a Vision Transformer: patch embedding (a stride-p convolution,
// run as one GEMM over the image's patches), class token and register tokens, position
// embeddings, pre-LayerNorm blocks (attention and MLP, each residual, with optional
// LayerScale; GELU, QuickGELU or SwiGLU), the final LayerNorm on the class token and a
// projection into the shared space. Three checkpoint layouts load into it:
//   - OpenCLIP (`visual.conv1`, `visual.transformer.resblocks.N`, `visual.proj`),
//   - Hugging Face CLIPModel (`vision_model.*`, `visual_projection`),
//   - timm ViT (`patch_embed`, `blocks.N`, `norm`), bare (a timm hub folder such as
//     UNI2-h: register tokens, LayerScale, SwiGLU, positions on patches only) or inside
//     OpenCLIP as `visual.trunk.*` with `visual.head.proj` (BiomedCLIP).
// The text tower is BiomedCLIP's: a BERT encoder (`text.transformer.*`, run by the BERT
// runtime, WordPiece from the folder's vocab.txt), its [CLS] state, and the linear or
// MLP projection (`text.proj`). OpenAI CLIP's own text tower (byte-level BPE, causal
// mask) is not built: such a folder loads as an image-only encoder and says so.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "eagle/encode/bert/bert.h"
#include "eagle/encode/bert/layers.h"
#include "eagle/encode/clip/preprocess.h"
#include "eagle/encode/encoder.h"
#include "eagle/encode/safetensors.h"

namespace eagle::encode::clip {

enum class VitLayout : uint8_t { openclip, hf, timm };

struct VitConfig {
  uint32_t image_size = 224;
  uint32_t patch = 16;
  uint32_t width = 0;
  uint32_t layers = 0;
  uint32_t heads = 0;
  uint32_t mlp_hidden = 0;  // the MLP's inner width (for SwiGLU: each half of fc1)
  uint32_t embed_dim = 0;   // projection output; 0 = no projection (the class token's width)
  uint32_t reg_tokens = 0;
  bool class_token = true;
  bool pos_on_prefix = true;  // false: positions for the patches only (timm no_embed_class)
  bool ln_pre = false;
  bool layer_scale = false;
  bool glu = false;  // SwiGLU packed: fc1 yields the gate half then the value half
  layers::Activation act = layers::Activation::gelu;
  float eps = 1e-5f;
  // The width of the model `heads` was looked up by (a timm model name); a checkpoint
  // of another width is refused rather than run with the wrong heads. 0: not looked up.
  uint32_t named_width = 0;
  uint32_t grid() const { return image_size / patch; }
};

struct VitWeights;

class VitModel {
 public:
  // The tower named `prefix` + the layout's names in `st`. Shapes (width, layers, MLP,
  // tokens, LayerScale, SwiGLU, projection) are read from the tensors; `cfg` gives what
  // tensors cannot say (heads, activation, eps, image size) and is returned completed.
  static VitModel load(const SafeTensors& st, VitLayout layout, const std::string& prefix, VitConfig cfg);
  // Random weights with the given shapes (benchmarks).
  static VitModel random(const VitConfig& cfg, uint64_t seed);
  VitModel(VitModel&&) noexcept;
  VitModel& operator=(VitModel&&) noexcept;
  ~VitModel();

  const VitConfig& config() const { return cfg_; }
  uint32_t output_dim() const { return cfg_.embed_dim ? cfg_.embed_dim : cfg_.width; }
  // Preprocessed images, each [3][image_size][image_size] -> one embedding each
  // (not normalised).
  std::vector<std::vector<float>> embed(const std::vector<std::vector<float>>& images) const;

 private:
  VitModel() = default;
  VitConfig cfg_;
  std::unique_ptr<VitWeights> w_;
};

struct ClipOptions {
  bool l2 = true;           // L2-normalise embeddings (CLIP compares by cosine)
  size_t batch_size = 16;   // images per forward pass
  size_t max_length = 256;  // text tokens (at most the folder's text_cfg.context_length)
  bool lowercase = true;
  ingest::ImageLimits limits;
};

// What a model folder holds, read from its configuration files:
//   open_clip_config.json + open_clip_model.safetensors (or model.safetensors): OpenCLIP,
//     native ViT or timm trunk (BiomedCLIP), text tower when `text.transformer.*` exists;
//   config.json with "vision_config" + model.safetensors: Hugging Face CLIPModel
//     (preprocessor_config.json for size, mean and std);
//   config.json with "architecture" (timm hub) + model.safetensors: a bare timm ViT,
//     image-only (UNI2-h), constants from "pretrained_cfg".
struct ClipFolder {
  VitLayout layout = VitLayout::openclip;
  std::string vit_prefix;
  VitConfig vit;
  ImagePreprocess preprocess;
  std::filesystem::path weights;
  uint32_t text_heads = 0;  // 0: hidden / 64
  Pooling text_pooling = Pooling::cls;  // OpenCLIP's hf_pooler_type
  uint32_t text_context_length = 0;     // text_cfg.context_length: tokens kept (0: the option's)
  std::string describe;     // "openclip vit", "openclip timm", "hf clip", "timm"
  static ClipFolder read(const std::filesystem::path& folder);
};

// The runtime behind the Encoder interface (Modality::image; metric IP on the
// L2-normalised embeddings, cosine with normalize false). It embeds text when the
// folder has a text tower (embeds_text), otherwise refuses text.
std::unique_ptr<Encoder> make_clip_encoder(std::string label, const std::filesystem::path& folder,
                                           ClipOptions options = {});

}  // namespace eagle::encode::clip
