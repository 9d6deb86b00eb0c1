// The biomedical analyzer and the WordPiece tokenizer on arbitrary bytes (invalid
// UTF-8 included): no crash, no exception.
#include "eagle/text/analyzer.h"
#include "eagle/text/wordpiece.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const eagle::text::Analyzer analyzer;
  static const eagle::text::WordPieceTokenizer wordpiece(
      {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "pd", "-", "1", "##1", "in", "##hibitor", "cancer", "##s", "a", "##b"});
  const std::string in = eagle::fuzz::bytes(data, size);
  analyzer.terms(in);
  eagle::text::normalize(in);
  wordpiece.encode_ids(in);
  return 0;
}
