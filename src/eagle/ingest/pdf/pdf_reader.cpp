#include "eagle/ingest/pdf/pdf_reader.h"

#include "eagle/ingest/pdf/pdf_document.h"

#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-page.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "eagle/core/error.h"
#include "eagle/ingest/text_util.h"

namespace eagle::ingest {

namespace {

// ---------------------------------------------------------------- text helpers

std::string to_string(const poppler::ustring& u) {
  const poppler::byte_array bytes = u.to_utf8();
  return std::string(bytes.begin(), bytes.end());
}

// Presentation-form ligatures (U+FB00..FB06) as their letters; other text unchanged.
std::string expand_ligatures(std::string_view s) {
  static const std::pair<std::string_view, std::string_view> kLigatures[] = {
      {"\xEF\xAC\x80", "ff"}, {"\xEF\xAC\x81", "fi"},  {"\xEF\xAC\x82", "fl"}, {"\xEF\xAC\x83", "ffi"},
      {"\xEF\xAC\x84", "ffl"}, {"\xEF\xAC\x85", "st"}, {"\xEF\xAC\x86", "st"}};
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    bool replaced = false;
    if (static_cast<unsigned char>(s[i]) == 0xEF)
      for (const auto& [from, to] : kLigatures)
        if (s.substr(i, from.size()) == from) {
          out += to;
          i += from.size();
          replaced = true;
          break;
        }
    if (!replaced) {
      // Control characters (poppler passes some through) become spaces.
      const unsigned char c = static_cast<unsigned char>(s[i]);
      out += (c < 0x20 || c == 0x7F) ? ' ' : s[i];
      ++i;
    }
  }
  return out;
}

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool has_letter(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](unsigned char c) { return std::isalpha(c) || c >= 0x80; });
}

size_t word_count(std::string_view s) {
  size_t n = 0;
  bool in_word = false;
  for (char c : s) {
    const bool space = c == ' ';
    if (!space && !in_word) ++n;
    in_word = !space;
  }
  return n;
}

bool ends_sentence(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == ')' || s.back() == '"')) s.remove_suffix(1);
  return !s.empty() && (s.back() == '.' || s.back() == '?' || s.back() == '!' || s.back() == ':');
}

bool starts_lower(std::string_view s) { return !s.empty() && std::islower(static_cast<unsigned char>(s[0])); }

// Hyphen at the end of a line: ASCII '-', U+2010 hyphen or U+00AD soft hyphen; returns
// the number of bytes it takes, 0 when the line does not end with one.
size_t trailing_hyphen(std::string_view s) {
  if (s.size() >= 2 && s.substr(s.size() - 2) == "\xC2\xAD") return 2;
  if (s.size() >= 3 && s.substr(s.size() - 3) == "\xE2\x80\x90") return 3;
  if (!s.empty() && s.back() == '-') return 1;
  return 0;
}

// Last word of `s` (after the last space) and first word of `s`, for hyphen checks.
std::string_view last_word(std::string_view s) {
  const size_t p = s.rfind(' ');
  return p == std::string_view::npos ? s : s.substr(p + 1);
}
std::string_view first_word(std::string_view s) {
  const size_t p = s.find(' ');
  return p == std::string_view::npos ? s : s.substr(0, p);
}

std::string strip_punct(std::string s) {
  auto keep = [](unsigned char c) { return std::isalnum(c) || c >= 0x80; };
  while (!s.empty() && !keep(s.back())) s.pop_back();
  size_t i = 0;
  while (i < s.size() && !keep(s[i])) ++i;
  return s.substr(i);
}

// Joins line `next` to paragraph text `text` repairing end-of-line hyphenation (see
// the header): `compounds` holds the lower-cased hyphenated words seen unbroken.
void append_line(std::string& text, const std::string& next, const std::unordered_set<std::string>& compounds) {
  if (text.empty()) {
    text = next;
    return;
  }
  const size_t h = trailing_hyphen(text);
  if (h == 0) {
    text += ' ';
    text += next;
    return;
  }
  const std::string_view before = std::string_view(text).substr(0, text.size() - h);
  const bool letter_before = !before.empty() && (std::isalpha(static_cast<unsigned char>(before.back())) ||
                                                 static_cast<unsigned char>(before.back()) >= 0x80);
  if (!letter_before) {  // "10-" + "20", "(-)": keep as printed, no space added
    text += next;
    return;
  }
  if (starts_lower(next)) {
    std::string compound = ascii_lower(std::string(last_word(before)) + "-" + strip_punct(std::string(first_word(next))));
    compound = strip_punct(compound);
    if (compounds.count(compound)) {
      text.resize(text.size() - h);
      text += "-";
    } else {
      text.resize(text.size() - h);  // "treat-" + "ment" -> "treatment"
    }
    text += next;
    return;
  }
  if (h != 1) text.replace(text.size() - h, h, "-");  // soft hyphen printed as a real one
  text += next;  // "non-" + "Hodgkin", "COVID-" + "19": a compound, hyphen kept
}

// ---------------------------------------------------------------- layout model

struct Word {
  double x0, y0, x1, y1, size;
  bool bold;
  bool space_after;
  std::string text;
  std::string font;  // without the subset prefix ("ABCDEF+")
};

// A run of words on one baseline without a wide gap: a piece of a line, a cell.
struct Fragment {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  std::vector<Word> words;
  std::string text;
  double width() const { return x1 - x0; }
  double mid_y() const { return (y0 + y1) / 2; }
};

// Column of a line: the whole text width, or the left/right column of a 2-col page.
// side: a sidebar strip beside the text (affiliations, correspondence).
enum class Column { full, left, right, side };

struct Line {
  int page = 0;  // 1-based
  Column column = Column::full;
  int region = 0;  // changes where reading jumps (new band or column)
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  double size = 0;       // font size covering most characters
  double bold_frac = 0;  // share of characters in a bold font
  std::string font;      // the font of most characters
  double font_frac = 0;  // their share
  size_t chars = 0;
  std::string text;
  std::vector<std::string> cells;
  double col_left = 0, col_right = 0;  // edges of the line's column on its page
  bool consumed = false;               // used as the title
  double width() const { return x1 - x0; }
  double col_width() const { return std::max(1.0, col_right - col_left); }
};

bool is_bold_font(const std::string& name) {
  static const char* kBold[] = {"bold", "black", "heavy", "semibold", "demi"};
  const std::string lower = ascii_lower(name);
  for (const char* b : kBold)
    if (lower.find(b) != std::string::npos) return true;
  // Adobe "AdvTT..." fonts (BMC, Elsevier) mark bold with a ".B" suffix.
  return lower.size() > 2 && lower.compare(lower.size() - 2, 2, ".b") == 0;
}

