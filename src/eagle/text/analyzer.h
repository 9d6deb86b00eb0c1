#pragma once
// Biomedical analyzer for the lexical index (SPEC "Lexical index").
//
// Text is NFKC-normalised and case-folded. A token is a run of letters/digits,
// possibly joined by internal hyphens ("pd-1", "vegfr1-3", "hmpl-013", "5-fu") and
// ending in a '+' ("her2+"). Greek letters are spelled out ("tnf-α" -> "tnf-alpha")
// so the symbol and the name match. A compound token is emitted whole, then as each
// of its parts, then joined without separators, so "PD-1" matches "PD 1" and "pd1".
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace eagle::text {

enum class Stemmer { none, porter, english };

Stemmer parse_stemmer(std::string_view name);  // throws eagle::Error on unknown names
std::string_view stemmer_name(Stemmer s);

struct AnalyzerOptions {
  Stemmer stemmer = Stemmer::porter;  // Pyserini's BEIR BM25 uses Porter
  bool stopwords = true;              // Lucene's English stop set
  bool compound_parts = true;         // emit parts and the joined form of "PD-1"
  // Stems remembered per thread (a fixed-size cache; the same terms either way). Off
  // only to compare against the stemmer itself.
  bool stem_cache = true;
};

class Analyzer {
 public:
  explicit Analyzer(AnalyzerOptions options = {}) : options_(options) {}

  // Calls `emit` for each index term of `text`, in order. Not reentrant for one
  // Analyzer across threads only because of the caller's callback; the stemmers
  // are per thread.
  void analyze(std::string_view text, const std::function<void(std::string_view)>& emit) const;
  std::vector<std::string> terms(std::string_view text) const;

  const AnalyzerOptions& options() const { return options_; }

 private:
  AnalyzerOptions options_;
};

// NFKC + case fold; ASCII input takes a fast path. Invalid UTF-8 bytes are dropped.
std::string normalize(std::string_view text);

bool is_english_stopword(std::string_view term);

}  // namespace eagle::text
