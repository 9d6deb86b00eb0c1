#pragma once
// Row texts kept on disk and read back by reference, so a collection's memory does not
// grow with its texts (held in strings, a 1,000,000-row ingest's texts cost ~250
// bytes a row). A row's text lives in one of these files:
//   - one of the collection's segment files, where a checkpoint or a merge wrote it
//     (read in place; each open segment file has a slot number the reference names);
//   - the spill file, an unnamed temporary file (O_TMPFILE in the collection's folder;
//     the system's temporary folder for read-only and in-memory collections) holding
//     the texts of rows written since: the log holds them durably, so the spill needs
//     no fsync and is rebuilt by replay after a crash. It is opened at the first
//     flush, so a collection nobody writes holds one descriptor (its segment).
// A damaged text (checksum) fails the read that needs it and every checkpoint until
// the store is repaired: it is reported, never served or carried into a new segment.
// A checkpoint writes the spilled texts into a new segment file and moves their
// references there (empty_spill). Reads use pread, not mmap: mapped pages
// would count in the process's resident memory. Each reference carries the CRC-32
// of its bytes, verified on every read: a flipped byte is data_loss naming the file
// and the byte range, never served.
//
// The spill is written outside io::FileSystem (the fault-injection layer): its writes
// never decide what survives (the log does), and a failed one keeps the bytes in memory.
//
// Thread safety: spill(), drop_written() and the moves change state and need the
// owner's exclusive lock; read() and write_buffered() change nothing a read sees and
// are safe under a shared lock (write_buffered() by one writer at a time).
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace eagle::store {

struct TextRef {
  uint64_t offset : 48 = 0;   // byte offset in its file
  uint64_t file : 15 = 0;     // the segment file's slot (RowTexts::open_segment)
  uint64_t in_spill : 1 = 0;  // 1: the spill file; 0: a segment file
  uint32_t length = 0;
  uint32_t crc = 0;  // CRC-32 (zlib, as the other store files) of the bytes
};
static_assert(sizeof(TextRef) == 16);
using SegmentFileSlot = uint16_t;
inline constexpr size_t kMaxSegmentFiles = size_t{1} << 15;

class RowTexts {
 public:
  // `dir` is where the spill is created (empty: the system's temporary folder).
  // Nothing is opened yet.
  explicit RowTexts(const std::filesystem::path& dir);
  ~RowTexts();
  RowTexts(const RowTexts&) = delete;
  RowTexts& operator=(const RowTexts&) = delete;

  // Appends `text` to the spill (buffered in memory until flushed) and returns where.
  TextRef spill(std::string_view text);
  // Whether enough is buffered that the owner should flush (1 MiB).
  bool flush_due() const;
  // Writes the buffered spill bytes. Never throws: on an error (no spill file, a
  // failed or short write) every buffered byte stays in the buffer, where reads find
  // it, and the next flush writes it again at the same offsets; a warning is logged.
  void flush() noexcept;
  // flush() in two steps, so the disk write needs no exclusive lock: write_buffered()
  // writes the buffer to the file without changing what reads see (a shared lock, or
  // none, suffices beside readers; writers excluded) and returns the bytes written (0:
  // nothing, or an error); drop_written(n) (exclusive) then reads them from the file.
  size_t write_buffered() noexcept;
  void drop_written(size_t bytes);

  // The text at `ref`; data_loss when its bytes fail the checksum, unavailable when
  // the file cannot be read.
  std::string read(const TextRef& ref) const;
  void read_into(const TextRef& ref, std::string& out) const;

  // A segment file whose texts are referenced in place (segment_ref): opened for
  // reading in a free slot, returned. Read the file being loaded through
  // opened_path(slot) (/proc/self/fd/N), so the loader reads the very bytes its
  // references will point into even if a compaction renames a new file over the name.
  SegmentFileSlot open_segment(const std::filesystem::path& file);
  std::filesystem::path opened_path(SegmentFileSlot slot) const;
  // Closes a segment file no reference names any more (its rows were merged away).
  void close_segment(SegmentFileSlot slot);
  static TextRef segment_ref(uint64_t offset, std::string_view text, SegmentFileSlot slot);
  // The same from the text's length and CRC as the file states them (segment rows of
  // layout 2), without reading the text.
  static TextRef segment_ref(uint64_t offset, uint32_t length, uint32_t crc, SegmentFileSlot slot);
  // After a checkpoint wrote every spilled text into a segment file (the owner points
  // their references there): the spill is emptied.
  void empty_spill();
  // Forgets every text (the rows are being rebuilt): empties the spill and closes
  // every segment file.
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
  struct SegmentFile {
    int fd = -1;  // -1: a free slot
    std::filesystem::path name;
  };
  std::vector<SegmentFile> segments_;
};

}  // namespace eagle::store
