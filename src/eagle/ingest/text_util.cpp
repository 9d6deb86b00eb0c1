#include "eagle/ingest/text_util.h"

#include <algorithm>
#include <cctype>

#include "eagle/core/error.h"

namespace eagle::ingest {

namespace {


// Packs units into pieces of at most max_chars; `sep` joins a unit to the piece so far.
class Packer {
 public:
  explicit Packer(size_t max_chars) : max_(max_chars) {}
  void add(std::string_view unit, std::string_view sep) {
    if (unit.empty()) return;
    if (!current_.empty() && current_.size() + sep.size() + unit.size() > max_) emit();
    if (!current_.empty()) current_ += sep;
    current_ += unit;
  }
  std::vector<std::string> finish() {
    emit();
    return std::move(pieces_);
  }

 private:
  void emit() {
    if (!current_.empty()) pieces_.push_back(std::move(current_));
    current_.clear();
  }
  size_t max_;
  std::string current_;
  std::vector<std::string> pieces_;
};

// Sentences end at ". ", "? ", "! " (a split at an abbreviation is harmless: the
// pieces are packed back together up to max_chars).
std::vector<std::string_view> sentences(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i + 1 < line.size(); ++i) {
    if ((line[i] == '.' || line[i] == '?' || line[i] == '!') && line[i + 1] == ' ') {
      out.push_back(line.substr(start, i + 1 - start));
      start = i + 2;
    }
  }
  if (start < line.size()) out.push_back(line.substr(start));
  return out;
}

// Cuts an overlong word at code point boundaries.
void add_long_word(Packer& p, std::string_view word, size_t max_chars, std::string_view sep) {
  while (!word.empty()) {
    size_t cut = std::min(word.size(), max_chars);
    while (cut < word.size() && cut > 0 && (static_cast<unsigned char>(word[cut]) & 0xC0) == 0x80) --cut;
    if (cut == 0) cut = std::min(word.size(), max_chars);  // max_chars below one code point: cut anyway
    p.add(word.substr(0, cut), sep);
    word.remove_prefix(cut);
    sep = "";
  }
}

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

std::vector<std::string> split_text(std::string_view text, size_t max_chars) {
  if (max_chars == 0) fail(ErrorCode::invalid_argument, "split_text: max_chars must be positive");
  Packer p(max_chars);
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    const std::string_view line = trim(text.substr(pos, eol - pos));
    pos = eol + 1;
    if (line.empty()) continue;
    if (line.size() <= max_chars) {
      p.add(line, "\n");
      continue;
    }
    std::string_view sep = "\n";  // the first unit of a paragraph starts a new line
    for (std::string_view sentence : sentences(line)) {
      sentence = trim(sentence);
      if (sentence.size() <= max_chars) {
        p.add(sentence, sep);
        sep = " ";
        continue;
      }
      size_t w = 0;
      while (w < sentence.size()) {
        size_t end = sentence.find(' ', w);
        if (end == std::string_view::npos) end = sentence.size();
        const std::string_view word = sentence.substr(w, end - w);
        w = end + 1;
        if (word.empty()) continue;
        if (word.size() <= max_chars)
          p.add(word, sep);
        else
          add_long_word(p, word, max_chars, sep);
        sep = " ";
      }
    }
  }
  return p.finish();
}

std::string base_name(std::string_view path) {
  const size_t slash = path.find_last_of("/\\");
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

std::string slug(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c >= 0x80) out += static_cast<char>(c < 0x80 ? std::tolower(c) : c);
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

bool is_references_title(std::string_view heading) {
  auto keep = [](unsigned char c) { return std::isalnum(c) || c >= 0x80; };
  size_t b = 0, e = heading.size();
  while (b < e && !keep(static_cast<unsigned char>(heading[b]))) ++b;
  while (e > b && !keep(static_cast<unsigned char>(heading[e - 1]))) --e;
  const std::string t = ascii_lower(collapse_whitespace(heading.substr(b, e - b)));
  for (const char* w : {"references", "bibliography", "literature cited", "references and notes", "reference list",
                        "works cited"})
    if (t == w) return true;
  return false;
}

}  // namespace eagle::ingest
