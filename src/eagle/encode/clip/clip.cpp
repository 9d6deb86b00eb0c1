#include "eagle/encode/clip/clip.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "eagle/core/error.h"
#include "eagle/encode/bert/bert.h"
#include "eagle/text/wordpiece.h"

namespace eagle::encode::clip {
namespace fs = std::filesystem;
using layers::Linear;
using layers::Norm;
using nlohmann::json;

struct VitBlock {
  Norm ln1, ln2;
  Linear qkv, proj, fc1, fc2;
  std::vector<float> ls1, ls2;  // LayerScale gammas (empty: none)
};

struct VitWeights {
  Linear patch;                  // [width][3 * p * p]
  std::vector<float> cls, reg;   // [width], [reg_tokens * width]
  std::vector<float> pos;        // [positions][width]
  Norm ln_pre, ln_post;
  std::vector<VitBlock> blocks;
  Linear head;                   // projection (no bias); out = 0 when none
};

namespace {

using layers::read_linear;
using layers::read_norm;

// The tensor names of one layout, after its prefix; block tensors after
// `blocks` + index + ".".
struct LayoutNames {
  const char *blocks, *patch, *cls, *pos, *ln_pre, *ln_post;
  const char *ln1, *ln2, *fc1, *fc2, *attn_out, *ls1, *ls2;
};
constexpr LayoutNames kOpenClipNames{"transformer.resblocks.", "conv1.weight", "class_embedding",
                                     "positional_embedding", "ln_pre", "ln_post", "ln_1", "ln_2", "mlp.c_fc",
                                     "mlp.c_proj", "attn.out_proj", "ls_1.gamma", "ls_2.gamma"};
constexpr LayoutNames kHfNames{"encoder.layers.", "embeddings.patch_embedding.weight", "embeddings.class_embedding",
                               "embeddings.position_embedding.weight", "pre_layrnorm", "post_layernorm",
                               "layer_norm1", "layer_norm2", "mlp.fc1", "mlp.fc2", "self_attn.out_proj",
                               "ls1.gamma", "ls2.gamma"};
constexpr LayoutNames kTimmNames{"blocks.", "patch_embed.proj.weight", "cls_token", "pos_embed", "norm_pre", "norm",
                                 "norm1", "norm2", "mlp.fc1", "mlp.fc2", "attn.proj", "ls1.gamma", "ls2.gamma"};

// The full names of one checkpoint's tower: prefix + the layout's names.
struct Names {
  const LayoutNames& n;
  std::string p;  // prefix
  Names(VitLayout layout, std::string prefix)
      : n(layout == VitLayout::openclip ? kOpenClipNames : layout == VitLayout::hf ? kHfNames : kTimmNames),
        p(std::move(prefix)) {}
  std::string blk(uint32_t i) const { return p + n.blocks + std::to_string(i) + "."; }
  std::string patch() const { return p + n.patch; }
  std::string cls() const { return p + n.cls; }
  std::string pos() const { return p + n.pos; }
  std::string ln_pre() const { return p + n.ln_pre; }
  std::string ln_post() const { return p + n.ln_post; }
  std::string ln1(uint32_t i) const { return blk(i) + n.ln1; }
  std::string ln2(uint32_t i) const { return blk(i) + n.ln2; }
  std::string fc1(uint32_t i) const { return blk(i) + n.fc1; }
  std::string fc2(uint32_t i) const { return blk(i) + n.fc2; }
  std::string attn_out(uint32_t i) const { return blk(i) + n.attn_out; }
  std::string ls(uint32_t i, int which) const { return blk(i) + (which == 1 ? n.ls1 : n.ls2); }
};

int64_t dim(const SafeTensors& st, const std::string& name, size_t axis) {
  const auto& shape = st.info(name).shape;
  if (axis >= shape.size()) fail(ErrorCode::invalid_argument, name + " has fewer than " + std::to_string(axis + 1) + " axes");
  return shape[axis];
}

void prepare(VitWeights& w) {
  w.patch.prepare();
  for (auto& b : w.blocks)
    for (Linear* l : {&b.qkv, &b.proj, &b.fc1, &b.fc2}) l->prepare();
  if (w.head.out) w.head.prepare();
}

void scale_rows(float* x, size_t rows, const std::vector<float>& gamma) {
  const size_t h = gamma.size();
  for (size_t r = 0; r < rows; ++r)
    for (size_t i = 0; i < h; ++i) x[r * h + i] *= gamma[i];
}

}  // namespace

VitModel::VitModel(VitModel&&) noexcept = default;
VitModel& VitModel::operator=(VitModel&&) noexcept = default;
VitModel::~VitModel() = default;

VitModel VitModel::load(const SafeTensors& st, VitLayout layout, const std::string& prefix, VitConfig c) {
  const Names n{layout, prefix};
  if (!st.has(n.patch())) fail(ErrorCode::invalid_argument, "no ViT image tower: tensor " + n.patch() + " is missing");
  auto w = std::make_unique<VitWeights>();
  // Patch embedding: a convolution [width][3][p][p] read as a linear map of a patch.
  const auto& ps = st.info(n.patch()).shape;
  if (ps.size() != 4 || ps[1] != 3 || ps[2] != ps[3]) fail(ErrorCode::invalid_argument, n.patch() + " must be [width, 3, p, p]");
  if (ps[0] <= 0 || ps[0] > 65536 || ps[2] <= 0 || ps[2] > 1024)
    fail(ErrorCode::invalid_argument, n.patch() + " has an implausible shape (width 1..65536, patch 1..1024)");
  c.width = static_cast<uint32_t>(ps[0]);
  c.patch = static_cast<uint32_t>(ps[2]);
  const uint32_t W = c.width, K = 3 * c.patch * c.patch;
  if (c.named_width && c.named_width != W)
    fail(ErrorCode::invalid_argument, "the checkpoint's ViT is " + std::to_string(W) + " wide, not the named model's " +
                                          std::to_string(c.named_width) + ": give its number of heads (num_heads, vision_cfg.heads)");
  if (c.heads == 0) fail(ErrorCode::invalid_argument, "the ViT's number of attention heads is not known");
  if (W % c.heads != 0) fail(ErrorCode::invalid_argument, "ViT width " + std::to_string(W) + " is not a multiple of " +
                                                             std::to_string(c.heads) + " heads");
  w->patch.in = K;
  w->patch.out = W;
  w->patch.w = st.read(n.patch());
  const std::string patch_bias = layout == VitLayout::timm ? prefix + "patch_embed.proj.bias" : "";
  if (!patch_bias.empty() && st.has(patch_bias)) w->patch.b = st.read(patch_bias, {W});
  c.class_token = st.has(n.cls());
  if (c.class_token) w->cls = st.read(n.cls());
  if (w->cls.size() != (c.class_token ? W : 0)) fail(ErrorCode::invalid_argument, n.cls() + " must hold width values");
  if (!c.class_token) fail(ErrorCode::invalid_argument, "a ViT without a class token is not supported (pooling is by the class token)");
  c.reg_tokens = 0;
  if (layout == VitLayout::timm && st.has(prefix + "reg_token")) {
    w->reg = st.read(prefix + "reg_token");
    if (w->reg.empty() || w->reg.size() % W != 0)
      fail(ErrorCode::invalid_argument, prefix + "reg_token must hold whole rows of width " + std::to_string(W));
    c.reg_tokens = static_cast<uint32_t>(w->reg.size() / W);
  }
  // The position table covers the patches of the configured image size, alone (timm's
  // no_embed_class) or after the class and register tokens.
  w->pos = st.read(n.pos());
  if (c.image_size == 0 || c.image_size % c.patch != 0)
    fail(ErrorCode::invalid_argument, "image size " + std::to_string(c.image_size) + " is not a multiple of the patch size " +
                                          std::to_string(c.patch));
  const size_t patches = static_cast<size_t>(c.grid()) * c.grid(), prefix_tokens = 1 + c.reg_tokens;
  if (w->pos.size() == (patches + prefix_tokens) * W) c.pos_on_prefix = true;
  else if (w->pos.size() == patches * W) c.pos_on_prefix = false;
  else
    fail(ErrorCode::invalid_argument, n.pos() + " holds " + std::to_string(w->pos.size()) + " values; a " +
                                          std::to_string(c.image_size) + " px image of " + std::to_string(patches) +
                                          " patches and width " + std::to_string(W) + " needs " +
                                          std::to_string(patches * W) + " or " + std::to_string((patches + prefix_tokens) * W));
  c.ln_pre = st.has(n.ln_pre() + ".weight");
  if (c.ln_pre) w->ln_pre = read_norm(st, n.ln_pre(), W);
  w->ln_post = read_norm(st, n.ln_post(), W);
  if (layout == VitLayout::timm && st.has(prefix + "fc_norm.weight"))
    fail(ErrorCode::invalid_argument, "timm ViT with fc_norm (average pooling) is not supported");
  if (layout == VitLayout::openclip && (st.has(prefix + "attn_pool.query") || st.has(prefix + "attn_pool.attn.in_proj_weight")))
    fail(ErrorCode::invalid_argument, "an OpenCLIP ViT with attentional pooling is not supported (class token pooling only)");
  c.layers = 0;
  while (st.has(n.ln1(c.layers) + ".weight")) ++c.layers;
  if (c.layers == 0) fail(ErrorCode::invalid_argument, "no transformer blocks under " + n.blk(0));
  for (uint32_t i = 0; i < c.layers; ++i) {
    VitBlock b;
    b.ln1 = read_norm(st, n.ln1(i), W);
    b.ln2 = read_norm(st, n.ln2(i), W);
    if (layout == VitLayout::openclip) {
      b.qkv.in = W;
      b.qkv.out = 3 * W;
      b.qkv.w = st.read(n.blk(i) + "attn.in_proj_weight", {3 * W, W});
      b.qkv.b = st.read(n.blk(i) + "attn.in_proj_bias", {3 * W});
    } else if (layout == VitLayout::hf) {
      b.qkv.in = W;
      b.qkv.out = 3 * W;
      for (const char* part : {"q_proj", "k_proj", "v_proj"}) {
        auto l = read_linear(st, n.blk(i) + "self_attn." + part, W, W);
        b.qkv.w.insert(b.qkv.w.end(), l.w.begin(), l.w.end());
        b.qkv.b.insert(b.qkv.b.end(), l.b.begin(), l.b.end());
      }
    } else {
      if (st.has(n.blk(i) + "attn.q_norm.weight")) fail(ErrorCode::invalid_argument, "timm ViT with qk_norm is not supported");
      b.qkv = read_linear(st, n.blk(i) + "attn.qkv", 3 * W, W, st.has(n.blk(i) + "attn.qkv.bias"));
    }
    b.proj = read_linear(st, n.attn_out(i), W, W);
    const uint32_t fc1_out = static_cast<uint32_t>(dim(st, n.fc1(i) + ".weight", 0));
    const uint32_t fc2_in = static_cast<uint32_t>(dim(st, n.fc2(i) + ".weight", 1));
    const bool glu = fc1_out == 2 * fc2_in;  // SwiGLU packed: fc1 holds gate and value
    if (fc2_in == 0 || (!glu && fc1_out != fc2_in))
      fail(ErrorCode::invalid_argument, n.fc1(i) + " and " + n.fc2(i) + " do not chain");
    // Every block the same shape: the buffers are sized once from block 0.
    if (i > 0 && (glu != c.glu || fc2_in != c.mlp_hidden))
      fail(ErrorCode::invalid_argument, n.blk(i) + " has another MLP shape than block 0");
    c.glu = glu;
    c.mlp_hidden = fc2_in;
    b.fc1 = read_linear(st, n.fc1(i), fc1_out, W);
    b.fc2 = read_linear(st, n.fc2(i), W, fc2_in);
    if (st.has(n.ls(i, 1))) b.ls1 = st.read(n.ls(i, 1), {W});
    if (st.has(n.ls(i, 2))) b.ls2 = st.read(n.ls(i, 2), {W});
    if (i > 0 && b.ls1.empty() != !c.layer_scale)
      fail(ErrorCode::invalid_argument, n.blk(i) + " differs from block 0 in LayerScale");
    c.layer_scale = !b.ls1.empty();
    w->blocks.push_back(std::move(b));
  }
  if (c.glu) c.act = layers::Activation::silu;
  // The projection into the shared space.
  if (layout == VitLayout::openclip && st.has(prefix + "proj")) {
    const auto& shape = st.info(prefix + "proj").shape;  // [width][embed]: pooled @ proj
    if (shape.size() != 2 || shape[0] != W || shape[1] <= 0)
      fail(ErrorCode::invalid_argument, prefix + "proj must be [" + std::to_string(W) + ", embed_dim]");
    const auto proj = st.read(prefix + "proj");
    c.embed_dim = static_cast<uint32_t>(shape[1]);
    w->head.in = W;
    w->head.out = c.embed_dim;
    w->head.w.resize(proj.size());
    for (uint32_t i = 0; i < W; ++i)
      for (uint32_t o = 0; o < c.embed_dim; ++o) w->head.w[static_cast<size_t>(o) * W + i] = proj[static_cast<size_t>(i) * c.embed_dim + o];
  } else if (layout == VitLayout::hf && st.has("visual_projection.weight")) {
    c.embed_dim = static_cast<uint32_t>(dim(st, "visual_projection.weight", 0));
    w->head = read_linear(st, "visual_projection", c.embed_dim, W, false);
  } else if (layout == VitLayout::timm && prefix.size() > 6 && prefix.substr(prefix.size() - 6) == "trunk." &&
             st.has(prefix.substr(0, prefix.size() - 6) + "head.proj.weight")) {
    const std::string head = prefix.substr(0, prefix.size() - 6) + "head.proj";
    c.embed_dim = static_cast<uint32_t>(dim(st, head + ".weight", 0));
    w->head = read_linear(st, head, c.embed_dim, W, st.has(head + ".bias"));
  } else {
    c.embed_dim = 0;
  }
  prepare(*w);
  VitModel m;
  m.cfg_ = c;
  m.w_ = std::move(w);
  return m;
}

VitModel VitModel::random(const VitConfig& c, uint64_t seed) {
  layers::RandomWeights random(seed);
  auto fill = [&](size_t n) { return random.fill(n); };
  auto lin = [&](uint32_t out, uint32_t in) { return random.linear(out, in); };
  auto norm = &layers::RandomWeights::norm;
  auto w = std::make_unique<VitWeights>();
  const uint32_t W = c.width;
  w->patch = lin(W, 3 * c.patch * c.patch);
  w->cls = fill(W);
  w->reg = fill(static_cast<size_t>(c.reg_tokens) * W);
  const size_t positions = static_cast<size_t>(c.grid()) * c.grid() + (c.pos_on_prefix ? 1 + c.reg_tokens : 0);
  w->pos = fill(positions * W);
  if (c.ln_pre) w->ln_pre = norm(W);
  w->ln_post = norm(W);
  for (uint32_t i = 0; i < c.layers; ++i) {
    VitBlock b{norm(W), norm(W), lin(3 * W, W), lin(W, W), lin(c.glu ? 2 * c.mlp_hidden : c.mlp_hidden, W),
               lin(W, c.mlp_hidden), {}, {}};
    if (c.layer_scale) b.ls1 = b.ls2 = std::vector<float>(W, 0.1f);
    w->blocks.push_back(std::move(b));
  }
  if (c.embed_dim) {
    w->head = lin(c.embed_dim, W);
    w->head.b.clear();
  }
  prepare(*w);
  VitModel m;
  m.cfg_ = c;
  m.w_ = std::move(w);
  return m;
}

std::vector<std::vector<float>> VitModel::embed(const std::vector<std::vector<float>>& images) const {
  const auto& c = cfg_;
  const size_t B = images.size();
  if (B == 0) return {};
  const uint32_t W = c.width, P = c.patch, G = c.grid(), S = c.image_size;
  const size_t patches = static_cast<size_t>(G) * G, prefix = 1 + c.reg_tokens, L = prefix + patches, T = B * L;
  const size_t K = 3 * static_cast<size_t>(P) * P;
  // Patch rows in the convolution weight's order (channel, row, column).
  std::vector<float> cols(B * patches * K);
  for (size_t b = 0; b < B; ++b) {
    if (images[b].size() != 3 * static_cast<size_t>(S) * S)
      fail(ErrorCode::invalid_argument, "image tensor of " + std::to_string(images[b].size()) + " values; the ViT takes 3 x " +
                                            std::to_string(S) + " x " + std::to_string(S));
    for (uint32_t gy = 0; gy < G; ++gy)
      for (uint32_t gx = 0; gx < G; ++gx) {
        float* row = cols.data() + ((b * patches) + gy * G + gx) * K;
        for (uint32_t ch = 0; ch < 3; ++ch)
          for (uint32_t ky = 0; ky < P; ++ky) {
            const float* src = images[b].data() + (static_cast<size_t>(ch) * S + gy * P + ky) * S + gx * P;
            std::copy(src, src + P, row + (static_cast<size_t>(ch) * P + ky) * P);
          }
      }
  }
  // Tokens: [class, registers..., patches], positions per the layout; each image's
  // patch embeddings are written straight into its token rows.
  std::vector<float> x(T * W);
  for (size_t b = 0; b < B; ++b) {
    float* seq = x.data() + b * L * W;
    std::copy(w_->cls.begin(), w_->cls.end(), seq);
    std::copy(w_->reg.begin(), w_->reg.end(), seq + W);
    layers::linear(cols.data() + b * patches * K, patches, w_->patch, seq + prefix * W);
    float* with_pos = c.pos_on_prefix ? seq : seq + prefix * W;
    layers::add_in_place(with_pos, w_->pos.data(), w_->pos.size());
  }
  if (c.ln_pre) layers::layer_norm(x.data(), T, W, w_->ln_pre, c.eps);
  const std::vector<size_t> lengths(B, L);
  const size_t fc1_out = c.glu ? 2 * static_cast<size_t>(c.mlp_hidden) : c.mlp_hidden;
  std::vector<float> h(T * W), qkv(T * 3 * W), ctx(T * W), tmp(T * W), ff(T * fc1_out), gated(c.glu ? T * c.mlp_hidden : 0);
  for (const auto& blk : w_->blocks) {
    std::copy(x.begin(), x.end(), h.begin());
    layers::layer_norm(h.data(), T, W, blk.ln1, c.eps);
    layers::linear(h.data(), T, blk.qkv, qkv.data());
    layers::self_attention(qkv.data(), B, L, lengths, W, c.heads, ctx.data());
    layers::linear(ctx.data(), T, blk.proj, tmp.data());
    if (!blk.ls1.empty()) scale_rows(tmp.data(), T, blk.ls1);
    layers::add_in_place(x.data(), tmp.data(), T * W);
    std::copy(x.begin(), x.end(), h.begin());
    layers::layer_norm(h.data(), T, W, blk.ln2, c.eps);
    layers::linear(h.data(), T, blk.fc1, ff.data());
    const float* inner = ff.data();
    if (c.glu) {
      // timm GluMlp (gate_last=False): act(first half) * second half.
      const size_t hid = c.mlp_hidden;
      for (size_t t = 0; t < T; ++t) {
        float* gate = ff.data() + t * 2 * hid;
        layers::activate(c.act, gate, hid);
        for (size_t i = 0; i < hid; ++i) gated[t * hid + i] = gate[i] * gate[hid + i];
      }
      inner = gated.data();
    } else {
      layers::activate(c.act, ff.data(), ff.size());
    }
    layers::linear(inner, T, blk.fc2, tmp.data());
    if (!blk.ls2.empty()) scale_rows(tmp.data(), T, blk.ls2);
    layers::add_in_place(x.data(), tmp.data(), T * W);
  }
  // The class token of each image, final LayerNorm (per row: same as on every token).
  std::vector<float> pooled(B * W);
  for (size_t b = 0; b < B; ++b) std::copy_n(x.data() + b * L * W, W, pooled.data() + b * W);
  layers::layer_norm(pooled.data(), B, W, w_->ln_post, c.eps);
  std::vector<std::vector<float>> out;
  const uint32_t D = output_dim();
  std::vector<float> projected(B * D);
  if (c.embed_dim) layers::linear(pooled.data(), B, w_->head, projected.data());
  else projected = pooled;
  for (size_t b = 0; b < B; ++b) out.emplace_back(projected.begin() + static_cast<std::ptrdiff_t>(b * D),
                                                  projected.begin() + static_cast<std::ptrdiff_t>((b + 1) * D));
  return out;
}

// ---- folders -------------------------------------------------------------------

namespace {

std::array<float, 3> triple(const json& j, const std::string& what, std::array<float, 3> fallback) {
  if (j.is_null()) return fallback;
  if (!j.is_array() || j.size() != 3) fail(ErrorCode::invalid_argument, what + " must be three numbers");
  return {j[0].get<float>(), j[1].get<float>(), j[2].get<float>()};
}

fs::path first_existing(const fs::path& folder, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (fs::exists(folder / n)) return folder / n;
  std::string list;
  for (const char* n : names) list += std::string(list.empty() ? "" : ", ") + n;
  fail(ErrorCode::not_found, folder.string() + " has none of " + list);
}

// timm's heads for its standard ViT names ("vit_base_patch16_224" -> 12): timm's
// model definitions, since a timm checkpoint does not record them.
// Sets cfg.heads (and the width it belongs to, checked at load) from timm's definition
// of the named model, unless `heads` (the configuration's own count) is given.
void timm_heads(const std::string& name, uint32_t heads, VitConfig& cfg) {
  if (heads) {
    cfg.heads = heads;
    return;
  }
  struct Named {
    const char* prefix;
    uint32_t width, heads;
  };
  static const Named kModels[] = {{"vit_tiny_", 192, 3},    {"vit_small_", 384, 6},  {"vit_base_", 768, 12},
                                  {"vit_large_", 1024, 16}, {"vit_huge_", 1280, 16}, {"vit_giant_", 1408, 16}};
  for (const auto& m : kModels)
    if (name.rfind(m.prefix, 0) == 0) {
      cfg.heads = m.heads;
      cfg.named_width = m.width;
      return;
    }
}

// timm's CLIP ViTs (vit_*_clip_*) use PyTorch's LayerNorm eps and, for OpenAI's
// weights, QuickGELU; its other ViTs eps 1e-6 and GELU.
void timm_norm_and_activation(const std::string& name, VitConfig& cfg) {
  cfg.eps = name.find("_clip_") != std::string::npos ? 1e-5f : 1e-6f;
  if (name.find("quickgelu") != std::string::npos) cfg.act = layers::Activation::quick_gelu;
}

layers::Activation activation_named(const std::string& name, const fs::path& file) {
  if (name == "gelu") return layers::Activation::gelu;
  if (name == "quick_gelu") return layers::Activation::quick_gelu;
  if (name == "silu" || name == "swish") return layers::Activation::silu;
  fail(ErrorCode::invalid_argument, file.string() + ": activation '" + name + "' is not supported (gelu, quick_gelu, silu)");
}

}  // namespace

ClipFolder ClipFolder::read(const fs::path& folder) {
  ClipFolder f;
  if (fs::exists(folder / "open_clip_config.json")) {
    const auto file = folder / "open_clip_config.json";
    const json j = layers::read_json_file(file);
    const json model = j.value("model_cfg", json::object());
    const json vision = model.value("vision_cfg", json::object());
    const json pre = j.value("preprocess_cfg", json::object());
    f.weights = first_existing(folder, {"open_clip_model.safetensors", "open_clip_pytorch_model.safetensors", "model.safetensors"});
    f.preprocess.mean = triple(pre.value("mean", json()), "preprocess_cfg.mean", f.preprocess.mean);
    f.preprocess.std = triple(pre.value("std", json()), "preprocess_cfg.std", f.preprocess.std);
    if (pre.value("interpolation", std::string("bicubic")) != "bicubic" || pre.value("resize_mode", std::string("shortest")) != "shortest")
      fail(ErrorCode::invalid_argument, file.string() + ": only bicubic interpolation and resize_mode shortest are supported");
    if (vision.contains("timm_model_name")) {
      const auto name = vision.at("timm_model_name").get<std::string>();
      f.layout = VitLayout::timm;
      f.vit_prefix = "visual.trunk.";
      timm_heads(name, vision.value("heads", 0u), f.vit);
      timm_norm_and_activation(name, f.vit);
      // OpenCLIP's CLIPVisionCfg defaults: timm_pool "avg", timm_proj "linear".
      if (vision.value("timm_pool", std::string("avg")) != "" || vision.value("timm_proj", std::string("linear")) != "linear")
        fail(ErrorCode::invalid_argument, file.string() + ": timm_pool must be \"\" (the class token) and timm_proj linear");
      f.describe = "openclip timm " + name;
    } else {
      f.layout = VitLayout::openclip;
      f.vit_prefix = "visual.";
      const uint32_t width = vision.value("width", 768u), head_width = vision.value("head_width", 64u);
      if (head_width == 0) fail(ErrorCode::invalid_argument, file.string() + ": head_width must be positive");
      f.vit.heads = vision.value("heads", width / head_width);
      if (vision.value("attentional_pool", false) || vision.value("global_average_pool", false) ||
          !(vision.value("pool_type", std::string("tok")) == "tok"))
        fail(ErrorCode::invalid_argument, file.string() + ": only class-token pooling is supported (pool_type tok)");
      f.vit.act = model.value("quick_gelu", false) ? layers::Activation::quick_gelu : layers::Activation::gelu;
      f.describe = "openclip vit";
    }
    f.vit.image_size = vision.value("image_size", 224u);
    f.preprocess.size = pre.contains("size") ? pre.at("size").get<uint32_t>() : f.vit.image_size;
    const json text = model.value("text_cfg", json::object());
    if (text.contains("heads")) f.text_heads = text.at("heads").get<uint32_t>();
    f.text_context_length = text.value("context_length", 0u);  // OpenCLIP's tokenizer truncates there
    // OpenCLIP's HFTextEncoder pools by hf_pooler_type, mean_pooler by default.
    const auto pooler = text.value("hf_pooler_type", std::string("mean_pooler"));
    if (pooler == "cls_last_hidden_state_pooler") f.text_pooling = Pooling::cls;
    else if (pooler == "mean_pooler") f.text_pooling = Pooling::mean;
    else fail(ErrorCode::invalid_argument, file.string() + ": hf_pooler_type '" + pooler + "' is not supported (cls_last_hidden_state_pooler, mean_pooler)");
    return f;
  }
  if (!fs::exists(folder / "config.json"))
    fail(ErrorCode::not_found, folder.string() + " has neither open_clip_config.json nor config.json: not a CLIP or ViT model folder");
  const auto file = folder / "config.json";
  const json j = layers::read_json_file(file);
  f.weights = first_existing(folder, {"model.safetensors"});
  if (j.contains("vision_config")) {
    const json v = j.at("vision_config");
    f.layout = VitLayout::hf;
    f.vit_prefix = "vision_model.";
    f.vit.heads = v.value("num_attention_heads", 12u);
    f.vit.eps = v.value("layer_norm_eps", 1e-5f);
    f.vit.act = activation_named(v.value("hidden_act", std::string("quick_gelu")), file);
    f.vit.image_size = v.value("image_size", 224u);
    f.preprocess.size = f.vit.image_size;
    f.preprocess.crop_floor = true;  // CLIPImageProcessor's center_crop
    if (fs::exists(folder / "preprocessor_config.json")) {
      const auto pfile = folder / "preprocessor_config.json";
      const json p = layers::read_json_file(pfile);
      f.preprocess.mean = triple(p.value("image_mean", json()), "image_mean", f.preprocess.mean);
      f.preprocess.std = triple(p.value("image_std", json()), "image_std", f.preprocess.std);
      const json crop = p.value("crop_size", json());
      if (crop.is_number()) f.preprocess.size = crop.get<uint32_t>();
      else if (crop.is_object()) f.preprocess.size = crop.value("height", f.preprocess.size);
      const json size = p.value("size", json());
      if (size.is_number()) f.preprocess.resize_to = size.get<uint32_t>();
      else if (size.is_object() && size.contains("shortest_edge")) f.preprocess.resize_to = size.at("shortest_edge").get<uint32_t>();
      else if (!size.is_null())
        fail(ErrorCode::invalid_argument, pfile.string() + ": only a shortest_edge resize is supported");
      if (!p.value("do_resize", true) || !p.value("do_center_crop", true) || p.value("resample", 3) != 3)
        fail(ErrorCode::invalid_argument, pfile.string() + ": only resize (bicubic, resample 3) then centre crop is supported");
    }
    f.describe = "hf clip";
    return f;
  }
  if (j.contains("architecture")) {
    const auto name = j.at("architecture").get<std::string>();
    const json args = j.value("model_args", json::object());
    const json pre = j.value("pretrained_cfg", json::object());
    f.layout = VitLayout::timm;
    f.vit_prefix = "";
    timm_heads(name, args.value("num_heads", 0u), f.vit);
    timm_norm_and_activation(name, f.vit);
    if (args.contains("act_layer")) f.vit.act = activation_named(args.at("act_layer").get<std::string>(), file);
    f.vit.image_size = args.value("img_size", 224u);
    // timm's ImageNet constants unless the checkpoint says otherwise.
    f.preprocess.mean = triple(pre.value("mean", json()), "pretrained_cfg.mean", {0.485f, 0.456f, 0.406f});
    f.preprocess.std = triple(pre.value("std", json()), "pretrained_cfg.std", {0.229f, 0.224f, 0.225f});
    f.preprocess.size = f.vit.image_size;
    if (pre.value("interpolation", std::string("bicubic")) != "bicubic")
      fail(ErrorCode::invalid_argument, file.string() + ": only bicubic interpolation is supported");
    // timm's eval transform: resize the shorter side to floor(size / crop_pct) (0.875
    // unless given), then the centre crop.
    const double crop_pct = pre.value("crop_pct", 0.875);
    if (!(crop_pct > 0.0 && crop_pct <= 1.0))
      fail(ErrorCode::invalid_argument, file.string() + ": crop_pct must be in (0, 1]");
    f.preprocess.resize_to = static_cast<uint32_t>(std::floor(f.vit.image_size / crop_pct));
    if (pre.value("crop_mode", std::string("center")) != "center")
      fail(ErrorCode::invalid_argument, file.string() + ": only crop_mode center is supported");
    f.describe = "timm " + name;
    return f;
  }
  fail(ErrorCode::invalid_argument, file.string() + " has neither \"vision_config\" (Hugging Face CLIP) nor \"architecture\" (timm)");
}

namespace {

// BiomedCLIP's text tower: BERT under `text.transformer.`, the [CLS] state, `text.proj`
// (one linear map, or Linear-GELU-Linear), all without bias.
struct TextTower {
  BertModel bert;
  std::vector<Linear> proj;

