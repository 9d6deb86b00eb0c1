#include "eagle/core/file_system.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <streambuf>
#include <vector>

#include "eagle/core/error.h"

namespace eagle::io {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void sys_fail(const std::string& what, const fs::path& p, int err) {
  fail(ErrorCode::unavailable, "cannot " + what + " " + p.string() + ": " + std::strerror(err));
}

class PosixWritableFile : public WritableFile {
 public:
  PosixWritableFile(const fs::path& file, FileSystem::OpenMode mode) : path_(file) {
    const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (mode == FileSystem::OpenMode::truncate ? O_TRUNC : 0);
    fd_ = ::open(file.c_str(), flags, 0644);
    if (fd_ < 0) sys_fail("open", file, errno);
    const off_t end = ::lseek(fd_, 0, SEEK_END);
    if (end < 0) {
      const int err = errno;
      ::close(fd_);
      sys_fail("seek", file, err);
    }
    size_ = static_cast<uint64_t>(end);
  }
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }
  void append(const char* data, size_t n) override {
    size_t done = 0;
    while (done < n) {
      const ssize_t w = ::pwrite(fd_, data + done, n - done, static_cast<off_t>(size_ + done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        size_ += done;
        sys_fail("write", path_, errno);
      }
      if (w == 0) {
        size_ += done;
        fail(ErrorCode::unavailable, "cannot write " + path_.string() + ": no progress");
      }
      done += static_cast<size_t>(w);
    }
    size_ += n;
  }
  void truncate(uint64_t size) override {
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) sys_fail("truncate", path_, errno);
    size_ = size;
  }
  void sync() override {
    if (::fdatasync(fd_) != 0) sys_fail("sync", path_, errno);
  }
  uint64_t size() const override { return size_; }
  const fs::path& path() const override { return path_; }

 private:
  fs::path path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

class PosixFileSystem : public FileSystem {
 public:
  std::unique_ptr<WritableFile> open_writable(const fs::path& file, OpenMode mode) override {
    return std::make_unique<PosixWritableFile>(file, mode);
  }
  void rename(const fs::path& from, const fs::path& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) sys_fail("rename " + from.string() + " to", to, errno);
  }
  bool exchange(const fs::path& a, const fs::path& b) override {
    if (::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0) return true;
    // Not supported by this kernel or file system: the caller's two renames.
    if (errno == EINVAL || errno == ENOSYS || errno == ENOTSUP || errno == EOPNOTSUPP) return false;
    sys_fail("exchange " + a.string() + " with", b, errno);
  }
  void remove(const fs::path& file) override {
    if (::unlink(file.c_str()) != 0 && errno != ENOENT) sys_fail("remove", file, errno);
  }
  void remove_all(const fs::path& dir) override {
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (ec) fail(ErrorCode::unavailable, "cannot remove " + dir.string() + ": " + ec.message());
  }
  void create_directories(const fs::path& dir) override {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) fail(ErrorCode::unavailable, "cannot create " + dir.string() + ": " + ec.message());
  }
  void truncate(const fs::path& file, uint64_t size) override {
    if (::truncate(file.c_str(), static_cast<off_t>(size)) != 0) sys_fail("truncate", file, errno);
  }
  void sync_path(const fs::path& p, bool is_dir) override {
    const int fd = ::open(p.c_str(), (is_dir ? (O_RDONLY | O_DIRECTORY) : O_RDONLY) | O_CLOEXEC);
    if (fd < 0) sys_fail("open to sync", p, errno);
    const int rc = ::fsync(fd);
    const int saved = errno;
    ::close(fd);
    // A failed fsync means the data may not be on disk: the write is not durable.
    if (rc != 0) sys_fail("sync", p, saved);
  }
};

// A buffered stream onto a WritableFile. An error of the file is kept (the stream
// only sees "failed") and rethrown by finish(), so its message and type survive.
class FileStreamBuf : public std::streambuf {
 public:
  FileStreamBuf(WritableFile& file, const std::function<void(const char*, size_t)>& on_bytes)
      : file_(file), on_bytes_(on_bytes), buf_(1u << 20) {
    setp(buf_.data(), buf_.data() + buf_.size());
  }
  void finish() {
    flush_buffer();
    if (error_) std::rethrow_exception(error_);
  }

 protected:
  int_type overflow(int_type c) override {
    if (!flush_buffer()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return flush_buffer() ? 0 : -1; }

 private:
  bool flush_buffer() {
    if (error_) return false;
    const size_t n = static_cast<size_t>(pptr() - pbase());
    if (n == 0) return true;
    try {
      if (on_bytes_) on_bytes_(pbase(), n);
      file_.append(pbase(), n);
    } catch (...) {
      error_ = std::current_exception();
      return false;
    }
    setp(buf_.data(), buf_.data() + buf_.size());
    return true;
  }

  WritableFile& file_;
  const std::function<void(const char*, size_t)>& on_bytes_;
  std::vector<char> buf_;
  std::exception_ptr error_;
};

}  // namespace

FileSystem& posix() {
  static PosixFileSystem instance;
  return instance;
}

void create_directories_durably(FileSystem& fs, const fs::path& dir) {
  std::vector<fs::path> made;
  for (fs::path p = dir; !p.empty() && !fs::exists(p); p = p.parent_path()) {
    made.push_back(p);
    if (p == p.parent_path()) break;
  }
  if (made.empty()) return;
  fs.create_directories(dir);
  for (auto it = made.rbegin(); it != made.rend(); ++it)
    fs.sync_path(it->parent_path().empty() ? fs::path(".") : it->parent_path(), true);
}

void write_file_atomic(FileSystem& fs, const fs::path& file, const std::function<void(std::ostream&)>& write,
                       const std::function<void(const char*, size_t)>& on_bytes, const std::string& tmp_suffix) {
  const fs::path tmp = file.string() + tmp_suffix;
  {
    auto out_file = fs.open_writable(tmp, FileSystem::OpenMode::truncate);
    FileStreamBuf buf(*out_file, on_bytes);
    std::ostream out(&buf);
    write(out);
    out.flush();
    buf.finish();
    if (!out) fail(ErrorCode::unavailable, "write failed for " + tmp.string());
    out_file->sync();
  }
  fs.rename(tmp, file);
  fs.sync_path(file.parent_path().empty() ? fs::path(".") : file.parent_path(), true);
}

}  // namespace eagle::io
