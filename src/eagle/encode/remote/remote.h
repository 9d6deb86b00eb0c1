#pragma once
// HTTP clients for remote encoders and rerankers:
//   openai       POST {base}/v1/embeddings  {model, input: [...]}        -> {data: [{index, embedding}]}
//                (DashScope text-embedding-v4, vLLM, Ollama's OpenAI route, TEI's OpenAI route)
//   tei          POST {base}/embed          {inputs: [...]}              -> [[...], ...]
//   tei-rerank   POST {base}/rerank         {query, texts: [...]}        -> [{index, score}]
//   cohere       POST {base}/rerank         {model, query, documents, top_n} -> {results: [{index, relevance_score}]}
//                (Cohere, Jina, DashScope qwen3-rerank compatible route)
// Image encoders with a text tower, images as Base64:
//   dashscope-multimodal  POST {base}/api/v1/services/embeddings/multimodal-embedding/multimodal-embedding
//                         {model, input: {contents: [{image: data-URI} | {text}]}} -> {output: {embeddings: [{index, embedding}]}}
//                         (Qwen3-VL-Embedding, multimodal-embedding-v1)
//   jina-clip             POST {base}/v1/embeddings {model, input: [{image: base64} | {text}]} -> {data: [{index, embedding}]}
//   cohere-embed          POST {base}/v2/embed {model, input_type: image|search_query|search_document,
//                         embedding_types: [float], images: [data-URI] | texts: [...]} -> {embeddings: {float: [[...]]}}
// Every call has connect/read timeouts and bounded retries with exponential backoff
// for connection errors, 408, 429 and 5xx; other 4xx fail at once. Inputs are sent
// in batches no larger than the server's limit. The API key comes from an
// environment variable named in the configuration, never from the file itself.
#include <chrono>
#include <nlohmann/json.hpp>
#include <memory>
#include <string>

#include "eagle/encode/encoder.h"

namespace eagle::encode {

struct RemoteOptions {
  std::string base_url;         // "http://127.0.0.1:8080" or "https://host/compatible-mode"
  std::string model;            // sent as "model" where the protocol has one
  std::string api_key_env;      // e.g. "DASHSCOPE_API_KEY"; empty = no Authorization header
  size_t batch_size = 32;       // the server's limit per request
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds timeout{30000};
  int max_retries = 3;          // retries after the first attempt
  std::chrono::milliseconds backoff{200};  // doubled after each retry
  // The query/document distinction the API supports, per encode mode: fields merged
  // into the request body (Jina {"task": "retrieval.query"}, Voyage {"input_type":
  // "query"}, DashScope {"text_type": "query"}, TEI {"prompt_name": "query"}) and a
  // prefix put before each text (E5 "query: ", nomic "search_query: ").
  nlohmann::json query_fields = nlohmann::json::object();
  nlohmann::json document_fields = nlohmann::json::object();
  std::string query_prefix, document_prefix;
};

// A base_url split for an HTTP client: origin "scheme://host[:port]" and the path
// prefix without a trailing '/'. invalid_argument unless it starts with http(s)://.
struct RemoteEndpoint {
  std::string origin;
  std::string prefix;
};
RemoteEndpoint parse_remote_base(const std::string& url);

// The fields of a known API's query/document distinction ("jina", "voyage",
// "dashscope", "tei-prompts"; "" or "none": nothing). Throws on another name.
void apply_input_type_preset(RemoteOptions& o, const std::string& api);

// `info.dim` must be set: every returned embedding is checked against it.
std::unique_ptr<Encoder> make_openai_encoder(EncoderInfo info, RemoteOptions opts);
std::unique_ptr<Encoder> make_tei_encoder(EncoderInfo info, RemoteOptions opts);
enum class MultimodalApi { dashscope, jina, cohere };
// An image encoder (Modality::image) that also embeds text into the images' space.
std::unique_ptr<Encoder> make_multimodal_encoder(EncoderInfo info, RemoteOptions opts, MultimodalApi api);
std::unique_ptr<Reranker> make_tei_reranker(std::string label, RemoteOptions opts);
std::unique_ptr<Reranker> make_cohere_reranker(std::string label, RemoteOptions opts);

}  // namespace eagle::encode
