#include "eagle/biomed/ingest/sections.h"

#include <optional>
#include <unordered_map>

#include "eagle/ingest/text_util.h"

namespace eagle::biomed {

using ingest::ascii_lower;
using ingest::collapse_whitespace;

namespace {

// Seed chunker._SECTION_ALIASES, keyed by the normalised heading.
const std::unordered_map<std::string, std::string>& alias_table() {
  static const std::unordered_map<std::string, std::string> table = [] {
    std::unordered_map<std::string, std::string> t;
    auto add = [&](const char* canonical, std::initializer_list<const char*> aliases) {
      for (const char* a : aliases) t.emplace(a, canonical);
    };
    // IMRaD, with the structured-abstract labels found in SciFact / PubMed abstracts
    // filed under the same NLM category.
    add("background",
        {"background", "backgrounds", "introduction", "context", "rationale", "importance", "motivation",
         "background and aims", "background and purpose", "background and objectives"});
    add("objective", {"objective", "objectives", "aim", "aims", "purpose", "goal", "goals", "hypothesis",
                      "study objective", "study objectives", "aim of the study", "purpose of the study",
                      "aims and objectives", "purpose of review"});
    add("methods", {"method",
                    "methods",
                    "materials and methods",
                    "material and methods",
                    "methods and materials",
                    "patients and methods",
                    "subjects and methods",
                    "study design",
                    "design",
                    "methodology",
                    "research design and methods",
                    "design setting and participants",
                    "design setting and patients",
                    "design settings and participants",
                    "design and setting",
                    "design and methods",
                    "setting",
                    "settings",
                    "setting and patients",
                    "setting and participants",
                    "participants",
                    "patients",
                    "subjects",
                    "intervention",
                    "interventions",
                    "exposures",
                    "measurements",
                    "main outcome measure",
                    "main outcome measures",
                    "main outcomes and measures",
                    "main outcome measurements",
                    "main outcome",
                    "outcome measures",
                    "experimental design",
                    "experimental procedures",
                    "data sources",
                    "data sources and study selection",
                    "study selection",
                    "data extraction",
                    "selection criteria",
                    "search strategy",
                    "data collection and analysis",
                    "review methods",
                    "methods and results",
                    "methods and findings",
                    "methodology principal findings"});
    add("results",
        {"result", "results", "findings", "main results", "observations", "recent findings",
         "principal findings", "recent developments", "data synthesis", "measurements and main results"});
    add("discussion", {"discussion", "comment", "comments"});
    add("conclusion", {"conclusion", "conclusions", "interpretation", "conclusions and relevance", "summary",
                       "implications", "significance", "clinical relevance", "conclusions significance",
                       "conclusions and significance", "general significance", "key points", "where next"});
    add("abstract", {"abstract"});
    add("funding", {"funding", "funding sources", "source of funding"});
    add("registration", {"trial registration", "clinical trial registration", "registration"});
    // Label cues: the regulatory rerank's section_cues (seed: IMRaD section cues row).
    add("indications_and_usage", {"indications and usage", "indications", "indication", "uses"});
    add("dosage_and_administration", {"dosage and administration", "dosage", "dosing", "directions"});
    add("warnings", {"warnings", "warning"});
    add("precautions", {"precautions"});
    add("warnings_and_precautions", {"warnings and precautions"});
    add("boxed_warning", {"boxed warning"});
    add("contraindications", {"contraindications", "contraindication"});
    add("adverse_reactions", {"adverse reactions", "adverse events", "side effects"});
    add("drug_interactions", {"drug interactions"});
    add("overdosage", {"overdosage", "overdose"});
    return t;
  }();
  return table;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_upper(char c) {
  return c >= 'A' && c <= 'Z';
}
bool is_alnum(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Drops "5.1", "12", "2." and roman "iv." / "ii)" section numbers at the front.
std::string_view strip_numbering(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (is_digit(s[i]) || s[i] == '.')) ++i;
  if (i > 0 && (i == s.size() || s[i] == ' ')) return s.substr(i);
  i = 0;
  while (i < s.size() && (s[i] == 'i' || s[i] == 'v' || s[i] == 'x')) ++i;
  if (i > 0 && i < s.size() && (s[i] == '.' || s[i] == ')')) return s.substr(i + 1);
  return s;
}

}  // namespace

std::string normalise_heading(std::string_view heading) {
  std::string lower = ascii_lower(collapse_whitespace(heading));
  std::string_view s = lower;
  while (!s.empty() && (s.front() == '#' || s.front() == ' ')) s.remove_prefix(1);
  s = strip_numbering(s);
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '&')
      out += " and ";
    else if (is_alnum(c) || static_cast<unsigned char>(c) >= 0x80)
      out.push_back(c);
    else
      out.push_back(' ');  // punctuation separates words: "design, setting" -> "design setting"
  }
  return collapse_whitespace(out);
}

std::string canonical_section(std::string_view heading) {
  const auto& t = alias_table();
  auto it = t.find(normalise_heading(heading));
  return it == t.end() ? std::string() : it->second;
}

