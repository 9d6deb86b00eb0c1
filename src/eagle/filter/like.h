#pragma once
// `like` patterns: '%' matches any run of characters (also none), '_' exactly one
// UTF-8 character (a byte that is not valid UTF-8 counts as one character), and
// everything else itself. The parser decodes the escapes \% \_ \\ into literal text.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace eagle::filter {

class LikePattern {
 public:
  enum class Kind : uint8_t { literal, one, any };
  struct Piece {
    Kind kind;
    std::string text;  // literal pieces only
  };

  // Builders normalise as they go (adjacent literals merge, "%%" is "%") so that two
  // spellings of one pattern print alike and match in the same time.
  void append_literal(std::string_view text);
  void append_one();
  void append_any();

  bool matches(std::string_view s) const;
  // The literal text every match starts with; an index seeks to it instead of
  // scanning the whole dictionary.
  std::string_view literal_prefix() const;
  // The pattern body with \% \_ \\ escapes (without quotes): parses back to *this.
  std::string to_source() const;
  const std::vector<Piece>& pieces() const { return pieces_; }

 private:
  std::vector<Piece> pieces_;
};

// Length in bytes of the UTF-8 character starting at s[i] (i < s.size()); 1 for a
// byte that does not start a complete, well-formed sequence.
size_t utf8_char_length(std::string_view s, size_t i);

}  // namespace eagle::filter
