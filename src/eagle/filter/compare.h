#pragma once
// The one ordering of scalar values that filters use. The row-by-row evaluator and
// the scalar index both call these functions, so they cannot disagree on how an
// int64 compares with a double or where NaN goes.
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "eagle/core/value.h"

namespace eagle::filter {

// A literal of a filter expression (already checked against its field's type).
using Literal = std::variant<bool, int64_t, double, std::string>;

// A borrowed scalar read from a row: a field value, the id, or a json member.
// monostate stands for null and for anything that is not a scalar (a list, an object).
using Scalar = std::variant<std::monostate, bool, int64_t, double, std::string_view>;

Scalar scalar_of(const Literal& v);
Scalar scalar_of(const Value& v);  // lists and json are not scalars: monostate
Value value_of(const Literal& v);

// Exact: converting the int64 to double would round above 2^53 and make 2^53 + 1
// "equal" to 2^53. Unordered only when b is NaN.
std::partial_ordering compare_numbers(int64_t a, double b);

// nullopt when a and b cannot be compared: either is null, or they are of different
// kinds (bool, number, string). Numbers compare numerically across int64 and
// double; strings by bytes; false < true. NaN is unordered against every number.
std::optional<std::partial_ordering> compare_scalars(const Scalar& a, const Scalar& b);

// A strict total order on non-NaN scalars (bools, then numbers, then strings) that
// agrees with compare_scalars within a kind; sorts `in [...]` lists for binary search.
bool scalar_less(const Scalar& a, const Scalar& b);
int scalar_kind_rank(const Scalar& s);  // 0 null, 1 bool, 2 number, 3 string

// "an integer", "a number", "a string", "a bool": for error messages.
std::string_view literal_kind_name(const Literal& v);

}  // namespace eagle::filter
