// PDF bytes through poppler and the layout reader (columns, headers, headings, tables,
// references), then the article chunker. Poppler itself is not instrumented; the
// reader's own code is.
#include "eagle/ingest/pdf/pdf_reader.h"
#include "fuzz_documents.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    eagle::fuzz::chunk(eagle::ingest::read_pdf_bytes(eagle::fuzz::bytes(data, size), "fuzz.pdf", "fuzz"));
  } catch (const eagle::Error&) {
  }
  return 0;
}
