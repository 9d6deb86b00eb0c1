#pragma once
// Typed scalar values of collection fields (SPEC "Storage and indexes").
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace eagle {

enum class FieldType : uint8_t { string, int64, float64, boolean, string_list, json };

std::string_view field_type_name(FieldType t);
FieldType parse_field_type(std::string_view name);  // throws eagle::Error

using StringList = std::vector<std::string>;

// A field value; monostate is null. `json` holds a JSON-like map (nlohmann::json).
using Value = std::variant<std::monostate, bool, int64_t, double, std::string, StringList, nlohmann::json>;

inline bool is_null(const Value& v) { return std::holds_alternative<std::monostate>(v); }

// Converts a JSON value to the field's type; throws eagle::Error naming the field
// when the JSON does not fit (e.g. a string for an int64 field).
Value value_from_json(const nlohmann::json& j, FieldType type, std::string_view field);
nlohmann::json value_to_json(const Value& v);

// A row's values without its nulls, by schema field. Most rows set a few fields of
// their schema (a chunk row: 2 or 3 of 16) and a Value is 40 bytes, so a row kept
// as one Value per field spent ~600 bytes on nulls: 600 MB for a million rows.
class PackedValues {
 public:
  PackedValues() = default;
  explicit PackedValues(std::vector<Value> all);  // all[i]: schema field i
  const Value& operator[](size_t field) const;  // null when unset
  std::vector<Value> unpack(size_t fields) const;

 private:
  struct Entry {
    uint32_t field;
    Value value;
  };
  std::vector<Entry> entries_;  // ascending field
};

// The values of a row by schema field, however the row keeps them (a Record's full
// vector or a stored row's packed one). Past the end: null.
class ValuesView {
 public:
  ValuesView(const std::vector<Value>& all) : full_(&all) {}          // NOLINT: implicit on purpose
  ValuesView(const PackedValues& packed) : packed_(&packed) {}        // NOLINT
  const Value& operator[](size_t field) const;

 private:
  const std::vector<Value>* full_ = nullptr;
  const PackedValues* packed_ = nullptr;
};

}  // namespace eagle
