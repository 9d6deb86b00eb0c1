#include "eagle/core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "eagle/core/error.h"

namespace eagle {
namespace fs = std::filesystem;

void fsync_path(const fs::path& p, bool is_dir) {
  int fd = ::open(p.c_str(), (is_dir ? (O_RDONLY | O_DIRECTORY) : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) fail(ErrorCode::unavailable, "cannot open " + p.string() + " to sync it: " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  // A failed fsync means the data may not be on disk: the write is not durable.
  if (rc != 0) fail(ErrorCode::unavailable, "cannot sync " + p.string() + ": " + std::strerror(saved));
}

void write_file_atomic(const fs::path& file, const std::function<void(std::ostream&)>& write) {
  const fs::path tmp = file.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(ErrorCode::unavailable, "cannot write " + tmp.string());
    write(out);
    out.flush();
    if (!out) fail(ErrorCode::unavailable, "write failed for " + tmp.string());
  }
  fsync_path(tmp, false);
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) fail(ErrorCode::unavailable, "cannot replace " + file.string() + ": " + ec.message());
  fsync_path(file.parent_path().empty() ? fs::path(".") : file.parent_path(), true);
}

}  // namespace eagle
