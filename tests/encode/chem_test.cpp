#include "eagle/encode/chem/chem.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "eagle/core/error.h"

namespace fs = std::filesystem;
using namespace eagle::encode::chem;

namespace {
fs::path shared_data() {
  const char* env = std::getenv("EAGLE_SHARED_DATA");
  return env && *env ? fs::path(env) : fs::path(EAGLE_SHARED_DATA);
}
}  // namespace

TEST(Chem, CanonicalSmilesAndFingerprints) {
  auto a = Molecule::from_smiles("OC(=O)c1ccccc1OC(C)=O");  // aspirin, written oddly
  auto b = Molecule::from_smiles("CC(=O)Oc1ccccc1C(=O)O");
  EXPECT_EQ(a.canonical_smiles(), b.canonical_smiles());
  auto fa = a.morgan(), fb = b.morgan();
  EXPECT_EQ(fa.words.size(), 2048u / 64);
  EXPECT_DOUBLE_EQ(tanimoto(fa, fb), 1.0);
  auto ethanol = Molecule::from_smiles("CCO").morgan();
  EXPECT_LT(tanimoto(fa, ethanol), 0.2);
  EXPECT_GT(fa.popcount, 0u);
}

TEST(Chem, InvalidSmilesIsAClearErrorNamingIt) {
  try {
    Molecule::from_smiles("C1CC(");
    FAIL();
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find("C1CC("), std::string::npos);
    EXPECT_EQ(e.code(), eagle::ErrorCode::invalid_argument);
  }
  EXPECT_THROW(Molecule::from_smiles(""), eagle::Error);
  EXPECT_THROW(Molecule::from_smarts("[C"), eagle::Error);
}

TEST(Chem, SubstructureMatch) {
  auto benzoic = Molecule::from_smiles("OC(=O)c1ccccc1");
  auto carboxylic = Molecule::from_smarts("C(=O)[OX2H1]");
  auto ring = Molecule::from_smarts("c1ccccc1");
  EXPECT_TRUE(benzoic.has_substructure(carboxylic));
  EXPECT_TRUE(benzoic.has_substructure(ring));
  EXPECT_FALSE(Molecule::from_smiles("CCO").has_substructure(ring));
}

TEST(Chem, DrugBankStructuresParseAndImatinibFindsNilotinib) {
  const auto csv = shared_data() / "vocab" / "drugbank_structures.csv";
  ASSERT_TRUE(fs::exists(csv)) << "shared data missing: " << csv;
  CompoundIndex idx;
  auto rep = idx.load_csv(csv);
  EXPECT_EQ(rep.rows, 11295u);
  EXPECT_EQ(rep.parsed + rep.failed.size(), rep.rows);
  EXPECT_GT(rep.parsed, 11000u);  // failures are counted and named, not fatal
  for (const auto& f : rep.failed) EXPECT_FALSE(f.empty());
  const Compound* imatinib = idx.find_by_name("Imatinib");
  ASSERT_NE(imatinib, nullptr);
  auto hits = idx.similar(imatinib->fingerprint, 10);
  ASSERT_EQ(hits.size(), 10u);
  EXPECT_EQ(idx.at(hits[0].index).name, "Imatinib");
  bool nilotinib = false;
  for (const auto& h : hits) nilotinib |= idx.at(h.index).name == "Nilotinib";
  EXPECT_TRUE(nilotinib);
  // A substructure query: the 2-anilinopyrimidine core of imatinib and nilotinib.
  auto core = Molecule::from_smarts("c1ccnc(n1)Nc1ccccc1");
  auto matches = idx.substructure(core, 1000);
  std::vector<std::string> names;
  for (auto i : matches) names.push_back(idx.at(i).name);
  EXPECT_NE(std::find(names.begin(), names.end(), "Imatinib"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "Nilotinib"), names.end());
}
