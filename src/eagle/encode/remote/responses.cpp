#include "eagle/encode/remote/responses.h"

#include <cmath>
#include <limits>

#include "eagle/core/error.h"

namespace eagle::encode::remote {
using nlohmann::json;

std::string snippet(const std::string& body) { return body.size() > 300 ? body.substr(0, 300) + "..." : body; }

namespace {

Embedding to_embedding(const json& v, uint32_t dim, const std::string& what) {
  if (!v.is_array()) fail(ErrorCode::unavailable, what + ": an embedding is not an array");
  if (v.size() != dim)
    fail(ErrorCode::unavailable, what + ": the server returned dimension " + std::to_string(v.size()) +
                                     ", the encoder is configured for " + std::to_string(dim));
  Embedding e;
  e.reserve(dim);
  for (const auto& x : v) {
    if (!x.is_number()) fail(ErrorCode::unavailable, what + ": an embedding holds a non-number");
    const double d = x.get<double>();
    if (!std::isfinite(d) || std::fabs(d) > std::numeric_limits<float>::max())
      fail(ErrorCode::unavailable, what + ": an embedding holds a number no float holds");
    e.push_back(static_cast<float>(d));
  }
  return e;
}

// The "index" of a response item, checked against `n` and the indexes already seen.
size_t item_index(const json& item, size_t n, std::vector<bool>& seen, const std::string& what) {
  if (!item.is_object()) fail(ErrorCode::unavailable, what + ": a response item is not an object");
  auto it = item.find("index");
  if (it == item.end() || !it->is_number_unsigned() || it->get<uint64_t>() >= n || seen[it->get<uint64_t>()])
    fail(ErrorCode::unavailable, what + ": bad or repeated \"index\" in " + snippet(item.dump()));
  const auto i = static_cast<size_t>(it->get<uint64_t>());
  seen[i] = true;
  return i;
}

void require_all(const std::vector<bool>& seen, const std::string& what) {
  for (bool s : seen)
    if (!s) fail(ErrorCode::unavailable, what + ": the response misses some inputs");
}

}  // namespace

json parse_body(const std::string& body, const std::string& what) {
  try {
    return json::parse(body);
  } catch (const json::exception&) {
    fail(ErrorCode::unavailable, what + " returned malformed JSON: " + snippet(body));
  }
}

std::vector<Embedding> openai_embeddings(const json& r, size_t inputs, uint32_t dim, const std::string& what) {
  if (!r.is_object() || !r.contains("data") || !r["data"].is_array())
    fail(ErrorCode::unavailable, what + ": response has no \"data\" array");
  if (r["data"].size() != inputs)
    fail(ErrorCode::unavailable, what + ": sent " + std::to_string(inputs) + " inputs, got " +
                                     std::to_string(r["data"].size()) + " embeddings");
  std::vector<Embedding> out(inputs);
  std::vector<bool> seen(inputs, false);
  // The protocol carries an index: order by it, not by position.
  for (const auto& d : r["data"]) {
    const size_t i = item_index(d, inputs, seen, what);
    auto e = d.find("embedding");
    out[i] = to_embedding(e == d.end() ? json() : *e, dim, what);
  }
  require_all(seen, what);
  return out;
}

std::vector<Embedding> tei_embeddings(const json& r, size_t inputs, uint32_t dim, const std::string& what) {
  if (!r.is_array()) fail(ErrorCode::unavailable, what + ": /embed did not return an array");
  if (r.size() != inputs)
    fail(ErrorCode::unavailable, what + ": sent " + std::to_string(inputs) + " inputs, got " +
                                     std::to_string(r.size()) + " embeddings");
  std::vector<Embedding> out;
  out.reserve(inputs);
  for (const auto& v : r) out.push_back(to_embedding(v, dim, what));
  return out;
}

std::vector<Embedding> dashscope_multimodal_embeddings(const json& r, size_t inputs, uint32_t dim,
                                                      const std::string& what) {
  if (!r.is_object() || !r.contains("output") || !r["output"].is_object() || !r["output"].contains("embeddings") ||
      !r["output"]["embeddings"].is_array())
    fail(ErrorCode::unavailable, what + ": response has no \"output.embeddings\" array");
  // The items carry "index" and "embedding" like OpenAI's "data".
  return openai_embeddings(json{{"data", r["output"]["embeddings"]}}, inputs, dim, what);
}

std::vector<Embedding> cohere_embeddings(const json& r, size_t inputs, uint32_t dim, const std::string& what) {
  if (!r.is_object() || !r.contains("embeddings") || !r["embeddings"].is_object() ||
      !r["embeddings"].contains("float"))
    fail(ErrorCode::unavailable, what + ": response has no \"embeddings.float\"");
  return tei_embeddings(r["embeddings"]["float"], inputs, dim, what);
}

std::vector<float> rerank_scores(const json& r, size_t n, bool cohere, const std::string& what) {
  const json* results = &r;
  if (cohere) {
    if (!r.is_object() || !r.contains("results") || !r["results"].is_array())
      fail(ErrorCode::unavailable, what + ": response has no \"results\" array");
    results = &r["results"];
  } else if (!r.is_array()) {
    fail(ErrorCode::unavailable, what + ": /rerank did not return an array");
  }
  if (results->size() != n)
    fail(ErrorCode::unavailable, what + ": sent " + std::to_string(n) + " documents, got " +
                                     std::to_string(results->size()) + " scores");
  const char* key = cohere ? "relevance_score" : "score";
  std::vector<float> out(n, 0.0f);
  std::vector<bool> seen(n, false);
  for (const auto& item : *results) {
    const size_t i = item_index(item, n, seen, what);
    auto s = item.find(key);
    if (s == item.end() || !s->is_number() || !std::isfinite(s->get<double>()) ||
        std::fabs(s->get<double>()) > std::numeric_limits<float>::max())
      fail(ErrorCode::unavailable, what + ": malformed result entry " + snippet(item.dump()));
    out[i] = static_cast<float>(s->get<double>());
  }
  return out;
}

}  // namespace eagle::encode::remote
