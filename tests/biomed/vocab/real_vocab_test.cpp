// The full shared vocabulary (DrugBank, human genes, MeSH, DOID, UMLS sample): the
// seed's letter-boundary examples and BioASQ-like sentences on real data, the oracle
// on real text, and the cache's load time. Needs ../shared/data (fails, never skips).
#include <gtest/gtest.h>
#include "support/build_paths.h"
#include <unistd.h>

#include <chrono>

#include "eagle/biomed/vocab/entity_matcher.h"
#include "eagle/biomed/vocab/vocabulary.h"
#include "shared_data.h"

namespace fs = std::filesystem;
using namespace eagle::biomed;

namespace {

fs::path vocab_dir() {
  return eagle::testing::shared_data() / "vocab";
}

// Kept in the build folder (not the repository) so reruns load it instead of parsing.
fs::path cache_file() {
  return fs::path(EAGLE_BIN_DIR).parent_path() / "test_data" / "biomed_vocab.bin";
}

class RealVocabulary : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!fs::is_directory(vocab_dir())) return;
    vocab_ =
        new Vocabulary(Vocabulary::load_cached(default_vocabulary_paths(vocab_dir().string()), cache_file()));
    matcher_ = new EntityMatcher(*vocab_);
  }
  static void TearDownTestSuite() {
    delete matcher_;
    delete vocab_;
    matcher_ = nullptr;
    vocab_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(fs::is_directory(vocab_dir()))
        << "shared data folder missing: " << vocab_dir() << " (tests need ../shared/data; see its README.md)";
    ASSERT_NE(vocab_, nullptr);
  }
  static std::string key(const EntityMatch& m) { return vocab_->entity(m.entity).key; }
  static std::vector<EntityMatch> match(std::string_view s) { return matcher_->match_entities(s); }
  static const EntityMatch* find_text(const std::vector<EntityMatch>& ms, std::string_view text) {
    for (const auto& m : ms)
      if (m.text == text) return &m;
    return nullptr;
  }

  static Vocabulary* vocab_;
  static EntityMatcher* matcher_;
};
Vocabulary* RealVocabulary::vocab_ = nullptr;
EntityMatcher* RealVocabulary::matcher_ = nullptr;

}  // namespace

TEST_F(RealVocabulary, LoadsEverySource) {
  const auto& st = vocab_->stats();
  EXPECT_EQ(st.drugbank_drugs, 13475u);
  EXPECT_EQ(st.genes, 77614u);
  EXPECT_GT(st.mesh_terms, 10000u);
  EXPECT_GT(st.obo_terms, 5000u);
  EXPECT_EQ(st.umls_concepts, 2u);
  EXPECT_GT(vocab_->size(), 100000u);
  EXPECT_GT(st.surfaces, 250000u);
}

TEST_F(RealVocabulary, ImatinibIsTheDrugBankDrug) {
  auto id = vocab_->find("imatinib");
  ASSERT_TRUE(id);
  EXPECT_EQ(vocab_->entity(*id).key, "DRUGBANK:DB00619");
  EXPECT_EQ(vocab_->entity(*id).type, EntityType::drug);
  EXPECT_FALSE(vocab_->entity(*id).smiles.empty());
  auto ms = matcher_->match_drug_entities("Imatinib mesylate or imatinib for CML");
  ASSERT_FALSE(ms.empty());
  EXPECT_EQ(key(ms.back()), "DRUGBANK:DB00619");
}

TEST_F(RealVocabulary, EgfrIsAGene) {
  auto id = vocab_->find("EGFR");
  ASSERT_TRUE(id);
  EXPECT_EQ(vocab_->entity(*id).type, EntityType::gene);
  EXPECT_EQ(vocab_->entity(*id).key, "NCBIGENE:1956");
}

// Seed "Letter-boundary UMLS matching" on the real vocabulary.
TEST_F(RealVocabulary, SeedLetterBoundaryExamples) {
  auto ms = match("Inhibitors of VEGFR1-3 and EGFR, not metastatic MET-negative cases");
  const EntityMatch* vegfr = nullptr;
  for (const auto& m : ms)
    if (m.start == 14) vegfr = &m;
  ASSERT_NE(vegfr, nullptr) << matches_to_json(*vocab_, ms).dump();
  EXPECT_TRUE(vegfr->text.starts_with("VEGFR")) << vegfr->text;  // "VEGFR1" or "VEGFR"
  EXPECT_EQ(vegfr->type, EntityType::gene);
  const EntityMatch* egfr = find_text(ms, "EGFR");
  ASSERT_NE(egfr, nullptr);
  EXPECT_EQ(key(*egfr), "NCBIGENE:1956");
  for (const auto& m : ms) EXPECT_FALSE(m.start > 14 && m.start < 19) << "nothing inside VEGFR: " << m.text;
  EXPECT_EQ(find_text(match("metastatic"), "met"), nullptr);
  EXPECT_TRUE(match("metastatic").empty() || match("metastatic")[0].text == "metastatic");
  auto pd1 = match("anti-PD-1 antibodies");
  ASSERT_NE(find_text(pd1, "PD-1"), nullptr) << matches_to_json(*vocab_, pd1).dump();
  EXPECT_EQ(vocab_->entity(find_text(pd1, "PD-1")->entity).name, "PDCD1");
}

TEST_F(RealVocabulary, BioasqLikeSentences) {
  for (const char* s : {"the patients met the criteria for the study", "all of the mice were set in a cell",
                        "it was not a large impact for the rest of us", "a 5 mg dose of the same drug"}) {
    for (const auto& m : match(s))
      EXPECT_NE(m.type, EntityType::gene) << "'" << s << "': " << m.text << " -> " << key(m);
  }
  auto ms = match("MET amplification in NSCLC");
  ASSERT_FALSE(ms.empty());
  EXPECT_EQ(ms[0].text, "MET");
  EXPECT_EQ(key(ms[0]), "NCBIGENE:4233");
  const EntityMatch* nsclc = find_text(ms, "NSCLC");
  ASSERT_NE(nsclc, nullptr);
  EXPECT_EQ(nsclc->type, EntityType::disease);
}

TEST_F(RealVocabulary, AgreesWithTheOracleOnRealText) {
  BruteForceMatcher oracle(*matcher_);
  for (const char* s :
       {"Pembrolizumab versus chemotherapy for PD-L1-positive non-small-cell lung cancer (KEYNOTE-024).",
        "BRAF V600E mutations in melanoma respond to vemurafenib; β-catenin and TNF-α signaling.",
        "Duchenne muscular dystrophy (DMD) is caused by mutations in the dystrophin gene.",
        "Metformin lowers HbA1c in type 2 diabetes mellitus; the patients met the criteria."}) {
    auto a = matcher_->match_entities(s);
    auto b = oracle.match_entities(s);
    ASSERT_EQ(a.size(), b.size()) << s;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].start, b[i].start) << s;
      EXPECT_EQ(a[i].end, b[i].end) << s;
      EXPECT_EQ(a[i].entity, b[i].entity) << s;
    }
  }
}

// The second load comes from the cache, not a rebuild (how fast is bench_matcher's
// figure, not a test's).
TEST_F(RealVocabulary, TheCacheIsLoadedNotRebuiltAndMatchesTheSources) {
  CacheReport r;
  auto v = Vocabulary::load_cached(default_vocabulary_paths(vocab_dir().string()), cache_file(), &r);
  EXPECT_EQ(r.outcome, CacheOutcome::loaded) << r.reason;
  EXPECT_EQ(v.size(), vocab_->size());
  EXPECT_EQ(v.find("imatinib"), vocab_->find("imatinib"));
}
