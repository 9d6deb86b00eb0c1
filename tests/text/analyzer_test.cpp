#include "eagle/text/analyzer.h"

#include <gtest/gtest.h>

#include <algorithm>

using eagle::text::Analyzer;
using eagle::text::AnalyzerOptions;
using eagle::text::Stemmer;

namespace {
bool has(const std::vector<std::string>& v, const std::string& t) {
  return std::find(v.begin(), v.end(), t) != v.end();
}
Analyzer plain() {
  AnalyzerOptions o;
  o.stemmer = Stemmer::none;
  o.stopwords = false;
  return Analyzer(o);
}
}  // namespace

TEST(Analyzer, KeepsBiomedicalCompoundsAndTheirParts) {
  auto t = plain().terms("PD-1 blockade with HER2+ disease, IL-6, VEGFR1-3, HMPL-013 and 5-FU");
  for (const char* term : {"pd-1", "pd", "1", "pd1", "her2+", "her2", "il-6", "il6", "vegfr1-3",
                           "vegfr1", "vegfr13", "hmpl-013", "hmpl013", "5-fu", "5fu", "fu"})
    EXPECT_TRUE(has(t, term)) << term;
}

TEST(Analyzer, PdOneMatchesSpacedAndJoinedForms) {
  auto a = plain();
  auto spaced = a.terms("PD 1");
  auto joined = a.terms("pd1");
  auto doc = a.terms("anti-PD-1 therapy");
  for (const auto& q : spaced) EXPECT_TRUE(has(doc, q)) << q;
  for (const auto& q : joined) EXPECT_TRUE(has(doc, q)) << q;
}

TEST(Analyzer, GreekLettersAreSpelledOut) {
  auto a = plain();
  auto t = a.terms("TNF-α and IFN-γ; β-catenin");
  EXPECT_TRUE(has(t, "tnf-alpha"));
  EXPECT_TRUE(has(t, "tnfalpha"));
  EXPECT_TRUE(has(t, "alpha"));
  EXPECT_TRUE(has(t, "ifn-gamma"));
  EXPECT_TRUE(has(t, "beta-catenin"));
  // The spelled name matches the symbol.
  auto q = a.terms("TNF-alpha");
  EXPECT_TRUE(has(q, "tnf-alpha"));
}

TEST(Analyzer, NormalisesUnicodeAndCase) {
  auto a = plain();
  // Full-width letters (NFKC) and capitals fold to the same term.
  EXPECT_EQ(a.terms("ＥＧＦＲ"), a.terms("egfr"));
  EXPECT_EQ(a.terms("EGFR"), std::vector<std::string>{"egfr"});
  // Unicode hyphen joins like ASCII hyphen.
  EXPECT_TRUE(has(a.terms("PD\u20101"), "pd-1"));
  // Accented letters stay letters.
  EXPECT_TRUE(has(a.terms("Sjögren syndrome"), "sjögren"));
}

TEST(Analyzer, StopwordsAndStemmingAreOptions) {
  AnalyzerOptions o;  // defaults: porter + stop words
  Analyzer a(o);
  auto t = a.terms("The inhibitors of kinases are studied");
  EXPECT_FALSE(has(t, "the"));
  EXPECT_FALSE(has(t, "of"));
  EXPECT_TRUE(has(t, "inhibitor"));
  EXPECT_TRUE(has(t, "kinas"));
  EXPECT_TRUE(has(t, "studi"));
  o.stemmer = Stemmer::english;
  EXPECT_TRUE(has(Analyzer(o).terms("studies"), "studi"));
  o.stemmer = Stemmer::none;
  o.stopwords = false;
  auto raw = Analyzer(o).terms("The inhibitors");
  EXPECT_EQ(raw, (std::vector<std::string>{"the", "inhibitors"}));
}

TEST(Analyzer, CompoundsAreNeverStemmedOrStopped) {
  Analyzer a;  // stemming on
  auto t = a.terms("anti-inflammatory");
  EXPECT_TRUE(has(t, "anti-inflammatory"));
  EXPECT_TRUE(has(t, "inflammatori"));  // the part is stemmed
}

TEST(Analyzer, TrailingHyphenAndPlusInsideWordsAreSeparators) {
  auto t = plain().terms("well- known a+b x+");
  EXPECT_TRUE(has(t, "well"));
  EXPECT_TRUE(has(t, "known"));
  EXPECT_TRUE(has(t, "a"));
  EXPECT_TRUE(has(t, "b"));
  EXPECT_TRUE(has(t, "x+"));
}

TEST(Analyzer, InvalidUtf8DoesNotCrashOrLoseValidText) {
  std::string bad = "EGFR \xff\xfe mutation \xc3";
  auto t = plain().terms(bad);
  EXPECT_TRUE(has(t, "egfr"));
  EXPECT_TRUE(has(t, "mutation"));
}

TEST(Analyzer, UnknownStemmerIsAnError) {
  EXPECT_THROW(eagle::text::parse_stemmer("klingon"), std::exception);
  EXPECT_EQ(eagle::text::parse_stemmer("porter"), Stemmer::porter);
}
