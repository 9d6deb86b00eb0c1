#pragma once
// In-memory BM25 index over compressed postings, with two searchers behind one
// interface: the exhaustive scorer (the oracle) and MaxScore (the fast top-k, which
// must return exactly the oracle's top k). Documents can be added at any time; the
// collection statistics (N, avgdl, idf, per-term score bounds) are refreshed lazily
// before the next search.
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "eagle/core/bitset.h"
#include "eagle/index/lexical/postings.h"
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

// Heterogeneous lookup so a string_view from the analyzer finds a term without
// allocating.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

class Bm25Index {
 public:
  explicit Bm25Index(Bm25Params params = {}, text::AnalyzerOptions analyzer = {});
  Bm25Index(Bm25Index&&) noexcept;
  Bm25Index& operator=(Bm25Index&&) noexcept;
  ~Bm25Index();

  // Adds a document; returns its internal doc id (dense, in insertion order).
  DocId add(std::string_view text);
  uint32_t size() const { return static_cast<uint32_t>(doc_len_.size()); }

  // Top k documents by BM25, sorted by score descending then doc id ascending.
  // `allowed` (optional) restricts the result to documents whose bit is set; the
  // collection statistics still count every document (as Lucene does with deletes).
  std::vector<LexicalHit> search(std::string_view query, size_t k,
                                 TopKAlgorithm algo = TopKAlgorithm::maxscore,
                                 const Bitset* allowed = nullptr) const;
  // The same, from already-analysed query terms (repeats count as query tf).
  std::vector<LexicalHit> search_terms(const std::vector<std::string>& terms, size_t k,
                                       TopKAlgorithm algo = TopKAlgorithm::maxscore,
                                       const Bitset* allowed = nullptr) const;

  // How much a text weighs as a query: the sum of the BM25 idf of its analysed terms
  // (each occurrence counts, as query tf does). A term no document has weighs the
  // most (df 0): a brand name the corpus never uses is still the query's most
  // specific word. The biomed Tier-2 compares a drug mention's weight with the
  // whole query's. 0 for an empty index.
  double query_weight(std::string_view text) const;

  const Bm25Params& params() const { return params_; }
  const text::Analyzer& analyzer() const { return analyzer_; }
  LexicalIndexStats stats() const;

  // Binary persistence (little-endian, versioned). Throws eagle::Error on a bad file.
  void save(std::ostream& out) const;
  static Bm25Index load(std::istream& in);

 private:
  struct QueryTerm {
    const PostingList* list;
    double weight;  // idf * (k1 + 1) * query tf
    double upper_bound;
    uint32_t term;
  };
  struct Snapshot;  // statistics derived from the postings, rebuilt when stale

  std::shared_ptr<const Snapshot> current_snapshot() const;
  std::shared_ptr<const Snapshot> build_snapshot() const;
  std::vector<QueryTerm> prepare(const std::vector<std::string>& terms,
                                 const Snapshot& snap) const;
  std::vector<LexicalHit> exhaustive(const std::vector<QueryTerm>& q, size_t k, const Snapshot& snap,
                                     const Bitset* allowed) const;
  std::vector<LexicalHit> maxscore(std::vector<QueryTerm> q, size_t k, const Snapshot& snap,
                                   const Bitset* allowed) const;

  Bm25Params params_;
  text::Analyzer analyzer_;
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> term_ids_;
  std::vector<PostingList> postings_;
  std::vector<uint32_t> doc_len_;
  uint64_t total_len_ = 0;

  mutable std::mutex refresh_mutex_;
  mutable std::shared_ptr<const Snapshot> snapshot_;  // null when stale
};

}  // namespace eagle::index
