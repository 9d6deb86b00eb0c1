#pragma once
// Little helpers for Eagle's versioned binary files. Readers check every length
// against the bytes left so a truncated or corrupt file is an error, not a crash.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "eagle/core/error.h"

namespace eagle::io {

template <typename T>
void write_pod(std::ostream& out, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.write(reinterpret_cast<const char*>(&v), sizeof(T));
}

template <typename T>
void write_vec(std::ostream& out, const std::vector<T>& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  write_pod<uint64_t>(out, v.size());
  if (!v.empty()) out.write(reinterpret_cast<const char*>(v.data()), sizeof(T) * v.size());
}

inline void write_str(std::ostream& out, std::string_view s) {
  write_pod<uint64_t>(out, s.size());
  out.write(s.data(), static_cast<std::streamsize>(s.size()));
}

// Bounds every count read from a file so a corrupt length cannot exhaust memory.
inline constexpr uint64_t kMaxElements = uint64_t{1} << 34;

template <typename T>
T read_pod(std::istream& in, const char* what) {
  T v;
  if (!in.read(reinterpret_cast<char*>(&v), sizeof(T)))
    fail(ErrorCode::invalid_argument, std::string("truncated file while reading ") + what);
  return v;
}

template <typename T>
std::vector<T> read_vec(std::istream& in, const char* what) {
  auto n = read_pod<uint64_t>(in, what);
  if (n > kMaxElements / sizeof(T))
    fail(ErrorCode::invalid_argument, std::string("corrupt length for ") + what);
  // Grown as the elements arrive (see read_str).
  constexpr uint64_t kChunk = (1u << 20) / sizeof(T) + 1;
  std::vector<T> v;
  while (v.size() < n) {
    const uint64_t take = std::min<uint64_t>(kChunk, n - v.size());
    const size_t at = v.size();
    v.resize(at + take);
    if (!in.read(reinterpret_cast<char*>(v.data() + at), static_cast<std::streamsize>(sizeof(T) * take)))
      fail(ErrorCode::invalid_argument, std::string("truncated file while reading ") + what);
  }
  return v;
}

// read_str into `s`, reusing its buffer (a loop over a million rows' ids).
inline void read_str_into(std::istream& in, std::string& s, const char* what) {
  auto n = read_pod<uint64_t>(in, what);
  if (n > kMaxElements) fail(ErrorCode::invalid_argument, std::string("corrupt length for ") + what);
  // Grown as the bytes arrive: a corrupt length cannot make us allocate what the
  // file does not hold.
  constexpr uint64_t kChunk = 1u << 20;
  s.clear();
  while (s.size() < n) {
    const uint64_t take = std::min<uint64_t>(kChunk, n - s.size());
    const size_t at = s.size();
    s.resize(at + take);
    if (!in.read(s.data() + at, static_cast<std::streamsize>(take)))
      fail(ErrorCode::invalid_argument, std::string("truncated file while reading ") + what);
  }
}

inline std::string read_str(std::istream& in, const char* what) {
  std::string s;
  read_str_into(in, s, what);
  return s;
}

// The same encodings read from bytes in memory (a mapped file): every length is
// checked against the bytes left, and strings are views of the memory, not copies.
class SpanReader {
 public:
  SpanReader(const char* data, uint64_t size, uint64_t at = 0) : data_(data), size_(size), at_(at) {}
  uint64_t offset() const { return at_; }
  template <typename T>
  T pod(const char* what) {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, data_ + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  // A length-prefixed string (write_str's form).
  std::string_view str(const char* what) { return bytes(pod<uint64_t>(what), what); }
  std::string_view bytes(uint64_t n, const char* what) {
    need(n, what);
    const std::string_view v(data_ + at_, static_cast<size_t>(n));
    at_ += n;
    return v;
  }

 private:
  void need(uint64_t n, const char* what) const {
    if (at_ > size_ || n > size_ - at_)
      fail(ErrorCode::invalid_argument, std::string("truncated file while reading ") + what);
  }
  const char* data_;
  uint64_t size_;
  uint64_t at_;
};

}  // namespace eagle::io
