#pragma once
// A JSON Schema (2020-12) validator for the keywords Eagle's tool schemas use: type
// (one or a list), properties, required, additionalProperties (false or a schema),
// items, minItems/maxItems, minLength/maxLength (in code points, as the spec counts),
// minimum/maximum, enum, const, anyOf/oneOf, minProperties/maxProperties. Debian has
// no C++ validator; a schema using any other keyword is refused when the tool table
// is built (check_supported), so a schema can never promise a bound this code does
// not enforce.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace eagle::mcp {

// The first violation: "where: what" (where is a JSON pointer like /top_k), or
// nullopt when the instance is valid.
std::optional<std::string> validate(const nlohmann::json& schema, const nlohmann::json& instance);

// invalid_argument naming the keyword when the schema uses one validate() ignores.
void check_supported(const nlohmann::json& schema);

}  // namespace eagle::mcp
