// The answer stage's text parts: sentences, the extractive answer, citations.
#include <gtest/gtest.h>

#include "eagle/answer/citations.h"
#include "eagle/answer/extractive.h"
#include "eagle/answer/sentences.h"
#include "eagle/text/analyzer.h"

using namespace eagle::answer;

namespace {

std::vector<std::string> texts(const std::vector<Sentence>& s) {
  std::vector<std::string> out;
  for (const auto& x : s) out.push_back(x.text);
  return out;
}

const eagle::text::Analyzer kAnalyzer;
AnalyzeFn analyze() {
  return [](std::string_view t) { return kAnalyzer.terms(t); };
}

// Every analysed term of the question, weight 1 (idf is the engine's business).
QuestionTerms flat_terms(const std::string& q) {
  QuestionTerms t;
  for (const auto& term : kAnalyzer.terms(q)) t.terms.emplace_back(term, 1.0);
  return t;
}

}  // namespace

TEST(Sentences, AbbreviationsInitialsAndNumbersDoNotEndASentence) {
  EXPECT_EQ(texts(split_sentences("Statins, e.g. atorvastatin, lower LDL. Smith et al. (2010) found no effect. See Fig. 2 "
                                  "for doses of 2.5 mg. J. Smith agreed. Is it safe? Yes!")),
            (std::vector<std::string>{"Statins, e.g. atorvastatin, lower LDL.", "Smith et al. (2010) found no effect.",
                                      "See Fig. 2 for doses of 2.5 mg.", "J. Smith agreed.", "Is it safe?", "Yes!"}));
  // Lines stay apart (headings, table rows); a stop before a lower-case word does not split.
  const auto s = split_sentences("12.3 Pharmacokinetics\nRenal Impairment: no adjustment is needed. vs. placebo it was.\n\nrow | 1");
  EXPECT_EQ(texts(s), (std::vector<std::string>{"12.3 Pharmacokinetics",
                                                "Renal Impairment: no adjustment is needed. vs. placebo it was.", "row | 1"}));
  EXPECT_EQ(s[0].line, 0u);
  EXPECT_EQ(s[2].line, 3u);
  EXPECT_TRUE(split_sentences("").empty());
  EXPECT_TRUE(split_sentences("\n \n").empty());
}

TEST(Extractive, PicksTheSentencesThatAnswerAndCitesTheirPassage) {
  const std::vector<Passage> passages = {
      {1, "12 CLINICAL PHARMACOLOGY\nLIPITOR is a lipid-lowering drug. Renal Impairment: Renal disease has no influence on "
          "the plasma concentrations of atorvastatin; thus, dose adjustment in patients with renal impairment is not "
          "necessary."},
      {2, "Rhabdomyolysis with acute renal failure has been reported. Patients should tell their doctor about muscle pain."},
      {3, "Store at room temperature."}};
  const auto a = extract_answer(flat_terms("atorvastatin dosing in renal impairment"), passages, analyze(), {});
  ASSERT_FALSE(a.quotes.empty());
  EXPECT_EQ(a.quotes[0].passage, 1u);
  EXPECT_NE(a.quotes[0].text.find("dose adjustment in patients with renal impairment is not necessary"), std::string::npos);
  EXPECT_NE(a.text.find("is not necessary. [1]"), std::string::npos) << a.text;
  // Neither the heading nor an unrelated sentence is quoted.
  EXPECT_EQ(a.text.find("CLINICAL PHARMACOLOGY"), std::string::npos) << a.text;
  EXPECT_EQ(a.text.find("room temperature"), std::string::npos) << a.text;
  EXPECT_EQ(a.text.find("lipid-lowering"), std::string::npos) << a.text;
  // Deterministic.
  EXPECT_EQ(extract_answer(flat_terms("atorvastatin dosing in renal impairment"), passages, analyze(), {}).text, a.text);
}

TEST(Extractive, NothingRelevantSaysSoAndQuotesNothing) {
  const std::vector<Passage> passages = {{1, "Store at room temperature. Keep out of reach of children."}};
  const auto a = extract_answer(flat_terms("quarterly budget meeting"), passages, analyze(), {});
  EXPECT_TRUE(a.quotes.empty());
  EXPECT_EQ(a.text, kNoAnswerText);
  EXPECT_EQ(extract_answer(flat_terms("budget"), {}, analyze(), {}).text, kNoAnswerText);
}

