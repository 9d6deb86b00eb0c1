#include "eagle/filter/ast.h"

#include <charconv>

namespace eagle::filter {

namespace {

// Quotes text for the lexer. Backslashes are doubled only for plain strings: a like
// pattern's source already spells its literal backslashes as "\\".
std::string quote(std::string_view s, bool escape_backslash) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\\': out += escape_backslash ? "\\\\" : "\\"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

std::string field_to_string(const FieldRef& f) {
  std::string out = f.name;
  for (const auto& step : f.path) {
    if (const auto* key = std::get_if<std::string>(&step))
      out += "[" + quote(*key, true) + "]";
    else
      out += "[" + std::to_string(std::get<size_t>(step)) + "]";
  }
  return out;
}

std::string list_to_string(const std::vector<Literal>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + literal_to_string(values[i]);
  return out + "]";
}

std::string join(const std::vector<Node>& operands, std::string_view op) {
  std::string out = "(";
  for (size_t i = 0; i < operands.size(); ++i) {
    if (i) out += op;
    out += to_string(operands[i]);
  }
  return out + ")";
}

}  // namespace

std::string_view compare_op_text(CompareOp op) {
  switch (op) {
    case CompareOp::eq: return "==";
    case CompareOp::ne: return "!=";
    case CompareOp::lt: return "<";
    case CompareOp::le: return "<=";
    case CompareOp::gt: return ">";
    case CompareOp::ge: return ">=";
  }
  return "?";
}

std::string literal_to_string(const Literal& v) {
  switch (v.index()) {
    case 0: return std::get<bool>(v) ? "true" : "false";
    case 1: return std::to_string(std::get<int64_t>(v));
    case 2: {
      char buf[64];
      auto res = std::to_chars(buf, buf + sizeof buf, std::get<double>(v));
      std::string out(buf, res.ptr);
      // Keep it a float literal: "2" would parse back as an integer.
      if (out.find_first_of(".e") == std::string::npos) out += ".0";
      return out;
    }
    default: return quote(std::get<std::string>(v), true);
  }
}

std::string to_string(const Node& node) {
  return std::visit(
      [](const auto& e) -> std::string {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, Compare>) {
          return field_to_string(e.field) + " " + std::string(compare_op_text(e.op)) + " " +
                 literal_to_string(e.value);
        } else if constexpr (std::is_same_v<T, Range>) {
          return literal_to_string(e.lower) + (e.lower_inclusive ? " <= " : " < ") +
                 field_to_string(e.field) + (e.upper_inclusive ? " <= " : " < ") + literal_to_string(e.upper);
        } else if constexpr (std::is_same_v<T, In>) {
          return field_to_string(e.field) + (e.negated ? " not in " : " in ") + list_to_string(e.values);
        } else if constexpr (std::is_same_v<T, Like>) {
          return field_to_string(e.field) + " like " + quote(e.pattern.to_source(), false);
        } else if constexpr (std::is_same_v<T, IsNull>) {
          return field_to_string(e.field) + (e.negated ? " is not null" : " is null");
        } else if constexpr (std::is_same_v<T, ArrayContains>) {
          std::string f = field_to_string(e.field);
          switch (e.match) {
            case ArrayMatch::contains:
              return "array_contains(" + f + ", " + literal_to_string(e.values[0]) + ")";
            case ArrayMatch::any: return "array_contains_any(" + f + ", " + list_to_string(e.values) + ")";
            case ArrayMatch::all: return "array_contains_all(" + f + ", " + list_to_string(e.values) + ")";
          }
          return {};
        } else if constexpr (std::is_same_v<T, Not>) {
          return "not " + to_string(*e.operand);
        } else if constexpr (std::is_same_v<T, And>) {
          return join(e.operands, " and ");
        } else {
          return join(e.operands, " or ");
        }
      },
      node.expr);
}

}  // namespace eagle::filter
