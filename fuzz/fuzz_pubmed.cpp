// PubMed XML (PubmedArticleSet) on arbitrary bytes, then the article chunker on each article.
#include "eagle/ingest/xml/pubmed.h"
#include "fuzz_documents.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    for (const auto& a : eagle::ingest::read_pubmed(eagle::fuzz::bytes(data, size), "fuzz.xml")) eagle::fuzz::chunk(a);
  } catch (const eagle::Error&) {
  }
  return 0;
}
