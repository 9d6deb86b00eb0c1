#pragma once
// The embedded text store: a data folder holding the documents
// and their BM25 index in one versioned file, replaced atomically (write to a
// temporary file, fsync, rename), so an interrupted ingest never leaves a
// half-written index: the previous file stays until the new one is complete.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "eagle/core/document.h"
#include "eagle/index/lexical/bm25_index.h"

namespace eagle::store {

struct ScoredDocument {
  const Document* doc;
  double score;
  uint32_t rank;  // 1-based
};

class TextStore {
 public:
  TextStore(index::Bm25Params params, text::AnalyzerOptions analyzer)
      : index_(params, analyzer) {}

  // Opens `dir` if it holds a store, else returns an empty store with the given
  // settings (the settings of an existing store win: its index was built with them).
  static TextStore open_or_create(const std::filesystem::path& dir, index::Bm25Params params,
                                  text::AnalyzerOptions analyzer);
  static TextStore open(const std::filesystem::path& dir);
  static bool exists(const std::filesystem::path& dir);

  // Adds documents; a duplicate id (in the store or in `docs`) is an error before
  // anything is added.
  // `progress(done, total)` is called every 1000 documents when given.
  void add(std::vector<Document> docs,
           const std::function<void(size_t, size_t)>& progress = {});
  void save(const std::filesystem::path& dir) const;

  std::vector<ScoredDocument> search(const std::string& query, size_t k,
                                     index::TopKAlgorithm algo = index::TopKAlgorithm::maxscore) const;
  size_t size() const { return docs_.size(); }
  const Document* find(const std::string& id) const;
  const index::Bm25Index& index() const { return index_; }

 private:
  index::Bm25Index index_;
  std::vector<Document> docs_;
  std::unordered_map<std::string, uint32_t> by_id_;
};

inline constexpr const char* kStoreFileName = "lexical.eagle";

}  // namespace eagle::store
