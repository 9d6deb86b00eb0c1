// Compound cards from the DrugBank open structures CSV (chemical collection rows).
#include "eagle/biomed/ingest/compound_cards.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "eagle/core/error.h"
#include "eagle/core/schema.h"
#include "eagle/core/value.h"
#include "ingest_test_support.h"

using namespace eagle::biomed;
using eagle::biomed::testing::present;
using eagle::biomed::testing::shared_file;
using nlohmann::json;

TEST(CompoundCards, RealDrugBankStructures) {
  const auto file = shared_file("vocab/drugbank_structures.csv");
  ASSERT_TRUE(present(file));
  const auto cards = read_compound_cards_file(file, {.kb_name = "chem"});
  ASSERT_EQ(cards.size(), 11295u);
  const auto schema = eagle::chunk_schema("c", 4);
  std::set<std::string> ids;
  size_t approved = 0;
  for (const auto& c : cards) {
    const auto& r = c.row;
    ASSERT_TRUE(ids.insert(r["id"].get<std::string>()).second);
    EXPECT_EQ(r["id"].get<std::string>().rfind("DB", 0), 0u);
    EXPECT_EQ(r["document_id"], r["id"]);
    EXPECT_EQ(r["source_type"], "compound");
    EXPECT_EQ(r["file_name"], "drugbank_structures.csv");
    ASSERT_EQ(r["primary_drugs"].size(), 1u);
    for (const auto& f : schema.fields) {
      ASSERT_TRUE(r.contains(f.name)) << f.name;
      EXPECT_NO_THROW(eagle::value_from_json(r[f.name], f.type, f.name));
    }
    if (r["text"].get<std::string>().find("Groups: approved") != std::string::npos) ++approved;
  }
  EXPECT_EQ(approved, 2565u);  // as the shared-data README counts (DrugBank lists "approved" first)

  const auto& first = cards.front();
  EXPECT_EQ(first.row["id"], "DB00006");
  EXPECT_EQ(first.row["document_name"], "Bivalirudin");
  EXPECT_EQ(first.row["primary_drugs"], json({"bivalirudin"}));
  EXPECT_EQ(first.row["kb_name"], "chem");
  EXPECT_EQ(first.smiles.rfind("CC[C@H](C)[C@H](NC(=O)", 0), 0u);
  EXPECT_EQ(first.row["text"], "Bivalirudin. Groups: approved; investigational. SMILES: " + first.smiles);
}

TEST(CompoundCards, MissingSmilesStillMakesACard) {
  std::istringstream in(
      "DrugBank ID,Name,Drug Groups,SMILES\r\n"
      "DB1,\"Drug, with comma\",approved,CCO\r\n"
      "DB2,Mystery Biologic,investigational,\r\n"
      "\r\n"
      "DB3,Groupless,,C\r\n");
  const auto cards = read_compound_cards(in, "mem.csv");
  ASSERT_EQ(cards.size(), 3u);
  EXPECT_EQ(cards[0].row["document_name"], "Drug, with comma");
  EXPECT_EQ(cards[0].row["primary_drugs"], json({"drug, with comma"}));
  EXPECT_EQ(cards[0].smiles, "CCO");
  EXPECT_TRUE(cards[1].smiles.empty());
  EXPECT_EQ(cards[1].row["text"], "Mystery Biologic. Groups: investigational.");
  EXPECT_EQ(cards[2].row["text"], "Groupless. SMILES: C");
}

TEST(CompoundCards, BadInputNamesFileAndLine) {
  auto error_of = [](const std::string& csv) {
    std::istringstream in(csv);
    try {
      read_compound_cards(in, "drugs.csv");
    } catch (const eagle::Error& e) {
      EXPECT_EQ(e.code(), eagle::ErrorCode::invalid_argument);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("DrugBank ID,Name,SMILES\nDB1,x,C\n").find("drugs.csv:1: missing column 'Drug Groups'"),
            std::string::npos);
  EXPECT_NE(error_of("DrugBank ID,Name,Drug Groups,SMILES\nDB1,a,approved,C\nDB1,b,approved,C\n")
                .find("drugs.csv:3: repeated DrugBank ID DB1"),
            std::string::npos);
  EXPECT_NE(error_of("DrugBank ID,Name,Drug Groups,SMILES\nDB1,a\n").find("drugs.csv:2: expected 4 fields"),
            std::string::npos);
  EXPECT_NE(
      error_of("DrugBank ID,Name,Drug Groups,SMILES\n,a,approved,C\n").find("drugs.csv:2: empty DrugBank ID"),
      std::string::npos);
  EXPECT_NE(error_of("").find("empty file"), std::string::npos);
  EXPECT_THROW(read_compound_cards_file(shared_file("vocab/no-such.csv")), eagle::Error);
}
