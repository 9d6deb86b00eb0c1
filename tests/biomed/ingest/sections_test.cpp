// Paper section detection (seed: chunker._SECTION_ALIASES).
#include "eagle/biomed/ingest/sections.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "ingest_test_support.h"

using namespace eagle::biomed;
using eagle::biomed::testing::present;
using eagle::biomed::testing::shared_file;

namespace {
void expect_spans_point_into(std::string_view text, const std::vector<SectionSpan>& spans) {
  for (const auto& s : spans) {
    ASSERT_LE(s.end, text.size());
    EXPECT_EQ(text.substr(s.begin, s.end - s.begin), s.text);
    EXPECT_FALSE(s.text.empty());
  }
}
}  // namespace

TEST(Sections, CanonicalAliases) {
  EXPECT_EQ(canonical_section("BACKGROUND"), "background");
  EXPECT_EQ(canonical_section("Introduction"), "background");
  EXPECT_EQ(canonical_section("Objectives:"), "objective");
  EXPECT_EQ(canonical_section("Aims"), "objective");
  EXPECT_EQ(canonical_section("Purpose"), "objective");
  EXPECT_EQ(canonical_section("Materials and Methods"), "methods");
  EXPECT_EQ(canonical_section("Patients & Methods"), "methods");
  EXPECT_EQ(canonical_section("2. Methods"), "methods");
  EXPECT_EQ(canonical_section("## Study design"), "methods");
  EXPECT_EQ(canonical_section("DESIGN, SETTING, AND PARTICIPANTS"), "methods");
  EXPECT_EQ(canonical_section("Findings"), "results");
  EXPECT_EQ(canonical_section("III. Results"), "results");
  EXPECT_EQ(canonical_section("Discussion"), "discussion");
  EXPECT_EQ(canonical_section("CONCLUSIONS"), "conclusion");
  EXPECT_EQ(canonical_section("Interpretation"), "conclusion");
  EXPECT_EQ(canonical_section("Abstract"), "abstract");
  // Label cues: the regulatory rerank's section_cues.
  EXPECT_EQ(canonical_section("1 INDICATIONS AND USAGE"), "indications_and_usage");
  EXPECT_EQ(canonical_section("Dosage & Administration"), "dosage_and_administration");
  EXPECT_EQ(canonical_section("Warnings"), "warnings");
  EXPECT_EQ(canonical_section("PRECAUTIONS"), "precautions");
  EXPECT_EQ(canonical_section("4 CONTRAINDICATIONS"), "contraindications");
  EXPECT_EQ(canonical_section("6 ADVERSE REACTIONS"), "adverse_reactions");
  EXPECT_EQ(canonical_section("5 WARNINGS AND PRECAUTIONS"), "warnings_and_precautions");
  // Not headings.
  EXPECT_EQ(canonical_section("5.1 Serious Infections"), "");
  EXPECT_EQ(canonical_section("Lorem ipsum"), "");
  EXPECT_EQ(canonical_section(""), "");
  EXPECT_EQ(normalise_heading("5.1  Serious Infections:"), "serious infections");
}

TEST(Sections, StructuredAbstractWithColons) {
  const std::string text =
      "BACKGROUND: Statins lower LDL. OBJECTIVE: To test X. METHODS: We randomized 200 patients. "
      "RESULTS: LDL fell by 40%. CONCLUSIONS: X works.";
  const auto spans = split_paper_sections(text);
  ASSERT_EQ(spans.size(), 5u);
  const std::vector<std::string> sections = {"background", "objective", "methods", "results", "conclusion"};
  for (size_t i = 0; i < spans.size(); ++i) EXPECT_EQ(spans[i].section, sections[i]);
  EXPECT_EQ(spans[0].heading, "BACKGROUND");
  EXPECT_EQ(spans[0].text, "Statins lower LDL.");
  EXPECT_EQ(spans[2].text, "We randomized 200 patients.");
  EXPECT_EQ(spans[4].heading, "CONCLUSIONS");
  EXPECT_EQ(spans[4].text, "X works.");
  expect_spans_point_into(text, spans);
}

