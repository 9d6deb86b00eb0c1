#include "eagle/encode/remote/remote.h"

#include <httplib.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>

#include "eagle/core/base64.h"
#include "eagle/core/error.h"
#include "eagle/ingest/image/image.h"
#include "eagle/encode/remote/responses.h"

namespace eagle::encode {

RemoteEndpoint parse_remote_base(const std::string& url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos || (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0))
    fail(ErrorCode::invalid_argument, "remote base_url must start with http:// or https://, got '" + url + "'");
  auto path_start = url.find('/', scheme_end + 3);
  RemoteEndpoint e;
  e.origin = url.substr(0, path_start);
  e.prefix = path_start == std::string::npos ? "" : url.substr(path_start);
  while (!e.prefix.empty() && e.prefix.back() == '/') e.prefix.pop_back();
  return e;
}

namespace {
using nlohmann::json;

// One JSON POST with timeouts and bounded, backed-off retries.
class HttpJson {
 public:
  HttpJson(std::string what, RemoteOptions opts) : what_(std::move(what)), opts_(std::move(opts)) {
    ep_ = parse_remote_base(opts_.base_url);
    if (opts_.batch_size == 0) fail(ErrorCode::invalid_argument, what_ + ": batch_size must be at least 1");
    if (opts_.max_retries < 0 || opts_.max_retries > 10)
      fail(ErrorCode::invalid_argument, what_ + ": max_retries must be in [0, 10]");
  }

  json post(const std::string& path, const json& body) const {
    httplib::Client cli(ep_.origin);
    cli.set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(opts_.connect_timeout));
    cli.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(opts_.timeout));
    cli.set_write_timeout(std::chrono::duration_cast<std::chrono::microseconds>(opts_.timeout));
    httplib::Headers headers;
    if (!opts_.api_key_env.empty()) {
      const char* key = std::getenv(opts_.api_key_env.c_str());
      if (!key || !*key)
        fail(ErrorCode::invalid_argument, what_ + ": environment variable " + opts_.api_key_env + " is not set");
      headers.emplace("Authorization", std::string("Bearer ") + key);
    }
    const std::string url = ep_.prefix + path;
    const std::string payload = body.dump();
    auto delay = opts_.backoff;
    std::string last;
    for (int attempt = 0; attempt <= opts_.max_retries; ++attempt) {
      if (attempt > 0) {
        std::this_thread::sleep_for(delay);
        delay *= 2;
      }
      auto res = cli.Post(url.c_str(), headers, payload, "application/json");
      if (!res) {
        last = "no response (" + httplib::to_string(res.error()) + ")";
        continue;  // connection refused, timeout, reset: retry
      }
      const int st = res->status;
      if (st >= 200 && st < 300) {
        return remote::parse_body(res->body, what_ + ": " + ep_.origin + url);
      }
      last = "HTTP " + std::to_string(st) + ": " + remote::snippet(res->body);
      if (st == 408 || st == 429 || st >= 500) continue;
      fail(ErrorCode::invalid_argument, what_ + ": " + ep_.origin + url + " rejected the request, " + last);
    }
    fail(ErrorCode::unavailable, what_ + ": " + ep_.origin + url + " failed after " +
                                     std::to_string(opts_.max_retries + 1) + " attempts, last: " + last);
  }

  const RemoteOptions& opts() const { return opts_; }
  const std::string& what() const { return what_; }

 private:
  std::string what_;
  RemoteOptions opts_;
  RemoteEndpoint ep_;
};

class BatchedEncoder : public Encoder {
 public:
  BatchedEncoder(EncoderInfo info, RemoteOptions opts, bool openai)
      : info_(std::move(info)), http_("encoder '" + info_.label + "'", std::move(opts)), openai_(openai) {
    if (info_.dim == 0) fail(ErrorCode::invalid_argument, http_.what() + ": dim must be configured");
    info_.max_batch = http_.opts().batch_size;
  }
  const EncoderInfo& info() const override { return info_; }

  std::vector<Embedding> encode(const std::vector<std::string>& inputs, EncodeMode mode) override {
    std::vector<Embedding> out;
    out.reserve(inputs.size());
    const auto& o = http_.opts();
    const bool query = mode == EncodeMode::query;
    const std::string& prefix = query ? o.query_prefix : o.document_prefix;
    const json& fields = query ? o.query_fields : o.document_fields;
    const size_t bs = o.batch_size;
    for (size_t start = 0; start < inputs.size(); start += bs) {
      std::vector<std::string> batch(inputs.begin() + static_cast<std::ptrdiff_t>(start),
                                     inputs.begin() + static_cast<std::ptrdiff_t>(std::min(inputs.size(), start + bs)));
      if (!prefix.empty())
        for (auto& t : batch) t = prefix + t;
      auto got = openai_ ? call_openai(batch, fields) : call_tei(batch, fields);
      for (auto& e : got) out.push_back(std::move(e));
    }
    return out;
  }

