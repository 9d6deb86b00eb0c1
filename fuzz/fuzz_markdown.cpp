// Markdown (headings, fenced code, pipe tables and captions, images) on arbitrary
// bytes, as the ingest reads it after its UTF-8 check, then the article chunker.
#include "eagle/core/utf8.h"
#include "eagle/ingest/markdown/markdown.h"
#include "fuzz_documents.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const std::string text = eagle::repair_utf8(eagle::fuzz::bytes(data, size));
    eagle::fuzz::chunk(eagle::ingest::read_markdown(text, "fuzz.md", "fuzz.md"));
  } catch (const eagle::Error&) {
  }
  return 0;
}
