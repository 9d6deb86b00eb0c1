#pragma once
// Encoders and rerankers behind one registry. Collections and query
// plans name encoders by label (the seed's slots: pubmedbert, medcpt-query,
// medcpt-article, medcpt-rerank, molformer, text-embedding-v4, qwen3-rerank, ...);
// configuration maps each label to an implementation.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "eagle/core/schema.h"

namespace eagle::encode {

enum class Modality : uint8_t { text, image, molecule };
enum class EncodeMode : uint8_t { query, document };  // asymmetric encoders differ (MedCPT)

struct EncoderInfo {
  std::string label;
  std::string implementation;  // "static", "bert", "openai", "tei", ...
  uint32_t dim = 0;
  Metric metric = Metric::cosine;
  Modality modality = Modality::text;
  bool asymmetric = false;
  size_t max_batch = 64;
  // An image encoder that also embeds text into its space (CLIP-style, Qwen3-VL):
  // a text query then reaches image rows by its vector. The embedded descriptor does
  // not (a text query reaches its rows through their captions, the lexical leg).
  bool embeds_text = true;
  // What makes this encoder's vectors, recorded by a collection it fills: "key=value"
  // fields (type, model path or remote model, a fingerprint of local weights or
  // vocabulary, pooling, dim, metric; see identified()). Two encoders whose vectors
  // compare have the same identity. Empty: not known.
  std::string identity;
};

using Embedding = std::vector<float>;

class Encoder {
 public:
  virtual ~Encoder() = default;
  virtual const EncoderInfo& info() const = 0;
  // One embedding per input, each of info().dim floats. Throws eagle::Error.
  virtual std::vector<Embedding> encode(const std::vector<std::string>& inputs, EncodeMode mode) = 0;
  // One embedding per image (PNG or JPEG bytes) for an encoder of Modality::image;
  // every other encoder refuses (invalid_argument naming its label).
  virtual std::vector<Embedding> encode_images(const std::vector<std::string_view>& images);
};

class Reranker {
 public:
  virtual ~Reranker() = default;
  virtual const std::string& label() const = 0;
  // One relevance score per document, in the documents' order (higher = better).
  virtual std::vector<float> score(const std::string& query, const std::vector<std::string>& documents) = 0;
};

// `inner` with info().identity = `fields` + " dim=D metric=M" (from inner's info). The
// configuration knows what made an encoder (its type, path, model, pooling); the
// encoder itself need not.
std::unique_ptr<Encoder> identified(std::unique_ptr<Encoder> inner, const std::string& fields);

// A fingerprint of a model file, or of the files of a model folder (sorted by name):
// FNV-1a 64 over each file's name, size and first and last MiB, as 16 hex digits.
// Cheap on a 400 MB weights file, and a different file gives a different value.
std::string model_fingerprint(const std::string& path);

// The fields of two identities that differ ("dim: 100 -> 768, type: static -> bert"),
// for the message that refuses a changed encoder.
std::string identity_changes(const std::string& recorded, const std::string& current);
// Whether two identities make the same vectors: equal, or the same model file
// (fingerprint) found at another path. An empty identity matches anything (not recorded).
bool same_identity(const std::string& recorded, const std::string& current);

// Refuses (conflict) a query or write through `encoder` on a collection whose vectors
// another encoder made: the recorded identity differs from encoder's. The message
// names what changed and the ways out. A collection without a recorded
// identity passes (nothing to compare).
void check_encoder_identity(const CollectionSchema& schema, const Encoder& encoder);

class EncoderRegistry {
 public:
  void add(std::unique_ptr<Encoder> encoder);
  void add(std::unique_ptr<Reranker> reranker);
  bool has_encoder(std::string_view label) const;
  bool has_reranker(std::string_view label) const;
  // not_found naming the label and the labels that exist.
  Encoder& encoder(std::string_view label) const;
  Reranker& reranker(std::string_view label) const;
  std::vector<std::string> labels() const;
  // Checks at start-up that every label a collection or plan refers to exists, so
  // a missing slot is a configuration error, not a failure at the first query.
  void require(const std::vector<std::string>& labels) const;

 private:
  std::map<std::string, std::unique_ptr<Encoder>, std::less<>> encoders_;
  std::map<std::string, std::unique_ptr<Reranker>, std::less<>> rerankers_;
};

}  // namespace eagle::encode