 private:
  std::vector<Embedding> call_openai(const std::vector<std::string>& batch, const json& fields) const {
    json body = {{"input", batch}, {"encoding_format", "float"}};
    if (!http_.opts().model.empty()) body["model"] = http_.opts().model;
    body.update(fields);
    return remote::openai_embeddings(http_.post("/v1/embeddings", body), batch.size(), info_.dim, http_.what());
  }
  std::vector<Embedding> call_tei(const std::vector<std::string>& batch, const json& fields) const {
    json body = {{"inputs", batch}};
    body.update(fields);
    return remote::tei_embeddings(http_.post("/embed", body), batch.size(), info_.dim, http_.what());
  }

  EncoderInfo info_;
  HttpJson http_;
  bool openai_;
};

// Image encoders with a text tower (the seed's Qwen3-VL-Embedding, CLIP-style models):
// images go as data: URIs (Jina: the Base64 alone), texts as they are, in the API's own
// request shape; both land in one space, so a text query finds images.
class MultimodalEncoder : public Encoder {
 public:
  MultimodalEncoder(EncoderInfo info, RemoteOptions opts, MultimodalApi api)
      : info_(std::move(info)), http_("encoder '" + info_.label + "'", std::move(opts)), api_(api) {
    if (info_.dim == 0) fail(ErrorCode::invalid_argument, http_.what() + ": dim must be configured");
    info_.modality = Modality::image;
    info_.embeds_text = true;
    info_.max_batch = http_.opts().batch_size;
  }
  const EncoderInfo& info() const override { return info_; }

  std::vector<Embedding> encode(const std::vector<std::string>& texts, EncodeMode mode) override {
    const auto& o = http_.opts();
    const bool query = mode == EncodeMode::query;
    const std::string& prefix = query ? o.query_prefix : o.document_prefix;
    std::vector<json> items;
    for (const auto& t : texts) items.push_back(json{{"text", prefix + t}});
    return batched(items, query ? o.query_fields : o.document_fields, query ? "search_query" : "search_document",
                   /*images=*/false);
  }

  std::vector<Embedding> encode_images(const std::vector<std::string_view>& images) override {
    std::vector<json> items;
    for (size_t i = 0; i < images.size(); ++i) {
      const auto format = ingest::sniff_image_format(images[i]);
      if (format == ingest::ImageFormat::unknown)
        fail(ErrorCode::invalid_argument, http_.what() + ": image " + std::to_string(i + 1) + " is not a PNG or JPEG");
      const std::string b64 = base64_encode(images[i]);
      if (api_ == MultimodalApi::jina) {
        items.push_back(json{{"image", b64}});
      } else {
        const std::string uri =
            std::string("data:image/") + (format == ingest::ImageFormat::png ? "png" : "jpeg") + ";base64," + b64;
        items.push_back(json{{"image", uri}});
      }
    }
    return batched(items, http_.opts().document_fields, "image", /*images=*/true);
  }

 private:
  std::vector<Embedding> batched(const std::vector<json>& items, const json& fields, const char* cohere_input_type,
                                 bool images) const {
    std::vector<Embedding> out;
    out.reserve(items.size());
    const size_t bs = http_.opts().batch_size;
    for (size_t start = 0; start < items.size(); start += bs) {
      const size_t n = std::min(items.size() - start, bs);
      const std::vector<json> batch(items.begin() + static_cast<std::ptrdiff_t>(start),
                                    items.begin() + static_cast<std::ptrdiff_t>(start + n));
      std::vector<Embedding> got;
      switch (api_) {
        case MultimodalApi::dashscope: {
          // DashScope: one embedding per content item.
          json body = {{"input", {{"contents", batch}}}};
          if (!http_.opts().model.empty()) body["model"] = http_.opts().model;
          body.update(fields);
          got = remote::dashscope_multimodal_embeddings(
              http_.post("/api/v1/services/embeddings/multimodal-embedding/multimodal-embedding", body), n, info_.dim,
              http_.what());
          break;
        }
        case MultimodalApi::jina: {
          json body = {{"input", batch}};
          if (!http_.opts().model.empty()) body["model"] = http_.opts().model;
          body.update(fields);
          got = remote::openai_embeddings(http_.post("/v1/embeddings", body), n, info_.dim, http_.what());
          break;
        }
        case MultimodalApi::cohere: {
          // Cohere v2: images or texts, never mixed in one call.
          json list = json::array();
          for (const auto& item : batch) list.push_back(images ? item["image"] : item["text"]);
          json body = {{"input_type", cohere_input_type}, {"embedding_types", {"float"}}};
          body[images ? "images" : "texts"] = std::move(list);
          if (!http_.opts().model.empty()) body["model"] = http_.opts().model;
          got = remote::cohere_embeddings(http_.post("/v2/embed", body), n, info_.dim, http_.what());
          break;
        }
      }
      for (auto& e : got) out.push_back(std::move(e));
    }
    return out;
  }

