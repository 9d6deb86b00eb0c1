#pragma once
// Crash-safe file replacement, shared by every store file: write to FILE.tmp,
// flush, fsync, rename over FILE, fsync the folder. A crash leaves the old file or
// the new one, never a torn one (at worst a stray .tmp that openers delete).
#include <filesystem>
#include <functional>
#include <ostream>

namespace eagle {

// fsync(2) of a file or a folder (after creating, renaming or removing entries in
// it); unavailable naming the path when it cannot be opened or synced.
void fsync_path(const std::filesystem::path& p, bool is_dir);

// Throws eagle::Error(unavailable) naming the file when any step fails.
void write_file_atomic(const std::filesystem::path& file, const std::function<void(std::ostream&)>& write);

// The same for a cache that several processes may rebuild at once (the compiled
// vocabulary, the converted word vectors): each writes its own FILE.tmp.<pid>.<n>, so
// two writers never interleave in one temporary file; the last rename wins whole.
void write_shared_file_atomic(const std::filesystem::path& file, const std::function<void(std::ostream&)>& write);

}  // namespace eagle
