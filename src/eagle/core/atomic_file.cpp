#include "eagle/core/atomic_file.h"

#include "eagle/core/file_system.h"

namespace eagle {
namespace fs = std::filesystem;

void fsync_path(const fs::path& p, bool is_dir) { io::posix().sync_path(p, is_dir); }

void write_file_atomic(const fs::path& file, const std::function<void(std::ostream&)>& write) {
  io::write_file_atomic(io::posix(), file, write);
}

}  // namespace eagle
