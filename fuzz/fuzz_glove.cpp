// The wink GloVe JSON converter on arbitrary bytes (the npm asset is outside input),
// then the encoder over what it wrote: a file the converter accepts must load and
// embed a sentence.
#include "eagle/core/error.h"
#include "eagle/encode/static/word_vectors.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto in = eagle::fuzz::as_file("glove.json", data, size);
  const auto out = eagle::fuzz::work_dir() / "glove.bin";
  try {
    eagle::encode::convert_wink_json(in, out);
  } catch (const eagle::Error&) {
    return 0;
  }
  auto enc = eagle::encode::make_glove_encoder("glove", out);
  enc->encode({"cystic fibrosis transmembrane regulator", ""}, eagle::encode::EncodeMode::query);
  return 0;
}
