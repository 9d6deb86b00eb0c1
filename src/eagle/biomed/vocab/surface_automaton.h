#pragma once
// The compiled surface dictionary: every normalised surface (name,
// alias, symbol) of the vocabulary in one Aho–Corasick automaton, so matching is
// linear in the text whatever the dictionary size (not one regex per entity).
//
// The trie is a double array (base/check): a transition is one addition and one
// comparison. Failure links and dictionary-suffix links sit in parallel flat arrays,
// so the whole automaton is five uint32 arrays, a 16-byte pattern table and a pool
// of source forms — written to and read from the vocabulary cache as is, which is
// why a restart builds nothing.
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "eagle/biomed/vocab/byte_reader.h"
#include "eagle/biomed/vocab/entity.h"

namespace eagle::biomed {

// Facts about a surface decided when the dictionary is compiled (vocabulary.cpp,
// "surface rules") and applied by the matcher at each occurrence.
enum SurfaceFlag : uint8_t {
  kSurfaceName = 1,           // the entity's preferred name rather than an alias
  kSurfaceGeneSymbol = 2,     // a gene symbol or symbol-like alias: the case/context rules apply
  kSurfaceCaseSensitive = 4,  // a non-gene acronym, code or short symbol ("ALL", "SAMe", "Mg"): as spelled
  kSurfaceGeneAlias = 8,      // a gene symbol-like surface that is not the official symbol
};

// One row of the pattern table (pattern id = row), stored flat in the cache.
struct SurfacePattern {
  uint32_t entity = 0;
  uint32_t form_offset = 0;  // the surface as the source spelled it, in the form pool
  uint16_t form_size = 0;
  uint16_t length = 0;  // normalised length in bytes (= depth of its trie state)
  uint8_t type = 0;     // EntityType of the entity
  uint8_t flags = 0;    // SurfaceFlag bits
  uint8_t reserved[2] = {0, 0};
};
static_assert(sizeof(SurfacePattern) == 16);

// A read-only array that either owns its elements (built in this process) or views
// them inside a memory-mapped cache file kept alive by `backing`.
template <typename T>
class FlatArray {
 public:
  FlatArray() = default;
  explicit FlatArray(std::vector<T> v) : owned_(std::move(v)), data_(owned_.data()), size_(owned_.size()) {}
  FlatArray(const T* data, size_t size, std::shared_ptr<const void> backing)
      : backing_(std::move(backing)), data_(data), size_(size) {}
  FlatArray(FlatArray&& o) noexcept { *this = std::move(o); }
  FlatArray& operator=(FlatArray&& o) noexcept {
    owned_ = std::move(o.owned_);  // a moved vector keeps its buffer, so data_ stays valid
    backing_ = std::move(o.backing_);
    data_ = o.data_;
    size_ = o.size_;
    o.data_ = nullptr;
    o.size_ = 0;
    return *this;
  }
  FlatArray(const FlatArray&) = delete;
  FlatArray& operator=(const FlatArray&) = delete;

  const T& operator[](size_t i) const { return data_[i]; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  std::vector<T> owned_;
  std::shared_ptr<const void> backing_;
  const T* data_ = nullptr;
  size_t size_ = 0;
};

// Input to build(): one per distinct normalised surface (conflicts already resolved).
struct SurfaceKey {
  std::string normalized;
  std::string form;
  EntityId entity = 0;
  EntityType type = EntityType::other;
  uint8_t flags = 0;
};

class SurfaceAutomaton {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  static constexpr size_t kMaxSurfaceBytes = 65535;

  SurfaceAutomaton();  // the empty dictionary: a root and nothing else

  // Throws eagle::Error(invalid_argument) on an empty, over-long or duplicate key.
  static SurfaceAutomaton build(std::vector<SurfaceKey> keys);

  // The Aho–Corasick step: follow failure links until `c` has a transition.
  uint32_t next(uint32_t state, unsigned char c) const {
    for (;;) {
      uint64_t t = uint64_t{base_[state]} + c;
      if (t < check_.size() && check_[t] == state) return static_cast<uint32_t>(t);
      if (state == 0) return 0;
      state = fail_[state];
    }
  }
  bool has_output(uint32_t state) const { return out_[state] != kNone || dict_[state] != kNone; }
  // Calls f(pattern id) for every surface that ends at `state`, longest first.
  template <typename F>
  void for_each_output(uint32_t state, F&& f) const {
    for (uint32_t s = out_[state] != kNone ? state : dict_[state]; s != kNone; s = dict_[s]) f(out_[s]);
  }

  // Exact lookup of a normalised surface; the pattern id.
  std::optional<uint32_t> find(std::string_view normalized) const;

  size_t pattern_count() const { return patterns_.size(); }
  const SurfacePattern& pattern(uint32_t id) const { return patterns_[id]; }
  std::string_view form(uint32_t id) const {
    return std::string_view(forms_.data() + patterns_[id].form_offset, patterns_[id].form_size);
  }
  // Every normalised surface by pattern id, rebuilt from the trie (for oracles and dumps).
  std::vector<std::string> normalized_patterns() const;

  size_t state_slots() const { return check_.size(); }
  size_t memory_bytes() const;

  // Arrays are 8-byte aligned in the stream (tellp() must count from the start of
  // the buffer a reader will map).
  void write(std::ostream& out) const;
  // Views the arrays in place inside `in`'s buffer, which `backing` keeps alive (a
  // memory-mapped cache file), and validates them (parent, failure and output links,
  // pattern rows against `entity_count`): a corrupt file is an eagle::Error, never a
  // crash or a hang.
  static SurfaceAutomaton read(ByteReader& in, size_t entity_count, std::shared_ptr<const void> backing);

 private:
  void validate(size_t entity_count) const;

  FlatArray<uint32_t> base_;   // child of s by byte c sits at base_[s] + c ...
  FlatArray<uint32_t> check_;  // ... when check_[base_[s] + c] == s; kNone = free slot
  FlatArray<uint32_t> fail_;   // Aho–Corasick failure link
  FlatArray<uint32_t> out_;    // pattern id ending exactly here, or kNone
  FlatArray<uint32_t> dict_;   // nearest state on the failure chain with an output, or kNone
  FlatArray<SurfacePattern> patterns_;
  FlatArray<char> forms_;
};

}  // namespace eagle::biomed
