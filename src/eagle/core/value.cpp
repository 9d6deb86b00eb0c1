#include "eagle/core/value.h"

#include <cmath>

#include "eagle/core/error.h"

namespace eagle {

std::string_view field_type_name(FieldType t) {
  switch (t) {
    case FieldType::string: return "string";
    case FieldType::int64: return "int64";
    case FieldType::float64: return "double";
    case FieldType::boolean: return "bool";
    case FieldType::string_list: return "string_list";
    case FieldType::json: return "json";
  }
  return "?";
}

FieldType parse_field_type(std::string_view n) {
  if (n == "string" || n == "varchar") return FieldType::string;
  if (n == "int64" || n == "int") return FieldType::int64;
  if (n == "double" || n == "float" || n == "float64") return FieldType::float64;
  if (n == "bool" || n == "boolean") return FieldType::boolean;
  if (n == "string_list" || n == "array") return FieldType::string_list;
  if (n == "json") return FieldType::json;
  fail(ErrorCode::invalid_argument, "unknown field type '" + std::string(n) +
                                        "': expected string, int64, double, bool, string_list or json");
}

Value value_from_json(const nlohmann::json& j, FieldType type, std::string_view field) {
  auto bad = [&](const char* want) -> Value {
    fail(ErrorCode::invalid_argument, "field '" + std::string(field) + "' expects " + want + ", got " +
                                          std::string(j.type_name()));
  };
  if (j.is_null()) return std::monostate{};
  switch (type) {
    case FieldType::string:
      if (j.is_string()) return j.get<std::string>();
      return bad("a string");
    case FieldType::int64:
      if (j.is_number_integer()) return j.get<int64_t>();
      if (j.is_number_float()) {
        double d = j.get<double>();
        if (std::floor(d) == d && std::abs(d) < 9.2e18) return static_cast<int64_t>(d);
      }
      return bad("an integer");
    case FieldType::float64:
      if (j.is_number()) return j.get<double>();
      return bad("a number");
    case FieldType::boolean:
      if (j.is_boolean()) return j.get<bool>();
      return bad("a boolean");
    case FieldType::string_list: {
      if (!j.is_array()) return bad("a list of strings");
      StringList out;
      for (const auto& e : j) {
        if (!e.is_string()) return bad("a list of strings");
        out.push_back(e.get<std::string>());
      }
      return out;
    }
    case FieldType::json:
      return j;
  }
  return bad("a value");
}

nlohmann::json value_to_json(const Value& v) {
  return std::visit(
      [](const auto& x) -> nlohmann::json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) return nullptr;
        else return nlohmann::json(x);
      },
      v);
}

namespace {
const Value kNull;
}

PackedValues::PackedValues(std::vector<Value> all) {
  size_t n = 0;
  for (const auto& v : all) n += is_null(v) ? 0 : 1;
  entries_.reserve(n);
  for (size_t i = 0; i < all.size(); ++i)
    if (!is_null(all[i])) entries_.push_back({static_cast<uint32_t>(i), std::move(all[i])});
}

const Value& PackedValues::operator[](size_t field) const {
  for (const auto& e : entries_) {
    if (e.field == field) return e.value;
    if (e.field > field) break;
  }
  return kNull;
}

std::vector<Value> PackedValues::unpack(size_t fields) const {
  std::vector<Value> all(fields);
  for (const auto& e : entries_)
    if (e.field < fields) all[e.field] = e.value;
  return all;
}

const Value& ValuesView::operator[](size_t field) const {
  if (packed_) return (*packed_)[field];
  return field < full_->size() ? (*full_)[field] : kNull;
}

}  // namespace eagle