  static bool present(const SafeTensors& st) { return st.has("text.transformer.embeddings.word_embeddings.weight"); }

  static TextTower load(const SafeTensors& st, uint32_t heads) {
    const std::string p = "text.transformer.";
    BertConfig c;
    c.vocab_size = static_cast<uint32_t>(dim(st, p + "embeddings.word_embeddings.weight", 0));
    c.hidden = static_cast<uint32_t>(dim(st, p + "embeddings.word_embeddings.weight", 1));
    c.max_position = static_cast<uint32_t>(dim(st, p + "embeddings.position_embeddings.weight", 0));
    c.type_vocab = static_cast<uint32_t>(dim(st, p + "embeddings.token_type_embeddings.weight", 0));
    while (st.has(p + "encoder.layer." + std::to_string(c.layers) + ".attention.self.query.weight")) ++c.layers;
    c.intermediate = static_cast<uint32_t>(dim(st, p + "encoder.layer.0.intermediate.dense.weight", 0));
    c.heads = heads ? heads : c.hidden / 64;  // BERT's head width
    if (c.layers == 0 || c.heads == 0 || c.hidden % c.heads != 0)
      fail(ErrorCode::invalid_argument, "text tower: hidden size " + std::to_string(c.hidden) + " in " +
                                            std::to_string(c.heads) + " heads (text_cfg.heads) over " +
                                            std::to_string(c.layers) + " layers is not a BERT encoder");
    TextTower t{BertModel::from_tensors(c, st, p), {}};
    auto add = [&](const std::string& base) {
      const auto& s = st.info(base + ".weight").shape;
      const uint32_t in = t.proj.empty() ? c.hidden : t.proj.back().out;
      if (s.size() != 2 || s[1] != in || s[0] <= 0)
        fail(ErrorCode::invalid_argument, base + ".weight must be [out, " + std::to_string(in) + "]");
      auto l = read_linear(st, base, static_cast<uint32_t>(s[0]), static_cast<uint32_t>(s[1]), st.has(base + ".bias"));
      l.prepare();
      t.proj.push_back(std::move(l));
    };
    if (st.has("text.proj.weight")) add("text.proj");
    else if (st.has("text.proj.0.weight") && st.has("text.proj.2.weight")) {
      add("text.proj.0");
      add("text.proj.2");
    } else fail(ErrorCode::invalid_argument, "the text tower has no projection (text.proj)");
    return t;
  }

