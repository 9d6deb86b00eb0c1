#pragma once
// An ordered dictionary from strings to values that costs about 16 bytes an entry
// beside its keys' bytes, for the scalar index of an id-like field (document_id: a
// distinct value a row). A std::map spent 72 bytes a node on the same entries (72 MB
// at a million rows, the largest single part of a server's heap on such a store).
//
// Two parts, as a log-structured index keeps them: a sorted, packed part (every key's
// bytes back to back in one buffer, an end offset and a value per key) and a small
// std::map taking the keys that are new since the last merge. A key lives in exactly
// one part: a value is found in the packed part first (binary search) and only a key
// that is in neither goes to the map. When the map holds more than 1/kMergeRatio of
// the packed part's keys (at least kMinMerge), the two are merged into a new packed
// part, so a million inserts in random order cost a few dozen linear merges.
//
// Ordered walks (ranges, prefixes) visit each part's keys in order, one part after the
// other: callers that union what they visit (bitsets of rows) need no interleaving.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace eagle::filter {

template <typename V>
class StringDictionary {
 public:
  size_t size() const { return values_.size() + fresh_.size(); }

  // The value of `key`, inserted (default-constructed) when absent.
  V& operator[](std::string_view key) {
    if (const size_t i = packed_find(key); i != kNone) return values_[i];
    if (auto it = fresh_.find(key); it != fresh_.end()) return it->second;
    if (fresh_.size() >= std::max(kMinMerge, values_.size() / kMergeRatio)) merge();
    return fresh_.emplace(std::string(key), V{}).first->second;
  }

  // Many keys at once, sorted by key and unique: combine(existing, std::move(value))
  // for a key already present, and the new keys merged into the packed part in one
  // pass. Inserting a million new keys one by one re-merges the packed part a few
  // dozen times; this is one merge.
  template <typename Combine>
  void insert_sorted(std::vector<std::pair<std::string_view, V>>& entries, Combine&& combine) {
    if (values_.empty() && fresh_.empty()) {  // every key is new (a first segment's open)
      merge_into_packed(entries);
      return;
    }
    std::vector<std::pair<std::string_view, V>> added;
    size_t cursor = 0;  // the packed part is walked once, in step with the sorted keys
    for (auto& [key, value] : entries) {
      cursor = packed_lower_bound(key, cursor);
      if (cursor < values_.size() && packed_key(cursor) == key) {
        combine(values_[cursor], std::move(value));
      } else if (auto it = fresh_.find(key); it != fresh_.end()) {
        combine(it->second, std::move(value));
      } else {
        added.emplace_back(key, std::move(value));
      }
    }
    merge_into_packed(added);
  }

  const V* find(std::string_view key) const {
    if (const size_t i = packed_find(key); i != kNone) return &values_[i];
    auto it = fresh_.find(key);
    return it == fresh_.end() ? nullptr : &it->second;
  }

  // fn(key, value) for the keys between the bounds (absent: unbounded).
  template <typename F>
  void for_each_between(std::optional<std::string_view> lower, bool lower_inclusive,
                        std::optional<std::string_view> upper, bool upper_inclusive, F&& fn) const {
    size_t first = 0, last = values_.size();
    if (lower) first = lower_inclusive ? packed_lower_bound(*lower) : packed_upper_bound(*lower);
    if (upper) last = upper_inclusive ? packed_upper_bound(*upper) : packed_lower_bound(*upper);
    for (size_t i = first; i < last; ++i) fn(packed_key(i), values_[i]);
    auto it = fresh_.begin(), end = fresh_.end();
    if (lower) it = lower_inclusive ? fresh_.lower_bound(*lower) : fresh_.upper_bound(*lower);
    if (upper) end = upper_inclusive ? fresh_.upper_bound(*upper) : fresh_.lower_bound(*upper);
    // An empty interval can put `it` past `end` in the map's order: stop at either.
    for (; it != end && it != fresh_.end() && (!upper || in_upper(it->first, *upper, upper_inclusive)); ++it)
      fn(std::string_view(it->first), it->second);
  }

