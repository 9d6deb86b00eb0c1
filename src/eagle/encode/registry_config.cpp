#include "eagle/encode/registry_config.h"

#include "eagle/core/error.h"
#include "eagle/encode/bert/bert.h"
#include "eagle/encode/chem/chem_encoder.h"
#include "eagle/encode/remote/remote.h"
#include "eagle/encode/static/word_vectors.h"

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

}  // namespace

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
        registry.add(make_glove_encoder(label, need_str(spec, label, "path"), o));
      } else if (type == "chem") {
        chem::FingerprintParams p;
        p.radius = spec.value("radius", p.radius);
        p.bits = spec.value("bits", p.bits);
        if (p.bits == 0 || p.bits > 16384 || p.radius > 8)
          fail(ErrorCode::invalid_argument, "bits must be in 1..16384 and radius at most 8");
        registry.add(make_chem_encoder(label, p));
      } else if (type == "model2vec") {
        registry.add(make_model2vec_encoder(label, need_str(spec, label, "path")));
      } else if (type == "bert") {
        registry.add(make_bert_encoder(label, need_str(spec, label, "path"), bert_options(spec, label)));
      } else if (type == "bert-cross") {
        registry.add(make_bert_cross_encoder(label, need_str(spec, label, "path"), bert_options(spec, label)));
      } else if (type == "openai" || type == "tei") {
        EncoderInfo info;
        info.label = label;
        info.dim = spec.value("dim", 0u);
        info.metric = parse_metric(spec.value("metric", std::string("COSINE")));
        info.asymmetric = spec.value("asymmetric", false);
        registry.add(type == "openai" ? make_openai_encoder(info, remote_options(spec, label))
                                      : make_tei_encoder(info, remote_options(spec, label)));
      } else if (type == "cohere-rerank") {
        registry.add(make_cohere_reranker(label, remote_options(spec, label)));
      } else if (type == "tei-rerank") {
        registry.add(make_tei_reranker(label, remote_options(spec, label)));
      } else {
        fail(ErrorCode::invalid_argument,
             "unknown type '" + type +
                 "' (expected static, model2vec, bert, bert-cross, openai, tei, cohere-rerank, tei-rerank or chem)");
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
