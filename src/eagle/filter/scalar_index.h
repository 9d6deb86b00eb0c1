#pragma once
// A scalar inverted index for one field: a sorted dictionary value -> rows (sorted
// uint32 vectors), answering the predicates of a filter as bitsets over
// [0, row_count()). Rows are added in increasing order; a row that is skipped or
// added as null is null. For string_list fields the dictionary maps each element to
// the rows whose list contains it.
//
// Lookups take Values and compare them with compare_scalars (compare.h): ints and
// doubles numerically across types, strings by bytes. A value of another kind (a
// string looked up in an int64 index) or NaN matches no row; NaN rows match no
// value and no range, but count as not null.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "eagle/core/bitset.h"
#include "eagle/core/value.h"
#include "eagle/filter/string_dictionary.h"

namespace eagle::filter {

class ScalarIndex {
 public:
  // string, int64, float64, boolean or string_list; throws invalid_argument for json.
  explicit ScalarIndex(FieldType type);

  FieldType type() const { return type_; }
  // Throws invalid_argument when rows go backwards or v does not fit the field type.
  void add(uint32_t row, const Value& v);
  size_t row_count() const { return rows_; }
  // Many rows at once, as an open loads a segment's rows: the index ends as add()
  // row by row would leave it, but the string keys are gathered, sorted once and
  // merged into the dictionary in one pass (row by row, a million distinct ids re-merge
  // the packed dictionary dozens of times: a third of an open's time). Rows of a string
  // or string_list index reach it at finish(); other types are added at once.
  class Batch {
   public:
    explicit Batch(ScalarIndex& index) : index_(index), next_row_(index.rows_) {}
    // Throws invalid_argument as add() does.
    void add(uint32_t row, const Value& v);
    void finish();

   private:
    // A run of rows with the same key, in row order: most fields repeat a handful of
    // values over long runs (kb_name, type, section), so a million rows make a few
    // runs to sort, not a million keys.
    struct Run {
      uint64_t prefix;  // the key's first 8 bytes, big-endian, zero-padded: most comparisons
                        // of a sort end here, without a cache miss into keys_
      uint64_t offset;  // the key, in keys_
      uint32_t length;
      uint32_t first;  // its rows: rows_[first, first + count)
      uint32_t count;
    };
    std::string_view key_of(const Run& run) const { return std::string_view(keys_).substr(run.offset, run.length); }
    ScalarIndex& index_;
    size_t next_row_;
    std::vector<uint32_t> not_null_rows_;
    std::string keys_;
    std::vector<uint32_t> rows_;
    std::vector<Run> runs_;
  };


  size_t term_count() const;

  // Scalar fields (string, int64, float64, boolean); throw internal on a string_list index.
  Bitset equal(const Value& v) const;
  Bitset equal_any(const std::vector<Value>& values) const;
  // Either bound may be absent; an empty interval gives no rows.
  Bitset range(const std::optional<Value>& lower, bool lower_inclusive, const std::optional<Value>& upper,
               bool upper_inclusive) const;
  // Union of the rows of every term t with predicate(t) among the terms starting with
  // `prefix` (a like pattern's literal prefix narrows the scan). String fields only.
  Bitset matching_terms(const std::function<bool(std::string_view)>& predicate,
                        std::string_view prefix = {}) const;

  // string_list fields; throw internal on a scalar index.
  Bitset contains(std::string_view element) const;
  Bitset contains_any(const std::vector<std::string>& elements) const;

  Bitset nulls() const;
  Bitset not_null() const { return not_null_; }

 private:
  // The rows of one dictionary value, increasing. Most values of an id-like field
  // (document_id: one row per value) hold a single row, kept inline: a vector would
  // add 24 bytes to the node and a heap block of its own (~56 bytes a row on a
  // 1,000,000-row ingest). Two or more rows live in a heap vector.
  class Rows {
   public:
    Rows() = default;
    Rows(const Rows& o) : bits_(o.many() ? reinterpret_cast<uintptr_t>(new std::vector<uint32_t>(*o.vec())) : o.bits_) {}
    Rows(Rows&& o) noexcept : bits_(o.bits_) { o.bits_ = 0; }
    Rows& operator=(Rows o) noexcept {
      std::swap(bits_, o.bits_);
      return *this;
    }
    ~Rows() {
      if (many()) delete vec();
    }
    bool empty() const { return bits_ == 0; }
    uint32_t back() const { return many() ? vec()->back() : static_cast<uint32_t>(bits_ >> 1); }
    void push_back(uint32_t row) {
      if (empty()) {
        bits_ = (uintptr_t{row} << 1) | 1;
      } else if (!many()) {
        auto* v = new std::vector<uint32_t>{static_cast<uint32_t>(bits_ >> 1), row};
        bits_ = reinterpret_cast<uintptr_t>(v);
      } else {
        vec()->push_back(row);
      }
    }
    template <typename F>
    void for_each(F&& fn) const {
      if (many()) {
        for (uint32_t r : *vec()) fn(r);
      } else if (!empty()) {
        fn(static_cast<uint32_t>(bits_ >> 1));
      }
    }

   private:
    // 0: no row; low bit 1: one row, in the high bits; else a vector's address.
    bool many() const { return bits_ != 0 && (bits_ & 1) == 0; }
    std::vector<uint32_t>* vec() const { return reinterpret_cast<std::vector<uint32_t>*>(bits_); }
    uintptr_t bits_ = 0;
  };
  static_assert(sizeof(uintptr_t) == 8, "a row (32 bits) is kept inline beside a tag bit");
  // Transparent so an int64 dictionary can be searched with a double bound and vice
  // versa, with the exact comparison of compare.h.
  struct NumberLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const;
  };
  // Strings (string and string_list fields) in a packed dictionary: an id-like field
  // has as many values as rows (string_dictionary.h).
  using StringDict = StringDictionary<Rows>;
  using Dictionary =
      std::variant<std::map<bool, Rows>, std::map<int64_t, Rows, NumberLess>,
                   std::map<double, Rows, NumberLess>, StringDict>;

  void check_fits(uint32_t row, const Value& v) const;
  void require_scalar(const char* what) const;
  void require_list(const char* what) const;
  void collect(const Value& v, Bitset& out) const;

  FieldType type_;
  size_t rows_ = 0;
  Bitset not_null_;
  Dictionary dict_;
};

}  // namespace eagle::filter
