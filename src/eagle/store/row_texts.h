#pragma once
// Row texts kept on disk and read back by reference, so a collection's memory does not
// grow with its texts (the 1,000,000-row ingest of the reliability issue held ~250
// bytes a row of text in strings). A row's text lives in one of two files:
//   - the collection's segment, where the last checkpoint wrote it (read in place);
//   - the spill file, an unnamed temporary file (O_TMPFILE in the collection's folder;
//     the system's temporary folder for read-only and in-memory collections) holding
//     the texts of rows written since: the log holds them durably, so the spill needs
//     no fsync and is rebuilt by replay after a crash. It is opened at the first
//     flush, so a collection nobody writes holds one descriptor (its segment).
// A damaged text (checksum) fails the read that needs it and every checkpoint until
// the store is repaired: it is reported, never served or carried into a new segment.
// A checkpoint writes every text into the new segment and moves the references there
// (switch_segment), which empties the spill. Reads use pread, not mmap: mapped pages
// would count in the process's resident memory. Each reference carries the CRC-32
// of its bytes, verified on every read: a flipped byte is data_loss naming the file
// and the byte range, never served.
//
// The spill is written outside io::FileSystem (the fault-injection layer): its writes
// never decide what survives (the log does), and a failed one keeps the bytes in memory.
//
// Thread safety: spill() and the moves change state and need the owner's exclusive
// lock; read() is const and safe under a shared lock.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace eagle::store {

struct TextRef {
  uint64_t offset : 63 = 0;  // byte offset in its file
  uint64_t in_spill : 1 = 0;  // 1: the spill file; 0: the segment
  uint32_t length = 0;
  uint32_t crc = 0;  // CRC-32 (zlib, as the other store files) of the bytes
};
static_assert(sizeof(TextRef) == 16);

class RowTexts {
 public:
  // `dir` is where the spill is created (empty: the system's temporary folder).
  // Nothing is opened yet.
  explicit RowTexts(const std::filesystem::path& dir);
  ~RowTexts();
  RowTexts(const RowTexts&) = delete;
  RowTexts& operator=(const RowTexts&) = delete;

  // Appends `text` to the spill (buffered in memory until flush()) and returns where.
  TextRef spill(std::string_view text);
  // Writes the buffered spill bytes. Never throws: on an error (no spill file, a
  // failed or short write) every buffered byte stays in the buffer, where reads find
  // it, and the next flush writes it again at the same offsets; a warning is logged.
  void flush() noexcept;

  // The text at `ref`; data_loss when its bytes fail the checksum, unavailable when
  // the file cannot be read.
  std::string read(const TextRef& ref) const;
  void read_into(const TextRef& ref, std::string& out) const;

  // A segment being loaded: texts are then referenced in place (segment_ref). Opens
  // `file` for reading; the previous segment (if any) is closed. Returns the path
  // through which to read the very file opened (/proc/self/fd/N), so a loader reads
  // the same bytes its references will point into even if a compaction renames a new
  // segment over the name meanwhile.
  std::filesystem::path open_segment(const std::filesystem::path& file);
  static TextRef segment_ref(uint64_t offset, std::string_view text);
  // After a checkpoint wrote every row's text into `file` (the owner points its
  // references there): reads go to that segment, and the spill is emptied.
  void switch_segment(const std::filesystem::path& file);
  // Forgets every text (the rows are being rebuilt): empties the spill.
  void clear();

  uint64_t spill_bytes() const { return spill_flushed_ + spill_buffer_.size(); }

 private:
  void pread_exact(int fd, char* out, size_t n, uint64_t offset, const std::string& name) const;
  std::string file_name(const TextRef& ref) const;

  std::filesystem::path dir_;
  int spill_fd_ = -1;  // opened at the first flush
  bool warned_ = false;
  uint64_t spill_flushed_ = 0;  // bytes of the spill file already written
  std::string spill_buffer_;    // bytes past spill_flushed_
  int segment_fd_ = -1;
  std::filesystem::path segment_;
};

}  // namespace eagle::store
