#include "eagle/filter/parser.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "eagle/filter/filter_error.h"
#include "eagle/filter/lexer.h"

namespace eagle::filter {

namespace {

bool is_compare(TokenKind k) {
  return k >= TokenKind::eq && k <= TokenKind::ge;
}

CompareOp compare_op(TokenKind k) {
  switch (k) {
    case TokenKind::eq: return CompareOp::eq;
    case TokenKind::ne: return CompareOp::ne;
    case TokenKind::lt: return CompareOp::lt;
    case TokenKind::le: return CompareOp::le;
    case TokenKind::gt: return CompareOp::gt;
    default: return CompareOp::ge;
  }
}

bool is_ordering(CompareOp op) {
  return op != CompareOp::eq && op != CompareOp::ne;
}

// `5 < year` reads as `year > 5`.
CompareOp mirror(CompareOp op) {
  switch (op) {
    case CompareOp::lt: return CompareOp::gt;
    case CompareOp::le: return CompareOp::ge;
    case CompareOp::gt: return CompareOp::lt;
    case CompareOp::ge: return CompareOp::le;
    default: return op;
  }
}

std::string describe(const Token& t) {
  if (t.kind == TokenKind::end) return "end of input";
  if (t.span.size() > 40) return "'" + std::string(t.span.substr(0, 37)) + "...'";
  return "'" + std::string(t.span) + "'";
}

std::string_view function_name(ArrayMatch m) {
  switch (m) {
    case ArrayMatch::contains: return "array_contains";
    case ArrayMatch::any: return "array_contains_any";
    case ArrayMatch::all: return "array_contains_all";
  }
  return "?";
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Decodes the body of a quoted literal. Escapes: \" \' \\ \/ \n \t \r \uXXXX (a
// surrogate pair for characters above U+FFFF). When `pattern` is given the body is a
// like pattern: unescaped % and _ become wildcards and \% \_ stand for themselves.
// Error positions are base + offset, or just base for text that came from a
// template parameter (`exact_positions` false), which has no source offsets.
std::string decode_body(std::string_view body, size_t base, bool exact_positions, LikePattern* pattern) {
  std::string text;
  auto flush = [&] {
    if (!pattern) return;
    pattern->append_literal(text);
    text.clear();
  };
  auto pos = [&](size_t i) { return exact_positions ? base + i : base; };
  auto hex4 = [&](size_t i) -> uint32_t {
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) {
      char c = i + k < body.size() ? body[i + k] : '\0';
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (d < 0) throw FilterError(pos(i - 2), "expected 4 hex digits after \\u");
      v = v * 16 + static_cast<uint32_t>(d);
    }
    return v;
  };
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (pattern && (c == '%' || c == '_')) {
      flush();
      c == '%' ? pattern->append_any() : pattern->append_one();
      continue;
    }
    if (c != '\\') {
      text += c;
      continue;
    }
    if (i + 1 == body.size())
      throw FilterError(pos(i), "a backslash must be followed by the character it escapes");
    char e = body[++i];
    switch (e) {
      case '"':
      case '\'':
      case '\\':
      case '/': text += e; break;
      case 'n': text += '\n'; break;
      case 't': text += '\t'; break;
      case 'r': text += '\r'; break;
      case '%':
      case '_':
        if (!pattern)
          throw FilterError(pos(i - 1),
                            std::string("escape '\\") + e +
                                "' only has a meaning in a like pattern; write the character alone");
        text += e;
        break;
      case 'u': {
        uint32_t cp = hex4(i + 1);
        i += 4;
        if (cp >= 0xDC00 && cp <= 0xDFFF) throw FilterError(pos(i - 5), "\\u escape is a lone low surrogate");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (i + 2 >= body.size() || body[i + 1] != '\\' || body[i + 2] != 'u')
            throw FilterError(pos(i - 5),
                              "\\u escape is a high surrogate without its low surrogate \\uDC00-\\uDFFF");
          uint32_t lo = hex4(i + 3);
          if (lo < 0xDC00 || lo > 0xDFFF)
            throw FilterError(pos(i + 1), "expected a low surrogate \\uDC00-\\uDFFF after a high surrogate");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          i += 6;
        }
        append_utf8(text, cp);
        break;
      }
      default:
        throw FilterError(pos(i - 1), std::string("unknown escape '\\") + e +
                                          "'; expected one of \\\" \\' \\\\ \\n \\t \\r \\uXXXX" +
                                          (pattern ? " \\% \\_" : ""));
    }
  }
  flush();
  return text;
}

