#pragma once
// Row numbers by row id, keyed by the rows' own id strings: a map from id to row
// would hold a second copy of every id (a 32-byte string per row, a million rows:
// 32 MB more, plus its node). `Rows` is any random-access container whose elements
// have an `id` string; it must outlive the index and stay at its address.
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <unordered_set>

namespace eagle::store {

template <typename Rows>
class RowsById {
 public:
  explicit RowsById(const Rows* rows) : set_(0, Hash{rows}, Equal{rows}) {}

  std::optional<uint32_t> find(std::string_view id) const {
    auto it = set_.find(id);
    if (it == set_.end()) return std::nullopt;
    return *it;
  }
  bool contains(std::string_view id) const { return set_.find(id) != set_.end(); }
  // Indexes `row` under its id; returns the row it replaces there, if any.
  std::optional<uint32_t> put(uint32_t row) {
    auto [it, inserted] = set_.insert(row);
    if (inserted) return std::nullopt;
    const uint32_t old = *it;
    set_.erase(it);
    set_.insert(row);
    return old;
  }
  // Removes `id`; returns its row, if it was there.
  std::optional<uint32_t> erase(std::string_view id) {
    auto it = set_.find(id);
    if (it == set_.end()) return std::nullopt;
    const uint32_t row = *it;
    set_.erase(it);
    return row;
  }
  size_t size() const { return set_.size(); }
  void clear() { set_.clear(); }
  void reserve(size_t n) { set_.reserve(n); }
  template <typename F>
  void for_each(F&& fn) const {
    for (uint32_t row : set_) fn(row);
  }
  // Calls fn(row) for each row and then removes it: the freed node is there for the
  // next call to reuse (a commit moves a million staged rows into the live index
  // without holding both sets whole). A row whose fn throws stays.
  template <typename F>
  void drain(F&& fn) {
    for (auto it = set_.begin(); it != set_.end();) {
      fn(*it);
      it = set_.erase(it);
    }
  }

 private:
  struct Hash {
    using is_transparent = void;
    const Rows* rows;
    size_t operator()(uint32_t row) const { return std::hash<std::string_view>{}((*rows)[row].id); }
    size_t operator()(std::string_view id) const { return std::hash<std::string_view>{}(id); }
  };
  struct Equal {
    using is_transparent = void;
    const Rows* rows;
    bool operator()(uint32_t a, uint32_t b) const { return a == b || (*rows)[a].id == (*rows)[b].id; }
    bool operator()(std::string_view id, uint32_t row) const { return (*rows)[row].id == id; }
    bool operator()(uint32_t row, std::string_view id) const { return (*rows)[row].id == id; }
  };
  std::unordered_set<uint32_t, Hash, Equal> set_;
};

}  // namespace eagle::store
