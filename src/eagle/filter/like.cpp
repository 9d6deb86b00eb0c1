#include "eagle/filter/like.h"

namespace eagle::filter {

size_t utf8_char_length(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
  if (n == 1 || i + n > s.size()) return 1;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 1;
  return n;
}

void LikePattern::append_literal(std::string_view text) {
  if (text.empty()) return;
  if (!pieces_.empty() && pieces_.back().kind == Kind::literal)
    pieces_.back().text += text;
  else
    pieces_.push_back({Kind::literal, std::string(text)});
}

void LikePattern::append_one() {
  pieces_.push_back({Kind::one, {}});
}

void LikePattern::append_any() {
  if (pieces_.empty() || pieces_.back().kind != Kind::any) pieces_.push_back({Kind::any, {}});
}

// Greedy matching that, on a mismatch, backtracks only to the most recent '%' and lets
// it swallow one more character: O(|s| * pieces) in the worst case, no recursion, and
// correct because an earlier '%' can never need to take more once a later one exists.
bool LikePattern::matches(std::string_view s) const {
  constexpr size_t none = static_cast<size_t>(-1);
  size_t p = 0, t = 0, star_p = none, star_t = 0;
  const size_t n = pieces_.size();
  while (true) {
    if (p < n) {
      const Piece& pc = pieces_[p];
      if (pc.kind == Kind::any) {
        star_p = p++;
        star_t = t;
        continue;
      }
      if (pc.kind == Kind::one && t < s.size()) {
        t += utf8_char_length(s, t);
        ++p;
        continue;
      }
      if (pc.kind == Kind::literal && s.substr(t).starts_with(pc.text)) {
        t += pc.text.size();
        ++p;
        continue;
      }
    } else if (t == s.size()) {
      return true;
    }
    if (star_p == none || star_t >= s.size()) return false;
    star_t += utf8_char_length(s, star_t);
    t = star_t;
    p = star_p + 1;
  }
}

std::string_view LikePattern::literal_prefix() const {
  if (!pieces_.empty() && pieces_.front().kind == Kind::literal) return pieces_.front().text;
  return {};
}

std::string LikePattern::to_source() const {
  std::string out;
  for (const auto& pc : pieces_) {
    if (pc.kind == Kind::any)
      out += '%';
    else if (pc.kind == Kind::one)
      out += '_';
    else
      for (char c : pc.text) {
        if (c == '%' || c == '_' || c == '\\') out += '\\';
        out += c;
      }
  }
  return out;
}

}  // namespace eagle::filter
