#include "eagle/encode/chem/chem.h"

#include <gtest/gtest.h>

#include "shared_data.h"

#include <cstdlib>
#include <filesystem>

#include "eagle/core/error.h"

namespace fs = std::filesystem;
using namespace eagle::encode::chem;

namespace {
using eagle::testing::shared_data;
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

#include "eagle/encode/chem/chem_encoder.h"
#include "eagle/store/collection.h"

TEST(CompoundCollection, MolformerSlotTanimotoSearchIsExactAndFindsNilotinib) {
  const auto csv = shared_data() / "vocab" / "drugbank_structures.csv";
  ASSERT_TRUE(fs::exists(csv)) << "shared data missing: " << csv;
  CompoundIndex idx;
  idx.load_csv(csv);
  auto enc = eagle::encode::make_chem_encoder("molformer");
  EXPECT_EQ(enc->info().metric, eagle::Metric::tanimoto);
  EXPECT_EQ(enc->info().modality, eagle::encode::Modality::molecule);
  auto coll = eagle::store::Collection::in_memory(eagle::encode::compound_schema("eagle_chemical"));
  const auto& schema = coll->schema();
  // Every compound goes in: the flat TANIMOTO index compares each one, an exact search.
  std::vector<eagle::store::Record> batch;
  for (uint32_t i = 0; i < idx.size(); ++i) {
    const auto& c = idx.at(i);
    eagle::store::Record r;
    r.id = c.id;
    r.text = c.name;
    r.vector = enc->encode({c.smiles}, eagle::encode::EncodeMode::document)[0];
    r.values.assign(schema.fields.size(), std::monostate{});
    r.values[*schema.field_index("name")] = c.name;
    batch.push_back(std::move(r));
    if (batch.size() == 2000) {
      coll->insert(std::move(batch));
      batch.clear();
    }
  }
  coll->insert(std::move(batch));
  const Compound* imatinib = idx.find_by_name("Imatinib");
  ASSERT_NE(imatinib, nullptr);
  auto q = enc->encode({imatinib->smiles}, eagle::encode::EncodeMode::query)[0];
  auto hits = coll->search_vector(q, 10);
  auto oracle = idx.similar(imatinib->fingerprint, 10);
  ASSERT_EQ(hits.size(), 10u);
  bool nilotinib = false;
  for (size_t i = 0; i < hits.size(); ++i) {
    EXPECT_NEAR(hits[i].score, oracle[i].similarity, 1e-5) << i;  // same Tanimoto as the bit oracle
    nilotinib |= coll->get(hits[i].id)->text == "Nilotinib";
  }
  EXPECT_TRUE(nilotinib);
  EXPECT_THROW(enc->encode({"not a smiles (("}, eagle::encode::EncodeMode::query), eagle::Error);
  // TANIMOTO needs the exact index.
  auto bad = eagle::encode::compound_schema("x");
  bad.vector.index = eagle::VectorIndexKind::hnsw;
  EXPECT_THROW(bad.validate(), eagle::Error);
}
