#pragma once
// Write-ahead log of a collection. Every write is appended as one framed record and
// made durable (fdatasync) before the write is acknowledged. Frame:
//   u32 payload length | u32 CRC-32 of (lsn, op, payload) | u64 lsn | u8 op | payload
// Replay stops at the first incomplete or corrupt frame (a write torn by a crash,
// never acknowledged) and the file is truncated there, so the log stays appendable.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace eagle::store {

// replace: {"delete": [ids], "upsert": [records]} applied as one write.
enum class WalOp : uint8_t { insert = 1, upsert = 2, delete_ids = 3, replace = 4 };
inline constexpr uint8_t kMaxWalOp = 4;

enum class WalSync : uint8_t { always, none };  // none: tests and bulk loads only

class WalWriter {
 public:
  WalWriter(const std::filesystem::path& file, WalSync sync);
  ~WalWriter();
  WalWriter(const WalWriter&) = delete;
  WalWriter& operator=(const WalWriter&) = delete;

  // Appends one record and syncs it; throws eagle::Error(unavailable) on I/O failure.
  void append(uint64_t lsn, WalOp op, const std::string& payload);
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  WalSync sync_;
};

struct WalReplayStats {
  uint64_t records = 0;
  uint64_t last_lsn = 0;
  bool truncated_tail = false;  // a torn record was found (and cut off when asked)
  uint64_t bytes = 0;           // bytes of intact records
};

// Calls `apply(lsn, op, payload)` for each intact record in order and stops at the
// first torn or corrupt frame; the owner of the log (truncate_torn_tail) cuts it
// off, a reader leaves the file as it is. Payloads larger than kMaxWalPayload are
// treated as corruption.
WalReplayStats replay_wal(const std::filesystem::path& file,
                          const std::function<void(uint64_t, WalOp, const std::string&)>& apply,
                          bool truncate_torn_tail = true);

inline constexpr uint32_t kMaxWalPayload = 256u << 20;

}  // namespace eagle::store
