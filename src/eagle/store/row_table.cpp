#include "eagle/store/row_table.h"

#include <cstring>
#include <string>

#include "eagle/core/error.h"
#include "eagle/store/record_codec.h"

namespace eagle::store {

uint32_t RowTable::load_u32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

void RowTable::clear() {
  entries_.clear();
  entries_.shrink_to_fit();
  blocks_.clear();
  block_used_ = kBlockBytes;
  block_bytes_ = 0;
}

char* RowTable::allocate(size_t n) {
  if (n > kBlockBytes) {
    // A row larger than a block gets its own; the next row starts a new block.
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(n));
    block_bytes_ += n;
    block_used_ = kBlockBytes;
    return blocks_.back().get();
  }
  if (kBlockBytes - block_used_ < n) {
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(kBlockBytes));
    block_bytes_ += kBlockBytes;
    block_used_ = 0;
  }
  char* p = blocks_.back().get() + block_used_;
  block_used_ += n;
  return p;
}

void RowTable::append_encoded(std::string_view id, TextRef text, std::string_view values) {
  if (id.size() > UINT32_MAX || values.size() > UINT32_MAX)
    fail(ErrorCode::invalid_argument, "a row id or its values are longer than 4 GiB");
  const auto id_len = static_cast<uint32_t>(id.size());
  const auto values_len = static_cast<uint32_t>(values.size());
  char* p = allocate(2 * sizeof(uint32_t) + id.size() + values.size());
  entries_.push_back({p, text});
  std::memcpy(p, &id_len, sizeof(id_len));
  std::memcpy(p + sizeof(uint32_t), id.data(), id.size());
  p += sizeof(uint32_t) + id.size();
  std::memcpy(p, &values_len, sizeof(values_len));
  std::memcpy(p + sizeof(uint32_t), values.data(), values.size());
}

void RowTable::append_in_place(const char* bytes, TextRef text) { entries_.push_back({bytes, text}); }

void RowTable::append(std::string_view id, TextRef text, const ValuesView& values,
                      const CollectionSchema& schema) {
  std::string encoded;
  encode_values(values, schema, encoded);
  append_encoded(id, text, encoded);
}

std::string_view RowTable::encoded_values(uint32_t row) const {
  const char* p = entries_[row].bytes;
  p += sizeof(uint32_t) + load_u32(p);
  return {p + sizeof(uint32_t), load_u32(p)};
}

PackedValues RowTable::values(uint32_t row, const CollectionSchema& schema) const {
  return PackedValues(decode_values(encoded_values(row), schema));
}

Value RowTable::value(uint32_t row, size_t field, const CollectionSchema& schema) const {
  return decode_value_at(encoded_values(row), schema, field);
}

size_t RowTable::memory_bytes() const {
  return entries_.capacity() * sizeof(Entry) + block_bytes_;
}

}  // namespace eagle::store
