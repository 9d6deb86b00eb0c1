#include "eagle/app/build_paths.h"

namespace eagle::app {
const char* build_source_dir() { return EAGLE_BUILD_SOURCE_DIR; }
const char* build_shared_data() { return EAGLE_BUILD_SHARED_DATA; }
const char* build_glove_json() { return EAGLE_BUILD_GLOVE_JSON; }
}  // namespace eagle::app
