#pragma once
// Write-ahead log of a collection. Every write is appended as one framed record and
// made durable (fdatasync) before the write is acknowledged. Frame:
//   u32 payload length | u32 CRC-32 of (lsn, op, payload) | u64 lsn | u8 op | payload
// A torn tail (the last frame running past the end of the file, failing its CRC at the
// very end, or zero-filled: a write a crash interrupted, never acknowledged) is cut off
// on open so the log stays appendable. A bad frame with more data after it is
// corruption: the log refuses to open (data_loss, naming file and offset) and
// `eagle repair` keeps the records before it.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "eagle/core/file_system.h"

namespace eagle::store {

// Payloads (record_codec.h): insert, upsert, delete_ids, replace and txn_part hold a
// binary write (deletes, then records; a txn_part carries its transaction id), applied
// as one write; a txn_part is applied at replay only when its transaction's
// txn_commit follows (or the catalog's TRANSACTIONS log holds its id).
// txn_commit: "<16 hex digits>": the commit record of that transaction.
// Logs written before the binary form hold JSON text (insert/upsert: [records];
// delete_ids: [ids]; replace: {"delete": [ids], "upsert": [records]}; txn_part:
// "<16 hex digits>\n" + a replace object); replay still reads them.
enum class WalOp : uint8_t { insert = 1, upsert = 2, delete_ids = 3, replace = 4, txn_part = 5, txn_commit = 6 };
inline constexpr uint8_t kMaxWalOp = 6;

enum class WalSync : uint8_t { always, none };  // none: tests and bulk loads only

class WalWriter {
 public:
  WalWriter(const std::filesystem::path& file, WalSync sync, io::FileSystem& fs = io::posix());
  ~WalWriter();
  WalWriter(const WalWriter&) = delete;
  WalWriter& operator=(const WalWriter&) = delete;

  // Appends one record and syncs it; throws eagle::Error(unavailable) on I/O failure.
  // A failed write is rolled back (the file cut to where the frame began) so a later
  // append is never hidden behind a torn frame; if the cut or the sync fails, the
  // writer refuses every later append until the store is reopened (after a failed
  // fsync the kernel may have dropped the pages: nothing later can be trusted).
  void append(uint64_t lsn, WalOp op, const std::string& payload);
  const std::filesystem::path& path() const { return path_; }
  bool broken() const { return !broken_reason_.empty(); }

 private:
  std::filesystem::path path_;
  std::unique_ptr<io::WritableFile> file_;
  WalSync sync_;
  uint64_t end_ = 0;  // file size after the last good frame
  std::string broken_reason_;
};

struct WalReplayStats {
  uint64_t records = 0;
  uint64_t last_lsn = 0;
  bool truncated_tail = false;  // a torn record was found (and cut off when asked)
  uint64_t torn_bytes = 0;      // bytes of that torn tail
  uint64_t bytes = 0;           // bytes of intact records
  bool corrupt = false;         // (scan_wal only) a bad frame with data after it, at offset `bytes`
  uint64_t file_bytes = 0;
};

// Calls `apply(lsn, op, payload)` for each intact record in order. A torn tail ends
// the replay; the owner of the log (truncate_torn_tail) cuts it off, a reader leaves
// the file as it is. Corruption before the end throws data_loss naming the file, the
// offset and how many bytes follow it. Payloads larger than kMaxWalPayload or an
// unknown op are a bad frame.
WalReplayStats replay_wal(const std::filesystem::path& file,
                          const std::function<void(uint64_t, WalOp, const std::string&)>& apply,
                          bool truncate_torn_tail = true, io::FileSystem& fs = io::posix());

// Reads the log without applying or changing anything: where its intact prefix ends
// and whether what follows is a torn tail or corruption.
WalReplayStats scan_wal(const std::filesystem::path& file);

inline constexpr uint32_t kMaxWalPayload = 256u << 20;

}  // namespace eagle::store
