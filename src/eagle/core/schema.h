#pragma once
// Collection schemas: one vector field, one text field, typed scalar fields.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "eagle/core/value.h"

namespace eagle {

// tanimoto: Jaccard over non-negative vectors (chemical fingerprints as 0/1 floats),
// dot / (|a|^2 + |b|^2 - dot); flat (exact) indexes only.
enum class Metric : uint8_t { cosine, ip, l2, tanimoto };
std::string_view metric_name(Metric m);
Metric parse_metric(std::string_view name);  // COSINE / IP / L2, any case

enum class VectorIndexKind : uint8_t { flat, hnsw };

struct HnswParams {
  uint32_t m = 16;                 // links per node above layer 0 (2*M on layer 0)
  uint32_t ef_construction = 256;
  uint32_t ef_search = 64;         // default beam at query time; per-query override
};

struct VectorFieldSchema {
  std::string name = "vector";
  uint32_t dim = 0;
  Metric metric = Metric::cosine;
  VectorIndexKind index = VectorIndexKind::hnsw;
  HnswParams hnsw;
  // The encoder label that produced the vectors (empty: unknown). Query plans that
  // name another label for this collection are refused: the vectors would not compare.
  std::string encoder;
  // What made them (encode::EncoderInfo::identity: type, model, fingerprint, pooling,
  // dim): a label configured later as something else is refused. Empty: not recorded
  // (a collection made before identities were).
  std::string encoder_identity;
};

struct FieldSchema {
  std::string name;
  FieldType type = FieldType::string;
  bool indexed = false;  // keep a scalar inverted index (filters use it for bitsets)
};

struct CollectionSchema {
  std::string name;
  VectorFieldSchema vector;
  std::string text_field = "text";  // indexed by the lexical engine
  // BM25's length normalisation b for this collection's text (0..1); unset: the
  // store's bm25.b. The visual collection sets it (visual.bm25_b).
  std::optional<double> text_length_norm;
  std::vector<FieldSchema> fields;  // scalar fields; the id field is implicit ("id", string)

  // Index of a scalar field by name, or nullopt.
  std::optional<size_t> field_index(std::string_view name) const;
  // Throws eagle::Error (invalid_argument) naming the problem.
  void validate() const;

  nlohmann::json to_json() const;
  static CollectionSchema from_json(const nlohmann::json& j);  // validates
};

// The chunk schema of SPEC.md: every chunk field, with inverted indexes on
// kb_name, document_id, source_type, year, chunk_type, parent_section, type; then
// `extra`, the fields the build's plugins stamp on chunks (plugin/plugin.h).
CollectionSchema chunk_schema(std::string name, uint32_t dim, Metric metric = Metric::cosine,
                              const std::vector<FieldSchema>& extra = {});

// The visual collection's schema (eagle_visual, seed retrieval.txt §6.2): the chunk
// fields (so one scope or filter applies to both kinds of rows) plus an image tile's
// `position` ("x0,y0,x1,y1" normalised), `image` (its name in the image store),
// `width` and `height` in pixels. The row id is the ImageNode's image_id. Its text
// is fully length-normalised (text_length_norm = 1): tiles mix whole pages (hundreds
// of words) with captions (a dozen), and a caption holding every word of a question
// must beat a page that mentions them among much else (the caller may override it).
CollectionSchema visual_schema(std::string name, uint32_t dim, Metric metric = Metric::ip,
                               const std::vector<FieldSchema>& extra = {});

// Collection names are used as folder names: [A-Za-z0-9_-], 1..64 characters.
bool valid_collection_name(std::string_view name);

}  // namespace eagle
