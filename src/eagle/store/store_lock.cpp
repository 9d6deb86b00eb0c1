#include "eagle/store/store_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include "eagle/core/atomic_file.h"
#include "eagle/core/error.h"

namespace eagle::store {
namespace fs = std::filesystem;

namespace {
std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}
}  // namespace

std::string StoreLock::holder(const fs::path& data_dir) {
  std::ifstream in(data_dir / "LOCK");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

StoreLock StoreLock::acquire(const fs::path& data_dir, const std::string& command) {
  std::error_code ec;
  fs::create_directories(data_dir, ec);
  if (ec) fail(ErrorCode::unavailable, "cannot create the store folder " + data_dir.string() + ": " + ec.message());
  const fs::path file = data_dir / "LOCK";
  int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) fail(ErrorCode::unavailable, "cannot open " + file.string() + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err != EWOULDBLOCK)
      fail(ErrorCode::unavailable, "cannot lock " + file.string() + ": " + std::strerror(err));
    std::string who = holder(data_dir);
    fail(ErrorCode::conflict,
         "the store at " + data_dir.string() + " is already open for writing by another process" +
             (who.empty() ? std::string() : " (" + who + ")") +
             "; only one process may write a store. While `eagle serve` owns it, add or delete documents "
             "through its HTTP API (POST /ingest, DELETE /documents/{id}); otherwise wait for that process "
             "to finish. Reading commands (`eagle search`) work alongside it.");
  }
  // We hold it: record who we are (for the next writer's message).
  std::string who = "pid " + std::to_string(::getpid()) + ", " + command + ", since " + utc_now();
  if (::ftruncate(fd, 0) == 0) {
    ssize_t w = ::pwrite(fd, who.data(), who.size(), 0);
    (void)w;  // the note is advisory; the flock is what excludes
  }
  return StoreLock(file, fd);
}

StoreLock::StoreLock(StoreLock&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) { other.fd_ = -1; }

StoreLock& StoreLock::operator=(StoreLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

StoreLock::~StoreLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the flock
}

}  // namespace eagle::store