class Parser {
 public:
  Parser(std::string_view src, const CollectionSchema& schema, const Params& params)
      : schema_(schema), params_(params), lexer_(src) {}

  Node parse_all() {
    if (peek().kind == TokenKind::end)
      throw FilterError(0, "empty expression: expected a condition such as year >= 2020");
    Node n = parse_or();
    const Token& t = peek();
    if (t.kind == TokenKind::rparen) throw FilterError(t.pos, "unbalanced ')': no '(' is open here");
    if (t.kind != TokenKind::end)
      throw FilterError(t.pos, "expected 'and', 'or' or end of input, found " + describe(t));
    return n;
  }

 private:
  // Tokens are read on demand; a deque keeps references to earlier tokens valid.
  const Token& peek() {
    if (next_ == tokens_.size()) tokens_.push_back(lexer_.next());
    return tokens_[next_];
  }
  const Token& advance() {
    const Token& t = peek();
    if (t.kind != TokenKind::end) ++next_;
    return t;
  }
  const Token& expect(TokenKind kind, std::string_view what) {
    const Token& t = peek();
    if (t.kind != kind) throw FilterError(t.pos, "expected " + std::string(what) + ", found " + describe(t));
    return advance();
  }
  // " after 'x'" naming the token just consumed, for "expected ..." messages.
  std::string after_previous() const {
    return next_ == 0 ? std::string() : " after " + describe(tokens_[next_ - 1]);
  }

  void enter(size_t pos) {
    if (++depth_ > kMaxDepth)
      throw FilterError(pos, "expression nests deeper than " + std::to_string(kMaxDepth) +
                                 " levels of parentheses and 'not'");
  }
  void leave() { --depth_; }

  template <typename Junction>
  static void append_flat(std::vector<Node>& operands, Node n) {
    if (auto* same = std::get_if<Junction>(&n.expr))
      for (auto& child : same->operands) operands.push_back(std::move(child));
    else
      operands.push_back(std::move(n));
  }

  template <typename Junction>
  Node parse_junction(TokenKind op, Node (Parser::*operand)()) {
    Node first = (this->*operand)();
    if (peek().kind != op) return first;
    Junction j;
    append_flat<Junction>(j.operands, std::move(first));
    while (peek().kind == op) {
      advance();
      append_flat<Junction>(j.operands, (this->*operand)());
    }
    return Node{std::move(j)};
  }

  // and binds tighter than or; not tighter than and.
  Node parse_or() { return parse_junction<Or>(TokenKind::kw_or, &Parser::parse_and); }
  Node parse_and() { return parse_junction<And>(TokenKind::kw_and, &Parser::parse_unary); }

  Node parse_unary() {
    if (peek().kind != TokenKind::kw_not) return parse_primary();
    enter(advance().pos);
    Node operand = parse_unary();
    leave();
    return Node{Not{std::make_unique<Node>(std::move(operand))}};
  }

