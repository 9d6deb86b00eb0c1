#include "eagle/biomed/vocab/entity_matcher.h"

#include <algorithm>

namespace eagle::biomed {
namespace {

bool is_word_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c >= 0x80;
}

// The seed's letter boundary, on the original text, for a normalised span that also
// starts and ends on whole characters.
bool at_boundaries(std::string_view text, const NormalizedText& nt, size_t start, size_t end) {
  return nt.at_char_boundary(start) && nt.at_char_boundary(end) && !letter_before(text, nt.original(start)) &&
         !letter_at(text, nt.original(end));
}

// Seed boundary extension for short surfaces: "CD" is not a match in "CD34".
constexpr size_t kShortSurfaceBytes = 3;

bool digit_at(std::string_view text, size_t pos) {  // pos may be (size_t)-1
  return pos < text.size() && text[pos] >= '0' && text[pos] <= '9';
}

bool letters_only(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; });
}

// A spelling no English word has: a capital, a digit, a hyphen, a Greek letter...
// ("p53", "c-Myc", "β-catenin", but not "pitchfork").
bool symbol_marked(std::string_view s) {
  return has_upper_case(s) ||
         std::any_of(s.begin(), s.end(), [](char c) { return !((c | 0x20) >= 'a' && (c | 0x20) <= 'z'); });
}

}  // namespace

EntityMatcher::EntityMatcher(const Vocabulary& vocab, MatcherOptions options) : options_(std::move(options)) {
  automaton_ = vocab.automaton();
  auto resolve = [&](const std::vector<std::string>& words, std::unordered_set<uint32_t>& into) {
    for (const auto& w : words)
      if (auto id = automaton_->find(normalize_surface(w))) into.insert(*id);
  };
  resolve(options_.stop_words, stop_);
  resolve(options_.ambiguous_words, ambiguous_);
  resolve(options_.context_required, context_required_);
  resolve(options_.excluded, excluded_);
  for (const auto& c : options_.context_cues) {
    std::string n = normalize_surface(c);
    if (n.empty()) continue;
    if (n.back() == '*')
      prefix_cues_.push_back(n.substr(0, n.size() - 1));
    else
      exact_cues_.push_back(n);
  }
  std::sort(exact_cues_.begin(), exact_cues_.end());
}

size_t EntityMatcher::memory_bytes() const {
  // The automaton is shared with the vocabulary and counted there.
  return sizeof(*this) +
         (stop_.size() + ambiguous_.size() + context_required_.size() + excluded_.size()) * 16;
}

std::vector<EntityMatch> EntityMatcher::match_entities(std::string_view text) const {
  return match(text, false);
}
std::vector<EntityMatch> EntityMatcher::match_drug_entities(std::string_view text) const {
  return match(text, true);
}

bool EntityMatcher::is_cue(std::string_view word) const {
  if (std::binary_search(exact_cues_.begin(), exact_cues_.end(), word,
                         [](std::string_view a, std::string_view b) { return a < b; }))
    return true;
  for (const auto& p : prefix_cues_)
    if (word.starts_with(p)) return true;
  return false;
}

bool EntityMatcher::has_context_cue(const NormalizedText& nt, size_t start, size_t end) const {
  const std::string& s = nt.text;
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  size_t i = start;
  for (size_t words = 0; i > 0 && words < options_.cue_words_before; ++words) {
    while (i > 0 && !is_word_byte(byte(i - 1))) --i;
    size_t we = i;
    while (i > 0 && is_word_byte(byte(i - 1))) --i;
    if (i == we) break;
    if (is_cue(std::string_view(s).substr(i, we - i))) return true;
  }
  i = end;
  for (size_t words = 0; i < s.size() && words < options_.cue_words_after; ++words) {
    while (i < s.size() && !is_word_byte(byte(i))) ++i;
    size_t ws = i;
    while (i < s.size() && is_word_byte(byte(i))) ++i;
    if (i == ws) break;
    if (is_cue(std::string_view(s).substr(ws, i - ws))) return true;
  }
  return false;
}

