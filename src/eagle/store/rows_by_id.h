#pragma once
// Row numbers by row id, keyed by the rows' own id strings: a map from id to row
// would hold a second copy of every id (a 32-byte string per row, a million rows:
// 32 MB more, plus its node). `Rows` is a table with an `id(row)` accessor
// (row_table.h) or a random-access container whose elements have an `id` string; it
// must outlive the index and stay at its address.
//
// An open-addressing table (linear probing): each slot holds a row number and 32 bits
// of its id's hash, so a probe compares ids only when the hashes agree, and the table
// costs 8 bytes a slot (about 11 a row at its load of at most 3/4), where a node-based
// set cost about 40 (a node a row, and a bucket) and a pointer chase per probe.
// Erased slots become tombstones (probes pass them, inserts reuse them) until a
// rebuild.
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace eagle::store {

template <typename Rows>
class RowsById {
 public:
  explicit RowsById(const Rows* rows) : rows_(rows) {}

  std::optional<uint32_t> find(std::string_view id) const {
    const size_t at = locate(id, hash_of(id));
    if (at == kNotFound) return std::nullopt;
    return slots_[at].row;
  }
  bool contains(std::string_view id) const { return locate(id, hash_of(id)) != kNotFound; }
  // Indexes `row` under its id; returns the row it replaces there, if any.
  std::optional<uint32_t> put(uint32_t row) {
    const std::string_view id = id_of(row);
    const uint32_t h = hash_of(id);
    if (const size_t at = locate(id, h); at != kNotFound) {
      const uint32_t old = slots_[at].row;
      slots_[at].row = row;
      return old;
    }
    if ((size_ + tombstones_ + 1) * 4 > slots_.size() * 3) rebuild(size_ + 1);
    size_t i = h & mask();
    while (slots_[i].row != kEmpty && slots_[i].row != kTombstone) i = (i + 1) & mask();
    if (slots_[i].row == kTombstone) --tombstones_;
    slots_[i] = {row, h};
    ++size_;
    return std::nullopt;
  }
  // Removes `id`; returns its row, if it was there.
  std::optional<uint32_t> erase(std::string_view id) {
    const size_t at = locate(id, hash_of(id));
    if (at == kNotFound) return std::nullopt;
    const uint32_t row = slots_[at].row;
    slots_[at].row = kTombstone;
    --size_;
    ++tombstones_;
    return row;
  }
  size_t size() const { return size_; }
  void clear() {
    slots_.clear();
    slots_.shrink_to_fit();
    size_ = tombstones_ = 0;
  }
  void reserve(size_t n) {
    if (n * 4 > slots_.size() * 3) rebuild(n);
  }
  template <typename F>
  void for_each(F&& fn) const {
    for (const auto& s : slots_)
      if (s.row < kTombstone) fn(s.row);
  }
  // Calls fn(row) for each row and then removes it, releasing the table at the end (a
  // commit moves a million staged rows into the live index). A row whose fn throws
  // stays, with the rows not reached yet.
  template <typename F>
  void drain(F&& fn) {
    for (auto& s : slots_) {
      if (s.row >= kTombstone) continue;
      fn(s.row);
      s.row = kTombstone;
      --size_;
      ++tombstones_;
    }
    clear();
  }

 private:
  static constexpr uint32_t kEmpty = 0xffffffffu;
  static constexpr uint32_t kTombstone = 0xfffffffeu;  // row numbers stay below (kMaxVectorRows)
  static constexpr size_t kNotFound = static_cast<size_t>(-1);
  struct Slot {
    uint32_t row = kEmpty;
    uint32_t hash = 0;
  };

  static uint32_t hash_of(std::string_view id) {
    const uint64_t h = std::hash<std::string_view>{}(id);
    return static_cast<uint32_t>(h ^ (h >> 32));
  }
  size_t mask() const { return slots_.size() - 1; }
  std::string_view id_of(uint32_t row) const {
    if constexpr (requires { rows_->id(row); })
      return rows_->id(row);
    else
      return (*rows_)[row].id;
  }
  size_t locate(std::string_view id, uint32_t h) const {
    if (slots_.empty()) return kNotFound;
    for (size_t i = h & mask();; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (s.row == kEmpty) return kNotFound;
      if (s.row != kTombstone && s.hash == h && id_of(s.row) == id) return i;
    }
  }
  // A table of a power-of-two size with room for `n` rows at a load of at most 1/2,
  // every live slot moved there, tombstones dropped.
  void rebuild(size_t n) {
    size_t want = 16;
    while (want < n * 2) want *= 2;
    std::vector<Slot> old(want);
    old.swap(slots_);
    tombstones_ = 0;
    for (const auto& s : old) {
      if (s.row >= kTombstone) continue;
      size_t i = s.hash & mask();
      while (slots_[i].row != kEmpty) i = (i + 1) & mask();
      slots_[i] = s;
    }
  }

  const Rows* rows_;
  std::vector<Slot> slots_;  // empty, or a power of two
  size_t size_ = 0;
  size_t tombstones_ = 0;
};

}  // namespace eagle::store
