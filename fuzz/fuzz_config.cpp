// The YAML configuration file (yaml-cpp, then every key's parser) on arbitrary bytes.
#include "eagle/app/config.h"
#include "eagle/core/error.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto file = eagle::fuzz::as_file("eagle.yaml", data, size);
  try {
    eagle::app::load_config(file);
  } catch (const eagle::Error&) {
  }
  return 0;
}