  Pooling pooling = Pooling::cls;

  std::vector<std::vector<float>> embed(const std::vector<std::vector<int32_t>>& ids) const {
    const std::vector<std::vector<int32_t>> types(ids.size());
    auto cls = bert.embed(ids, types, pooling, false);
    for (auto& v : cls) {
      for (size_t i = 0; i < proj.size(); ++i) {
        std::vector<float> out(proj[i].out);
        layers::linear(v.data(), 1, proj[i], out.data());
        if (i + 1 < proj.size()) layers::activate(layers::Activation::gelu, out.data(), out.size());
        v = std::move(out);
      }
    }
    return cls;
  }
};

class ClipEncoder : public Encoder {
 public:
  ClipEncoder(std::string label, const fs::path& folder, ClipOptions opts)
      : opts_(std::move(opts)), folder_(ClipFolder::read(folder)) {
    auto st = SafeTensors::open(folder_.weights);
    vit_ = std::make_unique<VitModel>(VitModel::load(st, folder_.layout, folder_.vit_prefix, folder_.vit));
    if (folder_.preprocess.size != vit_->config().image_size)
      fail(ErrorCode::invalid_argument, folder.string() + ": preprocessing makes " + std::to_string(folder_.preprocess.size) +
                                            " px images but the ViT takes " + std::to_string(vit_->config().image_size));
    if (TextTower::present(st)) {
      text_ = std::make_unique<TextTower>(TextTower::load(st, folder_.text_heads));
      text_->pooling = folder_.text_pooling;
      if (text_->proj.back().out != vit_->output_dim())
        fail(ErrorCode::invalid_argument, folder.string() + ": the text tower projects to " +
                                              std::to_string(text_->proj.back().out) + " dimensions, the image tower to " +
                                              std::to_string(vit_->output_dim()));
      tokenizer_ = std::make_unique<text::WordPieceTokenizer>(
          text::WordPieceTokenizer::from_vocab_file(folder / "vocab.txt", {opts_.lowercase}));
      opts_.max_length = std::min<size_t>(opts_.max_length, text_->bert.config().max_position);
      if (folder_.text_context_length) opts_.max_length = std::min<size_t>(opts_.max_length, folder_.text_context_length);
    }
    info_.label = std::move(label);
    info_.implementation = "clip";
    info_.dim = vit_->output_dim();
    // Seed §6.2: the visual collection compares by inner product; on L2-normalised
    // embeddings that is CLIP's cosine.
    info_.metric = opts_.l2 ? Metric::ip : Metric::cosine;
    info_.modality = Modality::image;
    info_.embeds_text = text_ != nullptr;
    info_.max_batch = opts_.batch_size;
  }
  const EncoderInfo& info() const override { return info_; }

