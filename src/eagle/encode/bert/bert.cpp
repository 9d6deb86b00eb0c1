#include "eagle/encode/bert/bert.h"
#include "eagle/encode/bert/kernels.h"
#include "eagle/encode/bert/layers.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>

#include "eagle/core/error.h"
#include "eagle/encode/safetensors.h"

namespace eagle::encode {
namespace fs = std::filesystem;
using nlohmann::json;

using layers::Linear;
using layers::Norm;

struct Layer {
  Linear qkv;  // query, key and value stacked: one GEMM instead of three
  Linear attn_out;
  Norm ln_attn;
  Linear ff_in, ff_out;
  Norm ln_ff;
};
struct BertWeights {
  std::vector<float> word, position, type;
  Norm ln_emb;
  std::vector<Layer> layers;
  bool has_pooler = false, has_classifier = false;
  Linear pooler, classifier;
};

namespace {

using layers::add_in_place;
using layers::layer_norm;
using layers::linear;

// Weights in the layout the kernels read, once per model.
void prepare(BertWeights& w) {
  for (auto& L : w.layers)
    for (Linear* l : {&L.qkv, &L.attn_out, &L.ff_in, &L.ff_out}) l->prepare();
  if (w.has_pooler) w.pooler.prepare();
  if (w.has_classifier) w.classifier.prepare();
}

struct TensorSource {
  const SafeTensors& st;
  std::string prefix;  // "" or "bert."
  std::vector<float> get(const std::string& name, const std::vector<int64_t>& shape) const {
    return st.read(prefix + name, shape);
  }
  // LayerNorm parameters are "weight"/"bias" in recent checkpoints, "gamma"/"beta" in old ones.
  Norm norm(const std::string& base, uint32_t h) const { return layers::read_norm(st, prefix + base, h); }
  Linear lin(const std::string& base, uint32_t out, uint32_t in) const {
    return layers::read_linear(st, prefix + base, out, in);
  }
};

uint32_t cfg_u32(const json& j, const char* key, uint32_t fallback, bool required) {
  if (!j.contains(key)) {
    if (required) fail(ErrorCode::invalid_argument, std::string("config.json has no \"") + key + "\"");
    return fallback;
  }
  return j.at(key).get<uint32_t>();
}

}  // namespace

BertConfig BertConfig::from_json_file(const fs::path& file) {
  const json j = layers::read_json_file(file);
  BertConfig c;
  c.vocab_size = cfg_u32(j, "vocab_size", 0, true);
  c.hidden = cfg_u32(j, "hidden_size", 0, true);
  c.layers = cfg_u32(j, "num_hidden_layers", 0, true);
  c.heads = cfg_u32(j, "num_attention_heads", 0, true);
  c.intermediate = cfg_u32(j, "intermediate_size", 0, true);
  c.max_position = cfg_u32(j, "max_position_embeddings", 512, false);
  c.type_vocab = cfg_u32(j, "type_vocab_size", 2, false);
  c.layer_norm_eps = j.value("layer_norm_eps", 1e-12f);
  const std::string act = j.value("hidden_act", std::string("gelu"));
  if (act != "gelu") fail(ErrorCode::invalid_argument, file.string() + ": hidden_act '" + act + "' is not supported (gelu only)");
  if (c.heads == 0 || c.hidden % c.heads != 0)
    fail(ErrorCode::invalid_argument, file.string() + ": hidden_size must be a multiple of num_attention_heads");
  return c;
}

BertModel::BertModel(BertModel&&) noexcept = default;
BertModel& BertModel::operator=(BertModel&&) noexcept = default;
BertModel::~BertModel() = default;

bool BertModel::has_classifier() const { return w_->has_classifier; }

BertModel BertModel::load(const fs::path& folder) {
  const auto cfg = BertConfig::from_json_file(folder / "config.json");
  fs::path weights = folder / "model.safetensors";
  if (!fs::exists(weights) && fs::exists(folder / "model.safetensors.index.json"))
    weights = folder / "model.safetensors.index.json";
  if (!fs::exists(weights))
    fail(ErrorCode::not_found, folder.string() + " has no model.safetensors (or model.safetensors.index.json)");
  auto st = SafeTensors::open(weights);
  return from_tensors(cfg, st, st.has("bert.embeddings.word_embeddings.weight") ? "bert." : "");
}

BertModel BertModel::from_tensors(const BertConfig& cfg, const SafeTensors& st, const std::string& prefix) {
  BertModel m;
  m.cfg_ = cfg;
  TensorSource src{st, prefix};
  const auto& c = m.cfg_;
  const uint32_t h = c.hidden;
  auto w = std::make_unique<BertWeights>();
  w->word = src.get("embeddings.word_embeddings.weight", {c.vocab_size, h});
  w->position = src.get("embeddings.position_embeddings.weight", {c.max_position, h});
  w->type = src.get("embeddings.token_type_embeddings.weight", {c.type_vocab, h});
  w->ln_emb = src.norm("embeddings.LayerNorm", h);
  for (uint32_t i = 0; i < c.layers; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i) + ".";
    Layer L;
    auto q = src.lin(p + "attention.self.query", h, h);
    auto k = src.lin(p + "attention.self.key", h, h);
    auto v = src.lin(p + "attention.self.value", h, h);
    L.qkv.in = h;
    L.qkv.out = 3 * h;
    for (auto* part : {&q, &k, &v}) {
      L.qkv.w.insert(L.qkv.w.end(), part->w.begin(), part->w.end());
      L.qkv.b.insert(L.qkv.b.end(), part->b.begin(), part->b.end());
    }
    L.attn_out = src.lin(p + "attention.output.dense", h, h);
    L.ln_attn = src.norm(p + "attention.output.LayerNorm", h);
    L.ff_in = src.lin(p + "intermediate.dense", c.intermediate, h);
    L.ff_out = src.lin(p + "output.dense", h, c.intermediate);
    L.ln_ff = src.norm(p + "output.LayerNorm", h);
    w->layers.push_back(std::move(L));
  }
  if (st.has(src.prefix + "pooler.dense.weight")) {
    w->has_pooler = true;
    w->pooler = src.lin("pooler.dense", h, h);
  }
  if ((prefix.empty() || prefix == "bert.") && st.has("classifier.weight")) {
    TensorSource top{st, ""};
    const auto& ci = st.info("classifier.weight");
    if (ci.shape.size() != 2 || ci.shape[1] != h)
      fail(ErrorCode::invalid_argument, "classifier.weight must be [num_labels, hidden]");
    w->has_classifier = true;
    w->classifier = top.lin("classifier", static_cast<uint32_t>(ci.shape[0]), h);
  }
  prepare(*w);
  m.w_ = std::move(w);
  return m;
}

