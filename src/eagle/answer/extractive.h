#pragma once
// The extractive answer: with no chat model (or when it fails), the sentences of the
// top passages that best cover the question, each followed by its passage's number,
// so the embedded default answers with citations instead of only listing passages.
//
// A sentence's score is the idf-weighted share of the question's terms it holds, plus
// 0.1 x the share of the question's entities it names, plus 0.05 / passage number (a
// tie goes to the better-ranked passage), minus 0.1 per 400 bytes beyond 400 (a long
// table row is not an answer). Sentences are taken best first while they score at
// least `min_score`, at most `per_passage` from one passage, none whose word
// 3-shingles overlap an earlier pick by Jaccard 0.6 or more; they are then put in
// passage order, and in reading order within a passage.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace eagle::answer {

struct Passage {
  size_t number = 0;  // the [n] a sentence from it is cited with
  std::string text;
  bool quotable = true;  // false: never quoted (a reference list)
  // The text was cut at a word (a section summary): its last sentence, when it does
  // not end in a stop, is not quoted.
  bool cut_at_end = false;
};

// The question's index terms with their weights (BM25 idf), and its entities' names
// (lower case) when a vocabulary found any.
struct QuestionTerms {
  std::vector<std::pair<std::string, double>> terms;
  std::vector<std::string> entities;
};

// Index terms of a text, as the lexical index makes them (so "dosing" meets "dose").
using AnalyzeFn = std::function<std::vector<std::string>(std::string_view)>;

struct ExtractiveOptions {
  size_t max_sentences = 3;
  size_t per_passage = 2;
  double min_score = 0.3;
};

struct Quote {
  size_t passage = 0;  // Passage::number
  std::string text;
  double score = 0;
};

struct ExtractiveAnswer {
  std::string text;           // "Sentence one. [1] Sentence two. [2]", or the no-answer text
  std::vector<Quote> quotes;  // in answer order; empty: nothing answered
};

// What the answer says when no sentence qualifies.
inline constexpr std::string_view kNoAnswerText = "No passage in the knowledge base answers this question.";

ExtractiveAnswer extract_answer(const QuestionTerms& question, const std::vector<Passage>& passages,
                                const AnalyzeFn& analyze, const ExtractiveOptions& options);

}  // namespace eagle::answer
