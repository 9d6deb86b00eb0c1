#pragma once
// Tokens of the filter grammar; an implementation detail of parser.cpp. Keywords
// are case-insensitive; `&&`, `||` and `!` are spellings of and, or and not.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace eagle::filter {

enum class TokenKind : uint8_t {
  identifier,
  integer,      // int_value holds it (a leading '-' is part of the literal)
  number,       // number_value holds it
  string,       // text is the raw body between the quotes; the parser decodes escapes
  placeholder,  // {name}: text is the name
  lparen,
  rparen,
  lbracket,
  rbracket,
  comma,
  eq,
  ne,
  lt,
  le,
  gt,
  ge,
  kw_and,
  kw_or,
  kw_not,
  kw_in,
  kw_like,
  kw_is,
  kw_null,
  kw_true,
  kw_false,
  kw_array_contains,
  kw_array_contains_any,
  kw_array_contains_all,
  end,
};

struct Token {
  TokenKind kind;
  size_t pos;             // byte offset of the token's first character
  std::string_view span;  // the token's source text (for messages)
  std::string_view text;  // identifier name, string body or placeholder name
  int64_t int_value = 0;
  double number_value = 0;
};

// Hands out tokens one at a time, so errors surface in reading order: an unknown
// field is reported before a bad character further right. After the input the
// lexer keeps returning `end` at position expr.size(). Throws FilterError at the
// offending byte.
class Lexer {
 public:
  explicit Lexer(std::string_view expr) : s_(expr) {}
  Token next();

 private:
  Token make(TokenKind kind, size_t start, size_t len);
  Token number();
  Token string();
  Token placeholder();

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace eagle::filter