bool EntityMatcher::accept(std::string_view text, const NormalizedText& nt, size_t start, size_t end,
                           uint32_t pattern, bool drugs_only) const {
  const SurfacePattern& p = automaton_->pattern(pattern);
  if (drugs_only && p.type != static_cast<uint8_t>(EntityType::drug)) return false;
  if (!at_boundaries(text, nt, start, end)) return false;
  const size_t os = nt.original(start), oe = nt.original(end);
  if (p.length <= kShortSurfaceBytes && (digit_at(text, os - 1) || digit_at(text, oe))) return false;
  if (excluded_.contains(pattern)) return false;
  const std::string_view surface = text.substr(os, oe - os);
  const std::string_view form = automaton_->form(pattern);
  const bool upper = is_upper_case(surface);
  if ((p.flags & kSurfaceCaseSensitive) && !(is_upper_case(form) ? upper : surface == form)) return false;
  if (!upper && stop_.contains(pattern)) return false;
  bool needs_cue = !upper && ambiguous_.contains(pattern);
  if (p.type == static_cast<uint8_t>(EntityType::gene) && context_required_.contains(pattern))
    needs_cue = true;
  if (p.flags & kSurfaceGeneSymbol) {
    // In capitals or as the source spells it ("p53", "c-Myc") a symbol is not a word.
    const bool source_case = upper || (surface == form && symbol_marked(form));
    // "met" lower-case, "pan-cancer", "post-translational": a word or a prefix.
    if (!source_case && (p.length <= 2 || (oe < text.size() && text[oe] == '-'))) return false;
    if (!source_case || p.length <= options_.short_gene_bytes) needs_cue = true;
    if ((p.flags & kSurfaceGeneAlias) && p.length <= options_.short_alias_bytes && letters_only(form))
      needs_cue = true;
  }
  return !needs_cue || has_context_cue(nt, start, end);
}

std::vector<EntityMatch> EntityMatcher::select(std::string_view text, const NormalizedText& nt,
                                               std::vector<Candidate>& cands) const {
  std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  std::vector<EntityMatch> out;
  size_t cursor = 0;
  for (const auto& c : cands) {
    if (c.start < cursor) continue;
    const SurfacePattern& p = automaton_->pattern(c.pattern);
    EntityMatch m;
    m.start = nt.original(c.start);
    m.end = nt.original(c.end);
    m.text = std::string(text.substr(m.start, m.end - m.start));
    m.entity = p.entity;
    m.type = static_cast<EntityType>(p.type);
    out.push_back(std::move(m));
    cursor = c.end;
  }
  return out;
}

std::vector<EntityMatch> EntityMatcher::match(std::string_view text, bool drugs_only) const {
  const NormalizedText nt = normalize_for_match(text);
  const SurfaceAutomaton& a = *automaton_;
  const std::string& s = nt.text;
  std::vector<Candidate> cands;
  uint32_t state = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    state = a.next(state, static_cast<unsigned char>(s[i]));
    if (!a.has_output(state)) continue;
    const size_t end = i + 1;
    // Cheap end-boundary test first: most states with an output sit inside a word.
    if (end < s.size() && s[end] >= 'a' && s[end] <= 'z') continue;
    a.for_each_output(state, [&](uint32_t pid) {
      const size_t start = end - a.pattern(pid).length;
      if (accept(text, nt, start, end, pid, drugs_only))
        cands.push_back({static_cast<uint32_t>(start), static_cast<uint32_t>(end), pid});
    });
  }
  return select(text, nt, cands);
}

BruteForceMatcher::BruteForceMatcher(const EntityMatcher& matcher)
    : matcher_(matcher), patterns_(matcher.automaton_->normalized_patterns()) {}

std::vector<EntityMatch> BruteForceMatcher::match(std::string_view text, bool drugs_only) const {
  const NormalizedText nt = normalize_for_match(text);
  std::vector<EntityMatcher::Candidate> cands;
  for (uint32_t pid = 0; pid < patterns_.size(); ++pid) {
    const std::string& p = patterns_[pid];
    for (size_t pos = nt.text.find(p); pos != std::string::npos; pos = nt.text.find(p, pos + 1))
      if (matcher_.accept(text, nt, pos, pos + p.size(), pid, drugs_only))
        cands.push_back({static_cast<uint32_t>(pos), static_cast<uint32_t>(pos + p.size()), pid});
  }
  return matcher_.select(text, nt, cands);
}

nlohmann::json matches_to_json(const Vocabulary& vocab, const std::vector<EntityMatch>& matches) {
  auto out = nlohmann::json::array();
  for (const auto& m : matches) {
    const Entity& e = vocab.entity(m.entity);
    out.push_back({{"text", m.text},
                   {"start", m.start},
                   {"end", m.end},
                   {"type", entity_type_name(m.type)},
                   {"name", e.name},
                   {"id", e.key}});
  }
  return out;
}

}  // namespace eagle::biomed
