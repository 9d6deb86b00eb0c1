#pragma once
// A collection's rows by row number: each row's id, a reference to its text
// (row_texts.h) and its scalar values, in as few bytes as they take.
//
// A row kept as objects (a std::string id, a vector of 40-byte Values and their own
// heap blocks) cost about 150 bytes beside its data: 150 MB of heap for a million
// rows, most of a server's memory on a store whose texts and vectors live in files.
// Here a row is one 24-byte entry (a pointer and the text reference) and its id and
// values packed once, back to back, into large shared blocks (the log's binary value
// form, record_codec.h): about 24 + 8 bytes beside the data. Values are decoded when
// read (a hit, a record, a filter's row-by-row fallback), one field at a time where
// only one is asked for.
//
// Rows are only appended (a compaction builds a new table); the blocks never move,
// so a row's bytes stay where they were written. Not thread-safe: the collection's
// lock guards it (appends exclusive, reads shared).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "eagle/core/schema.h"
#include "eagle/core/value.h"
#include "eagle/store/row_texts.h"

namespace eagle::store {

class RowTable {
 public:
  RowTable() = default;
  RowTable(RowTable&&) noexcept = default;
  RowTable& operator=(RowTable&&) noexcept = default;
  RowTable(const RowTable&) = delete;
  RowTable& operator=(const RowTable&) = delete;

  uint32_t size() const { return static_cast<uint32_t>(entries_.size()); }
  bool empty() const { return entries_.empty(); }
  void reserve(size_t rows) { entries_.reserve(rows); }
  void clear();

  // Appends a row; `values` in the schema's field order (record_codec's encode_values).
  void append(std::string_view id, TextRef text, const ValuesView& values, const CollectionSchema& schema);
  // Appends a row whose values are already encoded (a segment file's bytes) and
  // known to decode under the schema (the caller decoded them: decode_values).
  void append_encoded(std::string_view id, TextRef text, std::string_view values);
  // Appends a row whose bytes already lie in this table's form (`bytes`: u32 id length,
  // id, u32 values length, values) in memory the caller keeps valid as long as the row
  // points there (a mapped segment file, held by its segment): nothing is copied.
  void append_in_place(const char* bytes, TextRef text);
  // Points row `row` at the same bytes somewhere else (that segment's rows as a merge
  // rewrote them into its new file), so the memory they lay in can go.
  void repoint(uint32_t row, const char* bytes) { entries_[row].bytes = bytes; }

  std::string_view id(uint32_t row) const {
    const char* p = entries_[row].bytes;
    return {p + sizeof(uint32_t), load_u32(p)};
  }
  const TextRef& text(uint32_t row) const { return entries_[row].text; }
  TextRef& text(uint32_t row) { return entries_[row].text; }
  // The row's values as record_codec encodes them.
  std::string_view encoded_values(uint32_t row) const;
  // Every value, decoded (schema field order, nulls left out).
  PackedValues values(uint32_t row, const CollectionSchema& schema) const;
  // One field's value, decoded.
  Value value(uint32_t row, size_t field, const CollectionSchema& schema) const;

  // Heap bytes held (entries and blocks), for describe().
  size_t memory_bytes() const;

 private:
  // bytes: u32 id length | id | u32 values length | values (a segment file of layout 3
  // stores each row in this form, so an open points into the mapped file).
  struct Entry {
    const char* bytes;
    TextRef text;
  };
  static uint32_t load_u32(const char* p);
  char* allocate(size_t n);

  // Blocks of kBlockBytes (a larger row gets a block of its own): a block's slack is
  // at most one row, and growth never copies what is written.
  static constexpr size_t kBlockBytes = 1u << 20;
  std::vector<Entry> entries_;
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = kBlockBytes;  // in the last block; full: the next row starts one
  size_t block_bytes_ = 0;           // allocated, over every block
};

}  // namespace eagle::store
