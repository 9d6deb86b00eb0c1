#include "support/build_paths.h"

namespace eagle::test_support {
const char* build_source_dir() { return EAGLE_BUILD_SOURCE_DIR; }
const char* build_bin_dir() { return EAGLE_BUILD_BIN_DIR; }
const char* build_shared_data() { return EAGLE_BUILD_SHARED_DATA; }
const char* build_artifact_dir() { return EAGLE_BUILD_ARTIFACT_DIR; }
}  // namespace eagle::test_support
