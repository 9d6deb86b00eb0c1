// Write-ahead log replay on arbitrary bytes: each frame is intact, a torn tail, or
// data_loss; nothing else may happen, and a log cut at a torn tail must then scan clean.
#include <cstdlib>

#include "eagle/core/error.h"
#include "eagle/store/wal.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto file = eagle::fuzz::as_file("wal.log", data, size);
  auto scanned = eagle::store::scan_wal(file);
  try {
    auto st = eagle::store::replay_wal(file, [](uint64_t, eagle::store::WalOp, const std::string&) {});
    if (scanned.corrupt) std::abort();  // replay must refuse what scan calls corrupt
    if (st.truncated_tail && eagle::store::scan_wal(file).truncated_tail) std::abort();  // the cut removed it
  } catch (const eagle::Error& e) {
    if (e.code() != eagle::ErrorCode::data_loss || !scanned.corrupt) std::abort();
  }
  return 0;
}
