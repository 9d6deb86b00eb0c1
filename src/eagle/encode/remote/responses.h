#pragma once
// What encoder and reranker servers answer is outside input: these parsers turn a
// response into embeddings or scores, and every malformed shape (a missing field, a
// wrong type, an index out of range or repeated, a number no float holds) into an
// eagle::Error (unavailable) that says what was wrong. `what` names the client
// ("encoder 'x'") in messages. Fuzzed by fuzz/fuzz_remote.cpp.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eagle/encode/encoder.h"

namespace eagle::encode::remote {

// The first 300 bytes of a response body, for messages.
std::string snippet(const std::string& body);

// A response body as JSON; malformed JSON is an error quoting its start.
nlohmann::json parse_body(const std::string& body, const std::string& what);

// OpenAI /v1/embeddings: {"data": [{"index": i, "embedding": [...]}, ...]}, one per input.
std::vector<Embedding> openai_embeddings(const nlohmann::json& response, size_t inputs, uint32_t dim,
                                         const std::string& what);
// TEI /embed: [[...], ...] in input order.
std::vector<Embedding> tei_embeddings(const nlohmann::json& response, size_t inputs, uint32_t dim,
                                      const std::string& what);
// DashScope multimodal-embedding: {"output": {"embeddings": [{"index", "embedding"}]}}.
std::vector<Embedding> dashscope_multimodal_embeddings(const nlohmann::json& response, size_t inputs, uint32_t dim,
                                                      const std::string& what);
// Cohere v2 /embed: {"embeddings": {"float": [[...], ...]}} in input order.
std::vector<Embedding> cohere_embeddings(const nlohmann::json& response, size_t inputs, uint32_t dim,
                                         const std::string& what);
// Reranker scores of `documents` documents, by index: Cohere's {"results": [{"index",
// "relevance_score"}]} or TEI's [{"index", "score"}].
std::vector<float> rerank_scores(const nlohmann::json& response, size_t documents, bool cohere,
                                 const std::string& what);

}  // namespace eagle::encode::remote
