#include "eagle/answer/sentences.h"

#include <array>
#include <cctype>

namespace eagle::answer {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Words after which a full stop is part of the word (lower-cased, without the stop).
bool is_abbreviation(std::string_view word) {
  static constexpr std::array<std::string_view, 34> kAbbrev = {
      "e.g", "i.e", "al", "fig", "figs", "vs", "cf", "dr", "mr", "mrs", "ms", "prof", "approx", "no",
      "nos", "vol", "ref", "refs", "eq", "eqs", "ca", "st", "inc", "ltd", "co", "jr", "sr", "dept",
      "univ", "tab", "suppl", "sect", "min", "max"};
  std::string lower;
  for (char c : word) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (auto a : kAbbrev)
    if (lower == a) return true;
  return false;
}

// The word that ends at `end` (exclusive; the byte before the stop).
std::string_view word_before(std::string_view line, size_t end) {
  size_t start = end;
  while (start > 0 && !std::isspace(static_cast<unsigned char>(line[start - 1])) && line[start - 1] != '(' &&
         line[start - 1] != '[')
    --start;
  return line.substr(start, end - start);
}

// A stop at line[i] ends a sentence when whitespace follows and the next word starts
// like a sentence (an upper-case letter, a digit, an opening bracket or quote), and
// the word before it is neither an abbreviation nor a single capital (an initial).
bool ends_sentence(std::string_view line, size_t i) {
  if (i + 1 >= line.size() || !std::isspace(static_cast<unsigned char>(line[i + 1]))) return false;
  size_t next = i + 1;
  while (next < line.size() && std::isspace(static_cast<unsigned char>(line[next]))) ++next;
  if (next >= line.size()) return false;
  const unsigned char n = static_cast<unsigned char>(line[next]);
  if (!(std::isupper(n) || std::isdigit(n) || n == '(' || n == '[' || n == '"' || n >= 0x80)) return false;
  if (line[i] != '.') return true;  // ? and !
  const std::string_view w = word_before(line, i);
  if (w.size() == 1 && std::isupper(static_cast<unsigned char>(w[0]))) return false;  // "J. Smith"
  return !is_abbreviation(w);
}

}  // namespace

std::vector<Sentence> split_sentences(std::string_view text) {
  std::vector<Sentence> out;
  size_t line_no = 0, pos = 0;
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    const std::string_view line = text.substr(pos, eol - pos);
    size_t start = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      if ((line[i] == '.' || line[i] == '?' || line[i] == '!') && ends_sentence(line, i)) {
        if (auto s = trim(line.substr(start, i + 1 - start)); !s.empty()) out.push_back({std::string(s), line_no});
        start = i + 1;
      }
    }
    if (auto s = trim(line.substr(start)); !s.empty()) out.push_back({std::string(s), line_no});
    pos = eol + 1;
    ++line_no;
  }
  return out;
}

}  // namespace eagle::answer