TEST(Extractive, LimitsRepeatsAndPassagesThatMayNotBeQuoted) {
  const std::string s = "Imatinib inhibits BCR-ABL in chronic myeloid leukemia.";
  std::vector<Passage> passages = {{1, s + " " + s + " Imatinib inhibits BCR-ABL kinase in chronic myeloid leukemia cells."},
                                   {2, "Imatinib inhibits BCR-ABL in leukemia: a review. Imatinib and BCR-ABL.", false},
                                   {3, "BCR-ABL imatinib chronic myeloid leukemia response."}};
  ExtractiveOptions o;
  o.max_sentences = 3;
  o.per_passage = 1;
  const auto a = extract_answer(flat_terms("imatinib BCR-ABL chronic myeloid leukemia"), passages, analyze(), o);
  for (const auto& q : a.quotes) EXPECT_NE(q.passage, 2u) << "a reference list was quoted";
  std::map<size_t, int> per;
  for (const auto& q : a.quotes) ++per[q.passage];
  for (const auto& [p, n] : per) EXPECT_LE(n, 1) << p;
  EXPECT_EQ(a.quotes.size(), 2u) << a.text;  // passage 1 once (its repeat is not taken), passage 3
  EXPECT_EQ(a.quotes[0].passage, 1u);        // passage order
  EXPECT_EQ(a.quotes[1].passage, 3u);
}

TEST(Citations, BracketsListsRangesAndNumbersNoPassageHas) {
  auto c = parse_citations("A [2]. B [1][3]. C [1, 2]. D [2-3] and [3\xE2\x80\x93" "4]. Not [a] nor [see 2] nor [9].", 3);
  EXPECT_EQ(c.numbers, (std::vector<size_t>{2, 1, 3}));
  EXPECT_EQ(c.dropped, (std::vector<size_t>{4, 9}));
  EXPECT_TRUE(parse_citations("no citations", 3).numbers.empty());
  EXPECT_TRUE(parse_citations("[1-1000000]", 3).numbers.empty());  // an absurd range is not a citation
  EXPECT_TRUE(parse_citations("[", 3).numbers.empty());
}

#include "eagle/answer/evidence.h"

TEST(Evidence, SignalsCoverageTopTermEntitiesAndTheLevels) {
  QuestionTerms q;
  q.terms = {{"imatinib", 5.0}, {"leukemia", 2.0}, {"treat", 1.0}};
  const auto all = hit_signals(q, {"imatinib", "leukemia", "treat", "other"}, "imatinib treats leukemia");
  EXPECT_DOUBLE_EQ(all.coverage, 1.0);
  EXPECT_DOUBLE_EQ(all.top_term, 1.0);
  EXPECT_DOUBLE_EQ(all.entities, all.coverage);  // no entities: neutral
  const auto none = hit_signals(q, {"weather"}, "weather");
  EXPECT_DOUBLE_EQ(none.coverage, 0.0);
  EXPECT_DOUBLE_EQ(none.top_term, 0.0);
  const auto part = hit_signals(q, {"leukemia"}, "leukemia");
  EXPECT_DOUBLE_EQ(part.coverage, 2.0 / 8.0);
  q.entities = {"imatinib", "bcr-abl"};
  EXPECT_DOUBLE_EQ(hit_signals(q, {"imatinib"}, "imatinib blocks kinases").entities, 0.5);
  // Compounds count through their parts.
  EXPECT_EQ(fold_question_terms({"met-amplifi", "met", "amplifi", "metamplifi", "nsclc", "met"}),
            (std::vector<std::string>{"met", "amplifi", "nsclc"}));

  EvidenceOptions o;
  const AnalyzeFn words = [](std::string_view t) {
    std::vector<std::string> out;
    std::string w;
    for (char c : std::string(t) + " ")
      if (c == ' ') {
        if (!w.empty()) out.push_back(w);
        w.clear();
      } else {
        w += c;
      }
    return out;
  };
  QuestionTerms q2;
  q2.terms = {{"imatinib", 5.0}, {"leukemia", 2.0}};
  const auto strong = assess_evidence(q2, {"imatinib leukemia", "x"}, words, o);
  EXPECT_EQ(strong.level, "strong");
  EXPECT_EQ(strong.per_hit.size(), 2u);
  EXPECT_GT(strong.per_hit[0], strong.per_hit[1]);
  EXPECT_EQ(assess_evidence(q2, {"weather report", "x"}, words, o).level, "none");
  EXPECT_EQ(assess_evidence(q2, {}, words, o).level, "none");
  // Below min_coverage is none whatever the weights say.
  EvidenceOptions lenient = o;
  lenient.bias = 10;
  EXPECT_EQ(assess_evidence(q2, {"x"}, words, lenient).level, "none");
  // Deterministic, and p in (0, 1).
  const auto again = assess_evidence(q2, {"imatinib leukemia", "x"}, words, o);
  EXPECT_EQ(again.per_hit, strong.per_hit);
  for (double p : strong.per_hit) EXPECT_TRUE(p > 0 && p < 1);
}
