#include "eagle/biomed/vocab/normalize.h"

#include <utf8proc.h>

#include <array>

namespace eagle::biomed {
namespace {

constexpr unsigned char kInvalidByte = 0xFF;

// Decodes the character at `i`; returns its byte length (>= 1) and sets cp (-1 when
// the byte does not start a valid UTF-8 sequence).
size_t decode(std::string_view s, size_t i, int32_t& cp) {
  auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  utf8proc_int32_t v = -1;
  auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + i),
                            static_cast<utf8proc_ssize_t>(s.size() - i), &v);
  if (n <= 0) {
    cp = -1;
    return 1;
  }
  cp = v;
  return static_cast<size_t>(n);
}

bool is_space_cp(int32_t cp) {
  if (cp < 0x80) return cp == ' ' || (cp >= '\t' && cp <= '\r');
  return cp > 0 &&
         (utf8proc_category(cp) == UTF8PROC_CATEGORY_ZS || cp == 0x2028 || cp == 0x2029 || cp == 0x85);
}

bool is_dash_cp(int32_t cp) {
  return (cp >= 0x2010 && cp <= 0x2015) || cp == 0x2212;
}

bool is_letter_cp(int32_t cp) {
  if (cp < 0) return false;
  if (cp < 0x80) return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    // A combining mark continues the letter before it ("e" + U+0301).
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME: return true;
    default: return false;
  }
}

// Appends the case-folded UTF-8 of one non-ASCII code point.
void append_folded(int32_t cp, std::string& out) {
  utf8proc_int32_t buf[8];
  int boundclass = 0;
  auto n = utf8proc_decompose_char(cp, buf, 8, UTF8PROC_CASEFOLD, &boundclass);
  if (n <= 0 || n > 8) {
    buf[0] = cp;
    n = 1;
  }
  for (utf8proc_ssize_t k = 0; k < n; ++k) {
    utf8proc_uint8_t enc[4];
    auto len = utf8proc_encode_char(buf[k], enc);
    out.append(reinterpret_cast<const char*>(enc), static_cast<size_t>(len));
  }
}

constexpr std::array<char, 128> kLowerAscii = [] {
  std::array<char, 128> t{};
  for (int i = 0; i < 128; ++i) t[i] = static_cast<char>(i >= 'A' && i <= 'Z' ? i + 32 : i);
  return t;
}();

// ASCII text whose only white space is single ' ' characters keeps its offsets.
bool ascii_identity(std::string_view s) {
  bool prev_space = false;
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c >= 0x80 || (c >= '\t' && c <= '\r')) return false;
    bool sp = c == ' ';
    if (sp && prev_space) return false;
    prev_space = sp;
  }
  return true;
}

}  // namespace

NormalizedText normalize_for_match(std::string_view text) {
  NormalizedText out;
  out.text.reserve(text.size() + 8);
  if (ascii_identity(text)) {
    out.text.resize(text.size());
    for (size_t i = 0; i < text.size(); ++i) out.text[i] = kLowerAscii[static_cast<unsigned char>(text[i])];
    return out;
  }
  out.offsets.reserve(text.size() + 9);
  auto emit_to = [&](size_t start) {
    while (out.offsets.size() < out.text.size()) out.offsets.push_back(static_cast<uint32_t>(start));
  };
  size_t i = 0;
  while (i < text.size()) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80 && !(c >= '\t' && c <= '\r') && c != ' ') {
      out.text.push_back(kLowerAscii[c]);
      out.offsets.push_back(static_cast<uint32_t>(i));
      ++i;
      continue;
    }
    int32_t cp;
    size_t n = decode(text, i, cp);
    if (cp >= 0 && is_space_cp(cp)) {
      // One ' ' for the whole run; it maps to the run's first byte.
      size_t start = i;
      i += n;
      while (i < text.size()) {
        int32_t cp2;
        size_t n2 = decode(text, i, cp2);
        if (!(cp2 >= 0 && is_space_cp(cp2))) break;
        i += n2;
      }
      out.text.push_back(' ');
      emit_to(start);
      continue;
    }
    if (cp < 0)
      out.text.push_back(static_cast<char>(kInvalidByte));
    else if (is_dash_cp(cp))
      out.text.push_back('-');
    else
      append_folded(cp, out.text);
    emit_to(i);
    i += n;
  }
  out.offsets.push_back(static_cast<uint32_t>(text.size()));
  return out;
}

std::string normalize_surface(std::string_view surface) {
  std::string s = normalize_for_match(surface).text;
  size_t b = s.find_first_not_of(' ');
  if (b == std::string::npos) return {};
  size_t e = s.find_last_not_of(' ');
  return s.substr(b, e - b + 1);
}

bool letter_before(std::string_view text, size_t pos) {
  if (pos == 0 || pos > text.size()) return false;
  auto c = static_cast<unsigned char>(text[pos - 1]);
  if (c < 0x80) return is_letter_cp(c);
  // Step back over at most three continuation bytes to the lead byte.
  size_t start = pos - 1;
  for (int k = 0; k < 3 && start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80; ++k)
    --start;
  int32_t cp;
  size_t n = decode(text, start, cp);
  return start + n == pos && is_letter_cp(cp);
}

bool letter_at(std::string_view text, size_t pos) {
  if (pos >= text.size()) return false;
  int32_t cp;
  decode(text, pos, cp);
  return is_letter_cp(cp);
}

bool is_upper_case(std::string_view s) {
  bool upper = false;
  for (size_t i = 0; i < s.size();) {
    int32_t cp;
    size_t n = decode(s, i, cp);
    i += n;
    if (cp < 0) continue;
    if (cp < 0x80) {
      if (cp >= 'a' && cp <= 'z') return false;
      if (cp >= 'A' && cp <= 'Z') upper = true;
      continue;
    }
    auto cat = utf8proc_category(cp);
    if (cat == UTF8PROC_CATEGORY_LL) return false;
    if (cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LT) upper = true;
  }
  return upper;
}

namespace {

// True when some code point of `s` satisfies `is_case` (invalid bytes skipped).
template <typename IsCase>
bool any_code_point(std::string_view s, IsCase is_case) {
  for (size_t i = 0; i < s.size();) {
    int32_t cp;
    i += decode(s, i, cp);
    if (cp >= 0 && is_case(cp)) return true;
  }
  return false;
}

}  // namespace

bool has_lower_case(std::string_view s) {
  return any_code_point(s, [](int32_t cp) {
    return cp < 0x80 ? (cp >= 'a' && cp <= 'z') : utf8proc_category(cp) == UTF8PROC_CATEGORY_LL;
  });
}

bool has_upper_case(std::string_view s) {
  return any_code_point(s, [](int32_t cp) {
    if (cp < 0x80) return cp >= 'A' && cp <= 'Z';
    const auto cat = utf8proc_category(cp);
    return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LT;
  });
}

}  // namespace eagle::biomed
