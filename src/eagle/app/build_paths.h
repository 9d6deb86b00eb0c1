#pragma once
// Paths fixed when this build was configured: the checkout, the shared evaluation data
// beside it, the npm GloVe asset. They live in build_paths.cpp alone, so that no other
// object file depends on the folder the checkout is in and a compiler cache reuses
// every other object across clones (EAGLE_CCACHE in CMakeLists.txt).
namespace eagle::app {
const char* build_source_dir();   // the repository root
const char* build_shared_data();  // ../shared/data beside the checkout
const char* build_glove_json();   // the wink GloVe JSON the embedded encoder converts
}  // namespace eagle::app