namespace {

struct Heading {
  size_t label_begin;  // where the heading text starts
  size_t body_begin;   // first byte after the heading (and its ':' or line end)
  std::string label;   // as written, trimmed
  std::string section;
};

constexpr size_t kMaxLabelBytes = 64;  // longer "labels" are sentences with a colon
constexpr size_t kMaxLabelWords = 6;

size_t word_count(std::string_view s) {
  size_t n = 0;
  bool in_word = false;
  for (char c : s) {
    if (is_space(c))
      in_word = false;
    else if (!in_word)
      in_word = true, ++n;
  }
  return n;
}

// Without leading and trailing C whitespace (form feed and vertical tab too, unlike
// ingest::trim).
std::string_view trim_c_space(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// True when the word at p is all lower-case ASCII letters.
bool lowercase_word_at(std::string_view text, size_t p) {
  size_t q = p;
  while (q < text.size() && text[q] >= 'a' && text[q] <= 'z') ++q;
  return q > p && (q == text.size() || !is_alnum(text[q]));
}

std::optional<Heading> heading_at(std::string_view text, size_t p, bool line_start) {
  // A structured-abstract label: "BACKGROUND:" / "Materials and Methods:".
  for (size_t q = p; q < text.size() && q - p <= kMaxLabelBytes; ++q) {
    const char c = text[q];
    if (c == '\n' || c == '.' || c == ';') break;
    if (c != ':') continue;
    std::string_view label = trim_c_space(text.substr(p, q - p));
    if (label.empty() || word_count(label) > kMaxLabelWords) break;
    std::string section = canonical_section(label);
    if (section.empty()) break;
    return Heading{p, q + 1, std::string(label), std::move(section)};
  }
  // An upper-case label without a colon, as BEIR/SciFact flatten structured abstracts:
  // "BACKGROUND Patients undergoing ... METHODS 50 patients ...". The longest run of
  // upper-case words that is a known heading wins ("METHODS AND RESULTS" over
  // "METHODS"); the body must not start with a lower-case word ("RESULTS were" is
  // prose, "BACKGROUND microRNAs stably exist" is a label).
  std::vector<size_t> word_ends;
  for (size_t q = p; q < text.size() && word_ends.size() < kMaxLabelWords;) {
    size_t w = q;
    bool upper = false;
    while (w < text.size() &&
           (is_upper(text[w]) || text[w] == '/' || text[w] == ',' || text[w] == '&' || text[w] == '-')) {
      upper |= is_upper(text[w]);
      ++w;
    }
    if (!upper || (w < text.size() && !is_space(text[w]))) break;
    word_ends.push_back(w);
    if (w >= text.size() || text[w] != ' ') break;
    q = w + 1;
  }
  for (size_t k = word_ends.size(); k-- > 0;) {
    const size_t end = word_ends[k];
    if (end >= text.size()) continue;  // a label with no body
    size_t body = end;
    while (body < text.size() && is_space(text[body])) ++body;
    if (body >= text.size() || lowercase_word_at(text, body)) continue;
    const std::string_view label = text.substr(p, end - p);
    std::string section = canonical_section(label);
    if (section.empty()) continue;
    return Heading{p, end, std::string(label), std::move(section)};
  }
  // A heading line: the whole line is a known heading.
  if (!line_start) return std::nullopt;
  size_t eol = text.find('\n', p);
  if (eol == std::string_view::npos) eol = text.size();
  std::string_view line = trim_c_space(text.substr(p, eol - p));
  if (line.empty() || line.size() > kMaxLabelBytes) return std::nullopt;
  std::string section = canonical_section(line);
  if (section.empty()) return std::nullopt;
  while (!line.empty() && (line.front() == '#' || line.front() == ' ')) line.remove_prefix(1);
  return Heading{p, eol, std::string(line), std::move(section)};
}

}  // namespace

std::vector<SectionSpan> split_paper_sections(std::string_view text) {
  std::vector<Heading> headings;
  for (size_t p = 0; p < text.size(); ++p) {
    if (is_space(text[p])) continue;
    if (p > 0 && !is_space(text[p - 1])) continue;  // only word starts can open a heading
    // Look back over whitespace: text start or a newline opens a line; ". " a sentence.
    size_t q = p;
    bool crossed_newline = false;
    while (q > 0 && is_space(text[q - 1])) crossed_newline |= text[--q] == '\n';
    const bool line_start = q == 0 || crossed_newline;
    const bool sentence_start =
        !line_start && (text[q - 1] == '.' || text[q - 1] == '?' || text[q - 1] == '!');
    if (!line_start && !sentence_start) continue;
    if (auto h = heading_at(text, p, line_start)) {
      p = h->body_begin - 1;  // the loop's ++p resumes at the body
      headings.push_back(std::move(*h));
    }
  }

  std::vector<SectionSpan> spans;
  auto add = [&](std::string section, std::string heading, size_t begin, size_t end) {
    const std::string_view raw = text.substr(begin, end - begin);
    const std::string_view body = trim_c_space(raw);
    if (body.empty()) return;
    const size_t b = begin + static_cast<size_t>(body.data() - raw.data());
    spans.push_back({std::move(section), std::move(heading), b, b + body.size(), std::string(body)});
  };
  const size_t first = headings.empty() ? text.size() : headings.front().label_begin;
  add("", "", 0, first);
  for (size_t i = 0; i < headings.size(); ++i) {
    const size_t end = i + 1 < headings.size() ? headings[i + 1].label_begin : text.size();
    add(headings[i].section, headings[i].label, headings[i].body_begin, end);
  }
  return spans;
}

}  // namespace eagle::biomed
