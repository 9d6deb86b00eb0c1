#include "eagle/core/schema.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "eagle/core/error.h"

namespace eagle {

std::string_view metric_name(Metric m) {
  switch (m) {
    case Metric::cosine: return "COSINE";
    case Metric::ip: return "IP";
    case Metric::l2: return "L2";
    case Metric::tanimoto: return "TANIMOTO";
  }
  return "?";
}

Metric parse_metric(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::toupper(c); });
  if (n == "COSINE") return Metric::cosine;
  if (n == "IP") return Metric::ip;
  if (n == "L2") return Metric::l2;
  if (n == "TANIMOTO" || n == "JACCARD") return Metric::tanimoto;
  fail(ErrorCode::invalid_argument,
       "unknown metric '" + std::string(name) + "': expected COSINE, IP, L2 or TANIMOTO");
}

bool valid_collection_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '-'; });
}

std::optional<size_t> CollectionSchema::field_index(std::string_view n) const {
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i].name == n) return i;
  return std::nullopt;
}

void CollectionSchema::validate() const {
  if (!valid_collection_name(name))
    fail(ErrorCode::invalid_argument,
         "collection name '" + name + "' must be 1-64 characters of letters, digits, '_' or '-'");
  if (vector.dim == 0 || vector.dim > 65536)
    fail(ErrorCode::invalid_argument, "vector dimension must be in [1, 65536]");
  if (text_length_norm && !(*text_length_norm >= 0 && *text_length_norm <= 1))
    fail(ErrorCode::invalid_argument, "text_length_norm must be in [0, 1]");
  if (vector.metric == Metric::tanimoto && vector.index != VectorIndexKind::flat)
    fail(ErrorCode::invalid_argument, "the TANIMOTO metric needs a flat (exact) index");
  if (vector.hnsw.m < 2 || vector.hnsw.m > 256) fail(ErrorCode::invalid_argument, "hnsw.m must be in [2, 256]");
  if (vector.hnsw.ef_construction < 1 || vector.hnsw.ef_construction > 4096)
    fail(ErrorCode::invalid_argument, "hnsw.ef_construction must be in [1, 4096]");
  if (vector.hnsw.ef_search < 1 || vector.hnsw.ef_search > 4096)
    fail(ErrorCode::invalid_argument, "hnsw.ef_search must be in [1, 4096]");
  std::set<std::string> seen = {"id", text_field, vector.name};
  if (seen.size() != 3) fail(ErrorCode::invalid_argument, "id, text and vector fields need distinct names");
  for (const auto& f : fields) {
    if (f.name.empty()) fail(ErrorCode::invalid_argument, "a field has an empty name");
    for (unsigned char c : f.name)
      if (!(std::isalnum(c) || c == '_'))
        fail(ErrorCode::invalid_argument, "field name '" + f.name + "' must be letters, digits or '_'");
    if (std::isdigit(static_cast<unsigned char>(f.name[0])))
      fail(ErrorCode::invalid_argument, "field name '" + f.name + "' must not start with a digit");
    if (!seen.insert(f.name).second) fail(ErrorCode::invalid_argument, "duplicate field '" + f.name + "'");
  }
}

nlohmann::json CollectionSchema::to_json() const {
  nlohmann::json fs = nlohmann::json::array();
  for (const auto& f : fields)
    fs.push_back({{"name", f.name}, {"type", field_type_name(f.type)}, {"indexed", f.indexed}});
  nlohmann::json j = {{"name", name},
          {"text_field", text_field},
          {"vector",
           {{"name", vector.name},
            {"dim", vector.dim},
            {"metric", metric_name(vector.metric)},
            {"index", vector.index == VectorIndexKind::hnsw ? "hnsw" : "flat"},
            {"hnsw", {{"m", vector.hnsw.m}, {"ef_construction", vector.hnsw.ef_construction},
                      {"ef_search", vector.hnsw.ef_search}}},
            {"encoder", vector.encoder},
            {"encoder_identity", vector.encoder_identity}}},
          {"fields", fs}};
  if (text_length_norm) j["text_length_norm"] = *text_length_norm;
  return j;
}

CollectionSchema CollectionSchema::from_json(const nlohmann::json& j) {
  CollectionSchema s;
  try {
    s.name = j.at("name").get<std::string>();
    s.text_field = j.value("text_field", std::string("text"));
    if (j.contains("text_length_norm")) s.text_length_norm = j["text_length_norm"].get<double>();
    const auto& v = j.at("vector");
    s.vector.name = v.value("name", std::string("vector"));
    s.vector.dim = v.at("dim").get<uint32_t>();
    s.vector.metric = parse_metric(v.value("metric", std::string("COSINE")));
    s.vector.encoder = v.value("encoder", std::string());
    s.vector.encoder_identity = v.value("encoder_identity", std::string());
    auto kind = v.value("index", std::string("hnsw"));
    if (kind == "hnsw") s.vector.index = VectorIndexKind::hnsw;
    else if (kind == "flat") s.vector.index = VectorIndexKind::flat;
    else fail(ErrorCode::invalid_argument, "vector.index must be flat or hnsw, got '" + kind + "'");
    if (v.contains("hnsw")) {
      const auto& h = v["hnsw"];
      s.vector.hnsw.m = h.value("m", s.vector.hnsw.m);
      s.vector.hnsw.ef_construction = h.value("ef_construction", s.vector.hnsw.ef_construction);
      s.vector.hnsw.ef_search = h.value("ef_search", s.vector.hnsw.ef_search);
    }
    if (j.contains("fields"))
      for (const auto& f : j["fields"])
        s.fields.push_back({f.at("name").get<std::string>(), parse_field_type(f.at("type").get<std::string>()),
                            f.value("indexed", false)});
  } catch (const nlohmann::json::exception& e) {
    fail(ErrorCode::invalid_argument, std::string("bad collection schema: ") + e.what());
  }
  s.validate();
  return s;
}

CollectionSchema chunk_schema(std::string name, uint32_t dim, Metric metric, const std::vector<FieldSchema>& extra) {
  CollectionSchema s;
  s.name = std::move(name);
  s.vector.dim = dim;
  s.vector.metric = metric;
  using T = FieldType;
  s.fields = {
      {"kb_name", T::string, true},         {"document_id", T::string, true},
      {"type", T::string, true},            {"path", T::string, false},
      {"source_type", T::string, true},     {"year", T::int64, true},
      {"chunk_type", T::string, true},      {"parent_section", T::string, true},
      {"source_chunk_id", T::string, false}, {"file_name", T::string, false},
      {"document_name", T::string, false},  {"source_uri", T::string, false},
      {"content_summary", T::string, false}, {"connect_to", T::json, false},
      // Structured documents: the depth of the chunk's section and its first page (PDF).
      {"level", T::int64, false},           {"page", T::int64, true},
      // The source's other metadata (journal, authors, DOI, nested maps), kept whole.
      {"metadata", T::json, false},
  };
  s.fields.insert(s.fields.end(), extra.begin(), extra.end());
  s.validate();
  return s;
}

CollectionSchema visual_schema(std::string name, uint32_t dim, Metric metric, const std::vector<FieldSchema>& extra) {
  CollectionSchema s = chunk_schema(std::move(name), dim, metric, extra);
  using T = FieldType;
  s.fields.push_back({"position", T::string, false});  // "x0,y0,x1,y1", normalised
  s.fields.push_back({"image", T::string, false});     // the kept image's name in the image store
  s.fields.push_back({"width", T::int64, false});
  s.fields.push_back({"height", T::int64, false});
  s.text_length_norm = 1.0;
  s.validate();
  return s;
}

}  // namespace eagle