BertModel BertModel::random(const BertConfig& c, bool classifier, uint64_t seed) {
  layers::RandomWeights random(seed);
  auto fill = [&](size_t n) { return random.fill(n); };
  auto lin = [&](uint32_t out, uint32_t in) { return random.linear(out, in); };
  auto norm = &layers::RandomWeights::norm;
  BertModel m;
  m.cfg_ = c;
  auto w = std::make_unique<BertWeights>();
  const uint32_t h = c.hidden;
  w->word = fill(static_cast<size_t>(c.vocab_size) * h);
  w->position = fill(static_cast<size_t>(c.max_position) * h);
  w->type = fill(static_cast<size_t>(c.type_vocab) * h);
  w->ln_emb = norm(h);
  for (uint32_t i = 0; i < c.layers; ++i)
    w->layers.push_back({lin(3 * h, h), lin(h, h), norm(h), lin(c.intermediate, h), lin(h, c.intermediate), norm(h)});
  w->has_pooler = classifier;
  w->has_classifier = classifier;
  if (classifier) {
    w->pooler = lin(h, h);
    w->classifier = lin(1, h);
  }
  prepare(*w);
  m.w_ = std::move(w);
  return m;
}

std::vector<float> BertModel::forward(const std::vector<std::vector<int32_t>>& ids,
                                      const std::vector<std::vector<int32_t>>& type_ids, size_t& padded) const {
  const auto& c = cfg_;
  const size_t B = ids.size();
  const uint32_t H = c.hidden, heads = c.heads;
  padded = 0;
  for (const auto& s : ids) padded = std::max(padded, s.size());
  if (B == 0 || padded == 0) return {};
  if (padded > c.max_position)
    fail(ErrorCode::invalid_argument, "sequence of " + std::to_string(padded) + " tokens exceeds max_position_embeddings " +
                                          std::to_string(c.max_position));
  const size_t L = padded, T = B * L;
  std::vector<float> x(T * H, 0.0f);
  for (size_t b = 0; b < B; ++b) {
    for (size_t p = 0; p < L; ++p) {
      const int32_t id = p < ids[b].size() ? ids[b][p] : 0;
      const int32_t tt = p < ids[b].size() && b < type_ids.size() && p < type_ids[b].size() ? type_ids[b][p] : 0;
      if (id < 0 || static_cast<uint32_t>(id) >= c.vocab_size)
        fail(ErrorCode::invalid_argument, "token id " + std::to_string(id) + " outside the vocabulary");
      if (tt < 0 || static_cast<uint32_t>(tt) >= c.type_vocab)
        fail(ErrorCode::invalid_argument, "token type id " + std::to_string(tt) + " out of range");
      float* row = x.data() + (b * L + p) * H;
      const float* we = w_->word.data() + static_cast<size_t>(id) * H;
      const float* pe = w_->position.data() + p * H;
      const float* te = w_->type.data() + static_cast<size_t>(tt) * H;
      for (uint32_t i = 0; i < H; ++i) row[i] = we[i] + pe[i] + te[i];
    }
  }
  layer_norm(x.data(), T, H, w_->ln_emb, c.layer_norm_eps);

  std::vector<float> qkv(T * 3 * H), ctx(T * H), tmp(T * H), ff(T * c.intermediate);
  std::vector<size_t> lengths;
  for (const auto& s : ids) lengths.push_back(s.size());
  for (const auto& layer : w_->layers) {
    linear(x.data(), T, layer.qkv, qkv.data());
    layers::self_attention(qkv.data(), B, L, lengths, H, heads, ctx.data());
    linear(ctx.data(), T, layer.attn_out, tmp.data());
    add_in_place(x.data(), tmp.data(), T * H);
    layer_norm(x.data(), T, H, layer.ln_attn, c.layer_norm_eps);
    linear(x.data(), T, layer.ff_in, ff.data());
    layers::activate(layers::Activation::gelu, ff.data(), ff.size());
    linear(ff.data(), T, layer.ff_out, tmp.data());
    add_in_place(x.data(), tmp.data(), T * H);
    layer_norm(x.data(), T, H, layer.ln_ff, c.layer_norm_eps);
  }
  return x;
}

