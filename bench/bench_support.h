#pragma once
// Shared by the benchmark programs.
#include <cstdint>
#include <filesystem>

namespace eagle::bench {

// Bytes of every file under `dir` (a store's size on disk).
inline uint64_t folder_bytes(const std::filesystem::path& dir) {
  uint64_t n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file()) n += e.file_size();
  return n;
}

}  // namespace eagle::bench
