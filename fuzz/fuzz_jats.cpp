// PMC JATS XML (.nxml) on arbitrary bytes, then the article chunker on what it read.
#include "eagle/ingest/xml/jats.h"
#include "fuzz_documents.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    eagle::fuzz::chunk(eagle::ingest::read_jats(eagle::fuzz::bytes(data, size), "fuzz.jats", "fuzz"));
  } catch (const eagle::Error&) {
  }
  return 0;
}