TEST(Sections, UppercaseLabelsWithoutColonsAsInBeir) {
  const std::string text =
      "BACKGROUND Patients on dialysis have high risk. METHODS AND RESULTS 50 patients were recruited. "
      "The RESULTS were clear. CONCLUSIONS A total of 12 events. FUNDING None.";
  const auto spans = split_paper_sections(text);
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_EQ(spans[0].section, "background");
  EXPECT_EQ(spans[1].heading, "METHODS AND RESULTS");  // the longest known label
  EXPECT_EQ(spans[1].section, "methods");
  EXPECT_EQ(spans[1].text, "50 patients were recruited. The RESULTS were clear.");  // mid-sentence: no split
  EXPECT_EQ(spans[2].section, "conclusion");
  EXPECT_EQ(spans[2].text, "A total of 12 events.");
  EXPECT_EQ(spans[3].section, "funding");
  expect_spans_point_into(text, spans);
  // A lower-case body after an upper-case word is prose, not a label.
  EXPECT_EQ(split_paper_sections("RESULTS were mixed.").size(), 1u);
  EXPECT_EQ(split_paper_sections("RESULTS were mixed.")[0].section, "");
}

TEST(Sections, HeadingLinesAndPreamble) {
  const std::string text =
      "A study of statins.\n\nIntroduction\nStatins are common.\n\n2. Materials and Methods\nWe did things.\n"
      "## Results\nThings happened; the results: good.\nDiscussion:\nWe discuss.\n";
  const auto spans = split_paper_sections(text);
  ASSERT_EQ(spans.size(), 5u);
  EXPECT_EQ(spans[0].section, "");
  EXPECT_EQ(spans[0].text, "A study of statins.");
  EXPECT_EQ(spans[1].section, "background");
  EXPECT_EQ(spans[1].heading, "Introduction");
  EXPECT_EQ(spans[2].section, "methods");
  EXPECT_EQ(spans[2].heading, "2. Materials and Methods");
  EXPECT_EQ(spans[3].section, "results");
  EXPECT_EQ(spans[3].heading, "Results");
  EXPECT_EQ(spans[3].text, "Things happened; the results: good.");  // "the results:" mid-sentence stays
  EXPECT_EQ(spans[4].section, "discussion");
  EXPECT_EQ(spans[4].text, "We discuss.");
  expect_spans_point_into(text, spans);
}

TEST(Sections, UnstructuredTextIsOneSpan) {
  const auto spans = split_paper_sections("  Plain abstract without headings. It has two sentences.  ");
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].section, "");
  EXPECT_EQ(spans[0].text, "Plain abstract without headings. It has two sentences.");
  EXPECT_EQ(spans[0].begin, 2u);
  EXPECT_TRUE(split_paper_sections("").empty());
  EXPECT_TRUE(split_paper_sections("METHODS:   ").empty());  // empty bodies are dropped
}

TEST(Sections, SciFactStructuredAbstractsSplit) {
  // 448 SciFact abstracts start with "BACKGROUND " (BEIR keeps the labels, drops the colons).
  const auto corpus = shared_file("scifact/corpus.jsonl");
  ASSERT_TRUE(present(corpus));
  std::ifstream in(corpus);
  std::string line;
  size_t structured = 0, split = 0, with_results = 0;
  while (std::getline(in, line)) {
    const auto doc = nlohmann::json::parse(line);
    const std::string text = doc.at("text").get<std::string>();
    if (text.rfind("BACKGROUND ", 0) != 0) continue;
    ++structured;
    const auto spans = split_paper_sections(text);
    expect_spans_point_into(text, spans);
    if (spans.size() >= 2 && spans[0].section == "background") ++split;
    for (const auto& s : spans)
      if (s.section == "results") {
        ++with_results;
        break;
      }
  }
  EXPECT_EQ(structured, 448u);
  EXPECT_EQ(split, structured) << "every BACKGROUND abstract has a further section";
  // The rest label results "METHODS AND RESULTS" / "METHODS AND FINDINGS" (methods).
  EXPECT_GT(with_results, structured * 3 / 4);
}
