#pragma once
// Internal to the vector module: the shared file header and checksummed sections of
// the vector index files (format in docs/vector.md). Every section ends with its
// CRC-32C, so a flipped bit anywhere is an error at load rather than a wrong answer.
#include <nmmintrin.h>  // SSE4.2 CRC32: part of the x86-64-v2 baseline

#include <cstdint>
#include <cstring>
#include <istream>
#include <memory>
#include <ostream>
#include <string>

#include "eagle/core/error.h"
#include "eagle/core/file_map.h"

namespace eagle::index::vio {

inline constexpr char kMagic[8] = {'E', 'A', 'G', 'L', 'E', 'V', 'E', 'C'};
inline constexpr uint32_t kVersion = 1;

inline uint32_t crc32c(uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t c = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    c = _mm_crc32_u64(c, w);
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  for (; n; --n, ++p) c32 = _mm_crc32_u8(c32, *p);
  return ~c32;
}

[[noreturn]] inline void corrupt(const std::string& what) {
  fail(ErrorCode::invalid_argument, "corrupt vector index file: " + what);
}

// Accumulates a CRC over everything written until end_section().
class Writer {
 public:
  explicit Writer(std::ostream& out) : out_(out) {}
  void bytes(const void* p, size_t n) {
    crc_ = crc32c(crc_, p, n);
    out_.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
  }
  template <typename T>
  void pod(const T& v) {
    bytes(&v, sizeof(T));
  }
  void end_section() {
    const uint32_t c = crc_;
    out_.write(reinterpret_cast<const char*>(&c), sizeof(c));
    crc_ = 0;
  }
  void finish() {
    out_.flush();
    if (!out_) fail(ErrorCode::unavailable, "could not write the vector index");
  }

 private:
  std::ostream& out_;
  uint32_t crc_ = 0;
};

class Reader {
 public:
  // `map`: the file `in` reads, mapped (FileMap), when large sections may be read in
  // place rather than copied (borrow).
  // verify_borrowed = false: a file this process has just written (its bytes are the
  // page cache's copy of memory it wrote): borrowed sections are neither checksummed
  // nor checked, so reading one back touches none of its pages.
  explicit Reader(std::istream& in, std::shared_ptr<const FileMap> map = nullptr, bool verify_borrowed = true)
      : in_(in), map_(std::move(map)), verify_borrowed_(verify_borrowed) {}
  const std::shared_ptr<const FileMap>& map() const { return map_; }
  bool verifies_borrowed() const { return verify_borrowed_; }
  // The next `n` bytes as they lie in the mapped file, checksummed like bytes() and
  // skipped over, not copied; nullptr when there is no map (the caller reads them).
  const uint8_t* borrow(size_t n, const char* what) {
    if (!map_) return nullptr;
    const auto here = in_.tellg();
    if (here < 0) return nullptr;
    const auto at = static_cast<uint64_t>(here);
    if (at > map_->size() || n > map_->size() - at)
      fail(ErrorCode::invalid_argument, std::string("truncated vector index file while reading ") + what);
    const uint8_t* p = map_->data() + at;
    if (verify_borrowed_)
      crc_ = crc32c(crc_, p, n);
    else
      unchecked_section_ = true;
    in_.seekg(static_cast<std::streamoff>(n), std::ios::cur);
    return p;
  }
  // Refuses a section length the stream cannot hold, before the caller allocates it
  // (a corrupt row count must not become a huge allocation).
  void expect_bytes(uint64_t n, const char* what) {
    const auto here = in_.tellg();
    if (here < 0) return;  // not seekable: the sliced reads still fail on truncation
    in_.seekg(0, std::ios::end);
    const auto end = in_.tellg();
    in_.seekg(here);
    if (end >= here && n > static_cast<uint64_t>(end - here))
      fail(ErrorCode::invalid_argument, std::string("vector index file too short for its ") + what);
  }
  void bytes(void* p, size_t n, const char* what) {
    // Large sections are read in slices so a lying length fails on truncation
    // before it can make us touch memory we never get data for.
    auto* dst = static_cast<char*>(p);
    while (n) {
      const size_t step = n < (size_t{1} << 24) ? n : (size_t{1} << 24);
      if (!in_.read(dst, static_cast<std::streamsize>(step)))
        fail(ErrorCode::invalid_argument, std::string("truncated vector index file while reading ") + what);
      crc_ = crc32c(crc_, dst, step);
      dst += step;
      n -= step;
    }
  }
  template <typename T>
  T pod(const char* what) {
    T v;
    bytes(&v, sizeof(T), what);
    return v;
  }
  void end_section(const char* what) {
    uint32_t stored;
    if (!in_.read(reinterpret_cast<char*>(&stored), sizeof(stored)))
      fail(ErrorCode::invalid_argument, std::string("truncated vector index file while reading ") + what);
    if (stored != crc_ && !unchecked_section_) corrupt(std::string("checksum mismatch in ") + what);
    crc_ = 0;
    unchecked_section_ = false;
  }

 private:
  std::istream& in_;
  std::shared_ptr<const FileMap> map_;
  bool verify_borrowed_ = true;
  bool unchecked_section_ = false;  // this section had unverified borrowed bytes
  uint32_t crc_ = 0;
};

// The part of the header every kind shares; the kind-specific fields follow in the
// same checksummed header section.
struct CommonHeader {
  uint8_t kind = 0;    // VectorIndexKind
  uint8_t metric = 0;  // Metric
  uint32_t dim = 0;
  uint64_t rows = 0;
};

}  // namespace eagle::index::vio
