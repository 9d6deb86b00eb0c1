#include "eagle/core/atomic_file.h"

#include "eagle/core/file_system.h"

#include <unistd.h>

#include <atomic>
#include <string>

namespace eagle {
namespace fs = std::filesystem;

void fsync_path(const fs::path& p, bool is_dir) { io::posix().sync_path(p, is_dir); }

void write_file_atomic(const fs::path& file, const std::function<void(std::ostream&)>& write) {
  io::write_file_atomic(io::posix(), file, write);
}

void write_shared_file_atomic(const fs::path& file, const std::function<void(std::ostream&)>& write) {
  static std::atomic<unsigned> counter{0};
  const std::string suffix = ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  try {
    io::write_file_atomic(io::posix(), file, write, {}, suffix);
  } catch (...) {
    std::error_code ignored;
    fs::remove(file.string() + suffix, ignored);
    throw;
  }
}

}  // namespace eagle