  // fn(key, value) for the keys starting with `prefix`.
  template <typename F>
  void for_each_with_prefix(std::string_view prefix, F&& fn) const {
    for (size_t i = packed_lower_bound(prefix); i < values_.size(); ++i) {
      const std::string_view key = packed_key(i);
      if (!key.starts_with(prefix)) break;
      fn(key, values_[i]);
    }
    for (auto it = fresh_.lower_bound(prefix); it != fresh_.end() && it->first.starts_with(prefix); ++it)
      fn(std::string_view(it->first), it->second);
  }

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);
  static constexpr size_t kMinMerge = 1024;
  static constexpr size_t kMergeRatio = 8;

  static bool in_upper(const std::string& key, std::string_view upper, bool inclusive) {
    return inclusive ? std::string_view(key) <= upper : std::string_view(key) < upper;
  }
  std::string_view packed_key(size_t i) const {
    const uint64_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::string_view(keys_).substr(begin, ends_[i] - begin);
  }
  // The first packed key at or after index `from` that is not less than `key`.
  size_t packed_lower_bound(std::string_view key, size_t from = 0) const {
    size_t lo = from, hi = values_.size();
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (packed_key(mid) < key)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }
  size_t packed_upper_bound(std::string_view key) const {
    size_t lo = 0, hi = values_.size();
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (packed_key(mid) <= key)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }
  size_t packed_find(std::string_view key) const {
    const size_t i = packed_lower_bound(key);
    return i < values_.size() && packed_key(i) == key ? i : kNone;
  }

  // The fresh keys merged into the packed part (the two are disjoint).
  void merge() {
    std::vector<std::pair<std::string_view, V>> added;
    added.reserve(fresh_.size());
    for (auto& [k, v] : fresh_) added.emplace_back(std::string_view(k), std::move(v));
    merge_into_packed(added);
    fresh_.clear();  // after: `added` viewed its keys
  }

  // Keys sorted and absent from both parts, merged into the packed part. The packed
  // keys between two new ones are copied as one run (their bytes, their shifted end
  // offsets, their values), found by binary search: a merge is about a memcpy of the
  // packed part, not a comparison and three appends a key.
  void merge_into_packed(std::vector<std::pair<std::string_view, V>>& added) {
    if (added.empty()) return;
    const size_t total = values_.size() + added.size();
    size_t bytes = keys_.size();
    for (const auto& [k, v] : added) bytes += k.size();
    std::string keys(bytes, '\0');
    std::vector<uint64_t> ends(total);
    std::vector<V> values(total);
    size_t at = 0;         // keys written
    uint64_t written = 0;  // their bytes
    auto copy_run = [&](size_t first, size_t last) {  // packed keys [first, last)
      if (first == last) return;
      const uint64_t begin = first == 0 ? 0 : ends_[first - 1];
      const uint64_t length = ends_[last - 1] - begin;
      std::memcpy(keys.data() + written, keys_.data() + begin, length);
      const uint64_t shift = written - begin;  // unsigned wrap-around adds correctly
      for (size_t i = first; i < last; ++i) ends[at + i - first] = ends_[i] + shift;
      std::move(values_.begin() + static_cast<std::ptrdiff_t>(first),
                values_.begin() + static_cast<std::ptrdiff_t>(last),
                values.begin() + static_cast<std::ptrdiff_t>(at));
      at += last - first;
      written += length;
    };
    size_t i = 0;
    for (auto& [k, v] : added) {
      const size_t lo = packed_lower_bound(k, i);
      copy_run(i, lo);
      i = lo;
      std::memcpy(keys.data() + written, k.data(), k.size());
      written += k.size();
      ends[at] = written;
      values[at] = std::move(v);
      ++at;
    }
    copy_run(i, values_.size());
    keys_ = std::move(keys);
    ends_ = std::move(ends);
    values_ = std::move(values);
  }

  std::string keys_;            // the packed keys' bytes, in key order
  std::vector<uint64_t> ends_;  // where each packed key ends in keys_
  std::vector<V> values_;       // each packed key's value
  std::map<std::string, V, std::less<>> fresh_;
};

}  // namespace eagle::filter
