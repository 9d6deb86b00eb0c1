#pragma once
// Bounds-checked reading of a cache file held in memory (the vocabulary cache is read
// with one read() and parsed in place). Every length is checked against the bytes
// left, so a truncated or corrupt file is an eagle::Error, never an overrun.
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "eagle/core/error.h"

namespace eagle::biomed {

class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}

  template <typename T>
  T pod(const char* what) {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  // Same layout as eagle::io::write_vec: a uint64 count, then the elements.
  template <typename T>
  std::vector<T> vec(const char* what) {
    static_assert(std::is_trivially_copyable_v<T>);
    auto n = pod<uint64_t>(what);
    if (n > (bytes_.size() - pos_) / sizeof(T)) corrupt(what);
    std::vector<T> v(n);
    if (n) std::memcpy(v.data(), bytes_.data() + pos_, n * sizeof(T));
    pos_ += n * sizeof(T);
    return v;
  }

  // An array written by write_aligned_array: a uint64 count, zero padding to an
  // 8-byte boundary of the buffer, then the elements, returned in place (no copy).
  // The buffer itself must start 8-byte aligned.
  template <typename T>
  const T* aligned_array(size_t& count, const char* what) {
    static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= 8);
    auto n = pod<uint64_t>(what);
    size_t pad = (8 - pos_ % 8) % 8;
    need(pad, what);
    pos_ += pad;
    if (n > (bytes_.size() - pos_) / sizeof(T)) corrupt(what);
    if (reinterpret_cast<uintptr_t>(bytes_.data() + pos_) % alignof(T) != 0) corrupt(what);
    const T* p = reinterpret_cast<const T*>(bytes_.data() + pos_);
    pos_ += n * sizeof(T);
    count = n;
    return p;
  }

  // Same layout as eagle::io::write_str.
  std::string str(const char* what) {
    auto n = pod<uint64_t>(what);
    need(n, what);
    std::string s(bytes_.data() + pos_, n);
    pos_ += n;
    return s;
  }

  size_t remaining() const { return bytes_.size() - pos_; }

 private:
  void need(uint64_t n, const char* what) const {
    if (n > bytes_.size() - pos_) corrupt(what);
  }
  [[noreturn]] static void corrupt(const char* what) {
    fail(ErrorCode::invalid_argument, std::string("truncated or corrupt data while reading ") + what);
  }

  std::string_view bytes_;
  size_t pos_ = 0;
};

// Writes what ByteReader::aligned_array reads; `out.tellp()` must count from the
// start of the (8-byte aligned) buffer the reader will see.
template <typename T>
void write_aligned_array(std::ostream& out, const T* data, size_t n) {
  static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= 8);
  uint64_t count = n;
  out.write(reinterpret_cast<const char*>(&count), sizeof count);
  static const char zeros[8] = {};
  auto pos = static_cast<size_t>(out.tellp());
  out.write(zeros, static_cast<std::streamsize>((8 - pos % 8) % 8));
  if (n) out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n * sizeof(T)));
}

}  // namespace eagle::biomed
