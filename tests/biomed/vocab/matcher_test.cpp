// The entity matcher: the seed's letter-boundary rules by name,
// leftmost-longest selection, the case/ambiguity rules, offsets into non-ASCII text,
// and the Aho–Corasick matcher against its brute-force oracle on random data.
#include <gtest/gtest.h>

#include <random>

#include "eagle/biomed/vocab/entity_matcher.h"
#include "vocab_test_util.h"

using namespace eagle::biomed;
using eagle::biomed::testing::make_entity;

namespace {

struct Fixture {
  Vocabulary vocab;
  Fixture() {
    vocab.add(make_entity("NCBIGENE:1956", "EGFR", EntityType::gene,
                          {"ERBB1", "epidermal growth factor receptor"}));
    vocab.add(make_entity("NCBIGENE:3791", "KDR", EntityType::gene, {"VEGFR", "VEGFR2"}));
    vocab.add(make_entity("NCBIGENE:4233", "MET", EntityType::gene, {"HGFR", "c-Met"}));
    vocab.add(make_entity("NCBIGENE:5133", "PDCD1", EntityType::gene, {"PD-1", "PD1"}));
    vocab.add(make_entity("NCBIGENE:1499", "CTNNB1", EntityType::gene, {"β-catenin"}));
    vocab.add(make_entity("NCBIGENE:7157", "TP53", EntityType::gene, {"p53"}));
    vocab.add(make_entity("NCBIGENE:6418", "SET", EntityType::gene));
    vocab.add(make_entity("NCBIGENE:847", "CAT", EntityType::gene, {"catalase"}));
    vocab.add(make_entity("NCBIGENE:367", "AR", EntityType::gene, {"androgen receptor"}));
    vocab.add(make_entity("NCBIGENE:9999", "GENEX", EntityType::gene, {"OF", "HCC", "pan"}));
    vocab.add(make_entity("DOID:14330", "Parkinson's disease", EntityType::disease, {"PD"}));
    vocab.add(make_entity("DOID:9952", "acute lymphoblastic leukemia", EntityType::disease, {"ALL"}));
    vocab.add(make_entity("DOID:1324", "lung cancer", EntityType::disease));
    vocab.add(make_entity("DOID:3908", "non-small cell lung cancer", EntityType::disease, {"NSCLC"}));
    vocab.add(make_entity("DOID:1", "Strasse disease", EntityType::disease));
    vocab.add(make_entity("DRUGBANK:DB00619", "Imatinib", EntityType::drug, {"STI-571"}));
    vocab.add(make_entity("DRUGBANK:DB00002", "Cetuximab", EntityType::drug, {"Cétuximab"}));
    vocab.add(make_entity("DRUGBANK:DB01378", "Magnesium", EntityType::drug, {"Mg"}));
    vocab.add(make_entity("MESH:D02.065.277.456", "Imatinib Mesylate", EntityType::chemical));
    vocab.compile();
  }
  std::string key(const EntityMatch& m) const { return vocab.entity(m.entity).key; }
};

const Fixture& fx() {
  static const Fixture f;
  return f;
}

// "text@start:key" for each match: compact, order-sensitive comparisons.
std::vector<std::string> show(const std::vector<EntityMatch>& ms) {
  std::vector<std::string> out;
  for (const auto& m : ms) out.push_back(m.text + "@" + std::to_string(m.start) + ":" + fx().key(m));
  return out;
}

std::vector<std::string> run(std::string_view text, const MatcherOptions& options = {}) {
  EntityMatcher m(fx().vocab, options);
  auto ms = m.match_entities(text);
  for (const auto& x : ms) EXPECT_EQ(text.substr(x.start, x.end - x.start), x.text);
  return show(ms);
}

using V = std::vector<std::string>;

}  // namespace

// Seed "Letter-boundary UMLS matching" (umls._entity_pattern): EGFR doesn't fire inside VEGFR.
TEST(SeedLetterBoundary, EgfrDoesNotFireInsideVegfr) {
  EXPECT_EQ(run("VEGFR"), V({"VEGFR@0:NCBIGENE:3791"}));
  EXPECT_EQ(run("VEGFR and EGFR"), V({"VEGFR@0:NCBIGENE:3791", "EGFR@10:NCBIGENE:1956"}));
  EXPECT_EQ(run("xEGFR EGFRs"), V({}));
}

// Seed: MET doesn't fire inside metastatic.
TEST(SeedLetterBoundary, MetDoesNotFireInsideMetastatic) {
  EXPECT_EQ(run("metastatic disease"), V({}));
  EXPECT_EQ(run("METASTATIC, MET-positive"), V({"MET@12:NCBIGENE:4233"}));
}