  Node parse_primary() {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::lparen: {
        advance();
        enter(t.pos);
        Node inner = parse_or();
        const Token& close = peek();
        if (close.kind != TokenKind::rparen)
          throw FilterError(close.pos, "expected ')' to close the '(' at position " + std::to_string(t.pos) +
                                           ", found " + describe(close));
        advance();
        leave();
        return inner;
      }
      case TokenKind::kw_array_contains: return parse_array_call(ArrayMatch::contains);
      case TokenKind::kw_array_contains_any: return parse_array_call(ArrayMatch::any);
      case TokenKind::kw_array_contains_all: return parse_array_call(ArrayMatch::all);
      case TokenKind::identifier: {
        FieldRef f = parse_field();
        return parse_field_predicate(std::move(f));
      }
      case TokenKind::integer:
      case TokenKind::number:
      case TokenKind::string:
      case TokenKind::kw_true:
      case TokenKind::kw_false:
      case TokenKind::placeholder: return parse_value_first();
      default:
        throw FilterError(t.pos, "expected a condition (a field, a value, '(' or 'not')" + after_previous() +
                                     ", found " + describe(t));
    }
  }

  FieldRef parse_field() {
    const Token& t = advance();
    FieldRef f;
    f.name = std::string(t.text);
    if (t.text == "id") {
      f.index = kIdField;
      f.type = FieldType::string;
    } else if (auto i = schema_.field_index(t.text)) {
      f.index = *i;
      f.type = schema_.fields[*i].type;
    } else {
      throw FilterError(t.pos, "unknown field '" + f.name + "'" + suggestion(t.text));
    }
    while (peek().kind == TokenKind::lbracket) {
      const Token& open = advance();
      if (f.type != FieldType::json)
        throw FilterError(open.pos, "field '" + f.name + "' is " + std::string(field_type_name(f.type)) +
                                        "; only json fields take a key, as in meta[\"key\"]");
      const Token& k = peek();
      if (k.kind == TokenKind::string)
        f.path.emplace_back(decode_body(k.text, k.pos + 1, true, nullptr));
      else if (k.kind == TokenKind::integer && k.int_value >= 0)
        f.path.emplace_back(static_cast<size_t>(k.int_value));
      else
        throw FilterError(
            k.pos, "expected a quoted key or an array index >= 0 inside '[]' after json field '" + f.name +
                       "', found " + describe(k));
      advance();
      expect(TokenKind::rbracket, "']' after the json key");
    }
    return f;
  }

  std::string suggestion(std::string_view name) const {
    if (name.size() > 64) return {};  // no field name is that long; skip the quadratic distance
    std::string best = "id";
    size_t best_d = edit_distance(name, best);
    for (const auto& f : schema_.fields) {
      size_t d = edit_distance(name, f.name);
      if (d < best_d) best_d = d, best = f.name;
    }
    return best_d <= 2 && best_d < name.size() ? "; did you mean '" + best + "'?" : "";
  }

  Node parse_field_predicate(FieldRef f) {
    const Token& t = peek();
    if (is_compare(t.kind)) {
      advance();
      CompareOp op = compare_op(t.kind);
      check_operator(f, t);
      auto [value, value_pos] = parse_value("after " + describe(t));
      check_literal(f, value, value_pos, is_ordering(op));
      if (is_compare(peek().kind))
        throw FilterError(peek().pos,
                          "a chained comparison must start with a value, as in 2020 <= year < 2025");
      return Node{Compare{std::move(f), op, std::move(value)}};
    }
    switch (t.kind) {
      case TokenKind::kw_in: {
        advance();
        check_operator(f, t);
        return Node{In{f, parse_list(f, t), false}};
      }
      case TokenKind::kw_not: {
        advance();
        const Token& in = expect(TokenKind::kw_in, "'in' after '" + f.name + " not'");
        check_operator(f, in);
        return Node{In{f, parse_list(f, in), true}};
      }
      case TokenKind::kw_like: {
        advance();
        check_operator(f, t);
        return Node{Like{std::move(f), parse_pattern()}};
      }
      case TokenKind::kw_is: {
        advance();
        bool negated = peek().kind == TokenKind::kw_not;
        if (negated) advance();
        expect(TokenKind::kw_null, negated ? "'null' after 'is not'" : "'null' or 'not null' after 'is'");
        return Node{IsNull{std::move(f), negated}};
      }
      default:
        throw FilterError(t.pos, "expected an operator after field '" + f.name +
                                     "' (==, !=, <, <=, >, >=, in, not in, like, is null), found " +
                                     describe(t));
    }
  }

  // `value op field` or the chained range `value op field op value`.
  Node parse_value_first() {
    const Token& first = peek();
    auto [lower, lower_pos] = parse_value("");
    const Token& op1 = peek();
    if (!is_compare(op1.kind))
      throw FilterError(op1.pos, "expected a comparison operator after the value " + describe(first) +
                                     " (a condition starts with a field, as in year >= 2020), found " +
                                     describe(op1));
    advance();
    if (peek().kind != TokenKind::identifier)
      throw FilterError(peek().pos,
                        "expected a field after " + describe(op1) + ", found " + describe(peek()));
    FieldRef f = parse_field();
    check_operator(f, op1);
    CompareOp mirrored = mirror(compare_op(op1.kind));
    check_literal(f, lower, lower_pos, is_ordering(mirrored));
    if (!is_compare(peek().kind)) return Node{Compare{std::move(f), mirrored, std::move(lower)}};

    const Token& op2 = advance();
    auto upward = [](TokenKind k) { return k == TokenKind::lt || k == TokenKind::le; };
    auto downward = [](TokenKind k) { return k == TokenKind::gt || k == TokenKind::ge; };
    if (!(upward(op1.kind) && upward(op2.kind)) && !(downward(op1.kind) && downward(op2.kind)))
      throw FilterError(op2.pos,
                        "a chained range needs two of '<', '<=' or two of '>', '>=', as in "
                        "2020 <= year < 2025; found " +
                            describe(op1) + " and " + describe(op2));
    auto [upper, upper_pos] = parse_value("after " + describe(op2));
    check_literal(f, upper, upper_pos, true);
    if (is_compare(peek().kind)) throw FilterError(peek().pos, "a range chains at most two comparisons");
    bool incl1 = op1.kind == TokenKind::le || op1.kind == TokenKind::ge;
    bool incl2 = op2.kind == TokenKind::le || op2.kind == TokenKind::ge;
    if (upward(op1.kind)) return Node{Range{std::move(f), std::move(lower), incl1, std::move(upper), incl2}};
    return Node{Range{std::move(f), std::move(upper), incl2, std::move(lower), incl1}};
  }

  Node parse_array_call(ArrayMatch match) {
    const Token& call = advance();
    const std::string fn(function_name(match));
    expect(TokenKind::lparen, "'(' after " + fn);
    const Token& ft = peek();
    if (ft.kind != TokenKind::identifier)
      throw FilterError(ft.pos,
                        "expected a field as the first argument of " + fn + ", found " + describe(ft));
    FieldRef f = parse_field();
    if (f.type != FieldType::string_list && !f.is_json_path())
      throw FilterError(ft.pos, fn + " needs a string_list field or a json key; '" + f.name + "' is " +
                                    std::string(field_type_name(f.type)));
    const Token& comma = expect(TokenKind::comma, "',' after the field in " + fn + "(...)");
    std::vector<Literal> values;
    if (match == ArrayMatch::contains) {
      auto [v, pos] = parse_value("as the second argument of " + fn);
      check_literal(f, v, pos, false);
      values.push_back(std::move(v));
    } else {
      const size_t list_pos = peek().pos;
      values = parse_list(f, comma);
      if (values.empty()) throw FilterError(list_pos, fn + " needs at least one value");
    }
    const Token& close = peek();
    if (close.kind != TokenKind::rparen)
      throw FilterError(close.pos, "expected ')' to close " + fn + "( at position " +
                                       std::to_string(call.pos) + ", found " + describe(close));
    advance();
    return Node{ArrayContains{std::move(f), match, std::move(values)}};
  }

  // A list literal `[v, ...]` or a placeholder holding a JSON array; sorted and
  // without duplicates so evaluation can binary-search it.
  std::vector<Literal> parse_list(const FieldRef& f, const Token& before) {
    std::vector<Literal> out;
    const Token& t = peek();
    if (t.kind == TokenKind::placeholder) {
      advance();
      const nlohmann::json& j = param(t);
      const std::string what = "template parameter '" + std::string(t.text) + "'";
      if (!j.is_array())
        throw FilterError(t.pos, what + " must be a list (a JSON array) here, found " + j.type_name());
      check_list_length(j.size(), t.pos);
      for (size_t i = 0; i < j.size(); ++i) {
        const std::string elem = "element " + std::to_string(i) + " of " + what;
        out.push_back(literal_from_json(j[i], t.pos, elem));
        check_literal(f, out.back(), t.pos, false, " (" + elem + ")");
      }
    } else {
      if (t.kind != TokenKind::lbracket)
        throw FilterError(t.pos, "expected a list such as [1, 2] or a {parameter} after " + describe(before) +
                                     ", found " + describe(t));
      advance();
      if (peek().kind == TokenKind::rbracket) {
        advance();
      } else {
        while (true) {
          check_list_length(out.size() + 1, t.pos);
          auto [v, pos] = parse_value("in the list");
          check_literal(f, v, pos, false);
          out.push_back(std::move(v));
          const Token& sep = peek();
          if (sep.kind == TokenKind::rbracket) {
            advance();
            break;
          }
          if (sep.kind != TokenKind::comma)
            throw FilterError(sep.pos, "expected ',' or ']' in the list that starts at position " +
                                           std::to_string(t.pos) + ", found " + describe(sep));
          advance();
        }
      }
    }
    std::stable_sort(out.begin(), out.end(), [](const Literal& a, const Literal& b) {
      return scalar_less(scalar_of(a), scalar_of(b));
    });
    out.erase(std::unique(out.begin(), out.end(),
                          [](const Literal& a, const Literal& b) {
                            return compare_scalars(scalar_of(a), scalar_of(b)) ==
                                   std::partial_ordering::equivalent;
                          }),
              out.end());
    return out;
  }

  static void check_list_length(size_t n, size_t pos) {
    if (n > kMaxListLength)
      throw FilterError(pos, "the list has more than " + std::to_string(kMaxListLength) + " values");
  }

  LikePattern parse_pattern() {
    const Token& t = peek();
    LikePattern p;
    if (t.kind == TokenKind::string) {
      decode_body(t.text, t.pos + 1, true, &p);
    } else if (t.kind == TokenKind::placeholder) {
      const nlohmann::json& j = param(t);
      if (!j.is_string())
        throw FilterError(t.pos, "template parameter '" + std::string(t.text) +
                                     "' must be a string to serve as a like pattern, found " + j.type_name());
      decode_body(j.get_ref<const std::string&>(), t.pos, false, &p);
    } else {
      throw FilterError(t.pos,
                        "expected a quoted pattern such as \"abc%\" after 'like', found " + describe(t));
    }
    advance();
    return p;
  }

  // One literal; `context` completes "expected a value ...".
  std::pair<Literal, size_t> parse_value(const std::string& context) {
    const Token& t = peek();
    auto expected = [&] { return "expected a value" + (context.empty() ? std::string() : " " + context); };
    switch (t.kind) {
      case TokenKind::integer: advance(); return {t.int_value, t.pos};
      case TokenKind::number: advance(); return {t.number_value, t.pos};
      case TokenKind::kw_true: advance(); return {true, t.pos};
      case TokenKind::kw_false: advance(); return {false, t.pos};
      case TokenKind::string: advance(); return {decode_body(t.text, t.pos + 1, true, nullptr), t.pos};
      case TokenKind::placeholder: {
        advance();
        const nlohmann::json& j = param(t);
        const std::string what = "template parameter '" + std::string(t.text) + "'";
        if (j.is_array())
          throw FilterError(t.pos,
                            what + " is a list; a list only fits after 'in' or in array_contains_any/all");
        return {literal_from_json(j, t.pos, what), t.pos};
      }
      case TokenKind::identifier:
        throw FilterError(
            t.pos, expected() + ", found field " + describe(t) + "; comparing two fields is not supported");
      default: throw FilterError(t.pos, expected() + ", found " + describe(t));
    }
  }

  const nlohmann::json& param(const Token& t) const {
    auto it = params_.find(std::string(t.text));
    if (it == params_.end())
      throw FilterError(t.pos, "missing template parameter '" + std::string(t.text) + "'");
    return it->second;
  }

  static Literal literal_from_json(const nlohmann::json& j, size_t pos, const std::string& what) {
    if (j.is_string()) return j.get<std::string>();
    if (j.is_boolean()) return j.get<bool>();
    if (j.is_number_unsigned()) {
      auto u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        throw FilterError(pos, what + " = " + std::to_string(u) + " does not fit in int64");
      return static_cast<int64_t>(u);
    }
    if (j.is_number_integer()) return j.get<int64_t>();
    if (j.is_number_float()) {
      double d = j.get<double>();
      if (!std::isfinite(d)) throw FilterError(pos, what + " is not a finite number");
      return d;
    }
    if (j.is_null()) throw FilterError(pos, what + " is null; test for null with 'is null'");
    throw FilterError(pos,
                      what + " is " + std::string(j.type_name()) + "; expected a string, number or bool");
  }

  // Whether operator token `op` applies to field f at all (before looking at values).
  static void check_operator(const FieldRef& f, const Token& op) {
    const std::string o = describe(op);
    if (f.is_json_path()) return;
    if (f.type == FieldType::string_list)
      throw FilterError(op.pos, "field '" + f.name + "' is a string_list; " + o +
                                    " does not apply to it; use "
                                    "array_contains(" +
                                    f.name + ", v), array_contains_any or array_contains_all");
    if (f.type == FieldType::json)
      throw FilterError(
          op.pos, "json field '" + f.name + "' needs a key before " + o + ", as in " + f.name + "[\"key\"]");
    if (op.kind == TokenKind::kw_like && f.type != FieldType::string)
      throw FilterError(
          op.pos, "'like' needs a string field; '" + f.name + "' is " + std::string(field_type_name(f.type)));
    if (f.type == FieldType::boolean && is_compare(op.kind) && is_ordering(compare_op(op.kind)))
      throw FilterError(op.pos,
                        "operator " + o + " does not apply to bool field '" + f.name + "'; use == or !=");
  }

  // Whether literal v fits field f (int literals fit double fields and vice versa).
  static void check_literal(const FieldRef& f, const Literal& v, size_t pos, bool ordering,
                            const std::string& where = "") {
    const bool is_bool = std::holds_alternative<bool>(v);
    const bool is_number = std::holds_alternative<int64_t>(v) || std::holds_alternative<double>(v);
    const bool is_string = std::holds_alternative<std::string>(v);
    if (f.is_json_path()) {
      if (ordering && is_bool)
        throw FilterError(pos, "bools have no order; compare them with == or !=" + where);
      return;
    }
    bool ok = false;
    switch (f.type) {
      case FieldType::string: ok = is_string; break;
      case FieldType::string_list: ok = is_string; break;
      case FieldType::int64:
      case FieldType::float64: ok = is_number; break;
      case FieldType::boolean: ok = is_bool; break;
      case FieldType::json: break;
    }
    if (ok) return;
    if (f.type == FieldType::string_list)
      throw FilterError(pos, "field '" + f.name + "' holds strings and cannot be compared with " +
                                 std::string(literal_kind_name(v)) + where);
    throw FilterError(pos, "field '" + f.name + "' is " + std::string(field_type_name(f.type)) +
                               " and cannot be compared with " + std::string(literal_kind_name(v)) + where);
  }

  const CollectionSchema& schema_;
  const Params& params_;
  Lexer lexer_;
  std::deque<Token> tokens_;
  size_t next_ = 0;
  size_t depth_ = 0;
};

}  // namespace

Filter parse(std::string_view expression, const CollectionSchema& schema, const Params& params) {
  if (expression.size() > kMaxExpressionBytes)
    throw FilterError(kMaxExpressionBytes,
                      "expression is longer than " + std::to_string(kMaxExpressionBytes) + " bytes");
  Node root = Parser(expression, schema, params).parse_all();
  return Filter(std::make_shared<const Node>(std::move(root)), std::string(expression));
}

}  // namespace eagle::filter
