#pragma once
// The file operations the store writes with, behind one interface, so a test double
// can fail any single call, write part of a buffer, or "lose power" (drop everything
// not yet synced) -- the spirit of SQLite's test VFS and LevelDB's fault-injection
// Env. Every file write of a collection (log, segments, MANIFEST, schema, quarantine,
// the catalog's TRANSACTIONS log) goes through a FileSystem; reads do not (they
// cannot lose data). The default is POSIX.
//
// Every failure is eagle::Error(unavailable) naming the path and the system's reason.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

namespace eagle::io {

// A file open for writing at its end.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  // Writes all `n` bytes at the end (a short write is retried; an error throws).
  virtual void append(const char* data, size_t n) = 0;
  // Cuts the file to `size` bytes (a failed append is rolled back this way).
  virtual void truncate(uint64_t size) = 0;
  // fdatasync: the bytes written so far survive a power loss once this returns.
  virtual void sync() = 0;
  virtual uint64_t size() const = 0;
  virtual const std::filesystem::path& path() const = 0;
};

class FileSystem {
 public:
  enum class OpenMode { append, truncate };  // keep the content / start empty
  virtual ~FileSystem() = default;
  virtual std::unique_ptr<WritableFile> open_writable(const std::filesystem::path& file, OpenMode mode) = 0;
  virtual void rename(const std::filesystem::path& from, const std::filesystem::path& to) = 0;
  // Swaps two existing entries (files or folders) in one atomic step (Linux
  // renameat2 RENAME_EXCHANGE), so no reader ever finds either name missing. false
  // when this file system cannot (the caller then renames twice and recovers the
  // gap after a crash); the default cannot.
  virtual bool exchange(const std::filesystem::path& a, const std::filesystem::path& b) {
    (void)a;
    (void)b;
    return false;
  }
  virtual void remove(const std::filesystem::path& file) = 0;  // an absent file is not an error
  virtual void remove_all(const std::filesystem::path& dir) = 0;
  virtual void create_directories(const std::filesystem::path& dir) = 0;
  virtual void truncate(const std::filesystem::path& file, uint64_t size) = 0;
  // fsync of a file or of a folder (after creating, renaming or removing entries in it).
  virtual void sync_path(const std::filesystem::path& p, bool is_dir) = 0;
};

// The process's POSIX file system.
FileSystem& posix();

// The file system to use when a caller gives none.
inline FileSystem& or_posix(FileSystem* fs) { return fs ? *fs : posix(); }

// create_directories, then a sync of the parent of each folder it made, so the new
// folders survive a power cut (their entries live in their parents).
void create_directories_durably(FileSystem& fs, const std::filesystem::path& dir);

// Crash-safe replacement of `file`: written to FILE.tmp through a buffered stream,
// synced, renamed over FILE, and the folder synced. A crash leaves the old file or
// the new one (at worst a stray .tmp that openers delete). `on_bytes`, when given,
// sees every byte written, in order (block checksums are computed this way).
// `tmp_suffix` names the temporary file (FILE + suffix).
void write_file_atomic(FileSystem& fs, const std::filesystem::path& file,
                       const std::function<void(std::ostream&)>& write,
                       const std::function<void(const char*, size_t)>& on_bytes = {},
                       const std::string& tmp_suffix = ".tmp");

}  // namespace eagle::io
