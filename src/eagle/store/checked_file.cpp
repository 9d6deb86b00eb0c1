#include "eagle/store/checked_file.h"

#include <zlib.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "eagle/core/error.h"
#include "eagle/core/file_map.h"

namespace eagle::store {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr char kFooterMagic[8] = {'E', 'G', 'L', 'C', 'R', 'C', '0', '1'};
constexpr size_t kTrailer = 8 + 4 + sizeof(kFooterMagic);  // content length, block size, magic

uint32_t crc_of(const char* data, size_t n) {
  return static_cast<uint32_t>(crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data), static_cast<uInt>(n)));
}

// CRC-32 of each `block` bytes of a byte stream fed in pieces of any size: the writer
// feeds the bytes as they are written, the verifier as it reads them back.
class BlockCrcs {
 public:
  explicit BlockCrcs(uint64_t block) : block_(block) {}
  void add(const char* data, size_t n) {
    while (n > 0) {
      const size_t take = static_cast<size_t>(std::min<uint64_t>(n, block_ - in_block_));
      crc_ = crc32(crc_, reinterpret_cast<const Bytef*>(data), static_cast<uInt>(take));
      in_block_ += take;
      data += take;
      n -= take;
      if (in_block_ == block_) {
        crcs_.push_back(static_cast<uint32_t>(crc_));
        crc_ = crc32(0L, Z_NULL, 0);
        in_block_ = 0;
      }
    }
  }
  // The CRCs of every block, the last one possibly short.
  std::vector<uint32_t> finish() {
    if (in_block_ > 0) crcs_.push_back(static_cast<uint32_t>(crc_));
    in_block_ = 0;
    return std::move(crcs_);
  }

 private:
  uint64_t block_;
  uint64_t in_block_ = 0;
  uLong crc_ = crc32(0L, Z_NULL, 0);
  std::vector<uint32_t> crcs_;
};

[[noreturn]] void damaged(const fs::path& file, const std::string& what) {
  fail(ErrorCode::data_loss, file.string() + ": " + what + " (the file is damaged; it is not read)");
}

}  // namespace

void write_checked_file(io::FileSystem& fs, const fs::path& file, const std::function<void(std::ostream&)>& write) {
  // The block CRCs are computed from the bytes as they are written.
  BlockCrcs crcs(kChecksumBlock);
  uint64_t length = 0;
  bool footer = false;
  auto on_bytes = [&](const char* data, size_t n) {
    if (footer) return;
    length += n;
    crcs.add(data, n);
  };
  io::write_file_atomic(
      fs, file,
      [&](std::ostream& out) {
        write(out);
        out.flush();  // every content byte has passed on_bytes
        const auto block_crcs = crcs.finish();
        footer = true;
        out.write(reinterpret_cast<const char*>(block_crcs.data()),
                  static_cast<std::streamsize>(block_crcs.size() * 4));
        out.write(reinterpret_cast<const char*>(&length), 8);
        const uint32_t block = kChecksumBlock;
        out.write(reinterpret_cast<const char*>(&block), 4);
        out.write(kFooterMagic, sizeof(kFooterMagic));
      },
      on_bytes);
}

uint64_t checked_content_length(const fs::path& file, const char* bytes, uint64_t size) {
  if (size < kTrailer) damaged(file, "too short for its checksum footer");
  const char* trailer = bytes + size - kTrailer;
  uint64_t length;
  uint32_t block;
  std::memcpy(&length, trailer, 8);
  std::memcpy(&block, trailer + 8, 4);
  if (std::memcmp(trailer + 12, kFooterMagic, sizeof(kFooterMagic)) != 0)
    damaged(file, "no checksum footer at byte " + std::to_string(size - kTrailer));
  if (block == 0 || length > size) damaged(file, "checksum footer at byte " + std::to_string(size - kTrailer) + " is invalid");
  const uint64_t blocks = (length + block - 1) / block;
  if (length + blocks * 4 + kTrailer != size)
    damaged(file, "checksum footer at byte " + std::to_string(size - kTrailer) + " does not fit the file");
  return length;
}

uint64_t verify_checked_file(const fs::path& file, const fs::path& read_from, std::pair<uint64_t, uint64_t> unchecked) {
  const fs::path& source = read_from.empty() ? file : read_from;
  // Mapped, not read: the checksums are computed over the page cache in place (read()
  // spent more time copying a segment's bytes into a buffer than checksumming them).
  // Files verified here are never changed once written, only replaced by a rename.
  std::shared_ptr<const FileMap> map;
  try {
    map = FileMap::open(source);
  } catch (const Error&) {
    fail(ErrorCode::not_found, "cannot open " + file.string());
  }
  const uint64_t size = map->size();
  const char* bytes = reinterpret_cast<const char*>(map->data());
  const uint64_t length = checked_content_length(file, bytes, size);
  uint32_t block;
  std::memcpy(&block, bytes + size - kTrailer + 8, 4);
  const uint64_t blocks = (length + block - 1) / block;
  map->advise_sequential();
  for (uint64_t b = 0; b < blocks; ++b) {
    uint32_t stored;
    std::memcpy(&stored, bytes + length + b * 4, 4);
    const uint64_t begin = b * block;
    const uint64_t end = std::min<uint64_t>(begin + block, length);
    if (begin >= unchecked.first && end <= unchecked.second) continue;
    if (crc_of(bytes + begin, static_cast<size_t>(end - begin)) != stored)
      damaged(file, "checksum mismatch in bytes [" + std::to_string(begin) + ", " + std::to_string(end) + ")");
  }
  return length;
}

json with_checksum(json object) {
  object.erase("checksum");
  const std::string canonical = object.dump();
  object["checksum"] = crc_of(canonical.data(), canonical.size());
  return object;
}

void verify_json_checksum(const json& object, const fs::path& file) {
  if (!object.is_object() || !object.contains("checksum")) return;
  json rest = object;
  const json stored = rest["checksum"];
  rest.erase("checksum");
  const std::string canonical = rest.dump();
  if (!stored.is_number_unsigned() || stored.get<uint64_t>() != crc_of(canonical.data(), canonical.size()))
    damaged(file, "checksum mismatch");
}

}  // namespace eagle::store