std::vector<std::vector<float>> BertModel::embed(const std::vector<std::vector<int32_t>>& ids,
                                                 const std::vector<std::vector<int32_t>>& type_ids, Pooling pooling,
                                                 bool l2) const {
  size_t L = 0;
  auto x = forward(ids, type_ids, L);
  const uint32_t H = cfg_.hidden;
  std::vector<std::vector<float>> out;
  for (size_t b = 0; b < ids.size(); ++b) {
    std::vector<float> v(H, 0.0f);
    const float* base = x.data() + b * L * H;
    if (pooling == Pooling::cls) {
      std::copy(base, base + H, v.begin());
    } else {
      const size_t len = ids[b].size();
      for (size_t p = 0; p < len; ++p)
        for (uint32_t i = 0; i < H; ++i) v[i] += base[p * H + i];
      for (auto& f : v) f /= static_cast<float>(std::max<size_t>(len, 1));
    }
    if (l2) layers::l2_normalize(v);
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<float> BertModel::classify(const std::vector<std::vector<int32_t>>& ids,
                                       const std::vector<std::vector<int32_t>>& type_ids) const {
  if (!w_->has_classifier || !w_->has_pooler)
    fail(ErrorCode::invalid_argument, "this model has no sequence-classification head (pooler + classifier)");
  size_t L = 0;
  auto x = forward(ids, type_ids, L);
  const uint32_t H = cfg_.hidden;
  std::vector<float> cls(ids.size() * H), pooled(ids.size() * H), logits(ids.size() * w_->classifier.out);
  for (size_t b = 0; b < ids.size(); ++b) std::copy_n(x.data() + b * L * H, H, cls.data() + b * H);
  linear(cls.data(), ids.size(), w_->pooler, pooled.data());
  for (auto& f : pooled) f = std::tanh(f);
  linear(pooled.data(), ids.size(), w_->classifier, logits.data());
  std::vector<float> out;
  for (size_t b = 0; b < ids.size(); ++b) out.push_back(logits[b * w_->classifier.out]);
  return out;
}

void set_bert_threads(int threads) { kernels::set_threads(threads); }

namespace {

// Length bucketing: runs `run(ids, types)` on batches of inputs sorted by token
// count (so each batch pads to a similar length) and scatters each batch's results
// back to the inputs' positions in `out`.
template <typename Out, typename Run>
void run_length_batches(const std::vector<text::Encoding>& enc, size_t batch_size, std::vector<Out>& out, Run run) {
  std::vector<size_t> order(enc.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return enc[a].ids.size() < enc[b].ids.size(); });
  out.resize(enc.size());
  for (size_t start = 0; start < order.size(); start += batch_size) {
    std::vector<std::vector<int32_t>> ids, types;
    const size_t end = std::min(order.size(), start + batch_size);
    for (size_t i = start; i < end; ++i) {
      ids.push_back(enc[order[i]].ids);
      types.push_back(enc[order[i]].type_ids);
    }
    auto results = run(ids, types);
    for (size_t i = start; i < end; ++i) out[order[i]] = std::move(results[i - start]);
  }
}

class BertEncoder : public Encoder {
 public:
  BertEncoder(std::string label, const fs::path& folder, BertEncoderOptions opts)
      : opts_(std::move(opts)),
        doc_model_(BertModel::load(folder)),
        tokenizer_(text::WordPieceTokenizer::from_vocab_file(folder / "vocab.txt", {opts_.lowercase})) {
    if (!opts_.query_folder.empty()) query_model_ = std::make_unique<BertModel>(BertModel::load(opts_.query_folder));
    info_.label = std::move(label);
    info_.implementation = "bert";
    info_.dim = doc_model_.config().hidden;
    info_.asymmetric = query_model_ != nullptr;
    info_.max_batch = opts_.batch_size;
    opts_.max_length = std::min<size_t>(opts_.max_length, doc_model_.config().max_position);
  }
  const EncoderInfo& info() const override { return info_; }
  std::vector<Embedding> encode(const std::vector<std::string>& inputs, EncodeMode mode) override {
    const BertModel& model = mode == EncodeMode::query && query_model_ ? *query_model_ : doc_model_;
    std::vector<text::Encoding> enc;
    for (const auto& s : inputs) enc.push_back(tokenizer_.encode(s, opts_.max_length));
    std::vector<Embedding> out;
    run_length_batches(enc, opts_.batch_size, out, [&](const auto& ids, const auto& types) {
      return model.embed(ids, types, opts_.pooling, opts_.l2);
    });
    return out;
  }

 private:
  BertEncoderOptions opts_;
  EncoderInfo info_;
  BertModel doc_model_;
  std::unique_ptr<BertModel> query_model_;
  text::WordPieceTokenizer tokenizer_;
};

class BertCrossEncoder : public Reranker {
 public:
  BertCrossEncoder(std::string label, const fs::path& folder, BertEncoderOptions opts)
      : label_(std::move(label)),
        opts_(std::move(opts)),
        model_(BertModel::load(folder)),
        tokenizer_(text::WordPieceTokenizer::from_vocab_file(folder / "vocab.txt", {opts_.lowercase})) {
    if (!model_.has_classifier())
      fail(ErrorCode::invalid_argument, folder.string() + " has no classifier head: not a cross-encoder");
    opts_.max_length = std::min<size_t>(opts_.max_length, model_.config().max_position);
  }
  const std::string& label() const override { return label_; }
  std::vector<float> score(const std::string& query, const std::vector<std::string>& docs) override {
    std::vector<text::Encoding> enc;
    for (const auto& d : docs) enc.push_back(tokenizer_.encode_pair(query, d, opts_.max_length));
    std::vector<float> out;
    run_length_batches(enc, opts_.batch_size, out,
                       [&](const auto& ids, const auto& types) { return model_.classify(ids, types); });
    return out;
  }

 private:
  std::string label_;
  BertEncoderOptions opts_;
  BertModel model_;
  text::WordPieceTokenizer tokenizer_;
};

}  // namespace

std::unique_ptr<Encoder> make_bert_encoder(std::string label, const fs::path& folder, BertEncoderOptions opts) {
  return std::make_unique<BertEncoder>(std::move(label), folder, std::move(opts));
}

std::unique_ptr<Reranker> make_bert_cross_encoder(std::string label, const fs::path& folder,
                                                  BertEncoderOptions opts) {
  return std::make_unique<BertCrossEncoder>(std::move(label), folder, std::move(opts));
}

}  // namespace eagle::encode
