#pragma once
// Shared by the BM25 tests: an analyzer that keeps words as they are, and random
// documents whose terms repeat and tie.
#include <cmath>
#include <random>
#include <string>

#include "eagle/text/analyzer.h"

namespace eagle::test_support {

inline text::AnalyzerOptions raw_analyzer() {
  text::AnalyzerOptions o;
  o.stemmer = text::Stemmer::none;
  o.stopwords = false;
  return o;
}

// Zipf-ish random documents over a small vocabulary so terms repeat and tie.
inline std::string random_doc(std::mt19937& rng, int vocab, int min_len, int max_len) {
  std::uniform_int_distribution<int> len(min_len, max_len);
  std::string s;
  const int n = len(rng);
  for (int i = 0; i < n; ++i) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    s += "w" + std::to_string(static_cast<int>(std::pow(vocab, u)) - 1) + " ";
  }
  return s;
}

}  // namespace eagle::test_support
