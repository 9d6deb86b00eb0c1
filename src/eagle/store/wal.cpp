#include "eagle/store/wal.h"

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

WalWriter::WalWriter(const std::filesystem::path& file, WalSync sync, io::FileSystem& fs)
    : path_(file), file_(fs.open_writable(file, io::FileSystem::OpenMode::append)), sync_(sync) {
  end_ = file_->size();
}

WalWriter::~WalWriter() = default;

void WalWriter::append(uint64_t lsn, WalOp op, const std::string& payload) {
  if (broken())
    fail(ErrorCode::unavailable, "write-ahead log " + path_.string() + " refuses writes after " + broken_reason_ +
                                     "; reopen the store");
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
  try {
    file_->append(frame.data(), frame.size());
  } catch (const std::exception& failed) {
    // Roll back: a later frame must never sit behind this torn one (replay would
    // stop at the torn frame and drop the acknowledged write after it).
    const ErrorCode code = dynamic_cast<const Error*>(&failed) ? static_cast<const Error&>(failed).code()
                                                                : ErrorCode::unavailable;
    try {
      file_->truncate(end_);
    } catch (const std::exception& e) {
      broken_reason_ = std::string("a failed write that could not be rolled back (") + e.what() + ")";
      fail(ErrorCode::unavailable, "write-ahead log " + path_.string() + ": " + failed.what() +
                                       "; the write is not acknowledged and the log refuses further writes");
    }
    fail(code, "write-ahead log " + path_.string() + ": " + failed.what() +
                   "; the write was rolled back, nothing was stored");
  }
  if (sync_ == WalSync::always) {
    try {
      file_->sync();
    } catch (const std::exception& e) {
      broken_reason_ = std::string("a failed sync (") + e.what() + ")";
      fail(ErrorCode::unavailable, "write-ahead log " + path_.string() + ": sync failed (" + e.what() +
                                       "); the write is not acknowledged and the log refuses further writes");
    } catch (...) {
      broken_reason_ = "a failed sync";
      throw;
    }
  }
  end_ += frame.size();
}

namespace {

// One pass over the log: calls `apply` (if given) for each intact frame; classifies
// what stops it.
WalReplayStats read_wal(const std::filesystem::path& file,
                        const std::function<void(uint64_t, WalOp, const std::string&)>* apply) {
  WalReplayStats st;
  std::ifstream in(file, std::ios::binary);
  if (!in) return st;
  std::error_code ec;
  st.file_bytes = std::filesystem::file_size(file, ec);
  uint64_t pos = 0;
  std::string payload;
  // Whether an intact frame starts anywhere after `from`: then the bad frame at
  // `from` is damage inside the log, not the tail a crash cut short.
  auto intact_frame_after = [&](uint64_t from) {
    std::ifstream r(file, std::ios::binary);
    r.seekg(static_cast<std::streamoff>(from));
    std::string rest(st.file_bytes - from, '\0');
    r.read(rest.data(), static_cast<std::streamsize>(rest.size()));
    rest.resize(static_cast<size_t>(r.gcount()));
    for (size_t off = 1; off + kHeader <= rest.size(); ++off) {
      uint32_t l, c;
      uint64_t n;
      std::memcpy(&l, rest.data() + off, 4);
      std::memcpy(&c, rest.data() + off + 4, 4);
      std::memcpy(&n, rest.data() + off + 8, 8);
      const uint8_t o = static_cast<uint8_t>(rest[off + 16]);
      if (o < 1 || o > kMaxWalOp || l > rest.size() - off - kHeader) continue;
      if (frame_crc(n, o, rest.data() + off + kHeader, l) == c) return true;
    }
    return false;
  };
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
    const uint64_t frame_end = pos + kHeader + len;
    if (len > kMaxWalPayload || op < 1 || op > kMaxWalOp || frame_end > st.file_bytes) {
      // A header that cannot be read as a frame of this file: the tail a crash cut
      // short, unless an intact frame follows.
      st.corrupt = intact_frame_after(pos);
      st.truncated_tail = !st.corrupt;
      break;
    }
    payload.resize(len);
    in.read(payload.data(), len);
    if (static_cast<uint32_t>(in.gcount()) != len) {
      st.truncated_tail = true;
      break;
    }
    if (frame_crc(lsn, op, payload.data(), len) != crc) {
      // The last frame may be one whose sync never finished; a bad frame with an
      // intact one after it is damage to an acknowledged write.
      st.corrupt = intact_frame_after(pos);
      st.truncated_tail = !st.corrupt;
      break;
    }
    if (apply) (*apply)(lsn, static_cast<WalOp>(op), payload);
    ++st.records;
    st.last_lsn = lsn;
    pos = frame_end;
  }
  st.bytes = pos;
  if (st.truncated_tail) st.torn_bytes = st.file_bytes - pos;
  return st;
}

}  // namespace

WalReplayStats scan_wal(const std::filesystem::path& file) { return read_wal(file, nullptr); }

WalReplayStats replay_wal(const std::filesystem::path& file,
                          const std::function<void(uint64_t, WalOp, const std::string&)>& apply,
                          bool truncate_torn_tail, io::FileSystem& fs) {
  WalReplayStats st = read_wal(file, &apply);
  if (st.corrupt)
    fail(ErrorCode::data_loss, "write-ahead log " + file.string() + " is corrupt at byte " + std::to_string(st.bytes) +
                                   " (after " + std::to_string(st.records) + " intact records; " +
                                   std::to_string(st.file_bytes - st.bytes) +
                                   " bytes follow); `eagle repair` keeps the records before it");
  if (st.truncated_tail && truncate_torn_tail) {
    // Cut the torn frame so later appends follow the last intact record.
    fs.truncate(file, st.bytes);
  }
  return st;
}

}  // namespace eagle::store
