#include "eagle/filter/lexer.h"

#include <charconv>
#include <string>

#include "eagle/filter/filter_error.h"

namespace eagle::filter {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_ident_char(char c) {
  return is_ident_start(c) || is_digit(c);
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != b[i]) return false;
  }
  return true;
}

TokenKind keyword_or_identifier(std::string_view word) {
  static constexpr std::pair<std::string_view, TokenKind> keywords[] = {
      {"and", TokenKind::kw_and},
      {"or", TokenKind::kw_or},
      {"not", TokenKind::kw_not},
      {"in", TokenKind::kw_in},
      {"like", TokenKind::kw_like},
      {"is", TokenKind::kw_is},
      {"null", TokenKind::kw_null},
      {"true", TokenKind::kw_true},
      {"false", TokenKind::kw_false},
      {"array_contains", TokenKind::kw_array_contains},
      {"array_contains_any", TokenKind::kw_array_contains_any},
      {"array_contains_all", TokenKind::kw_array_contains_all},
  };
  for (const auto& [text, kind] : keywords)
    if (iequals(word, text)) return kind;
  return TokenKind::identifier;
}

// A character for a message: printable ASCII as itself, anything else as its byte.
std::string describe_char(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7F) return std::string("'") + c + "'";
  static const char* hex = "0123456789ABCDEF";
  return std::string("byte 0x") + hex[u >> 4] + hex[u & 15];
}

}  // namespace

Token Lexer::make(TokenKind kind, size_t start, size_t len) {
  i_ = start + len;
  return {kind, start, s_.substr(start, len), s_.substr(start, len)};
}

Token Lexer::next() {
  while (i_ < s_.size() && is_space(s_[i_])) ++i_;
  if (i_ == s_.size()) return {TokenKind::end, i_, {}, {}};
  const size_t start = i_;
  const char c = s_[i_];
  auto at = [&](size_t k) { return start + k < s_.size() ? s_[start + k] : '\0'; };
  if (is_ident_start(c)) {
    size_t e = start;
    while (e < s_.size() && is_ident_char(s_[e])) ++e;
    Token t = make(TokenKind::identifier, start, e - start);
    t.kind = keyword_or_identifier(t.text);
    return t;
  }
  if (is_digit(c) || (c == '.' && is_digit(at(1))) ||
      (c == '-' && (is_digit(at(1)) || (at(1) == '.' && is_digit(at(2))))))
    return number();
  switch (c) {
    case '"':
    case '\'': return string();
    case '{': return placeholder();
    case '(': return make(TokenKind::lparen, start, 1);
    case ')': return make(TokenKind::rparen, start, 1);
    case '[': return make(TokenKind::lbracket, start, 1);
    case ']': return make(TokenKind::rbracket, start, 1);
    case ',': return make(TokenKind::comma, start, 1);
    case '<': return at(1) == '=' ? make(TokenKind::le, start, 2) : make(TokenKind::lt, start, 1);
    case '>': return at(1) == '=' ? make(TokenKind::ge, start, 2) : make(TokenKind::gt, start, 1);
    case '!': return at(1) == '=' ? make(TokenKind::ne, start, 2) : make(TokenKind::kw_not, start, 1);
    case '=':
      if (at(1) == '=') return make(TokenKind::eq, start, 2);
      throw FilterError(start, "expected '==' for equality; a single '=' is not an operator");
    case '&':
      if (at(1) == '&') return make(TokenKind::kw_and, start, 2);
      throw FilterError(start, "expected '&&' (or 'and'); a single '&' is not an operator");
    case '|':
      if (at(1) == '|') return make(TokenKind::kw_or, start, 2);
      throw FilterError(start, "expected '||' (or 'or'); a single '|' is not an operator");
    default:
      throw FilterError(start, "unexpected character " + describe_char(c) +
                                   "; expected a field, a value, an operator or a parenthesis");
  }
}

// [-] digits [. digits] [e [+-] digits], or [-] . digits [...]: integers without a
// fraction or exponent, doubles otherwise.
Token Lexer::number() {
  const size_t start = i_;
  size_t e = start;
  if (s_[e] == '-') ++e;
  bool is_float = false;
  while (e < s_.size() && is_digit(s_[e])) ++e;
  if (e < s_.size() && s_[e] == '.') {
    is_float = true;
    ++e;
    if (e == s_.size() || !is_digit(s_[e]))
      throw FilterError(e, "expected digits after the decimal point in number '" +
                               std::string(s_.substr(start, e - start)) + "'");
    while (e < s_.size() && is_digit(s_[e])) ++e;
  }
  if (e < s_.size() && (s_[e] == 'e' || s_[e] == 'E')) {
    is_float = true;
    ++e;
    if (e < s_.size() && (s_[e] == '+' || s_[e] == '-')) ++e;
    if (e == s_.size() || !is_digit(s_[e]))
      throw FilterError(e, "expected the digits of the exponent in number '" +
                               std::string(s_.substr(start, e - start)) + "'");
    while (e < s_.size() && is_digit(s_[e])) ++e;
  }
  if (e < s_.size() && (is_ident_char(s_[e]) || s_[e] == '.'))
    throw FilterError(e, "unexpected " + describe_char(s_[e]) + " in number '" +
                             std::string(s_.substr(start, e - start + 1)) + "'");
  Token t = make(is_float ? TokenKind::number : TokenKind::integer, start, e - start);
  const char* first = s_.data() + start;
  const char* last = s_.data() + e;
  if (is_float) {
    auto [ptr, ec] = std::from_chars(first, last, t.number_value);
    if (ec != std::errc() || ptr != last)
      throw FilterError(start, "number '" + std::string(t.span) + "' is out of range for a double");
  } else {
    auto [ptr, ec] = std::from_chars(first, last, t.int_value);
    if (ec != std::errc() || ptr != last)
      throw FilterError(start, "integer '" + std::string(t.span) +
                                   "' does not fit in 64 bits (write it as a float, e.g. 1e19)");
  }
  return t;
}

// The body is kept raw: whether "\%" is an escape depends on whether the string is
// a like pattern, which only the parser knows.
Token Lexer::string() {
  const size_t start = i_;
  const char q = s_[start];
  size_t e = start + 1;
  while (e < s_.size() && s_[e] != q) e += s_[e] == '\\' ? 2 : 1;
  if (e >= s_.size()) throw FilterError(start, std::string("unterminated string: expected a closing ") + q);
  Token t = make(TokenKind::string, start, e + 1 - start);
  t.text = s_.substr(start + 1, e - start - 1);
  return t;
}

Token Lexer::placeholder() {
  const size_t start = i_;
  size_t e = start + 1;
  while (e < s_.size() && is_space(s_[e])) ++e;
  const size_t name_start = e;
  if (e < s_.size() && is_ident_start(s_[e]))
    while (e < s_.size() && is_ident_char(s_[e])) ++e;
  const size_t name_end = e;
  while (e < s_.size() && is_space(s_[e])) ++e;
  if (name_end == name_start || e == s_.size() || s_[e] != '}')
    throw FilterError(start,
                      "expected a template parameter like {name}: '{', a name of letters, digits "
                      "or '_', then '}'");
  Token t = make(TokenKind::placeholder, start, e + 1 - start);
  t.text = s_.substr(name_start, name_end - name_start);
  return t;
}

}  // namespace eagle::filter
