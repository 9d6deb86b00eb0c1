#include "eagle/store/wal.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "eagle/core/error.h"

namespace eagle::store {
namespace {

constexpr size_t kHeader = 4 + 4 + 8 + 1;

uint32_t frame_crc(uint64_t lsn, uint8_t op, const char* payload, size_t n) {
  uLong c = crc32(0L, Z_NULL, 0);
  c = crc32(c, reinterpret_cast<const Bytef*>(&lsn), sizeof(lsn));
  c = crc32(c, &op, 1);
  c = crc32(c, reinterpret_cast<const Bytef*>(payload), static_cast<uInt>(n));
  return static_cast<uint32_t>(c);
}

}  // namespace

WalWriter::WalWriter(const std::filesystem::path& file, WalSync sync) : path_(file), sync_(sync) {
  fd_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(ErrorCode::unavailable, "cannot open write-ahead log " + file.string() + ": " + std::strerror(errno));
}

WalWriter::~WalWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void WalWriter::append(uint64_t lsn, WalOp op, const std::string& payload) {
  if (payload.size() > kMaxWalPayload) fail(ErrorCode::invalid_argument, "write too large for one log record");
  std::vector<char> frame(kHeader + payload.size());
  const uint32_t len = static_cast<uint32_t>(payload.size());
  const uint8_t op8 = static_cast<uint8_t>(op);
  const uint32_t crc = frame_crc(lsn, op8, payload.data(), payload.size());
  std::memcpy(frame.data(), &len, 4);
  std::memcpy(frame.data() + 4, &crc, 4);
  std::memcpy(frame.data() + 8, &lsn, 8);
  frame[16] = static_cast<char>(op8);
  std::memcpy(frame.data() + kHeader, payload.data(), payload.size());
  // One write() call per frame: a crash leaves at most one torn frame at the end.
  size_t done = 0;
  while (done < frame.size()) {
    ssize_t w = ::write(fd_, frame.data() + done, frame.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail(ErrorCode::unavailable, "write-ahead log write failed: " + std::string(std::strerror(errno)));
    }
    done += static_cast<size_t>(w);
  }
  if (sync_ == WalSync::always && ::fdatasync(fd_) != 0)
    fail(ErrorCode::unavailable, "write-ahead log sync failed: " + std::string(std::strerror(errno)));
}

WalReplayStats replay_wal(const std::filesystem::path& file,
                          const std::function<void(uint64_t, WalOp, const std::string&)>& apply,
                          bool truncate_torn_tail) {
  WalReplayStats st;
  std::ifstream in(file, std::ios::binary);
  if (!in) return st;
  uint64_t good_end = 0;
  std::string payload;
  for (;;) {
    char header[kHeader];
    in.read(header, kHeader);
    if (in.gcount() == 0) break;  // clean end
    if (in.gcount() < static_cast<std::streamsize>(kHeader)) {
      st.truncated_tail = true;
      break;
    }
    uint32_t len, crc;
    uint64_t lsn;
    std::memcpy(&len, header, 4);
    std::memcpy(&crc, header + 4, 4);
    std::memcpy(&lsn, header + 8, 8);
    const uint8_t op = static_cast<uint8_t>(header[16]);
    if (len > kMaxWalPayload || op < 1 || op > kMaxWalOp) {
      st.truncated_tail = true;
      break;
    }
    payload.resize(len);
    in.read(payload.data(), len);
    if (static_cast<uint32_t>(in.gcount()) != len || frame_crc(lsn, op, payload.data(), len) != crc) {
      st.truncated_tail = true;
      break;
    }
    apply(lsn, static_cast<WalOp>(op), payload);
    ++st.records;
    st.last_lsn = lsn;
    good_end += kHeader + len;
  }
  in.close();
  st.bytes = good_end;
  if (st.truncated_tail && truncate_torn_tail) {
    // Cut the torn frame so later appends follow the last intact record.
    if (::truncate(file.c_str(), static_cast<off_t>(good_end)) != 0)
      fail(ErrorCode::unavailable, "cannot truncate torn log tail of " + file.string());
  }
  return st;
}

}  // namespace eagle::store
