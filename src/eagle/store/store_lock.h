#pragma once
// One process owns a data folder for writing (`eagle serve`, `eagle ingest`,
// `eagle documents delete`, `eagle checkpoint` ...): an exclusive flock(2) on
// DATA_DIR/LOCK, held for the life of the StoreLock. The kernel drops the lock when
// the process dies, so a crash never leaves a stale lock. The file records who holds
// it (pid, command, start time) so a second writer's error can say which process to
// stop or which server's API to use instead.
#include <filesystem>
#include <string>

namespace eagle::store {

class StoreLock {
 public:
  // Takes the lock at once or throws eagle::Error(conflict) naming the holder.
  // `command` is what this process is ("eagle serve on 127.0.0.1:8686").
  static StoreLock acquire(const std::filesystem::path& data_dir, const std::string& command);

  StoreLock(StoreLock&& other) noexcept;
  StoreLock& operator=(StoreLock&& other) noexcept;
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;
  ~StoreLock();

  const std::filesystem::path& path() const { return path_; }

  // What the lock file says about its holder ("" when nobody wrote it).
  static std::string holder(const std::filesystem::path& data_dir);

 private:
  StoreLock(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace eagle::store