// Seed: VEGFR still matches inside VEGFR1-3 (a digit after the name is a boundary).
TEST(SeedLetterBoundary, VegfrStillMatchesInsideVegfr1to3) {
  EXPECT_EQ(run("VEGFR1-3 inhibitors"), V({"VEGFR@0:NCBIGENE:3791"}));
  EXPECT_EQ(run("VEGFR2-selective"), V({"VEGFR2@0:NCBIGENE:3791"}));  // the longer alias wins
}

// Seed: PD-1 preserved (hyphen and digits are part of the name, not a boundary).
TEST(SeedLetterBoundary, Pd1KeptWhole) {
  EXPECT_EQ(run("anti-PD-1 therapy in PD"), V({"PD-1@5:NCBIGENE:5133", "PD@21:DOID:14330"}));
  EXPECT_EQ(run("xPD-1 PD-1a"), V({"PD@6:DOID:14330"}));  // a letter before / after the whole name
}

TEST(Matcher, ShortSurfacesNeedANonDigitNeighbour) {
  EXPECT_EQ(run("PD1 and PD12"), V({"PD1@0:NCBIGENE:5133"}));  // "PD" is not inside "PD12"
}

TEST(Matcher, LeftmostLongestNonOverlapping) {
  EXPECT_EQ(run("non-small cell lung cancer and lung cancer"),
            V({"non-small cell lung cancer@0:DOID:3908", "lung cancer@31:DOID:1324"}));
  EXPECT_EQ(run("imatinib mesylate"), V({"imatinib mesylate@0:MESH:D02.065.277.456"}));
}

// Seed match_drug_entities: drugs only, and a longer non-drug does not hide them.
TEST(Matcher, DrugEntitiesOnly) {
  EntityMatcher m(fx().vocab);
  EXPECT_EQ(show(m.match_drug_entities("imatinib mesylate (STI-571) in NSCLC with EGFR")),
            V({"imatinib@0:DRUGBANK:DB00619", "STI-571@19:DRUGBANK:DB00619"}));
}

// The ambiguity rule: everyday words are not genes unless written as symbols or
// qualified by a biomedical cue.
TEST(MatcherAmbiguity, BioasqLikeSentences) {
  EXPECT_EQ(run("the patients met the criteria for the study"), V({}));
  EXPECT_EQ(run("MET amplification in NSCLC"), V({"MET@0:NCBIGENE:4233", "NSCLC@21:DOID:3908"}));
  EXPECT_EQ(run("met amplification was found"), V({"met@0:NCBIGENE:4233"}));  // cue follows
  EXPECT_EQ(run("Met criteria were set by the cat"), V({}));                  // no cue
  EXPECT_EQ(run("c-Met and p53 expression"), V({"c-Met@0:NCBIGENE:4233", "p53@10:NCBIGENE:7157"}));
  EXPECT_EQ(run("expression of pan-cancer markers"), V({}));  // 2-byte alias, hyphenated prefix
  EXPECT_EQ(run("HCC patients"), V({}));                      // 3-letter alias: needs a cue even in capitals
  EXPECT_EQ(run("HCC mutation"), V({"HCC@0:NCBIGENE:9999"}));
  EXPECT_EQ(run("AR signaling, not G1"), V({"AR@0:NCBIGENE:367"}));  // 2-byte symbols need a cue
  EXPECT_EQ(run("AR"), V({}));
}

TEST(MatcherAmbiguity, OptionsAreConfigurable) {
  MatcherOptions no_cues;
  no_cues.context_cues.clear();
  EXPECT_EQ(run("met amplification", no_cues), V({}));
  MatcherOptions strict;
  strict.stop_words.push_back("EGFR");  // capitals still match a stop word...
  strict.excluded.push_back("VEGFR");   // ...an excluded surface never does
  EXPECT_EQ(run("EGFR and VEGFR", strict), V({"EGFR@0:NCBIGENE:1956"}));
  MatcherOptions before;
  before.cue_words_before = 2;
  EXPECT_EQ(run("mutant met", before), V({"met@7:NCBIGENE:4233"}));
  EXPECT_EQ(run("mutant met"), V({}));
}

// Acronyms and short codes of non-gene entities match only as spelled.
TEST(Matcher, CaseSensitiveAcronyms) {
  EXPECT_EQ(run("children with ALL; all patients"), V({"ALL@14:DOID:9952"}));
  EXPECT_EQ(run("Mg 5 mg"), V({"Mg@0:DRUGBANK:DB01378"}));
}

