#include "eagle/answer/evidence.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <unordered_set>

namespace eagle::answer {

std::vector<std::string> fold_question_terms(const std::vector<std::string>& analysed) {
  std::unordered_set<std::string> seen;
  for (const auto& term : analysed) {
    if (term.find('-') == std::string::npos) continue;
    seen.insert(term);
    std::string joined;
    for (char c : term)
      if (c != '-') joined += c;
    seen.insert(joined);
  }
  std::vector<std::string> out;
  for (const auto& term : analysed)
    if (seen.insert(term).second) out.push_back(term);
  return out;
}

HitSignals hit_signals(const QuestionTerms& question, const std::vector<std::string>& hit_terms,
                       const std::string& hit_text_lower) {
  HitSignals s;
  const std::unordered_set<std::string> held(hit_terms.begin(), hit_terms.end());
  double total = 0, covered = 0, top_weight = -1;
  std::string top_term;
  for (const auto& [term, w] : question.terms) {
    total += w;
    if (held.count(term)) covered += w;
    if (w > top_weight) top_weight = w, top_term = term;
  }
  s.coverage = total > 0 ? covered / total : 0;
  s.top_term = !top_term.empty() && held.count(top_term) ? 1 : 0;
  if (question.entities.empty()) {
    s.entities = s.coverage;
  } else {
    size_t named = 0;
    for (const auto& e : question.entities) named += hit_text_lower.find(e) != std::string::npos;
    s.entities = static_cast<double>(named) / static_cast<double>(question.entities.size());
  }
  return s;
}

double evidence_probability(const HitSignals& s, const EvidenceOptions& o) {
  const double z =
      o.bias + o.w_coverage * s.coverage + o.w_top_term * s.top_term + o.w_entities * s.entities + o.w_bm25 * s.bm25;
  return 1.0 / (1.0 + std::exp(-z));
}

Evidence assess_evidence(const QuestionTerms& question, const std::vector<std::string>& hit_texts,
                         const AnalyzeFn& analyze, const EvidenceOptions& o, const std::vector<double>& bm25_ratios) {
  Evidence e;
  const size_t n = std::min(hit_texts.size(), o.max_hits);
  double best_coverage = 0;
  for (size_t i = 0; i < n; ++i) {
    std::string lower = hit_texts[i];
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto s = hit_signals(question, analyze(hit_texts[i]), lower);
    if (i < bm25_ratios.size()) s.bm25 = bm25_ratios[i];
    e.signals.push_back(s);
    e.per_hit.push_back(evidence_probability(s, o));
    if (i < o.top_n) {
      e.score = std::max(e.score, e.per_hit.back());
      best_coverage = std::max(best_coverage, s.coverage);
    }
  }
  if (n == 0 || best_coverage < o.min_coverage || e.score < o.none) e.level = "none";
  else if (e.score >= o.strong) e.level = "strong";
  else e.level = "weak";
  return e;
}

}  // namespace eagle::answer
