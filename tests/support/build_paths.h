// Where this build's checkout, binaries, shared data and test artifacts are. The paths
// are fixed at build time in build_paths.cpp alone, so that no other test object file
// depends on where the checkout is: a compiler cache then reuses every other object
// across clones of the repository (scripts/test.sh, docs/benchmarks.md "CI stages").
#pragma once

namespace eagle::test_support {
const char* build_source_dir();    // the repository root
const char* build_bin_dir();       // build/bin
const char* build_shared_data();   // ../shared/data beside the checkout
const char* build_artifact_dir();  // build/test-artifacts
}  // namespace eagle::test_support

#define EAGLE_SOURCE_DIR (::eagle::test_support::build_source_dir())
#define EAGLE_BIN_DIR (::eagle::test_support::build_bin_dir())
#define EAGLE_SHARED_DATA (::eagle::test_support::build_shared_data())
#define EAGLE_ARTIFACT_DIR (::eagle::test_support::build_artifact_dir())