  EncoderInfo info_;
  HttpJson http_;
  MultimodalApi api_;
};

class RemoteReranker : public Reranker {
 public:
  RemoteReranker(std::string label, RemoteOptions opts, bool cohere)
      : label_(std::move(label)), http_("reranker '" + label_ + "'", std::move(opts)), cohere_(cohere) {}
  const std::string& label() const override { return label_; }

  std::vector<float> score(const std::string& query, const std::vector<std::string>& docs) override {
    std::vector<float> out(docs.size(), 0.0f);
    const size_t bs = http_.opts().batch_size;
    for (size_t start = 0; start < docs.size(); start += bs) {
      const size_t n = std::min(docs.size() - start, bs);
      std::vector<std::string> batch(docs.begin() + static_cast<std::ptrdiff_t>(start),
                                     docs.begin() + static_cast<std::ptrdiff_t>(start + n));
      std::vector<float> scores;
      if (cohere_) {
        json body = {{"query", query}, {"documents", batch}, {"top_n", n}};
        if (!http_.opts().model.empty()) body["model"] = http_.opts().model;
        scores = remote::rerank_scores(http_.post("/rerank", body), n, true, http_.what());
      } else {
        scores = remote::rerank_scores(http_.post("/rerank", json{{"query", query}, {"texts", batch}}), n, false,
                                       http_.what());
      }
      std::copy(scores.begin(), scores.end(), out.begin() + static_cast<std::ptrdiff_t>(start));
    }
    return out;
  }

 private:
  std::string label_;
  HttpJson http_;
  bool cohere_;
};

}  // namespace

void apply_input_type_preset(RemoteOptions& o, const std::string& api) {
  // Each API's own names for a search query and an indexed document.
  if (api.empty() || api == "none") return;
  if (api == "jina") {
    o.query_fields = {{"task", "retrieval.query"}};
    o.document_fields = {{"task", "retrieval.passage"}};
  } else if (api == "voyage") {
    o.query_fields = {{"input_type", "query"}};
    o.document_fields = {{"input_type", "document"}};
  } else if (api == "dashscope") {
    o.query_fields = {{"text_type", "query"}};
    o.document_fields = {{"text_type", "document"}};
  } else if (api == "tei-prompts") {
    // The model's sentence-transformers prompts named "query" and "document".
    o.query_fields = {{"prompt_name", "query"}};
    o.document_fields = {{"prompt_name", "document"}};
  } else {
    fail(ErrorCode::invalid_argument,
         "input_types must be jina, voyage, dashscope, tei-prompts or none, got '" + api + "'");
  }
}

std::unique_ptr<Encoder> make_openai_encoder(EncoderInfo info, RemoteOptions opts) {
  info.implementation = "openai";
  return std::make_unique<BatchedEncoder>(std::move(info), std::move(opts), true);
}
std::unique_ptr<Encoder> make_multimodal_encoder(EncoderInfo info, RemoteOptions opts, MultimodalApi api) {
  info.implementation = api == MultimodalApi::dashscope ? "dashscope-multimodal"
                        : api == MultimodalApi::jina    ? "jina-clip"
                                                        : "cohere-embed";
  return std::make_unique<MultimodalEncoder>(std::move(info), std::move(opts), api);
}
std::unique_ptr<Encoder> make_tei_encoder(EncoderInfo info, RemoteOptions opts) {
  info.implementation = "tei";
  return std::make_unique<BatchedEncoder>(std::move(info), std::move(opts), false);
}
std::unique_ptr<Reranker> make_tei_reranker(std::string label, RemoteOptions opts) {
  return std::make_unique<RemoteReranker>(std::move(label), std::move(opts), false);
}
std::unique_ptr<Reranker> make_cohere_reranker(std::string label, RemoteOptions opts) {
  return std::make_unique<RemoteReranker>(std::move(label), std::move(opts), true);
}

}  // namespace eagle::encode
