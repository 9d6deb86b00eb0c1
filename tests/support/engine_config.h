#pragma once
// The configuration every Engine-level test starts from: the store at `data_dir` and
// one converted GloVe file shared by every test binary of the build.
#include <filesystem>
#include "support/build_paths.h"

#include "eagle/app/config.h"

namespace eagle::test_support {

inline app::Config engine_test_config(const std::filesystem::path& data_dir) {
  app::Config cfg;
  cfg.data_dir = data_dir.string();
  cfg.glove_file = (std::filesystem::path(EAGLE_BIN_DIR) / ".." / "eagle-assets" / "glove100.eaglewv").string();
  std::filesystem::create_directories(std::filesystem::path(cfg.glove_file).parent_path());
  return cfg;
}

}  // namespace eagle::test_support