std::vector<Word> page_words(poppler::page& page) {
  std::vector<Word> words;
  for (const poppler::text_box& box : page.text_list(poppler::page::text_list_include_font)) {
    if (box.rotation() != 0) continue;  // margin stamps ("Downloaded from ...")
    std::string text = collapse_whitespace(expand_ligatures(to_string(box.text())));
    if (text.empty()) continue;
    const poppler::rectf r = box.bbox();
    Word w{r.x(), r.y(), r.right(), r.bottom(), box.get_font_size(), false, box.has_space_after(), std::move(text), ""};
    if (w.size <= 0) w.size = std::max(1.0, w.y1 - w.y0);
    if (box.has_font_info()) {
      const std::string name = box.get_font_name();
      const size_t plus = name.find('+');
      w.font = plus == std::string::npos ? name : name.substr(plus + 1);
      w.bold = is_bold_font(w.font);
    }
    words.push_back(std::move(w));
  }
  return words;
}

bool same_baseline(const Word& a, const Word& b) {
  const double overlap = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
  return overlap >= 0.5 * std::min(a.y1 - a.y0, b.y1 - b.y0);
}

void finish_fragment(Fragment& f) {
  f.x0 = f.y0 = 1e9;
  f.x1 = f.y1 = -1e9;
  f.text.clear();
  for (size_t i = 0; i < f.words.size(); ++i) {
    const Word& w = f.words[i];
    f.x0 = std::min(f.x0, w.x0);
    f.y0 = std::min(f.y0, w.y0);
    f.x1 = std::max(f.x1, w.x1);
    f.y1 = std::max(f.y1, w.y1);
    if (i > 0) {
      const Word& p = f.words[i - 1];
      // A space when poppler saw one, or when there is a visible gap.
      if (p.space_after || w.x0 - p.x1 > 0.15 * std::min(p.size, w.size)) f.text += ' ';
    }
    f.text += w.text;
  }
}

// Poppler's word order, cut where the baseline changes, the text goes back left, or
// the gap is wider than `cell_gap_em`.
std::vector<Fragment> fragments_of(const std::vector<Word>& words, const PdfOptions& o) {
  std::vector<Fragment> out;
  Fragment cur;
  for (const Word& w : words) {
    if (!cur.words.empty()) {
      const Word& p = cur.words.back();
      const double gap = w.x0 - p.x1;
      const bool joins = same_baseline(p, w) && gap > -0.5 * p.size && gap < o.cell_gap_em * std::max(p.size, w.size);
      if (!joins) {
        finish_fragment(cur);
        out.push_back(std::move(cur));
        cur = Fragment{};
      }
    }
    cur.words.push_back(w);
  }
  if (!cur.words.empty()) {
    finish_fragment(cur);
    out.push_back(std::move(cur));
  }
  return out;
}

// ---------------------------------------------------------------- headers/footers

struct PageFragments {
  double width = 0, height = 0;
  std::vector<Fragment> fragments;
};

bool in_band(const Fragment& f, const PageFragments& p, const PdfOptions& o) {
  return f.y1 <= p.height * o.header_band || f.y0 >= p.height * (1 - o.footer_band);
}

// Text with digits removed, lower-cased: the same running header on every page.
std::string band_signature(const std::string& text) {
  std::string s;
  for (char c : ascii_lower(text))
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != ' ') s += c;
  return s;
}

bool is_page_number(const std::string& text) {
  static const std::regex kPageNumber(
      R"(^(page\s*)?[-–—(\[]?\s*\d{1,4}\s*[-–—)\]]?(\s*(of|/)\s*\d{1,4})?$|^[ivxlc]{1,6}$)", std::regex::icase);
  return std::regex_match(text, kPageNumber);
}

void drop_headers_and_footers(std::vector<PageFragments>& pages, const PdfOptions& o) {
  std::map<std::string, std::set<size_t>> pages_of;
  for (size_t p = 0; p < pages.size(); ++p)
    for (const Fragment& f : pages[p].fragments)
      if (in_band(f, pages[p], o)) pages_of[band_signature(f.text)].insert(p);
  const size_t min_pages =
      std::max<size_t>(2, static_cast<size_t>(std::ceil(o.repeated_min_fraction * static_cast<double>(pages.size()))));
  for (PageFragments& page : pages) {
    auto drop = [&](const Fragment& f) {
      if (!in_band(f, page, o)) return false;
      if (is_page_number(f.text)) return true;
      const std::string sig = band_signature(f.text);
      return !sig.empty() && pages_of[sig].size() >= min_pages;
    };
    page.fragments.erase(std::remove_if(page.fragments.begin(), page.fragments.end(), drop), page.fragments.end());
  }
}

// ---------------------------------------------------------------- columns

// The gutter x of a two-column page, or a negative value for a one-column page.
double find_gutter(const PageFragments& page, const PdfOptions& o) {
  const auto& fs = page.fragments;
  if (fs.size() < 2 * static_cast<size_t>(o.min_column_lines)) return -1;
  // The search walks the page one point at a time: a page wider than any real one
  // (200 inches; a crafted MediaBox) is read as one column.
  constexpr double kMaxPageWidth = 14400;
  if (!(page.width > 0 && page.width <= kMaxPageWidth)) return -1;
  const int from = static_cast<int>(page.width * o.gutter_search_from);
  const int to = static_cast<int>(page.width * o.gutter_search_to);
  std::vector<int> crossing(std::max(0, to - from + 1), 0);
  for (int g = from; g <= to; ++g)
    for (const Fragment& f : fs)
      if (f.x0 < g && f.x1 > g) ++crossing[g - from];
  if (crossing.empty()) return -1;
  // The widest run of the fewest crossings, nearest the middle on a tie.
  const int fewest = *std::min_element(crossing.begin(), crossing.end());
  int best_start = -1, best_len = 0;
  for (int i = 0; i < static_cast<int>(crossing.size());) {
    if (crossing[i] != fewest) {
      ++i;
      continue;
    }
    int j = i;
    while (j < static_cast<int>(crossing.size()) && crossing[j] == fewest) ++j;
    if (j - i > best_len) best_start = i, best_len = j - i;
    i = j;
  }
  const double g = from + best_start + (best_len - 1) / 2.0;
  if (fewest > o.max_crossing_fraction * static_cast<double>(fs.size())) return -1;

  // Both sides must hold column text: enough fragments that fill most of their side
  // (figures and tables add short fragments anywhere, so only wide ones count).
  double left_edge = page.width, right_edge = 0;
  for (const Fragment& f : fs) {
    left_edge = std::min(left_edge, f.x0);
    right_edge = std::max(right_edge, f.x1);
  }
  int left_wide = 0, right_wide = 0;
  for (const Fragment& f : fs) {
    if (f.x1 <= g && f.width() >= o.column_fill_ratio * (g - left_edge)) ++left_wide;
    if (f.x0 >= g && f.width() >= o.column_fill_ratio * (right_edge - g)) ++right_wide;
  }
  if (left_wide < o.min_column_lines || right_wide < o.min_column_lines) return -1;
  return g;
}

