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

enum class WalOp : uint8_t { insert = 1, upsert = 2, delete_ids = 3 };

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
  bool truncated_tail = false;  // a torn record was cut off
};

// Calls `apply(lsn, op, payload)` for each intact record in order; truncates a torn
// tail. Payloads larger than kMaxWalPayload are treated as corruption.
WalReplayStats replay_wal(const std::filesystem::path& file,
                          const std::function<void(uint64_t, WalOp, const std::string&)>& apply);

inline constexpr uint32_t kMaxWalPayload = 256u << 20;

}  // namespace eagle::store
