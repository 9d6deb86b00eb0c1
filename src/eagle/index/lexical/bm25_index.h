#pragma once
// In-memory BM25 index over compressed postings, with two searchers behind one
// interface: the exhaustive scorer (the oracle) and MaxScore (the fast top-k, which
// must return exactly the oracle's top k). Documents can be added at any time and
// nothing is rebuilt after an add: the statistics (N, total length, document
// frequencies) are counts kept as documents arrive, a document's BM25 norm is
// computed from its length when it is scored, and each term keeps its impacts (the
// Pareto front of (tf, document length) over its postings, as Lucene's impacts) so
// its MaxScore bound is exact for whatever average length a query sees.
//
// Segments. A segmented collection searches several indexes as one
// (`search_segments`): the statistics are summed over the segments' live documents
// at query time, so the scores are exactly those of one index over the same live
// documents; a segment's deleted and uncommitted documents (`LiveDocs::hidden`) are
// neither counted nor returned.
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "eagle/core/bitset.h"
#include "eagle/index/lexical/postings.h"
#include "eagle/index/lexical/term_dictionary.h"
#include "eagle/text/analyzer.h"

namespace eagle::index {

struct Bm25Params {
  double k1 = 0.9;  // Pyserini's BEIR setting
  double b = 0.4;
};

enum class TopKAlgorithm { maxscore, exhaustive };
TopKAlgorithm parse_topk_algorithm(std::string_view name);

struct LexicalHit {
  DocId doc;
  double score;
};

struct LexicalIndexStats {
  uint32_t docs = 0;
  uint32_t terms = 0;
  uint64_t postings = 0;
  uint64_t postings_bytes = 0;  // compressed posting bytes incl. skip entries
  double avg_doc_len = 0;
};

// Which documents of an index are live: counted in the statistics and returned.
struct LiveDocs {
  const Bitset* hidden = nullptr;  // set bit: deleted, or staged and not committed
  uint32_t hidden_docs = 0;        // bits set in `hidden` for this index's documents
  uint64_t hidden_len = 0;         // their total length in tokens
};

// Statistics of the live documents of a set of indexes (what one index over them
// would hold).
struct CorpusStats {
  uint64_t docs = 0;
  uint64_t total_len = 0;
};

// A term's impact: a (tf, document length) pair no other posting of the term
// dominates (higher or equal tf with a shorter or equal document).
struct Impact {
  uint32_t tf;
  uint32_t doc_len;
};

class Bm25Index;

// One index of a segmented collection as one search sees it.
struct LexicalSegment {
  const Bm25Index* index = nullptr;
  LiveDocs live;
  const Bitset* allowed = nullptr;  // restricts the results (a filter); statistics untouched
  // Bit `bits_base + d` of `live.hidden` and `allowed` is document d's: segments of one
  // collection share the collection's bitsets over its row numbers.
  DocId bits_base = 0;
};

struct SegmentHit {
  uint32_t segment;  // position in the span searched
  DocId doc;         // the document's id in that segment's index
  double score;
};

// Heterogeneous lookup so a string_view from the analyzer finds a term without
// allocating.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// A document analysed for the index, before it is added: its distinct terms with their
// tf, in order of first occurrence, and its length in terms. Analysis needs no index
// state, so a writer does it before taking the lock that adding needs.
struct AnalyzedDoc {
  std::vector<std::pair<std::string, uint32_t>> terms;
  uint32_t len = 0;
};

class Bm25Index {
 public:
  explicit Bm25Index(Bm25Params params = {}, text::AnalyzerOptions analyzer = {});
  Bm25Index(Bm25Index&&) noexcept;
  Bm25Index& operator=(Bm25Index&&) noexcept;
  ~Bm25Index();

  // Adds a document; returns its internal doc id (dense, in insertion order).
  DocId add(std::string_view text) { return add(analyze(text)); }
  DocId add(const AnalyzedDoc& doc);
  // The analysis add() does (const: safe beside searches and other analyses).
  AnalyzedDoc analyze(std::string_view text) const;
  uint32_t size() const { return static_cast<uint32_t>(doc_len_.size()); }

  uint32_t doc_len(DocId doc) const { return doc_len_[doc]; }
  const std::vector<uint32_t>& doc_lengths() const { return doc_len_; }
  uint64_t total_len() const { return total_len_; }

  // Top k documents by BM25, sorted by score descending then doc id ascending.
  // `allowed` (optional) restricts the result to documents whose bit is set; the
  // statistics are those of the live documents (`live`: by default every one).
  std::vector<LexicalHit> search(std::string_view query, size_t k,
                                 TopKAlgorithm algo = TopKAlgorithm::maxscore,
                                 const Bitset* allowed = nullptr, LiveDocs live = {}) const;
  // The same, from already-analysed query terms (repeats count as query tf).
  std::vector<LexicalHit> search_terms(const std::vector<std::string>& terms, size_t k,
                                       TopKAlgorithm algo = TopKAlgorithm::maxscore,
                                       const Bitset* allowed = nullptr, LiveDocs live = {}) const;

  // How much a text weighs as a query: the sum of the BM25 idf of its analysed terms
  // (each occurrence counts, as query tf does). A term no document has weighs the
  // most (df 0): a brand name the corpus never uses is still the query's most
  // specific word. The biomed Tier-2 compares a drug mention's weight with the
  // whole query's. 0 for an empty index.
  double query_weight(std::string_view text, LiveDocs live = {}) const;

  // A term's postings and impacts (null postings when no document has it): one
  // dictionary lookup.
  struct TermView {
    const PostingList* postings = nullptr;
    std::span<const Impact> impacts;
  };
  TermView term(std::string_view term) const;
  const PostingList* postings(std::string_view t) const { return term(t).postings; }
  std::span<const Impact> impacts(std::string_view t) const { return term(t).impacts; }

  const Bm25Params& params() const { return params_; }
  const text::Analyzer& analyzer() const { return analyzer_; }
  LexicalIndexStats stats() const;

  // Binary persistence (little-endian, versioned). Throws eagle::Error on a bad file.
  void save(std::ostream& out) const;
  static Bm25Index load(std::istream& in);

 private:
  // Keeps `impacts_[term]` the Pareto front after a posting (tf, len).
  void add_impact(uint32_t term, uint32_t tf, uint32_t len);

  Bm25Params params_;
  text::Analyzer analyzer_;
  TermDictionary term_ids_;
  std::vector<PostingList> postings_;
  std::vector<uint32_t> doc_len_;
  std::vector<std::vector<Impact>> impacts_;  // per term, by tf ascending (and length ascending)
  uint64_t total_len_ = 0;
};

// Top k over several indexes searched as one (same analyzer and BM25 parameters:
// the first segment's are used): statistics summed over the segments' live
// documents, results in score order, ties by (segment, doc). Exactly what one index
// over the live documents, added in that order, returns.
std::vector<SegmentHit> search_segments(std::span<const LexicalSegment> segments,
                                        const std::vector<std::string>& terms, size_t k,
                                        TopKAlgorithm algo = TopKAlgorithm::maxscore);
// The statistics search_segments uses.
CorpusStats live_stats(std::span<const LexicalSegment> segments);
// Live documents holding `term` across the segments.
uint64_t live_doc_freq(std::span<const LexicalSegment> segments, std::string_view term);
// Bm25Index::query_weight over several segments' live documents.
double query_weight_segments(std::span<const LexicalSegment> segments, const std::vector<std::string>& terms);

}  // namespace eagle::index
