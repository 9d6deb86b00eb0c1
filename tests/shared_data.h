#pragma once
// Where tests read ../shared/data: $EAGLE_SHARED_DATA, else the path fixed at build
// time. Tests that need it assert its presence (a missing folder fails, never skips).
#include <cstdlib>
#include "support/build_paths.h"
#include <filesystem>

namespace eagle::testing {

inline std::filesystem::path shared_data() {
  const char* env = std::getenv("EAGLE_SHARED_DATA");
  return env && *env ? std::filesystem::path(env) : std::filesystem::path(EAGLE_SHARED_DATA);
}

}  // namespace eagle::testing
