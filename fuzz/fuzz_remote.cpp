// Responses of remote encoders and rerankers on arbitrary bytes: the first byte picks
// the protocol (OpenAI embeddings, TEI embed, Cohere rerank, TEI rerank, DashScope
// multimodal embeddings, Cohere v2 embed) and the
// number of inputs sent; the rest is the response body. Only eagle::Error may escape.
#include "eagle/core/error.h"
#include "eagle/encode/remote/responses.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t inputs = 1 + (data[0] / 6) % 4;
  const uint32_t dim = 3;
  const std::string what = "encoder 'fuzz'";
  try {
    const auto body = eagle::encode::remote::parse_body(eagle::fuzz::bytes(data + 1, size - 1), what);
    switch (data[0] % 6) {
      case 0: eagle::encode::remote::openai_embeddings(body, inputs, dim, what); break;
      case 1: eagle::encode::remote::tei_embeddings(body, inputs, dim, what); break;
      case 2: eagle::encode::remote::rerank_scores(body, inputs, true, what); break;
      case 3: eagle::encode::remote::rerank_scores(body, inputs, false, what); break;
      case 4: eagle::encode::remote::dashscope_multimodal_embeddings(body, inputs, dim, what); break;
      default: eagle::encode::remote::cohere_embeddings(body, inputs, dim, what); break;
    }
  } catch (const eagle::Error&) {
  }
  return 0;
}