// Fragments grouped by baseline, top to bottom; each row's fragments left to right.
std::vector<std::vector<const Fragment*>> rows_of(const std::vector<Fragment>& fs) {
  std::vector<const Fragment*> sorted;
  for (const Fragment& f : fs) sorted.push_back(&f);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Fragment* a, const Fragment* b) { return a->mid_y() < b->mid_y(); });
  std::vector<std::vector<const Fragment*>> rows;
  for (const Fragment* f : sorted) {
    bool placed = false;
    if (!rows.empty()) {
      const Fragment* anchor = rows.back().front();
      const double overlap = std::min(anchor->y1, f->y1) - std::max(anchor->y0, f->y0);
      if (overlap >= 0.5 * std::min(anchor->y1 - anchor->y0, f->y1 - f->y0)) {
        rows.back().push_back(f);
        placed = true;
      }
    }
    if (!placed) rows.push_back({f});
  }
  for (auto& r : rows) std::sort(r.begin(), r.end(), [](const Fragment* a, const Fragment* b) { return a->x0 < b->x0; });
  return rows;
}

Line make_line(const std::vector<const Fragment*>& frags, int page, Column column) {
  Line l;
  l.page = page;
  l.column = column;
  l.x0 = l.y0 = 1e9;
  l.x1 = l.y1 = -1e9;
  std::map<double, size_t> chars_by_size;
  std::map<std::string, size_t> chars_by_font;
  size_t bold_chars = 0;
  for (const Fragment* f : frags) {
    l.x0 = std::min(l.x0, f->x0);
    l.y0 = std::min(l.y0, f->y0);
    l.x1 = std::max(l.x1, f->x1);
    l.y1 = std::max(l.y1, f->y1);
    l.cells.push_back(f->text);
    l.text += (l.text.empty() ? "" : " ") + f->text;
    for (const Word& w : f->words) {
      const size_t n = utf8_length(w.text);
      chars_by_size[std::round(w.size * 2) / 2] += n;
      chars_by_font[w.font] += n;
      l.chars += n;
      if (w.bold) bold_chars += n;
    }
  }
  size_t most = 0;
  for (const auto& [size, n] : chars_by_size)
    if (n > most) most = n, l.size = size;
  l.bold_frac = l.chars ? static_cast<double>(bold_chars) / static_cast<double>(l.chars) : 0;
  most = 0;
  for (const auto& [font, n] : chars_by_font)
    if (n > most) most = n, l.font = font;
  l.font_frac = l.chars ? static_cast<double>(most) / static_cast<double>(l.chars) : 0;
  return l;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

// The page's lines in reading order (see the header, step 3).
// A sidebar: the fragments at the page's left edge up to the first vertical gap no
// fragment crosses, when that strip is at most `max_sidebar_ratio` of the text width,
// the gap at least `sidebar_gap_em` font sizes wide, and the strip holds at least
// `min_column_lines` fragments, and at least `min_sidebar_em` font sizes wide (a list's
// numbers set apart from its entries are not a sidebar). Returns the x where the strip ends, or -1. (A title
// spanning the page closes every gap; an ordinary left column is too wide.)
double find_sidebar(const PageFragments& page, const PdfOptions& o) {
  if (page.fragments.empty()) return -1;
  std::vector<const Fragment*> by_x;
  double right = 0;
  for (const Fragment& f : page.fragments) by_x.push_back(&f), right = std::max(right, f.x1);
  std::sort(by_x.begin(), by_x.end(), [](const Fragment* a, const Fragment* b) { return a->x0 < b->x0; });
  const double left = by_x.front()->x0;
  double strip_end = by_x.front()->x1, size = 0;
  size_t in_strip = 0;
  // The size most of a set of fragments' characters are set in.
  auto common_size = [](auto begin, auto end) {
    std::map<double, size_t> chars;
    for (auto it = begin; it != end; ++it)
      for (const Word& w : (*it)->words) chars[std::round(w.size * 4) / 4] += w.text.size();
    return chars.empty() ? 0.0 : std::max_element(chars.begin(), chars.end(), [](auto& a, auto& b) {
                                   return a.second < b.second;
                                 })->first;
  };
  for (size_t k = 0; k < by_x.size(); ++k) {
    const Fragment* f = by_x[k];
    if (f->x0 > strip_end) {  // the first gap
      const bool narrow = strip_end - left <= o.max_sidebar_ratio * (right - left) &&
                          strip_end - left >= o.min_sidebar_em * size;  // not a list's numbers
      const bool apart = f->x0 - strip_end >= o.sidebar_gap_em * size;
      // Set smaller than the text beside it: a table's first column is not a sidebar.
      const bool smaller = common_size(by_x.begin(), by_x.begin() + static_cast<std::ptrdiff_t>(k)) <
                           common_size(by_x.begin() + static_cast<std::ptrdiff_t>(k), by_x.end()) * (1 - o.size_tolerance);
      return narrow && apart && smaller && in_strip >= static_cast<size_t>(o.min_column_lines) ? strip_end : -1;
    }
    strip_end = std::max(strip_end, f->x1);
    size = std::max(size, f->words.front().size);
    ++in_strip;
  }
  return -1;  // no gap: the page is one block
}

std::vector<Line> page_lines(const PageFragments& whole, int page_no, int& region, const PdfOptions& o) {
  std::vector<Line> lines;
  // A sidebar is read first, apart (its lines would otherwise join the text's lines
  // that share their baselines), then the rest of the page.
  PageFragments page = whole;
  if (const double sidebar = find_sidebar(whole, o); sidebar >= 0) {
    std::vector<Fragment> strip;
    page.fragments.clear();
    for (const Fragment& f : whole.fragments) (f.x1 <= sidebar ? strip : page.fragments).push_back(f);
    ++region;
    for (const auto& row : rows_of(strip)) {
      lines.push_back(make_line(row, page_no, Column::side));
      lines.back().region = region;
    }
  }
  const double gutter = find_gutter(page, o);
  const auto rows = rows_of(page.fragments);
  if (gutter < 0) {
    ++region;
    for (const auto& row : rows) {
      lines.push_back(make_line(row, page_no, Column::full));
      lines.back().region = region;
    }
  } else {
    double left_edge = page.width, right_edge = 0;
    for (const Fragment& f : page.fragments) {
      left_edge = std::min(left_edge, f.x0);
      right_edge = std::max(right_edge, f.x1);
    }
    auto has_wide = [&](const std::vector<const Fragment*>& side, double col_width) {
      return std::any_of(side.begin(), side.end(),
                         [&](const Fragment* f) { return f->width() >= o.wide_fragment_ratio * col_width; });
    };
    // Where the right column's lines start: the leftmost wide fragment right of the gutter.
    double right_column_left = right_edge;
    for (const Fragment& f : page.fragments)
      if (f.x0 >= gutter && f.width() >= o.wide_fragment_ratio * (right_edge - gutter))
        right_column_left = std::min(right_column_left, f.x0);
    auto at_right_column = [&](const Fragment* f) {
      return std::abs(f->x0 - right_column_left) <= o.indent_em * f->words.front().size;
    };
    // Fragments of each column since the last full-width row; grouped into rows per
    // column, as the two columns' baselines need not line up.
    std::vector<Fragment> left, right;
    auto flush_column = [&](std::vector<Fragment>& side, Column column) {
      if (side.empty()) return;
      ++region;
      for (const auto& row : rows_of(side)) {
        lines.push_back(make_line(row, page_no, column));
        lines.back().region = region;
      }
      side.clear();
    };
    auto flush_columns = [&]() {
      flush_column(left, Column::left);
      flush_column(right, Column::right);
    };
    bool in_full = false;
    for (const auto& row : rows) {
      std::vector<const Fragment*> l, r;
      bool crosses = false;
      for (const Fragment* f : row) {
        if (f->x0 < gutter && f->x1 > gutter) crosses = true;
        (f->x1 <= gutter ? l : r).push_back(f);
      }
      // A table row spanning the page: cells on both sides, at least 3 of them (two
      // short lines side by side are the ends of two column paragraphs), no wide run
      // of text on either side, and the right side not starting where the right
      // column does (a heading or a short line there is column text).
      const bool spans = crosses || (!l.empty() && !r.empty() && row.size() >= 3 &&
                                     !has_wide(l, gutter - left_edge) && !has_wide(r, right_edge - gutter) &&
                                     !at_right_column(r.front()));
      if (spans) {
        flush_columns();
        if (!in_full) ++region;
        in_full = true;
        lines.push_back(make_line(row, page_no, Column::full));
        lines.back().region = region;
        continue;
      }
      in_full = false;
      for (const Fragment* f : l) left.push_back(*f);
      for (const Fragment* f : r) right.push_back(*f);
    }
    flush_columns();
  }
  // Column edges: most lines start at the left edge and end at the right one.
  std::map<Column, std::pair<std::vector<double>, std::vector<double>>> edges;
  for (const Line& l : lines) {
    edges[l.column].first.push_back(l.x0);
    edges[l.column].second.push_back(l.x1);
  }
  std::map<Column, std::pair<double, double>> bounds;
  for (auto& [c, e] : edges) bounds[c] = {percentile(e.first, 0.1), percentile(e.second, 0.9)};
  if (gutter >= 0 && bounds.count(Column::left) && bounds.count(Column::right))
    bounds[Column::full] = {bounds[Column::left].first, bounds[Column::right].second};
  for (Line& l : lines) std::tie(l.col_left, l.col_right) = bounds[l.column];
  return lines;
}

// ---------------------------------------------------------------- document stats


struct Stats {
  std::string body_font;  // the font of most body characters
  double body_size = 10;
  double step_ratio = 1.2;  // usual baseline step / font size
};

Stats document_stats(const std::vector<Line>& lines, const PdfOptions& o) {
  Stats s;
  // Reference lists are set small and can outweigh the body text of a short paper:
  // the body size is counted before the first line titled References.
  std::map<double, size_t> chars_by_size;
  std::map<std::string, size_t> chars_by_font;
  for (const Line& l : lines) {
    if (is_references_title(l.text)) break;
    chars_by_size[l.size] += l.chars;
    chars_by_font[l.font] += l.chars;
  }
  size_t most = 0;
  for (const auto& [size, n] : chars_by_size)
    if (n > most) most = n, s.body_size = size;
  most = 0;
  for (const auto& [font, n] : chars_by_font)
    if (n > most) most = n, s.body_font = font;
  std::vector<double> ratios;
  for (size_t i = 1; i < lines.size(); ++i) {
    const Line& a = lines[i - 1];
    const Line& b = lines[i];
    if (a.region != b.region || std::abs(a.size - s.body_size) > o.size_tolerance * s.body_size ||
        std::abs(b.size - s.body_size) > o.size_tolerance * s.body_size)
      continue;
    const double r = (b.y1 - a.y1) / s.body_size;
    if (r > 0.8 && r < 2.5) ratios.push_back(r);
  }
  if (!ratios.empty()) s.step_ratio = percentile(ratios, 0.5);
  return s;
}

// ---------------------------------------------------------------- classification

// libstdc++'s regex matcher recurses once per character a ".*" consumes: a line far
// longer than any real one (a crafted PDF) would exhaust the stack. Captions and
// headings are short, so longer lines are never matched.
constexpr size_t kMaxMatchedLine = 2000;
bool matches_line(const std::string& text, std::smatch& m, const std::regex& re) {
  return text.size() <= kMaxMatchedLine && std::regex_match(text, m, re);
}

const std::regex& figure_caption_re() {
  static const std::regex re(R"(^(Figure|FIGURE|Fig\.?|FIG\.?)\s*(\d+[A-Za-z]?)\b\s*(.*)$)");
  return re;
}
const std::regex& table_caption_re() {
  static const std::regex re(R"(^(Table|TABLE)\s+(\d+|[IVX]+)\b\s*(.*)$)");
  return re;
}

bool is_section_word(const std::string& text) {
  static const std::unordered_set<std::string> kWords = {
      "abstract", "summary", "background", "introduction", "methods", "method", "materials and methods",
      "material and methods", "methods and materials", "patients and methods", "subjects and methods", "results",
      "discussion", "results and discussion", "conclusion", "conclusions", "references", "bibliography",
      "literature cited", "acknowledgements", "acknowledgments", "acknowledgement", "acknowledgment",
      "competing interests", "conflict of interest", "conflicts of interest", "declaration of interest",
      "funding", "authors' contributions", "author contributions", "authors’ contributions", "limitations",
      "supplementary material", "supporting information", "appendix", "abbreviations", "additional files",
      "case report", "case presentation"};
  // Not here: the parts of a structured abstract (Objective, Design, Setting, ...),
  // which are also subsection titles under Methods.
  return kWords.count(ascii_lower(strip_punct(text))) > 0;
}


struct HeadingInfo {
  int level = 0;  // 0: not a heading
  std::string text;
  enum Style { numbered, larger, section_word, bold } style = numbered;
};

class Reader {
 public:
  Reader(std::vector<Line> lines, const PdfOptions& o, Article& a) : lines_(std::move(lines)), o_(o), a_(a) {
    stats_ = document_stats(lines_, o_);
    collect_compounds();
  }

  void find_title(const std::string& info_title, double page1_height) {
    double largest = 0;
    for (const Line& l : lines_)
      if (l.page == 1 && l.y0 > page1_height * o_.header_band && has_letter(l.text) && l.chars >= 3)
        largest = std::max(largest, l.size);
    if (largest >= o_.title_size_ratio * stats_.body_size) {
      std::string title;
      int last = -1;
      for (size_t i = 0; i < lines_.size() && lines_[i].page == 1; ++i) {
        Line& l = lines_[i];
        if (std::abs(l.size - largest) > 0.5) continue;
        if (last >= 0 && static_cast<int>(i) != last + 1) break;  // one run of lines
        append_line(title, l.text, compounds_);
        l.consumed = true;
        last = static_cast<int>(i);
      }
      if (word_count(title) >= 2) {
        a_.title = title;
        return;
      }
      for (Line& l : lines_) l.consumed = false;
    }
    if (looks_like_title(info_title)) a_.title = info_title;
  }

  // Each page's size in points (1-based page p at [p - 1]): figure regions are kept
  // as shares of it.
  void set_page_sizes(std::vector<std::pair<double, double>> sizes) { page_sizes_ = std::move(sizes); }

  void build() {
    for (size_t i = 0; i < lines_.size();) {
      const Line& l = lines_[i];
      if (l.consumed) {
        ++i;
        continue;
      }
      if (std::smatch m; caption_start(i, figure_caption_re(), m)) {
        flush();
        i = figure(i, "Figure " + m[2].str(), m[3].str());
      } else if (caption_start(i, table_caption_re(), m)) {
        flush();
        i = table(i, "Table " + m[2].str(), m[3].str());
      } else if (HeadingInfo h = heading(i); h.level > 0) {
        flush();
        i = take_heading(i, h);
      } else {
        body_line(i);
        ++i;
      }
    }
    flush();
  }

 private:
  static bool looks_like_title(const std::string& t) {
    const std::string lower = ascii_lower(t);
    if (word_count(t) < 3 || !has_letter(t)) return false;
    for (const char* bad : {"microsoft", ".doc", ".pdf", ".tex", "untitled", "doi:", ".indd", ".."})
      if (lower.find(bad) != std::string::npos) return false;
    return true;
  }

  // Hyphenated words printed within a line ("long-term"): kept when broken at a line end.
  void collect_compounds() {
    for (const Line& l : lines_) {
      std::istringstream words(l.text);
      for (std::string w; words >> w;) {
        w = strip_punct(w);
        const size_t dash = w.find('-');
        if (dash != std::string::npos && dash > 0 && dash + 1 < w.size()) compounds_.insert(ascii_lower(w));
      }
    }
  }

  bool similar_size(double a, double b) const { return std::abs(a - b) <= o_.size_tolerance * std::max(a, b); }
  bool is_bold(const Line& l) const { return l.bold_frac >= o_.bold_char_fraction; }
  double step(const Line& l) const { return stats_.step_ratio * l.size; }

  // Whether line i starts a block: first line of its region, after a wider gap than
  // usual, or after a line ending short.
  bool starts_block(size_t i) const {
    if (i == 0) return true;
    const Line& a = lines_[i - 1];
    const Line& b = lines_[i];
    if (a.region != b.region || a.page != b.page) return true;
    if (b.y1 - a.y1 > o_.paragraph_gap_ratio * step(b)) return true;
    return a.x1 < a.col_right - o_.short_line_em * a.size;
  }

  bool caption_start(size_t i, const std::regex& re, std::smatch& m) const {
    const Line& l = lines_[i];
    if (!matches_line(l.text, m, re)) return false;
    const std::string rest = m[3].str();
    // "Figure 2 shows ..." in running text is not a caption: captions start a block,
    // follow their label with punctuation, or set the label in another font.
    const bool punct = rest.empty() || rest[0] == '.' || rest[0] == ':' || rest[0] == '|' || rest[0] == '-' ||
                       static_cast<unsigned char>(rest[0]) == 0xE2 /* en/em dash */;
    const bool styled = l.bold_frac > 0.05 || !similar_size(l.size, stats_.body_size);
    return punct || styled || starts_block(i);
  }

  static std::string caption_text(std::string rest) {
    rest = collapse_whitespace(rest);
    size_t k = 0;
    while (k < rest.size() && (rest[k] == '.' || rest[k] == ':' || rest[k] == '|' || rest[k] == '-' || rest[k] == ' ')) ++k;
    if (rest.compare(k, 3, "\xE2\x80\x93") == 0 || rest.compare(k, 3, "\xE2\x80\x94") == 0) k += 3;
    return collapse_whitespace(rest.substr(k));
  }

  // Caption lines after line i: lines of one cell following a line that reaches the
  // column's right edge (the caption wraps), same size, usual spacing. A caption set
  // in a narrow box beside its figure wraps before the column's edge: there the lines
  // that start where the caption starts and stay narrow (under
  // table_prose_width_ratio of the column, as prose never is) go on with a figure's.
  size_t caption_end(size_t i, std::string& caption, bool figure) const {
    size_t j = i + 1;
    while (j < lines_.size()) {
      const Line& a = lines_[j - 1];
      const Line& b = lines_[j];
      const bool wraps = a.x1 >= a.col_right - o_.short_line_em * a.size;
      // (Not a table's: the one-cell line under a short table caption is its first row.)
      const bool narrow_box = figure && std::abs(b.x0 - lines_[i].x0) <= a.size &&
                              a.width() < o_.table_prose_width_ratio * a.col_width() &&
                              b.width() < o_.table_prose_width_ratio * b.col_width();
      if (!(wraps || narrow_box) || b.page != a.page || b.cells.size() != 1 || !similar_size(a.size, b.size) ||
          b.y1 - a.y1 > o_.paragraph_gap_ratio * step(b) || b.y1 < a.y1 || heading(j).level > 0)
        break;
      append_line(caption, b.text, compounds_);
      ++j;
    }
    return j;
  }

  size_t figure(size_t i, const std::string& label, const std::string& rest) {
    std::string caption = caption_text(rest);
    const size_t end = caption_end(i, caption, /*figure=*/true);
    Block b;
    b.kind = BlockKind::figure;
    b.headings = headings();
    b.label = label;
    b.caption = caption;
    b.page = lines_[i].page;
    if (auto box = figure_region(i, end)) {
      b.box = *box;
      b.has_box = true;
    }
    a_.blocks.push_back(std::move(b));
    return end;
  }

  // Where a figure lies on its page, from its caption (lines [first, end)): the
  // graphic is the space between the caption and the nearest prose above it across
  // the caption's width (the page's top band when there is none), or below it when
  // the space above is under `figure_min_height` of the page (a caption set above
  // its figure). Lines inside the graphic (axis labels, legends) are short or small,
  // so only prose bounds it. The region covers graphic and caption, as shares of the
  // page; nullopt without the page's size.
  std::optional<std::array<double, 4>> figure_region(size_t first, size_t end) const {
    const int page = lines_[first].page;
    if (page < 1 || static_cast<size_t>(page) > page_sizes_.size()) return std::nullopt;
    const auto [pw, ph] = page_sizes_[page - 1];
    if (!(pw > 0 && ph > 0)) return std::nullopt;
    double x0 = lines_[first].col_left, x1 = lines_[first].col_right, cy0 = lines_[first].y0, cy1 = lines_[first].y1;
    for (size_t k = first; k < end; ++k) {
      x0 = std::min(x0, std::min(lines_[k].x0, lines_[k].col_left));
      x1 = std::max(x1, std::max(lines_[k].x1, lines_[k].col_right));
      cy0 = std::min(cy0, lines_[k].y0);
      cy1 = std::max(cy1, lines_[k].y1);
    }
    auto is_prose = [&](const Line& l) {
      return l.width() >= o_.table_prose_width_ratio * l.col_width() &&
             l.size >= stats_.body_size * (1 - o_.size_tolerance) && word_count(l.text) >= 5;
    };
    double above = ph * o_.header_band, below = ph * (1 - o_.footer_band);
    for (size_t k = 0; k < lines_.size(); ++k) {
      const Line& l = lines_[k];
      if (l.page != page || (k >= first && k < end) || l.x1 <= x0 || l.x0 >= x1 || !is_prose(l)) continue;
      if (l.y1 <= cy0) above = std::max(above, l.y1);
      if (l.y0 >= cy1) below = std::min(below, l.y0);
    }
    double y0 = cy0, y1 = cy1;
    if (cy0 - above >= o_.figure_min_height * ph) y0 = above;
    else if (below - cy1 >= o_.figure_min_height * ph) y1 = below;
    auto clamp01 = [](double v) { return std::clamp(v, 0.0, 1.0); };
    return std::array<double, 4>{clamp01(x0 / pw), clamp01(y0 / ph), clamp01(x1 / pw), clamp01(y1 / ph)};
  }

  // A line of the table body (see the header): not prose.
  bool table_like(const Line& l) const {
    if (l.cells.size() >= 2) return true;
    if (l.size < stats_.body_size * (1 - o_.size_tolerance)) return true;
    return l.width() < o_.table_prose_width_ratio * l.col_width();
  }

  // Table rows from line `j` on (see the header); returns the line after them.
  size_t table_rows(size_t i, size_t j, std::string& rows, bool mark_consumed) {
    while (j < lines_.size()) {
      const Line& a = lines_[j - 1];
      const Line& b = lines_[j];
      if (b.page != lines_[i].page || !table_like(b) || b.consumed) break;
      if (b.region == a.region && b.y1 - a.y1 > o_.table_max_gap_ratio * step(a)) break;
      std::smatch m;
      if (matches_line(b.text, m, table_caption_re()) || matches_line(b.text, m, figure_caption_re())) break;
      // A heading ends the table; a bold line (a row group label) only when prose
      // follows it; a section word set smaller than the body with a row of cells right
      // after it ("Summary" over "estimate | Heterogeneity" in a header) is a cell.
      const bool small_cell = b.size < stats_.body_size * (1 - o_.size_tolerance) && j + 1 < lines_.size() &&
                              lines_[j + 1].region == b.region && lines_[j + 1].cells.size() >= 2;
      if (const HeadingInfo h = heading(j);
          h.level > 0 && !(h.style == HeadingInfo::section_word && small_cell) &&
          (h.style != HeadingInfo::bold || j + 1 >= lines_.size() || !table_like(lines_[j + 1])))
        break;
      std::string row;
      for (const std::string& c : b.cells) row += (row.empty() ? "" : " | ") + c;
      rows += (rows.empty() ? "" : "\n") + row;
      if (mark_consumed) lines_[j].consumed = true;
      ++j;
    }
    return j;
  }

  // A caption in one column over a table spanning the page: the first full-width
  // line of the page starting just below the caption, or lines_.size().
  size_t spanning_table_start(size_t caption_end_line) const {
    const Line& c = lines_[caption_end_line - 1];
    for (size_t k = caption_end_line; k < lines_.size() && lines_[k].page == c.page; ++k) {
      const Line& l = lines_[k];
      if (l.column == Column::full && l.y0 >= c.y0 && l.y0 - c.y1 <= o_.table_max_gap_ratio * step(c) && !l.consumed)
        return k;
    }
    return lines_.size();
  }

  size_t table(size_t i, const std::string& label, const std::string& rest) {
    std::string caption = caption_text(rest);
    size_t j = caption_end(i, caption, /*figure=*/false);
    std::string rows;
    j = table_rows(i, j, rows, false);
    if (rows.empty() && lines_[i].column != Column::full)
      if (const size_t k = spanning_table_start(j); k < lines_.size()) table_rows(i, k, rows, true);
    Block t;
    t.kind = BlockKind::table;
    t.headings = headings();
    t.label = label;
    t.caption = caption;
    t.text = rows;
    t.page = lines_[i].page;
    a_.blocks.push_back(std::move(t));
    return j;
  }

  HeadingInfo heading(size_t i) const {
    const Line& l = lines_[i];
    HeadingInfo h;
    const std::string& t = l.text;
    if (!has_letter(t) || word_count(t) > static_cast<size_t>(o_.max_heading_words) || l.cells.size() > 2) return h;
    if (t.find('@') != std::string::npos || t.back() == ',' || t.back() == ';') return h;
    const bool larger = l.size >= o_.heading_size_ratio * stats_.body_size;
    const bool bold = is_bold(l);
    const bool body_or_larger = l.size >= stats_.body_size * (1 - o_.size_tolerance);
    if (in_references_) {  // inside the list only a known section word ends it
      if (is_section_word(t) && !is_references_title(t) && (bold || larger || starts_block(i)))
        h.level = 1, h.text = strip_punct(t), h.style = HeadingInfo::section_word;
      return h;
    }
    static const std::regex kNumbered(R"(^(\d{1,2}(?:\.\d{1,2}){0,3})\.?\s+([A-Z].*)$)");
    std::smatch m;
    if (matches_line(t, m, kNumbered) && body_or_larger) {
      const std::string number = m[1].str();
      const bool plain_ok = word_count(t) <= 8 && t.find(',') == std::string::npos && t.back() != '.';
      if ((bold || larger || plain_ok) && std::stoi(number) <= 30) {
        h.level = 1 + static_cast<int>(std::count(number.begin(), number.end(), '.'));
        h.text = t;
        h.style = HeadingInfo::numbered;
        return h;
      }
    }
    if (is_section_word(t)) {
      h.level = 1, h.text = strip_punct(t), h.style = HeadingInfo::section_word;
      return h;
    }
    if (t.back() == '.' && !larger) return h;  // a sentence, not a title
    // Author lists (set large or bold on page 1) have commas; section titles rarely
    // more than one.
    if (std::count(t.begin(), t.end(), ',') >= 2) return h;
    if (larger && l.cells.size() == 1) {
      h.level = 1, h.text = t, h.style = HeadingInfo::larger;
      return h;
    }
    if (bold && body_or_larger && l.cells.size() == 1 && starts_block(i)) {
      h.level = level1_seen_ ? 2 : 1, h.text = t, h.style = HeadingInfo::bold;
      return h;
    }
    if (other_font_heading(i)) h.level = level1_seen_ ? 2 : 1, h.text = t, h.style = HeadingInfo::bold;
    return h;
  }

  // A subheading set in another font than the body without "Bold" in its name (BMC's
  // sans-serif subheadings): one short line in one font other than the body's, not
  // much smaller than body text, after a gap and followed by body text.
  bool other_font_heading(size_t i) const {
    const Line& l = lines_[i];
    if (i + 1 >= lines_.size() || l.cells.size() != 1 || l.font == stats_.body_font ||
        l.font_frac < o_.bold_char_fraction || l.size < o_.other_font_min_size_ratio * stats_.body_size ||
        !starts_block(i) || ends_sentence(l.text))
      return false;
    const Line& next = lines_[i + 1];
    return next.region == l.region && next.font == stats_.body_font && similar_size(next.size, stats_.body_size) &&
           next.y1 > l.y1 && next.y1 - l.y1 <= o_.paragraph_gap_ratio * step(next) * 1.5;
  }

  // Applies heading h at line i, merged with the following lines of the same style.
  size_t take_heading(size_t i, HeadingInfo h) {
    size_t j = i + 1;
    if (h.style == HeadingInfo::larger || h.style == HeadingInfo::bold) {
      while (j < lines_.size()) {
        const Line& a = lines_[j - 1];
        const Line& b = lines_[j];
        const HeadingInfo next = heading(j);
        if (next.level == 0 || next.style != h.style || !similar_size(a.size, b.size) || a.page != b.page ||
            word_count(h.text) + word_count(b.text) > static_cast<size_t>(o_.max_heading_words) ||
            b.y1 - a.y1 > o_.paragraph_gap_ratio * step(b) || b.y1 < a.y1)
          break;
        append_line(h.text, b.text, compounds_);
        ++j;
      }
    }
    if (is_references_title(h.text)) {
      in_references_ = true;
      last_entry_ = 0;
      stack_.assign(1, {1, "References"});
      start_references(j);
      return j;
    }
    in_references_ = false;
    if (h.level == 1) level1_seen_ = true;
    while (!stack_.empty() && stack_.back().first >= h.level) stack_.pop_back();
    stack_.push_back({h.level, h.text});
    return j;
  }

  std::vector<std::string> headings() const {
    std::vector<std::string> out;
    for (const auto& [level, text] : stack_) out.push_back(text);
    return out;
  }

  // ------------------------------------------------------------ references

  // The number starting a reference entry ("[12]", "12.", "12 Smith"), else 0.
  static int entry_number(const std::string& t) {
    static const std::regex re(R"(^\[?(\d{1,3})(\]|\.|\s+[A-Z]))");
    std::smatch m;
    const std::string head = t.substr(0, 16);  // the number is at the start
    return std::regex_search(head, m, re) ? std::stoi(m[1].str()) : 0;
  }
  static bool numbered_entry(const std::string& t) { return entry_number(t) > 0; }
  // A numbered entry starts at the next number only ("36. ... 73:482-" + "5." is one
  // entry); the first one seen may have any number.
  bool next_entry(const std::string& t) const {
    const int n = entry_number(t);
    return n > 0 && (last_entry_ == 0 || n == last_entry_ + 1);
  }
  bool indented(const Line& l) const { return l.x0 > l.col_left + o_.indent_em * l.size; }

  void start_references(size_t from) {
    double total = 0, numbered = 0, indents = 0;
    for (size_t k = from; k < lines_.size(); ++k) {
      ++total;
      numbered += numbered_entry(lines_[k].text) ? 1 : 0;
      indents += indented(lines_[k]) ? 1 : 0;
    }
    total = std::max(1.0, total);
    const double numbered_share = numbered / total, indented_share = indents / total;
    if (numbered_share >= o_.numbered_refs_min_fraction) ref_mode_ = RefMode::numbered;
    else if (indented_share >= o_.hanging_indent_min_fraction && indented_share <= o_.hanging_indent_max_fraction)
      ref_mode_ = RefMode::hanging;
    else ref_mode_ = RefMode::paragraphs;
  }

  // ------------------------------------------------------------ paragraphs

  bool paragraph_break(size_t i) const {
    if (i == 0 || para_.empty()) return true;
    const Line& a = lines_[i - 1];
    const Line& b = lines_[i];
    if (in_references_ && ref_mode_ == RefMode::numbered) return next_entry(b.text) || !similar_size(a.size, b.size);
    if (in_references_ && ref_mode_ == RefMode::hanging) return !indented(b);
    if (!similar_size(a.size, b.size)) return true;
    if (a.region != b.region || a.page != b.page) return ends_sentence(a.text);
    if (b.y1 - a.y1 > o_.paragraph_gap_ratio * step(b) || b.y1 < a.y1) return true;
    if (indented(b) && !indented(a)) return true;
    return ends_sentence(a.text) && a.x1 < a.col_right - o_.short_line_em * a.size;
  }

  void body_line(size_t i) {
    if (paragraph_break(i)) flush();
    if (para_.empty()) {
      para_page_ = lines_[i].page;
      // In a numbered list, text that does not start with the next number (a box
      // after the list, a footnote) is a paragraph.
      para_is_reference_ = in_references_ && ref_mode_ != RefMode::paragraphs;
      if (in_references_ && ref_mode_ == RefMode::numbered) {
        para_is_reference_ = next_entry(lines_[i].text);
        if (para_is_reference_) last_entry_ = entry_number(lines_[i].text);
      }
    }
    append_line(para_, lines_[i].text, compounds_);
  }

  void flush() {
    std::string text = collapse_whitespace(para_);
    para_.clear();
    if (text.empty()) return;
    Block b;
    b.kind = para_is_reference_ ? BlockKind::reference : BlockKind::paragraph;
    b.headings = headings();
    b.text = std::move(text);
    b.page = para_page_;
    a_.blocks.push_back(std::move(b));
  }

  enum class RefMode { numbered, hanging, paragraphs };

  std::vector<Line> lines_;
  std::vector<std::pair<double, double>> page_sizes_;
  const PdfOptions& o_;
  Article& a_;
  Stats stats_;
  std::unordered_set<std::string> compounds_;
  std::vector<std::pair<int, std::string>> stack_;  // heading path: (level, text)
  bool level1_seen_ = false;
  bool in_references_ = false;
  RefMode ref_mode_ = RefMode::paragraphs;
  std::string para_;
  int para_page_ = 0;
  bool para_is_reference_ = false;
  int last_entry_ = 0;  // number of the last numbered reference entry
};

// ---------------------------------------------------------------- metadata

// The DOI printed on page 1, else in a running header or footer (`bands`: their
// text on every page); the year of publication from page 1.
void find_doi_and_year(const std::vector<Fragment>& page1, const std::string& bands, Article& a) {
  std::string text;
  for (const Fragment& f : page1) text += f.text + "\n";
  // Bounded: libstdc++'s matcher recurses per character (see kMaxMatchedLine).
  static const std::regex kDoi(R"(10\.\d{4,9}/[^\s]{1,200})");
  for (const std::string* where : {static_cast<const std::string*>(&text), &bands})
    if (std::smatch m; a.doi.empty() && std::regex_search(*where, m, kDoi)) {
      std::string doi = m.str();
      while (!doi.empty() && std::string_view(".,;)]").find(doi.back()) != std::string_view::npos) doi.pop_back();
      a.doi = doi;
    }
  // The copyright or publication year, else the most common plausible year.
  static const std::regex kCopyright(R"((©|\(c\)|Copyright|Published|Accepted)[^0-9\n]{0,40}((19[5-9]|20[0-4])\d)\b)",
                                     std::regex::icase);
  if (std::smatch m; std::regex_search(text, m, kCopyright)) {
    a.year = std::stoi(m[2].str());
    return;
  }
  static const std::regex kYear(R"(\b((19[5-9]|20[0-4])\d)\b)");
  std::map<int, int> counts;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kYear); it != std::sregex_iterator(); ++it)
    ++counts[std::stoi((*it)[1].str())];
  int best = 0;
  for (const auto& [year, n] : counts)
    if (n > best) best = n, a.year = year;
}

