// Document profile (seed doc_profile.py, TDR 3-tier fusion): general text must not be
// routed through PubMedBERT.
#include "eagle/biomed/ingest/doc_profile.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "ingest_test_support.h"

using namespace eagle::biomed;
using eagle::biomed::testing::present;
using eagle::biomed::testing::shared_file;

namespace {

const char* kAbstract =
    "Adalimumab, a fully human monoclonal antibody against tumor necrosis factor, was evaluated in a "
    "randomized, double-blind, placebo-controlled trial of 619 patients with active rheumatoid arthritis "
    "despite methotrexate therapy. Patients received 40 mg subcutaneously every other week. Clinical "
    "response and radiographic progression were assessed at week 52. Serious infections and adverse events "
    "were recorded. Adalimumab inhibited structural damage and improved physical function.";

const char* kMemo =
    "Hi all, a quick reminder that the quarterly planning review moves to Thursday at 10am in the third "
    "floor meeting room. Please send your updated budget forecasts and travel expense reports to finance "
    "by Wednesday noon. The marketing team will present the new campaign results and the sales pipeline for "
    "the northern region. Lunch will be provided. Thanks, Karen, Office of the COO.";

const char* kReleaseNotes =
    "Version 4.2 adds incremental backups, a faster search index and a dark theme for the dashboard. "
    "The command line tool now accepts a configuration file, and the upload limit was raised to 2 GB. "
    "We fixed a crash when two users renamed the same folder and a memory leak in the sync service. "
    "Upgrade with the package manager; the database migrates automatically on first start.";

}  // namespace

TEST(DocProfile, BiomedicalAbstractVersusCorporateMemo) {
  const auto bio = classify_document_profile(kAbstract);
  EXPECT_EQ(bio.profile, DocumentProfile::biomedical) << "density " << bio.density;
  EXPECT_GT(bio.density, 10.0);
  const auto memo = classify_document_profile(kMemo);
  EXPECT_EQ(memo.profile, DocumentProfile::general) << "density " << memo.density;
  EXPECT_LT(memo.density, 1.0);
  const auto notes = classify_document_profile(kReleaseNotes);
  EXPECT_EQ(notes.profile, DocumentProfile::general) << "density " << notes.density;
  EXPECT_EQ(document_profile_name(bio.profile), "biomedical");
  EXPECT_EQ(document_profile_name(memo.profile), "general");
}

TEST(DocProfile, EntityCountFromTheMatcherRaisesDensity) {
  const std::string text = "Compound HMPL-013 and fruquintinib were compared with sorafenib in study 7.";
  const auto without = classify_document_profile(text);
  // The matcher's count is used when it exceeds the built-in cue words.
  const auto with = classify_document_profile(text, [](std::string_view) { return size_t{3}; });
  EXPECT_EQ(with.entities, 3u);
  EXPECT_GT(with.density, without.density);
  EXPECT_EQ(with.profile, DocumentProfile::biomedical);
  // The threshold is an option.
  EXPECT_EQ(classify_document_profile(kAbstract, {}, {.min_density = 90.0}).profile,
            DocumentProfile::general);
}

TEST(DocProfile, TooShortOrEmptyIsGeneral) {
  EXPECT_EQ(classify_document_profile("").profile, DocumentProfile::general);
  EXPECT_EQ(classify_document_profile("").tokens, 0u);
  EXPECT_EQ(classify_document_profile("tumor").profile, DocumentProfile::general);  // below min_tokens
}

TEST(DocProfile, SciFactAbstractsAreBiomedical) {
  // The threshold's calibration: 95% of the 5,183 SciFact abstracts score above 2 cues
  // per 100 tokens; the rest are mostly statistics, software and policy papers.
  const auto corpus = shared_file("scifact/corpus.jsonl");
  ASSERT_TRUE(present(corpus));
  std::ifstream in(corpus);
  std::string line;
  size_t n = 0, biomedical = 0;
  while (std::getline(in, line)) {
    const auto doc = nlohmann::json::parse(line);
    const std::string text = doc.value("title", "") + " " + doc.value("text", "");
    ++n;
    if (classify_document_profile(text).profile == DocumentProfile::biomedical) ++biomedical;
  }
  ASSERT_EQ(n, 5183u);
  EXPECT_GE(biomedical * 100, n * 94) << biomedical << " of " << n << " abstracts classified biomedical";
}
