#pragma once
// Shared by the libFuzzer targets (fuzz/*.cpp, scripts/fuzz.sh): a per-process temp
// folder for targets whose parser reads a file, and the bytes as a string.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace eagle::fuzz {

inline const std::filesystem::path& work_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("eagle_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::string bytes(const uint8_t* data, size_t size) { return std::string(reinterpret_cast<const char*>(data), size); }

// Writes the input to `name` in the work folder and returns its path.
inline std::filesystem::path as_file(const std::string& name, const uint8_t* data, size_t size) {
  auto p = work_dir() / name;
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                             static_cast<std::streamsize>(size));
  return p;
}

}  // namespace eagle::fuzz
