// FDA SPL label XML (libxml2) and its LOINC section mapping on arbitrary bytes.
#include "eagle/biomed/ingest/spl.h"
#include "eagle/core/error.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    eagle::biomed::parse_spl(eagle::fuzz::bytes(data, size), "fuzz.xml");
  } catch (const eagle::Error&) {
  }
  return 0;
}