void silence_poppler(const std::string&, void*) {}

}  // namespace

std::unique_ptr<poppler::document> open_pdf_document(std::string_view bytes, const std::string& source_name) {
  static std::once_flag quiet;
  std::call_once(quiet, [] { poppler::set_debug_error_function(silence_poppler, nullptr); });
  if (bytes.size() < 5 || bytes.substr(0, 1024).find("%PDF-") == std::string_view::npos)
    fail(ErrorCode::invalid_argument, "not a PDF file: " + source_name);
  std::unique_ptr<poppler::document> doc(
      poppler::document::load_from_raw_data(bytes.data(), static_cast<int>(bytes.size())));
  if (!doc) fail(ErrorCode::invalid_argument, "unreadable PDF file: " + source_name);
  if (doc->is_locked()) fail(ErrorCode::invalid_argument, "encrypted PDF file (password needed): " + source_name);
  return doc;
}

Article read_pdf_bytes(std::string_view bytes, const std::string& source_name, const std::string& document_id,
                       const PdfOptions& options) {
  const std::unique_ptr<poppler::document> doc = open_pdf_document(bytes, source_name);

  Article a;
  a.id = document_id;
  a.format = "pdf";
  a.source_type = "paper";
  a.source_uri = source_name;
  a.file_name = std::filesystem::path(source_name).filename().string();
  a.pages = doc->pages();

  std::vector<PageFragments> pages;
  std::vector<Fragment> page1_all;
  for (int p = 0; p < a.pages; ++p) {
    std::unique_ptr<poppler::page> page(doc->create_page(p));
    PageFragments pf;
    if (page) {
      const poppler::rectf r = page->page_rect();
      pf.width = r.width();
      pf.height = r.height();
      pf.fragments = fragments_of(page_words(*page), options);
    }
    if (p == 0) page1_all = pf.fragments;
    pages.push_back(std::move(pf));
  }
  std::string bands;
  for (const PageFragments& page : pages)
    for (const Fragment& f : page.fragments)
      if (in_band(f, page, options)) bands += f.text + "\n";
  find_doi_and_year(page1_all, bands, a);
  drop_headers_and_footers(pages, options);

  std::vector<Line> lines;
  int region = 0;
  for (size_t p = 0; p < pages.size(); ++p) {
    std::vector<Line> page = page_lines(pages[p], static_cast<int>(p) + 1, region, options);
    std::move(page.begin(), page.end(), std::back_inserter(lines));
  }
  Reader reader(std::move(lines), options, a);
  std::vector<std::pair<double, double>> sizes;
  for (const auto& p : pages) sizes.emplace_back(p.width, p.height);
  reader.set_page_sizes(std::move(sizes));
  reader.find_title(collapse_whitespace(to_string(doc->info_key("Title"))), pages.empty() ? 0 : pages[0].height);
  reader.build();
  return a;
}

Article read_pdf(const std::filesystem::path& file, const std::string& document_id, const PdfOptions& options) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) fail(ErrorCode::not_found, "PDF file not found: " + file.string());
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(ErrorCode::invalid_argument, "cannot open PDF file: " + file.string());
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return read_pdf_bytes(bytes, file.string(), document_id, options);
}

}  // namespace eagle::ingest
