#include "eagle/encode/registry_config.h"

#include "eagle/core/error.h"
#include "eagle/encode/bert/bert.h"
#include "eagle/encode/clip/clip.h"
#include "eagle/encode/chem/chem_encoder.h"
#include "eagle/encode/image/descriptor_encoder.h"
#include "eagle/encode/remote/remote.h"
#include "eagle/encode/static/word_vectors.h"

#include <cstdio>
#include <filesystem>

namespace eagle::encode {
namespace {
using nlohmann::json;

std::string need_str(const json& j, const std::string& label, const char* key) {
  if (!j.contains(key) || !j[key].is_string())
    fail(ErrorCode::invalid_argument, "encoder '" + label + "': missing string field '" + key + "'");
  return j[key].get<std::string>();
}

RemoteOptions remote_options(const json& j, const std::string& label) {
  RemoteOptions o;
  o.base_url = need_str(j, label, "base_url");
  o.model = j.value("model", std::string());
  o.api_key_env = j.value("api_key_env", std::string());
  o.batch_size = j.value("batch_size", o.batch_size);
  o.timeout = std::chrono::milliseconds(j.value("timeout_ms", static_cast<int64_t>(o.timeout.count())));
  o.connect_timeout =
      std::chrono::milliseconds(j.value("connect_timeout_ms", static_cast<int64_t>(o.connect_timeout.count())));
  o.max_retries = j.value("max_retries", o.max_retries);
  // The query/document distinction: a known API's names, then explicit fields/prefixes.
  apply_input_type_preset(o, j.value("input_types", std::string()));
  for (const char* key : {"query_fields", "document_fields"})
    if (j.contains(key)) {
      if (!j[key].is_object())
        fail(ErrorCode::invalid_argument, "encoder '" + label + "': " + key + " must be a map of request fields");
      (std::string(key) == "query_fields" ? o.query_fields : o.document_fields).update(j[key]);
    }
  o.query_prefix = j.value("query_prefix", std::string());
  o.document_prefix = j.value("document_prefix", std::string());
  return o;
}

BertEncoderOptions bert_options(const json& j, const std::string& label) {
  BertEncoderOptions o;
  const auto pooling = j.value("pooling", std::string("cls"));
  if (pooling == "cls") o.pooling = Pooling::cls;
  else if (pooling == "mean") o.pooling = Pooling::mean;
  else fail(ErrorCode::invalid_argument, "encoder '" + label + "': pooling must be cls or mean");
  o.l2 = j.value("normalize", true);
  o.max_length = j.value("max_length", o.max_length);
  o.batch_size = j.value("batch_size", o.batch_size);
  o.lowercase = j.value("lowercase", true);
  if (j.contains("query_path")) o.query_folder = need_str(j, label, "query_path");
  return o;
}

// One "key=value" field of an identity; blanks in the value are escaped (%20) so the
// identity splits on blanks.
std::string field(const std::string& key, const std::string& value) {
  std::string v;
  for (char c : value) v += c == ' ' ? std::string("%20") : std::string(1, c);
  return " " + key + "=" + v;
}

std::string absolute(const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

// What makes a local model's vectors: its type, path and fingerprint, and the settings
// that change them.
std::string local_identity(const std::string& type, const std::string& path) {
  return "type=" + type + field("path", absolute(path)) + field("fingerprint", model_fingerprint(path));
}

std::string bert_identity(const json& spec, const std::string& label, const BertEncoderOptions& o) {
  std::string id = local_identity("bert", need_str(spec, label, "path"));
  id += field("pooling", o.pooling == Pooling::cls ? "cls" : "mean") + field("normalize", o.l2 ? "true" : "false");
  id += field("max_length", std::to_string(o.max_length)) + field("lowercase", o.lowercase ? "true" : "false");
  if (!o.query_folder.empty()) id += field("query_fingerprint", model_fingerprint(o.query_folder));
  return id;
}

}  // namespace

std::unique_ptr<Encoder> make_identified_static(const std::string& label, const std::string& path,
                                                StaticEncoderOptions options) {
  char a[32];
  std::snprintf(a, sizeof a, "%g", options.sif_a);
  return identified(make_glove_encoder(label, path, options), local_identity("static", path) + field("sif_a", a));
}

std::unique_ptr<Encoder> make_identified_chem(const std::string& label, chem::FingerprintParams params) {
  return identified(make_chem_encoder(label, params), "type=chem fingerprint=morgan" +
                                                          field("radius", std::to_string(params.radius)) +
                                                          field("bits", std::to_string(params.bits)));
}

void add_from_config(EncoderRegistry& registry, const json& encoders) {
  if (encoders.is_null()) return;
  if (!encoders.is_object()) fail(ErrorCode::invalid_argument, "'encoders' must map labels to settings");
  for (const auto& [label, spec] : encoders.items()) {
    if (!spec.is_object()) fail(ErrorCode::invalid_argument, "encoder '" + label + "': settings must be a map");
    const std::string type = need_str(spec, label, "type");
    try {
      if (type == "static") {
        StaticEncoderOptions o;
        o.sif_a = spec.value("sif_a", o.sif_a);
        registry.add(make_identified_static(label, need_str(spec, label, "path"), o));
      } else if (type == "chem") {
        chem::FingerprintParams p;
        p.radius = spec.value("radius", p.radius);
        p.bits = spec.value("bits", p.bits);
        if (p.bits == 0 || p.bits > 16384 || p.radius > 8)
          fail(ErrorCode::invalid_argument, "bits must be in 1..16384 and radius at most 8");
        registry.add(make_identified_chem(label, p));
      } else if (type == "model2vec") {
        const std::string path = need_str(spec, label, "path");
        registry.add(identified(make_model2vec_encoder(label, path), local_identity("model2vec", path)));
      } else if (type == "bert") {
        const auto o = bert_options(spec, label);
        registry.add(identified(make_bert_encoder(label, need_str(spec, label, "path"), o), bert_identity(spec, label, o)));
      } else if (type == "bert-cross") {
        registry.add(make_bert_cross_encoder(label, need_str(spec, label, "path"), bert_options(spec, label)));
      } else if (type == "openai" || type == "tei") {
        EncoderInfo info;
        info.label = label;
        info.dim = spec.value("dim", 0u);
        info.metric = parse_metric(spec.value("metric", std::string("COSINE")));
        info.asymmetric = spec.value("asymmetric", false);
        const auto ro = remote_options(spec, label);
        // A remote model is known by its server and name; its weights are not ours to read.
        const std::string id = "type=" + type + field("url", ro.base_url) + field("model", ro.model) +
                               field("input_types", spec.value("input_types", std::string("none")));
        registry.add(identified(type == "openai" ? make_openai_encoder(info, ro) : make_tei_encoder(info, ro), id));
      } else if (type == "dashscope-multimodal" || type == "jina-clip" || type == "cohere-embed") {
        EncoderInfo info;
        info.label = label;
        info.dim = spec.value("dim", 0u);
        info.metric = parse_metric(spec.value("metric", std::string("IP")));  // seed §6.2: IP
        const auto ro = remote_options(spec, label);
        const std::string id = "type=" + type + field("url", ro.base_url) + field("model", ro.model);
        const auto api = type == "dashscope-multimodal" ? MultimodalApi::dashscope
                         : type == "jina-clip"          ? MultimodalApi::jina
                                                        : MultimodalApi::cohere;
        registry.add(identified(make_multimodal_encoder(info, ro, api), id));
      } else if (type == "clip") {
        clip::ClipOptions o;
        o.l2 = spec.value("normalize", true);
        o.batch_size = spec.value("batch_size", o.batch_size);
        o.max_length = spec.value("max_length", o.max_length);
        o.lowercase = spec.value("lowercase", true);
        o.limits.max_pixels = spec.value("max_pixels", o.limits.max_pixels);
        if (o.batch_size == 0) fail(ErrorCode::invalid_argument, "batch_size must be at least 1");
        const std::string path = need_str(spec, label, "path");
        std::string id = local_identity("clip", path) + field("normalize", o.l2 ? "true" : "false") +
                         field("max_length", std::to_string(o.max_length));
        registry.add(identified(clip::make_clip_encoder(label, path, o), id));
      } else if (type == "descriptor") {
        ingest::ImageLimits limits;
        limits.max_pixels = spec.value("max_pixels", limits.max_pixels);
        registry.add(make_descriptor_encoder(label, limits));
      } else if (type == "cohere-rerank") {
        registry.add(make_cohere_reranker(label, remote_options(spec, label)));
      } else if (type == "tei-rerank") {
        registry.add(make_tei_reranker(label, remote_options(spec, label)));
      } else {
        fail(ErrorCode::invalid_argument,
             "unknown type '" + type +
                 "' (expected static, model2vec, bert, bert-cross, openai, tei, dashscope-multimodal, jina-clip, "
                 "cohere-embed, clip, cohere-rerank, tei-rerank, chem or descriptor)");
      }
    } catch (const Error& e) {
      const std::string msg = e.what();
      if (msg.rfind("encoder '" + label + "'", 0) == 0) throw;
      fail(e.code(), "encoder '" + label + "': " + msg);
    } catch (const nlohmann::json::exception& e) {
      fail(ErrorCode::invalid_argument, "encoder '" + label + "': " + e.what());
    }
  }
}

}  // namespace eagle::encode
