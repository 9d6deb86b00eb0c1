#pragma once
// Native BERT runtime: loads a Hugging Face model folder (config.json,
// vocab.txt, model.safetensors or a sharded index) and runs the encoder forward pass
// on BLAS in fp32: embeddings (word + position + token type) with LayerNorm, then per
// layer multi-head self-attention with the padding mask, output projection, residual
// and LayerNorm, the GELU feed-forward, residual and LayerNorm. Pooling is CLS or
// masked mean, optionally L2-normalised; a sequence-classification head (pooler +
// classifier, one logit) serves cross-encoders such as MedCPT-Cross-Encoder and
// ms-marco MiniLM. Parity with a PyTorch reference is tested on committed fixtures.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "eagle/encode/encoder.h"
#include "eagle/encode/safetensors.h"
#include "eagle/text/wordpiece.h"

namespace eagle::encode {

struct BertConfig {
  uint32_t vocab_size = 0;
  uint32_t hidden = 0;
  uint32_t layers = 0;
  uint32_t heads = 0;
  uint32_t intermediate = 0;
  uint32_t max_position = 512;
  uint32_t type_vocab = 2;
  float layer_norm_eps = 1e-12f;
  static BertConfig from_json_file(const std::filesystem::path& file);
};

enum class Pooling : uint8_t { cls, mean };

// Weights of one encoder (random ones can be made for benchmarks and tests).
struct BertWeights;

class BertModel {
 public:
  // Reads config.json and the safetensors weights of `folder`; tensor names may
  // carry a "bert." prefix (as in BertForSequenceClassification checkpoints).
  static BertModel load(const std::filesystem::path& folder);
  // The encoder whose tensors are named `prefix` + HF's names in `st` (a tower inside
  // a larger checkpoint, e.g. BiomedCLIP's "text.transformer."); a classifier head is
  // looked for only at the top level (prefix "" or "bert.").
  static BertModel from_tensors(const BertConfig& cfg, const SafeTensors& st, const std::string& prefix);
  // Random weights with the given shapes (benchmarks): N(0, 0.02) like HF's init.
  static BertModel random(const BertConfig& cfg, bool classifier, uint64_t seed);
  BertModel(BertModel&&) noexcept;
  BertModel& operator=(BertModel&&) noexcept;
  ~BertModel();

  const BertConfig& config() const { return cfg_; }
  bool has_classifier() const;

  // Token ids of a batch (each row its own length; padded internally) -> the last
  // hidden states, row-major [batch][max_len][hidden], and the padded length.
  std::vector<float> forward(const std::vector<std::vector<int32_t>>& ids,
                             const std::vector<std::vector<int32_t>>& type_ids, size_t& padded_len) const;
  // Pooled embeddings, one per sequence.
  std::vector<std::vector<float>> embed(const std::vector<std::vector<int32_t>>& ids,
                                        const std::vector<std::vector<int32_t>>& type_ids, Pooling pooling,
                                        bool l2) const;
  // Cross-encoder logits (first logit of the classifier), one per sequence.
  std::vector<float> classify(const std::vector<std::vector<int32_t>>& ids,
                              const std::vector<std::vector<int32_t>>& type_ids) const;

 private:
  BertModel() = default;
  BertConfig cfg_;
  std::unique_ptr<BertWeights> w_;
};

// Sets BLAS threads for the runtime (0 = leave OpenBLAS's default).
void set_bert_threads(int threads);

struct BertEncoderOptions {
  Pooling pooling = Pooling::cls;
  bool l2 = true;
  size_t max_length = 512;
  size_t batch_size = 32;
  bool lowercase = true;
  // Asymmetric encoders (MedCPT): a separate model folder for queries; empty = same.
  std::filesystem::path query_folder;
};

// An Encoder over a model folder; batches are formed from length-sorted inputs so
// padding stays small (length bucketing).
std::unique_ptr<Encoder> make_bert_encoder(std::string label, const std::filesystem::path& folder,
                                           BertEncoderOptions opts = {});
std::unique_ptr<Reranker> make_bert_cross_encoder(std::string label, const std::filesystem::path& folder,
                                                  BertEncoderOptions opts = {});

}  // namespace eagle::encode
