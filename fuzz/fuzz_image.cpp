// PNG and JPEG bytes through the decoders (libpng's simplified API, libjpeg-turbo with
// its error manager), then what ingest does with a decoded image: the descriptor and
// the PNG the store keeps. The libraries are not instrumented; our code around them is.
#include "eagle/core/error.h"
#include "eagle/ingest/image/descriptor.h"
#include "eagle/ingest/image/image.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  eagle::ingest::ImageLimits limits;
  limits.max_pixels = 4'000'000;  // the fuzzer's memory limit, not a product bound
  try {
    const auto image = eagle::ingest::decode_image(eagle::fuzz::bytes(data, size), "fuzz.img", limits);
    (void)eagle::ingest::dct_lowfreq_descriptor(image);
    (void)eagle::ingest::encode_png(image);
  } catch (const eagle::Error&) {
  }
  return 0;
}
