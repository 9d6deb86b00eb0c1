#include "eagle/filter/evaluate.h"

#include <algorithm>
#include <limits>

namespace eagle::filter {

namespace {

// The json member at `path`, or nullptr when a key or index is missing (which reads
// as null, like in Milvus).
const nlohmann::json* json_at(const Value& v, const std::vector<JsonStep>& path) {
  const auto* j = std::get_if<nlohmann::json>(&v);
  for (const auto& step : path) {
    if (!j) return nullptr;
    if (const auto* key = std::get_if<std::string>(&step)) {
      if (!j->is_object()) return nullptr;
      auto it = j->find(*key);
      j = it == j->end() ? nullptr : &*it;
    } else {
      size_t i = std::get<size_t>(step);
      j = j->is_array() && i < j->size() ? &(*j)[i] : nullptr;
    }
  }
  return j;
}

Scalar json_scalar(const nlohmann::json* j) {
  if (!j) return std::monostate{};
  switch (j->type()) {
    case nlohmann::json::value_t::boolean: return j->get<bool>();
    case nlohmann::json::value_t::number_integer: return j->get<int64_t>();
    case nlohmann::json::value_t::number_unsigned: {
      auto u = j->get<uint64_t>();
      if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return static_cast<int64_t>(u);
      return static_cast<double>(u);
    }
    case nlohmann::json::value_t::number_float: return j->get<double>();
    case nlohmann::json::value_t::string: return std::string_view(j->get_ref<const std::string&>());
    default: return std::monostate{};
  }
}

Scalar read_scalar(const FieldRef& f, const RowView& row) {
  if (f.is_id()) return std::string_view(row.id());
  const Value& v = row.field(f.index);
  if (f.is_json_path()) return json_scalar(json_at(v, f.path));
  return scalar_of(v);
}

bool equal(const Scalar& a, const Scalar& b) {
  return compare_scalars(a, b) == std::partial_ordering::equivalent;
}

bool apply(CompareOp op, const Scalar& a, const Literal& lit) {
  auto ord = compare_scalars(a, scalar_of(lit));
  if (!ord) return false;  // null, or a json member of another kind
  switch (op) {
    case CompareOp::eq: return *ord == std::partial_ordering::equivalent;
    case CompareOp::ne: return *ord != std::partial_ordering::equivalent;  // true for NaN, as in IEEE
    case CompareOp::lt: return *ord == std::partial_ordering::less;
    case CompareOp::le:
      return *ord == std::partial_ordering::less || *ord == std::partial_ordering::equivalent;
    case CompareOp::gt: return *ord == std::partial_ordering::greater;
    case CompareOp::ge:
      return *ord == std::partial_ordering::greater || *ord == std::partial_ordering::equivalent;
  }
  return false;
}

// Whether s equals one of `values` (sorted by scalar_less, distinct).
bool in_sorted(const std::vector<Literal>& values, const Scalar& s) {
  auto it = std::lower_bound(values.begin(), values.end(), s,
                             [](const Literal& v, const Scalar& x) { return scalar_less(scalar_of(v), x); });
  return it != values.end() && equal(scalar_of(*it), s);
}

bool eval_in(const In& e, const RowView& row) {
  Scalar s = read_scalar(e.field, row);
  if (std::holds_alternative<std::monostate>(s)) return false;
  if (!e.negated) return in_sorted(e.values, s);
  // `x not in [a, b]` means `x != a and x != b`, so a json member of another kind than
  // the values is false, like `!=` is. Values are sorted by kind: check both ends.
  int kind = scalar_kind_rank(s);
  if (!e.values.empty() && (scalar_kind_rank(scalar_of(e.values.front())) != kind ||
                            scalar_kind_rank(scalar_of(e.values.back())) != kind))
    return false;
  return !in_sorted(e.values, s);
}

bool eval_array(const ArrayContains& e, const RowView& row) {
  // Elements as scalars, borrowed from the row.
  std::vector<Scalar> elements;
  if (e.field.is_json_path()) {
    const nlohmann::json* j = json_at(row.field(e.field.index), e.field.path);
    if (!j || !j->is_array()) return false;
    for (const auto& x : *j) elements.push_back(json_scalar(&x));
  } else {
    const auto* list = std::get_if<StringList>(&row.field(e.field.index));
    if (!list) return false;
    for (const auto& x : *list) elements.emplace_back(std::string_view(x));
  }
  switch (e.match) {
    case ArrayMatch::contains:
    case ArrayMatch::any:
      return std::any_of(elements.begin(), elements.end(),
                         [&](const Scalar& x) { return in_sorted(e.values, x); });
    case ArrayMatch::all:
      // Values are pairwise distinct and each element equals at most one of them, so
      // more values than elements can never all be found.
      if (e.values.size() > elements.size()) return false;
      return std::all_of(e.values.begin(), e.values.end(), [&](const Literal& v) {
        Scalar sv = scalar_of(v);
        return std::any_of(elements.begin(), elements.end(), [&](const Scalar& x) { return equal(x, sv); });
      });
  }
  return false;
}

bool eval_is_null(const IsNull& e, const RowView& row) {
  bool null = false;
  if (!e.field.is_id()) {
    const Value& v = row.field(e.field.index);
    if (e.field.is_json_path()) {
      const nlohmann::json* j = json_at(v, e.field.path);
      null = !j || j->is_null();
    } else {
      const auto* j = std::get_if<nlohmann::json>(&v);
      null = is_null(v) || (j && j->is_null());
    }
  }
  return null != e.negated;
}

}  // namespace

bool evaluate(const Node& node, const RowView& row) {
  return std::visit(
      [&](const auto& e) -> bool {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, Compare>) {
          return apply(e.op, read_scalar(e.field, row), e.value);
        } else if constexpr (std::is_same_v<T, Range>) {
          Scalar s = read_scalar(e.field, row);
          return apply(e.lower_inclusive ? CompareOp::ge : CompareOp::gt, s, e.lower) &&
                 apply(e.upper_inclusive ? CompareOp::le : CompareOp::lt, s, e.upper);
        } else if constexpr (std::is_same_v<T, In>) {
          return eval_in(e, row);
        } else if constexpr (std::is_same_v<T, Like>) {
          Scalar s = read_scalar(e.field, row);
          const auto* text = std::get_if<std::string_view>(&s);
          return text && e.pattern.matches(*text);
        } else if constexpr (std::is_same_v<T, IsNull>) {
          return eval_is_null(e, row);
        } else if constexpr (std::is_same_v<T, ArrayContains>) {
          return eval_array(e, row);
        } else if constexpr (std::is_same_v<T, Not>) {
          return !evaluate(*e.operand, row);
        } else if constexpr (std::is_same_v<T, And>) {
          return std::all_of(e.operands.begin(), e.operands.end(),
                             [&](const Node& n) { return evaluate(n, row); });
        } else {
          return std::any_of(e.operands.begin(), e.operands.end(),
                             [&](const Node& n) { return evaluate(n, row); });
        }
      },
      node.expr);
}

bool evaluate(const Filter& filter, const RowView& row) {
  return evaluate(filter.root(), row);
}

}  // namespace eagle::filter