TEST(MatcherOffsets, NonAsciiText) {
  // "β" and "é" are two bytes each; offsets are bytes of the original text.
  const std::string text = "Le cétuximab cible l'EGFR; la Β-CATENIN et la β-catenin aussi.";
  auto ms = run(text);
  EXPECT_EQ(ms, V({"cétuximab@3:DRUGBANK:DB00002", "EGFR@22:NCBIGENE:1956", "Β-CATENIN@31:NCBIGENE:1499",
                   "β-catenin@48:NCBIGENE:1499"}));
  // Case folding that changes length ("ß" -> "ss") and white-space runs.
  EXPECT_EQ(run("Die Straße disease; STRASSE  DISEASE"),
            V({"Straße disease@4:DOID:1", "STRASSE  DISEASE@21:DOID:1"}));
  EXPECT_EQ(run("non-small cell\n\tlung cancer"), V({"non-small cell\n\tlung cancer@0:DOID:3908"}));
  // Unicode hyphens are hyphens.
  EXPECT_EQ(run("anti‐PD‐1"), V({"PD‐1@7:NCBIGENE:5133"}));
  // Invalid UTF-8 is a boundary, never a crash.
  EXPECT_EQ(run("\xff"
                "EGFR\xc3"),
            V({"EGFR@1:NCBIGENE:1956"}));
  EXPECT_EQ(run("é"
                "EGFR"),
            V({}));  // a non-ASCII letter is a letter
}

TEST(Matcher, JsonShape) {
  EntityMatcher m(fx().vocab);
  auto j = matches_to_json(fx().vocab, m.match_entities("Imatinib for EGFR"));
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0], (nlohmann::json{{"text", "Imatinib"},
                                  {"start", 0},
                                  {"end", 8},
                                  {"type", "drug"},
                                  {"name", "Imatinib"},
                                  {"id", "DRUGBANK:DB00619"}}));
  EXPECT_EQ(j[1]["type"], "gene");
  EXPECT_EQ(j[1]["id"], "NCBIGENE:1956");
}

TEST(Matcher, SeesEntitiesAddedAfterCompile) {
  Vocabulary v;
  v.add(make_entity("DRUGBANK:DB1", "Foonib", EntityType::drug));
  v.compile();
  v.add(make_entity("BRAND:Barvia", "Barvia", EntityType::drug));  // not compiled yet
  EntityMatcher m(v);                                              // builds a private dictionary
  EXPECT_EQ(m.match_entities("Foonib (Barvia)").size(), 2u);
}

// The automaton against the brute-force oracle (std::string::find of every surface,
// same rules) on random dictionaries and texts over a small, collision-rich alphabet.
TEST(MatcherOracle, RandomDictionariesAndTexts) {
  std::mt19937 rng(20240601);
  const std::vector<std::string> units = {"a", "b", "A", "B", "1", "-", " ", "é", "ß", "ss", "x"};
  const std::vector<std::string> text_units = {"a", "b",  "A", "B",  "1",    "-",  " ",    "é", "É",
                                               "ß", "ss", "x", "\n", "\xff", "  ", "\xc3", "β"};
  auto pick = [&](const std::vector<std::string>& from, size_t lo, size_t hi) {
    std::string s;
    size_t n = std::uniform_int_distribution<size_t>(lo, hi)(rng);
    for (size_t i = 0; i < n; ++i) s += from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)];
    return s;
  };
  const EntityType types[] = {EntityType::drug, EntityType::gene, EntityType::disease, EntityType::chemical};
  size_t compared = 0, with_matches = 0;
  for (int round = 0; round < 40; ++round) {
    Vocabulary v;
    for (int e = 0; e < 25; ++e) {
      std::vector<std::string> aliases;
      for (int k = 0; k < 2; ++k) aliases.push_back(pick(units, 1, 5));
      v.add(make_entity("K:" + std::to_string(e), pick(units, 1, 5), types[rng() % 4], aliases));
    }
    // find() before and after compile agree (the pending overlay has the same precedence).
    std::vector<std::optional<EntityId>> before;
    std::vector<std::string> probes;
    for (int k = 0; k < 30; ++k) probes.push_back(pick(units, 1, 4));
    for (const auto& p : probes) before.push_back(v.find(p));
    v.compile();
    for (size_t k = 0; k < probes.size(); ++k) EXPECT_EQ(v.find(probes[k]), before[k]) << probes[k];

    MatcherOptions options;
    options.ambiguous_words = {"ab"};
    options.stop_words = {"ba"};
    options.context_cues = {"x", "ab*"};
    options.cue_words_before = round % 3;
    EntityMatcher fast(v, options);
    BruteForceMatcher slow(fast);
    for (int t = 0; t < 60; ++t) {
      const std::string text = pick(text_units, 0, 40);
      auto a = fast.match_entities(text);
      auto b = slow.match_entities(text);
      ASSERT_EQ(a.size(), b.size()) << "text: '" << text << "'";
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].start, b[i].start);
        EXPECT_EQ(a[i].end, b[i].end);
        EXPECT_EQ(a[i].entity, b[i].entity);
        EXPECT_EQ(a[i].text, b[i].text);
      }
      auto da = fast.match_drug_entities(text);
      auto db = slow.match_drug_entities(text);
      ASSERT_EQ(da.size(), db.size()) << "text: '" << text << "'";
      ++compared;
      with_matches += !a.empty();
    }
  }
  EXPECT_EQ(compared, 2400u);
  EXPECT_GT(with_matches, 300u);  // the data exercise the matcher, not just empty answers
}
