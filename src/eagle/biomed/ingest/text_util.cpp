#include "eagle/biomed/ingest/text_util.h"

namespace eagle::biomed {

namespace {
bool is_ascii_space(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
}  // namespace

std::string collapse_whitespace(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool pending_space = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    bool space = is_ascii_space(c);
    if (!space && c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0xA0) {
      space = true;  // U+00A0
      ++i;
    }
    if (space) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(static_cast<char>(c));
  }
  return out;
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string_view utf8_prefix(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t cut = max_bytes;
  // Back off continuation bytes (10xxxxxx) so the cut lands on a code point start.
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut);
}

std::string truncate_at_word(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  size_t cut = utf8_prefix(s, max_bytes).size();
  const size_t space = s.rfind(' ', cut);
  if (space != std::string_view::npos && space >= max_bytes / 2) cut = space;
  while (cut > 0 && s[cut - 1] == ' ') --cut;
  return std::string(s.substr(0, cut));
}

}  // namespace eagle::biomed
