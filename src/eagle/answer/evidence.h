#pragma once
// How strong a response's evidence is: whether its best passages hold the question at
// all. Fused and reranked scores are normalised per query (the top hit is 1.0 however
// poor), so they cannot say "nothing relevant was found"; these signals can.
//
// Per hit: coverage = the idf-weighted share of the question's terms the hit holds (a
// compound counts through its parts); top_term = 1 when it holds the question's most
// specific term (highest idf); entities = the share of the question's entities it
// names (= coverage when the question names none); bm25 = the hit's BM25 score over the
// most any text could score for this question ((k1 + 1) x the question's idf sum), in
// [0, 1). p = logistic(bias + w_coverage * coverage + w_top_term * top_term +
// w_entities * entities + w_bm25 * bm25). The response's score is
// the highest p over its first top_n hits: strong at or above `strong`, none below
// `none` (or when no hit covers min_coverage of the question), weak between.
#include <string>
#include <vector>

#include "eagle/answer/extractive.h"

namespace eagle::answer {

struct EvidenceOptions {
  // Fitted together on the fit halves of SciFact train and BioASQ dev, biomed stores
  // (`eagle eval --evidence-fit`, docs/benchmarks.md "Evidence").
  double bias = -3.835;
  double w_coverage = 3.513;
  double w_top_term = 0.871;
  double w_entities = 1.676;
  double w_bm25 = 0;  // the fit gave 0.018: not worth its cost (a search per hit)
  double strong = 0.769;
  double none = 0.154;
  double min_coverage = 0.2;
  size_t top_n = 3;
  size_t max_hits = 10;  // hits scored (a deeper list carries no per-hit score)
};

struct HitSignals {
  double coverage = 0;
  double top_term = 0;
  double entities = 0;
  double bm25 = 0;
};

struct Evidence {
  std::string level = "none";  // strong | weak | none
  double score = 0;            // the highest per-hit p over the first top_n hits
  std::vector<double> per_hit;
  std::vector<HitSignals> signals;
};

// The question's terms with compounds folded (their whole and joined forms dropped when
// their parts are there) and repeats removed, in order.
std::vector<std::string> fold_question_terms(const std::vector<std::string>& analysed);

HitSignals hit_signals(const QuestionTerms& question, const std::vector<std::string>& hit_terms,
                       const std::string& hit_text_lower);
double evidence_probability(const HitSignals& s, const EvidenceOptions& o);
// `bm25_ratios` (optional, aligned with hit_texts): each hit's HitSignals::bm25.
Evidence assess_evidence(const QuestionTerms& question, const std::vector<std::string>& hit_texts,
                         const AnalyzeFn& analyze, const EvidenceOptions& o, const std::vector<double>& bm25_ratios = {});

}  // namespace eagle::answer
