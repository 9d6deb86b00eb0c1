#pragma once
// Parses Milvus boolean filter expressions into a schema-checked syntax tree; the
// grammar, types and limits are in docs/filter.md. Recursive descent over tokens:
// nothing is spliced into text, and every mistake is a FilterError that names the
// byte position and what was expected there.
#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "eagle/core/schema.h"
#include "eagle/filter/ast.h"

namespace eagle::filter {

// Bounds on untrusted input, so no expression can exhaust the stack or memory.
inline constexpr size_t kMaxExpressionBytes = 64 * 1024;
inline constexpr size_t kMaxDepth = 256;  // nested '(' and 'not'
inline constexpr size_t kMaxListLength = 65536;

// Values of {name} placeholders. A string, number or bool stands for one literal; an
// array stands for a whole list (after `in`, in array_contains_any/all); inside a
// like pattern a string is read like the body of a quoted pattern.
using Params = std::map<std::string, nlohmann::json>;

// Throws FilterError (an invalid_argument eagle::Error) naming the position.
Filter parse(std::string_view expression, const CollectionSchema& schema, const Params& params = {});

}  // namespace eagle::filter
