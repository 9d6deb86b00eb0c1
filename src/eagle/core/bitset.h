#pragma once
// A dense bitset over row ids: what a compiled filter produces and what the vector
// and lexical searches accept as the allowed set.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace eagle {

class Bitset {
 public:
  Bitset() = default;
  explicit Bitset(size_t n, bool value = false)
      : size_(n), words_((n + 63) / 64, value ? ~uint64_t{0} : 0) {
    trim();
  }

  size_t size() const { return size_; }
  bool test(size_t i) const { return i < size_ && ((words_[i >> 6] >> (i & 63)) & 1); }
  void set(size_t i) { words_[i >> 6] |= uint64_t{1} << (i & 63); }
  void reset(size_t i) { words_[i >> 6] &= ~(uint64_t{1} << (i & 63)); }
  // Grows (new bits 0) or shrinks.
  void resize(size_t n) {
    size_ = n;
    words_.resize((n + 63) / 64, 0);
    trim();
  }
  size_t count() const {
    size_t c = 0;
    for (auto w : words_) c += static_cast<size_t>(std::popcount(w));
    return c;
  }
  bool any() const {
    for (auto w : words_)
      if (w) return true;
    return false;
  }

  // Set operations require equal sizes (callers size bitsets to the row count).
  Bitset& operator&=(const Bitset& o) {
    for (size_t i = 0; i < words_.size(); ++i) words_[i] &= i < o.words_.size() ? o.words_[i] : 0;
    return *this;
  }
  Bitset& operator|=(const Bitset& o) {
    for (size_t i = 0; i < words_.size() && i < o.words_.size(); ++i) words_[i] |= o.words_[i];
    trim();
    return *this;
  }
  // this &= ~o
  Bitset& subtract(const Bitset& o) {
    for (size_t i = 0; i < words_.size() && i < o.words_.size(); ++i) words_[i] &= ~o.words_[i];
    return *this;
  }
  void flip() {
    for (auto& w : words_) w = ~w;
    trim();
  }
  bool operator==(const Bitset& o) const { return size_ == o.size_ && words_ == o.words_; }

  // Calls f(i) for every set bit in increasing order.
  template <typename F>
  void for_each(F&& f) const {
    for (size_t wi = 0; wi < words_.size(); ++wi) {
      uint64_t w = words_[wi];
      while (w) {
        f(wi * 64 + static_cast<size_t>(std::countr_zero(w)));
        w &= w - 1;
      }
    }
  }
  // Calls f(i) for every set bit i in [begin, end), in increasing order.
  template <typename F>
  void for_each_in(size_t begin, size_t end, F&& f) const {
    end = end < size_ ? end : size_;
    for (size_t wi = begin >> 6; wi < words_.size() && wi * 64 < end; ++wi) {
      uint64_t w = words_[wi];
      if (wi == (begin >> 6) && (begin & 63)) w &= ~uint64_t{0} << (begin & 63);
      while (w) {
        const size_t i = wi * 64 + static_cast<size_t>(std::countr_zero(w));
        if (i >= end) return;
        f(i);
        w &= w - 1;
      }
    }
  }
  // Set bits in [begin, end).
  size_t count_in(size_t begin, size_t end) const {
    size_t n = 0;
    for_each_in(begin, end, [&](size_t) { ++n; });
    return n;
  }
  // Bits [begin, begin + n) as a bitset of n bits.
  Bitset slice(size_t begin, size_t n) const {
    Bitset out(n);
    for_each_in(begin, begin + n, [&](size_t i) { out.set(i - begin); });
    return out;
  }
  const std::vector<uint64_t>& words() const { return words_; }

 private:
  void trim() {
    if (size_ % 64 && !words_.empty()) words_.back() &= (uint64_t{1} << (size_ % 64)) - 1;
  }
  size_t size_ = 0;
  std::vector<uint64_t> words_;
};

}  // namespace eagle
