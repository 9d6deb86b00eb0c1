#pragma once
// Helpers for the vocabulary tests: a per-test temp folder with inline fixture files.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "eagle/biomed/vocab/entity.h"
#include "eagle/biomed/vocab/vocabulary.h"

namespace eagle::biomed::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("eagle_vocab_test_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path write(const std::string& name, const std::string& content) const {
    auto p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }

 private:
  std::filesystem::path path_;
};

inline Entity make_entity(std::string key, std::string name, EntityType type,
                          std::vector<std::string> aliases = {}) {
  Entity e;
  e.key = std::move(key);
  e.name = std::move(name);
  e.type = type;
  e.aliases = std::move(aliases);
  return e;
}

}  // namespace eagle::biomed::testing
