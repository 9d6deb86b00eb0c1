// JSONL / BEIR records, Markdown splitting and the UTF-8 checks on arbitrary bytes.
// Only eagle::Error may leave the parsers; repair_utf8 must always yield valid UTF-8.
#include <cstdlib>

#include "eagle/core/error.h"
#include "eagle/core/utf8.h"
#include "eagle/ingest/corpus_reader.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in = eagle::fuzz::bytes(data, size);
  if (eagle::first_invalid_utf8(eagle::repair_utf8(in))) std::abort();
  try {
    eagle::ingest::parse_json_record(in);
  } catch (const eagle::Error&) {
  }
  eagle::ingest::split_markdown("doc", in);
  return 0;
}
