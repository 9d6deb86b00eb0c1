// The safetensors reader (header JSON, offsets, dtypes, shapes) on arbitrary bytes.
#include "eagle/core/error.h"
#include "eagle/encode/safetensors.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto file = eagle::fuzz::as_file("model.safetensors", data, size);
  try {
    auto st = eagle::encode::SafeTensors::open(file);
    for (const auto& name : st.names()) {
      if (st.info(name).elements() > (1 << 20)) continue;  // keep each run small
      st.read(name);
    }
  } catch (const eagle::Error&) {
  }
  return 0;
}
