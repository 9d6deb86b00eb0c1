// Document analysis for the index against exact oracles, on every passage of SciFact
// and BioASQ: Bm25Index::analyze (stems from the per-thread cache, terms counted
// through a hash map) gives the same terms, tf and order as the plain way (every
// word through the stemmer, terms sorted and counted), and is_english_stopword
// answers as a scan of Lucene's list does for every short term of those texts.
#include <gtest/gtest.h>

#include "shared_data.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <set>

#include "eagle/index/lexical/bm25_index.h"
#include "eagle/ingest/corpus_reader.h"
#include "eagle/text/analyzer.h"

namespace fs = std::filesystem;
using namespace eagle;

namespace {

// The plain way: each term as the analyzer emits it, sorted to count, put back in
// order of first occurrence.
index::AnalyzedDoc plain_analysis(const text::Analyzer& a, std::string_view text) {
  std::vector<std::pair<std::string, uint32_t>> seen;  // (term, first position)
  uint32_t len = 0;
  a.analyze(text, [&](std::string_view t) { seen.emplace_back(std::string(t), len++); });
  std::stable_sort(seen.begin(), seen.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::pair<uint32_t, std::pair<std::string, uint32_t>>> counted;  // (first, (term, tf))
  for (size_t i = 0; i < seen.size();) {
    size_t j = i;
    while (j < seen.size() && seen[j].first == seen[i].first) ++j;
    counted.push_back({seen[i].second, {seen[i].first, static_cast<uint32_t>(j - i)}});
    i = j;
  }
  std::sort(counted.begin(), counted.end());
  index::AnalyzedDoc doc;
  doc.len = len;
  for (auto& c : counted) doc.terms.push_back(std::move(c.second));
  return doc;
}

bool scanned_stopword(std::string_view t) {
  static constexpr std::array<std::string_view, 33> kLucene = {
      "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not",
      "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was",
      "will", "with"};
  return std::find(kLucene.begin(), kLucene.end(), t) != kLucene.end();
}

void compare_dataset(const std::string& name, text::Stemmer stemmer, size_t* docs_compared) {
  const fs::path dir = eagle::testing::shared_data() / name;
  ASSERT_TRUE(fs::exists(dir / "corpus.jsonl")) << "shared data missing: " << dir;
  ingest::ReadOptions ro;
  const auto docs = ingest::read_corpus(dir, ro).documents;
  ASSERT_GT(docs.size(), 1000u);
  text::AnalyzerOptions cached;
  cached.stemmer = stemmer;
  text::AnalyzerOptions uncached = cached;
  uncached.stem_cache = false;
  const index::Bm25Index idx({}, cached);
  const text::Analyzer plain(uncached);
  std::set<std::string> short_terms;
  for (const auto& d : docs) {
    const std::string text = d.indexed_text();
    const auto fast = idx.analyze(text);
    const auto want = plain_analysis(plain, text);
    ASSERT_EQ(fast.len, want.len) << name << " " << d.id;
    ASSERT_EQ(fast.terms, want.terms) << name << " " << d.id;
    text::Analyzer raw({text::Stemmer::none, false, true});
    raw.analyze(text, [&](std::string_view t) {
      if (t.size() <= 6) short_terms.emplace(t);
    });
    ++*docs_compared;
  }
  for (const auto& t : short_terms) ASSERT_EQ(text::is_english_stopword(t), scanned_stopword(t)) << t;
}

}  // namespace

TEST(AnalysisOracle, CachedStemsAndHashedCountsEqualThePlainAnalysisOnEveryPassage) {
  size_t compared = 0;
  compare_dataset("scifact", text::Stemmer::porter, &compared);
  compare_dataset("bioasq", text::Stemmer::porter, &compared);
  compare_dataset("scifact", text::Stemmer::english, &compared);
  EXPECT_EQ(compared, 5183u + 20554u + 5183u);
  // Upper case, the empty string and words one letter off a stop word.
  for (std::string_view t : {"", "The", "thes", "tha", "a", "wit", "withh", "x", "inn", "on"})
    EXPECT_EQ(text::is_english_stopword(t), scanned_stopword(t)) << t;
}
