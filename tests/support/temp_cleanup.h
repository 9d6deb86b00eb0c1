#pragma once
// Folders a test binary makes under the temp folder, removed when the binary's tests
// end (passed or failed): CI runs the suite on the same machine again and again.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

namespace eagle::test_support {

class TempCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    for (const auto& p : paths_) std::filesystem::remove_all(p, ec);
  }
  void add(std::filesystem::path p) { paths_.push_back(std::move(p)); }

 private:
  std::vector<std::filesystem::path> paths_;
};

// Registers `p` for removal at the end; returns it.
inline const std::filesystem::path& remove_at_end(const std::filesystem::path& p) {
  static TempCleanup* env = static_cast<TempCleanup*>(::testing::AddGlobalTestEnvironment(new TempCleanup));
  env->add(p);
  return p;
}

}  // namespace eagle::test_support
