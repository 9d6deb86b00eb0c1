#include "eagle/answer/citations.h"

#include <algorithm>
#include <cctype>

namespace eagle::answer {

ParsedCitations parse_citations(std::string_view text, size_t passages) {
  ParsedCitations out;
  auto note = [&](size_t n) {
    auto& list = n >= 1 && n <= passages ? out.numbers : out.dropped;
    if (std::find(list.begin(), list.end(), n) == list.end()) list.push_back(n);
  };
  size_t i = 0;
  while ((i = text.find('[', i)) != std::string_view::npos) {
    const size_t close = text.find(']', i);
    if (close == std::string_view::npos) break;
    const std::string_view inside = text.substr(i + 1, close - i - 1);
    // Only digits, commas, spaces and ranges: "[see 2]" or "[a]" is not a citation.
    std::vector<std::pair<size_t, size_t>> ranges;
    size_t p = 0;
    bool valid = !inside.empty() && inside.size() <= 64;
    while (valid && p < inside.size()) {
      while (p < inside.size() && (inside[p] == ' ' || inside[p] == ',')) ++p;
      if (p >= inside.size()) break;
      size_t a = 0, digits = 0;
      while (p < inside.size() && std::isdigit(static_cast<unsigned char>(inside[p])) && digits < 6) {
        a = a * 10 + static_cast<size_t>(inside[p++] - '0');
        ++digits;
      }
      if (!digits) {
        valid = false;
        break;
      }
      size_t b = a;
      size_t q = p;
      while (q < inside.size() && inside[q] == ' ') ++q;
      // "-", or an en dash (U+2013, E2 80 93)
      size_t dash = 0;
      if (q < inside.size() && inside[q] == '-') dash = 1;
      else if (inside.substr(q, 3) == "\xE2\x80\x93") dash = 3;
      if (dash) {
        q += dash;
        while (q < inside.size() && inside[q] == ' ') ++q;
        size_t bd = 0;
        b = 0;
        while (q < inside.size() && std::isdigit(static_cast<unsigned char>(inside[q])) && bd < 6) {
          b = b * 10 + static_cast<size_t>(inside[q++] - '0');
          ++bd;
        }
        if (!bd || b < a || b - a > 50) {
          valid = false;
          break;
        }
        p = q;
      }
      ranges.emplace_back(a, b);
    }
    if (valid)
      for (auto [a, b] : ranges)
        for (size_t n = a; n <= b; ++n) note(n);
    i = close + 1;
  }
  return out;
}

}  // namespace eagle::answer
