#include "eagle/store/row_texts.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include <spdlog/spdlog.h>

#include "eagle/core/error.h"

namespace fs = std::filesystem;

namespace eagle::store {

namespace {

uint32_t crc_of(std::string_view s) {
  return static_cast<uint32_t>(
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
}

// Flushes once this much is buffered: large enough for few writes, small against
// the memory the spill saves.
constexpr size_t kSpillFlushBytes = size_t{1} << 20;

// An unnamed file in `dir` (gone when closed, nothing to clean up after a crash);
// where the folder refuses (read-only store, no O_TMPFILE support), one in the
// system's temporary folder.
int open_unnamed_file(const fs::path& dir) {
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  const fs::path first = dir.empty() ? tmp : dir;
  const int fd = ::open(first.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  // No O_TMPFILE here: a named file in the temporary folder (never in the store,
  // where a crash before the unlink would leave it), unlinked at once.
  std::string name = (tmp / "eagle-texts-XXXXXX").string();
  const int named = ::mkostemp(name.data(), O_CLOEXEC);
  if (named >= 0) {
    ::unlink(name.c_str());
    return named;
  }
  fail(ErrorCode::unavailable, "cannot create the row-text spill file in " + first.string() + " or " + tmp.string() +
                                   ": " + std::strerror(errno));
}

}  // namespace

RowTexts::RowTexts(const fs::path& dir) : dir_(dir) {}

RowTexts::~RowTexts() {
  if (spill_fd_ >= 0) ::close(spill_fd_);
  for (const auto& f : segments_)
    if (f.fd >= 0) ::close(f.fd);
}

TextRef RowTexts::spill(std::string_view text) {
  TextRef ref;
  ref.offset = spill_bytes();
  ref.in_spill = 1;
  ref.length = static_cast<uint32_t>(text.size());
  ref.crc = crc_of(text);
  spill_buffer_.append(text);
  return ref;
}

bool RowTexts::flush_due() const { return spill_buffer_.size() >= kSpillFlushBytes; }

void RowTexts::flush() noexcept {
  if (const size_t n = write_buffered()) drop_written(n);
}

void RowTexts::drop_written(size_t bytes) {
  spill_flushed_ += bytes;
  spill_buffer_.erase(0, bytes);
}

size_t RowTexts::write_buffered() noexcept {
  if (spill_buffer_.empty()) return 0;
  std::string why;
  if (spill_fd_ < 0) {
    try {
      spill_fd_ = open_unnamed_file(dir_);
    } catch (const std::exception& e) {
      why = e.what();
    }
  }
  size_t done = 0;
  while (why.empty() && done < spill_buffer_.size()) {
    const ssize_t n = ::pwrite(spill_fd_, spill_buffer_.data() + done, spill_buffer_.size() - done,
                               static_cast<off_t>(spill_flushed_ + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) why = std::string("cannot write the row-text spill file: ") + std::strerror(errno);
    if (n == 0) why = "the row-text spill file took no bytes";
    if (n > 0) done += static_cast<size_t>(n);
  }
  if (!why.empty()) {
    // All of it stays buffered (a part written is written again at the same offsets),
    // so every text is whole in exactly one place: memory grows instead of failing.
    if (!warned_)
      spdlog::warn("{}: {}; keeping row texts in memory ({} bytes) until a write succeeds",
                   dir_.empty() ? std::string("an in-memory collection") : dir_.string(), why, spill_buffer_.size());
    warned_ = true;
    return 0;
  }
  return done;
}

std::string RowTexts::file_name(const TextRef& ref) const {
  if (ref.in_spill)
    return "the row-text spill file of " + (dir_.empty() ? std::string("an in-memory collection") : dir_.string());
  return ref.file < segments_.size() ? segments_[ref.file].name.string() : "segment file slot " + std::to_string(ref.file);
}

void RowTexts::pread_exact(int fd, char* out, size_t n, uint64_t offset, const std::string& name) const {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd, out + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail(ErrorCode::unavailable, "cannot read " + name + ": " + std::strerror(errno));
    if (got == 0)
      fail(ErrorCode::data_loss, name + " ends before the row text at bytes [" + std::to_string(offset) + ", " +
                                     std::to_string(offset + n) + ")");
    done += static_cast<size_t>(got);
  }
}

void RowTexts::read_into(const TextRef& ref, std::string& out) const {
  out.resize(ref.length);
  if (ref.length == 0) return;
  if (ref.in_spill && ref.offset >= spill_flushed_) {
    // Not written yet: still in the buffer.
    std::memcpy(out.data(), spill_buffer_.data() + (ref.offset - spill_flushed_), ref.length);
  } else {
    const int fd = ref.in_spill ? spill_fd_ : ref.file < segments_.size() ? segments_[ref.file].fd : -1;
    if (fd < 0) fail(ErrorCode::internal, "a row text refers to a file that is not open: " + file_name(ref));
    pread_exact(fd, out.data(), ref.length, ref.offset, file_name(ref));
  }
  if (crc_of(out) != ref.crc)
    fail(ErrorCode::data_loss, "row text in " + file_name(ref) + " at bytes [" + std::to_string(ref.offset) + ", " +
                                   std::to_string(ref.offset + ref.length) + ") fails its checksum");
}

std::string RowTexts::read(const TextRef& ref) const {
  std::string out;
  read_into(ref, out);
  return out;
}

SegmentFileSlot RowTexts::open_segment(const fs::path& file) {
  size_t slot = 0;
  while (slot < segments_.size() && segments_[slot].fd >= 0) ++slot;
  if (slot >= kMaxSegmentFiles)
    fail(ErrorCode::unavailable, "too many open segment files (" + std::to_string(kMaxSegmentFiles) + ")");
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(ErrorCode::unavailable, "cannot open " + file.string() + ": " + std::strerror(errno));
  if (slot == segments_.size()) segments_.emplace_back();
  segments_[slot] = {fd, file};
  return static_cast<SegmentFileSlot>(slot);
}

fs::path RowTexts::opened_path(SegmentFileSlot slot) const {
  if (slot >= segments_.size() || segments_[slot].fd < 0)
    fail(ErrorCode::internal, "segment file slot " + std::to_string(slot) + " is not open");
  return fs::path("/proc/self/fd") / std::to_string(segments_[slot].fd);
}

void RowTexts::close_segment(SegmentFileSlot slot) {
  if (slot >= segments_.size() || segments_[slot].fd < 0) return;
  ::close(segments_[slot].fd);
  segments_[slot] = {};
}

TextRef RowTexts::segment_ref(uint64_t offset, std::string_view text, SegmentFileSlot slot) {
  TextRef ref;
  ref.offset = offset;
  ref.file = slot;
  ref.in_spill = 0;
  ref.length = static_cast<uint32_t>(text.size());
  ref.crc = crc_of(text);
  return ref;
}

TextRef RowTexts::segment_ref(uint64_t offset, uint32_t length, uint32_t crc, SegmentFileSlot slot) {
  TextRef ref;
  ref.offset = offset;
  ref.file = slot;
  ref.in_spill = 0;
  ref.length = length;
  ref.crc = crc;
  return ref;
}

void RowTexts::empty_spill() {
  spill_buffer_.clear();
  spill_flushed_ = 0;
  // Closed, not truncated: ext4 (auto_da_alloc) treats a file truncated to zero and
  // written again as a replace-by-truncate and forces its data out at every journal
  // commit, i.e. at every fsync of the log. Closing the unnamed file frees its blocks;
  // the next flush opens a fresh one.
  if (spill_fd_ >= 0) ::close(spill_fd_);
  spill_fd_ = -1;
}

void RowTexts::clear() {
  empty_spill();
  for (size_t slot = 0; slot < segments_.size(); ++slot) close_segment(static_cast<SegmentFileSlot>(slot));
}

}  // namespace eagle::store