  std::vector<Embedding> encode(const std::vector<std::string>& inputs, EncodeMode) override {
    if (!text_)
      fail(ErrorCode::invalid_argument, "encoder '" + info_.label + "' (" + folder_.describe +
                                            ") has no text tower: it embeds images only");
    std::vector<Embedding> out;
    for (size_t start = 0; start < inputs.size(); start += opts_.batch_size) {
      std::vector<std::vector<int32_t>> ids;
      for (size_t i = start; i < std::min(inputs.size(), start + opts_.batch_size); ++i)
        ids.push_back(tokenizer_->encode(inputs[i], opts_.max_length).ids);
      for (auto& v : text_->embed(ids)) out.push_back(finish(std::move(v)));
    }
    return out;
  }

  std::vector<Embedding> encode_images(const std::vector<std::string_view>& images) override {
    std::vector<Embedding> out;
    for (size_t start = 0; start < images.size(); start += opts_.batch_size) {
      std::vector<std::vector<float>> batch;
      for (size_t i = start; i < std::min(images.size(), start + opts_.batch_size); ++i) {
        const auto rgb = ingest::decode_image(images[i], "image " + std::to_string(i + 1), opts_.limits);
        batch.push_back(preprocess(rgb, folder_.preprocess));
      }
      for (auto& v : vit_->embed(batch)) out.push_back(finish(std::move(v)));
    }
    return out;
  }

 private:
  Embedding finish(std::vector<float> v) const {
    if (opts_.l2) layers::l2_normalize(v);
    return v;
  }
  ClipOptions opts_;
  ClipFolder folder_;
  EncoderInfo info_;
  std::unique_ptr<VitModel> vit_;
  std::unique_ptr<TextTower> text_;
  std::unique_ptr<text::WordPieceTokenizer> tokenizer_;
};

}  // namespace

std::unique_ptr<Encoder> make_clip_encoder(std::string label, const fs::path& folder, ClipOptions options) {
  return std::make_unique<ClipEncoder>(std::move(label), folder, std::move(options));
}

}  // namespace eagle::encode::clip
