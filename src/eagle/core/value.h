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

}  // namespace eagle
