#include "eagle/answer/extractive.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_set>

#include "eagle/answer/sentences.h"

namespace eagle::answer {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Word 3-shingles (lower case, letters and digits only) for the overlap test.
std::set<std::string> shingles(std::string_view text) {
  std::vector<std::string> words;
  std::string w;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!w.empty()) {
      words.push_back(std::move(w));
      w.clear();
    }
  }
  if (!w.empty()) words.push_back(std::move(w));
  std::set<std::string> out;
  if (words.size() < 3) {
    std::string all;
    for (const auto& x : words) all += x + ' ';
    if (!all.empty()) out.insert(all);
    return out;
  }
  for (size_t i = 0; i + 2 < words.size(); ++i) out.insert(words[i] + ' ' + words[i + 1] + ' ' + words[i + 2]);
  return out;
}

double jaccard(const std::set<std::string>& a, const std::set<std::string>& b) {
  if (a.empty() || b.empty()) return 0;
  size_t common = 0;
  for (const auto& s : a) common += b.count(s);
  return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
}

// A heading: no sentence punctuation at its end, and few words, or a section number
// in front ("2.5 Dosage in Patients With Renal Impairment"), or a passage's first
// line of at most 12 words (its title).
bool is_heading(std::string_view s, bool first_line) {
  if (s.empty()) return true;
  const char last = s.back();
  if (last == '.' || last == '?' || last == '!' || last == ':' || last == ';' || last == ')') return false;
  size_t words = 1;
  for (char c : s) words += c == ' ';
  const bool numbered = std::isdigit(static_cast<unsigned char>(s[0])) && s.find(' ') != std::string_view::npos &&
                        s.find_first_not_of("0123456789.") == s.find(' ');
  return words < 6 || numbered || (first_line && words <= 12);
}

struct Candidate {
  size_t passage_index = 0;
  size_t position = 0;  // sentence order within the passage
  std::string text;
  double score = 0;
};

}  // namespace

ExtractiveAnswer extract_answer(const QuestionTerms& question, const std::vector<Passage>& passages,
                                const AnalyzeFn& analyze, const ExtractiveOptions& options) {
  ExtractiveAnswer out;
  double total_weight = 0;
  for (const auto& [term, w] : question.terms) total_weight += w;
  std::vector<Candidate> candidates;
  if (total_weight > 0) {
    for (size_t p = 0; p < passages.size(); ++p) {
      if (!passages[p].quotable) continue;
      const auto sentences = split_sentences(passages[p].text);
      for (size_t s = 0; s < sentences.size(); ++s) {
        const std::string& text = sentences[s].text;
        if (is_heading(text, sentences[s].line == sentences[0].line)) continue;
        if (passages[p].cut_at_end && s + 1 == sentences.size()) {
          const char last = text.back();
          if (last != '.' && last != '?' && last != '!') continue;
        }
        const auto terms = analyze(text);
        const std::unordered_set<std::string> held(terms.begin(), terms.end());
        double covered = 0;
        for (const auto& [term, w] : question.terms)
          if (held.count(term)) covered += w;
        double score = covered / total_weight;
        if (!question.entities.empty()) {
          const std::string low = lower(text);
          size_t named = 0;
          for (const auto& e : question.entities) named += low.find(e) != std::string::npos;
          score += 0.1 * static_cast<double>(named) / static_cast<double>(question.entities.size());
        }
        score += 0.05 / static_cast<double>(passages[p].number ? passages[p].number : p + 1);
        if (text.size() > 400) score -= 0.1 * static_cast<double>(text.size() - 400) / 400.0;
        candidates.push_back({p, s, text, score});
      }
    }
  }
  // Best first; ties by passage, then position, so the answer is deterministic.
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.passage_index != b.passage_index) return a.passage_index < b.passage_index;
    return a.position < b.position;
  });
  std::vector<const Candidate*> picked;
  std::vector<std::set<std::string>> picked_shingles;
  std::vector<size_t> per_passage(passages.size(), 0);
  for (const auto& c : candidates) {
    if (picked.size() >= options.max_sentences || c.score < options.min_score) break;
    if (per_passage[c.passage_index] >= options.per_passage) continue;
    auto sh = shingles(c.text);
    bool repeats = false;
    for (const auto& other : picked_shingles) repeats = repeats || jaccard(sh, other) >= 0.6;
    if (repeats) continue;
    picked.push_back(&c);
    picked_shingles.push_back(std::move(sh));
    ++per_passage[c.passage_index];
  }
  std::sort(picked.begin(), picked.end(), [](const Candidate* a, const Candidate* b) {
    return a->passage_index != b->passage_index ? a->passage_index < b->passage_index : a->position < b->position;
  });
  if (picked.empty()) {
    out.text = std::string(kNoAnswerText);
    return out;
  }
  for (const auto* c : picked) {
    const size_t n = passages[c->passage_index].number;
    if (!out.text.empty()) out.text += ' ';
    out.text += c->text + " [" + std::to_string(n) + "]";
    out.quotes.push_back({n, c->text, c->score});
  }
  return out;
}

}  // namespace eagle::answer
