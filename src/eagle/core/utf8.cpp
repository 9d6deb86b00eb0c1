#include "eagle/core/utf8.h"

namespace eagle {
namespace {

// Length of the valid sequence starting at s[i], or 0 when it is invalid. `*maximal`
// receives how many bytes form the maximal invalid subpart (at least 1) otherwise.
size_t sequence_length(std::string_view s, size_t i, size_t* maximal) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  *maximal = 1;
  if (c < 0x80) return 1;
  size_t need;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) need = 2;
  else if (c == 0xE0) need = 3, lo = 0xA0;
  else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) need = 3;
  else if (c == 0xED) need = 3, hi = 0x9F;  // no surrogates
  else if (c == 0xF0) need = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) need = 4;
  else if (c == 0xF4) need = 4, hi = 0x8F;  // nothing past U+10FFFF
  else return 0;
  for (size_t k = 1; k < need; ++k) {
    if (i + k >= s.size()) return 0;
    const unsigned char x = b(i + k);
    const bool ok = k == 1 ? (x >= lo && x <= hi) : (x >= 0x80 && x <= 0xBF);
    if (!ok) return 0;
    *maximal = k + 1;
  }
  return need;
}

}  // namespace

std::optional<size_t> first_invalid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    // ASCII runs are the common case.
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t maximal;
    const size_t n = sequence_length(s, i, &maximal);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

std::string repair_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    size_t maximal;
    const size_t n = sequence_length(s, i, &maximal);
    if (n) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      i += maximal;
    }
  }
  return out;
}

}  // namespace eagle
