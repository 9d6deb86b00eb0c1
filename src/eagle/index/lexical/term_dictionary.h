#pragma once
// A lexical index's terms and their ids: ids are dense, given in the order terms are
// first added. Open addressing with linear probing over (hash tag, id) slots kept at
// most half full, so a look-up reads one slot array and, on a tag match, one string:
// adding a document looks up each of its distinct terms, the busiest part of a log
// replay or a bulk ingest once analysis is done.
#include <cstdint>
#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace eagle::index {

class TermDictionary {
 public:
  std::optional<uint32_t> find(std::string_view term) const {
    if (names_.empty()) return std::nullopt;
    const uint64_t h = hash(term);
    for (size_t at = h & mask_;; at = (at + 1) & mask_) {
      const Slot& s = slots_[at];
      if (s.id_plus_one == 0) return std::nullopt;
      if (s.tag == tag(h) && names_[s.id_plus_one - 1] == term) return s.id_plus_one - 1;
    }
  }

  // The term's id; a new term gets the next id (size() before the call) and `added`.
  uint32_t find_or_add(std::string_view term, bool& added) {
    if ((names_.size() + 1) * 2 > slots_.size()) rehash(std::max<size_t>(16, slots_.size() * 2));
    const uint64_t h = hash(term);
    size_t at = h & mask_;
    for (;; at = (at + 1) & mask_) {
      const Slot& s = slots_[at];
      if (s.id_plus_one == 0) break;
      if (s.tag == tag(h) && names_[s.id_plus_one - 1] == term) {
        added = false;
        return s.id_plus_one - 1;
      }
    }
    names_.emplace_back(term);
    slots_[at] = {tag(h), static_cast<uint32_t>(names_.size())};
    added = true;
    return static_cast<uint32_t>(names_.size() - 1);
  }

  size_t size() const { return names_.size(); }
  const std::string& name(uint32_t id) const { return names_[id]; }

  void reserve(size_t terms) {
    names_.reserve(terms);
    size_t want = 16;
    while (want < terms * 2) want *= 2;
    if (want > slots_.size()) rehash(want);
  }

 private:
  struct Slot {
    uint32_t tag = 0;          // the hash's high half: most mismatches end here
    uint32_t id_plus_one = 0;  // 0: empty
  };

  static uint64_t hash(std::string_view s) { return std::hash<std::string_view>{}(s); }
  static uint32_t tag(uint64_t h) { return static_cast<uint32_t>(h >> 32); }

  void rehash(size_t slots) {
    slots_.assign(slots, Slot{});
    mask_ = slots - 1;
    for (uint32_t id = 0; id < names_.size(); ++id) {
      const uint64_t h = hash(names_[id]);
      size_t at = h & mask_;
      while (slots_[at].id_plus_one != 0) at = (at + 1) & mask_;
      slots_[at] = {tag(h), id + 1};
    }
  }

  std::vector<std::string> names_;  // by id
  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

}  // namespace eagle::index
