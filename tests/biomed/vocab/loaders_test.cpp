// Vocabulary loaders on small inline fixtures: UMLS RRF, DrugBank
// CSVs, NCBI genes, MeSH trees and OBO, the drug-suffix rule, merging and surface
// precedence.
#include <gtest/gtest.h>
#include "support/build_paths.h"

#include "eagle/biomed/vocab/entity_matcher.h"
#include "eagle/biomed/vocab/vocabulary.h"
#include "eagle/core/error.h"
#include "vocab_test_util.h"

namespace fs = std::filesystem;
using namespace eagle::biomed;
using eagle::biomed::testing::TempDir;

namespace {

// Expects an eagle::Error whose message contains `needle` (FILE:LINE for parse errors).
template <typename F>
void expect_error(F&& f, eagle::ErrorCode code, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected an eagle::Error containing '" << needle << "'";
  } catch (const eagle::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

const Entity& by_key(const Vocabulary& v, const std::string& key) {
  auto id = v.find_key(key);
  EXPECT_TRUE(id.has_value()) << key;
  return v.entity(id.value_or(0));
}

}  // namespace

TEST(EntityType, NamesRoundTrip) {
  for (auto t : {EntityType::drug, EntityType::gene, EntityType::disease, EntityType::pathway,
                 EntityType::chemical, EntityType::other})
    EXPECT_EQ(parse_entity_type(entity_type_name(t)), t);
  EXPECT_THROW(parse_entity_type("protein"), eagle::Error);
}

// Seed "Drug-suffix regex" (umls._DRUG_SUFFIX): mab/nib/tinib/rafenib/parib/stat/formin$.
TEST(DrugSuffixRule, FiresOnNameEndings) {
  for (const char* name : {"Pembrolizumab", "imatinib", "gefitinib", "Sorafenib", "olaparib", "orlistat",
                           "Metformin", "VEMURAFENIB"})
    EXPECT_TRUE(has_drug_suffix(name)) << name;
  for (const char* name : {"Imatinib Mesylate", "stat", "aspirin", "atorvastatin", "nib"})
    EXPECT_FALSE(has_drug_suffix(name)) << name;
}

TEST(UmlsLoader, EnglishRowsPreferredNameAndSemanticTypes) {
  TempDir dir("umls");
  VocabularyPaths p;
  // CUI|LAT|TS|LUI|STT|SUI|ISPREF|AUI|SAUI|SCUI|SDUI|SAB|TTY|CODE|STR|SRL|SUPPRESS|CVF|
  p.umls_mrconso = dir.write("MRCONSO.RRF",
                             "C001|ENG|S|L1|PF|S1|Y|A1||M1|D1|MSH|ET|D1|imatinib-ish|0|N|256|\n"
                             "C001|ENG|P|L2|PF|S2|Y|A2||M1|D1|MSH|MH|D1|Exampletinib|0|N|256|\n"
                             "C001|FRE|P|L3|PF|S3|Y|A3||M1|D1|MSH|MH|D1|Exampletinib (fr)|0|N|256|\n"
                             "C001|ENG|S|L4|PF|S4|Y|A4||M1|D1|MSH|ET|D1|Old name|0|O|256|\n"
                             "C002|ENG|P|L5|PF|S5|N|A5||M2|D2|MSH|MH|D2|Foo Disease|0|N|256|\n"
                             "C002|ENG|S|L6|VO|S6|Y|A6||M2|D2|MSH|ET|D2|Foo syndrome|0|N|256|\n"
                             "C003|ENG|P|L7|PF|S7|Y|A7||M3|D3|MSH|MH|D3|Barostat|0|N|256|\n"
                             "C004|ENG|P|L8|PF|S8|Y|A8||M4|D4|MSH|MH|D4|Qux protein|0|N|256|\n"
                             "C005|ENG|P|L9|PF|S9|Y|A9||M5|D5|MSH|MH|D5|Glycolysis-ish|0|N|256|");
  // CUI|TUI|STN|STY|ATUI|CVF|
  p.umls_mrsty = dir.write("MRSTY.RRF",
                           "C001|T109|A1.4.1.2.1|Organic Chemical|AT1|256|\n"
                           "C001|T121|A1.4.1.1.1|Pharmacologic Substance|AT2|256|\n"
                           "C002|T047|B2.2.1.2.1|Disease or Syndrome|AT3|256|\n"
                           "C003|T109|A1.4.1.2.1|Organic Chemical|AT4|256|\n"
                           "C004|T116|A1.4.1.2.1.7|Amino Acid, Peptide, or Protein|AT5|256|\n"
                           "C005|T044|B2.2.1.1.4.1|Molecular Function|AT6|256|\n");
  auto v = Vocabulary::load(p);
  EXPECT_EQ(v.size(), 5u);
  const auto& drug = by_key(v, "UMLS:C001");
  EXPECT_EQ(drug.name, "Exampletinib");    // TS=P, STT=PF, ISPREF=Y beats the first row
  EXPECT_EQ(drug.type, EntityType::drug);  // T109 + T121: the drug type wins
  EXPECT_EQ(drug.aliases, std::vector<std::string>{"imatinib-ish"});  // no French, no suppressed row
  const auto& disease = by_key(v, "UMLS:C002");
  EXPECT_EQ(disease.name, "Foo Disease");  // no fully preferred row: the first one
  EXPECT_EQ(disease.type, EntityType::disease);
  EXPECT_EQ(by_key(v, "UMLS:C003").type, EntityType::drug);  // chemical + drug suffix "stat"
  EXPECT_EQ(by_key(v, "UMLS:C004").type, EntityType::gene);
  EXPECT_EQ(by_key(v, "UMLS:C005").type, EntityType::pathway);
  EXPECT_EQ(v.stats().umls_rows_skipped, 2u);
  EXPECT_EQ(umls_semantic_type("T191"), EntityType::disease);
  EXPECT_EQ(umls_semantic_type("T999"), EntityType::other);
}

TEST(UmlsLoader, ReadsTheSharedSample) {
  const fs::path dir = fs::path(EAGLE_SHARED_DATA) / "vocab" / "umls_sample";
  ASSERT_TRUE(fs::is_directory(dir)) << "shared data folder missing: " << dir
                                     << " (tests need ../shared/data; see its README.md)";
  VocabularyPaths p;
  p.umls_mrconso = dir / "MRCONSO.RRF";
  p.umls_mrsty = dir / "MRSTY.RRF";
  auto v = Vocabulary::load(p);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(by_key(v, "UMLS:C0000005").name, "(131)I-Macroaggregated Albumin");
  EXPECT_EQ(by_key(v, "UMLS:C0000005").type, EntityType::gene);  // T116
  EXPECT_EQ(by_key(v, "UMLS:C0000039").type, EntityType::drug);  // T109 + T121
  EXPECT_EQ(v.find("(131)I-MAA"), v.find_key("UMLS:C0000005"));
}

TEST(UmlsLoader, MalformedRowNamesFileAndLine) {
  TempDir dir("umls_bad");
  VocabularyPaths p;
  p.umls_mrconso =
      dir.write("MRCONSO.RRF", "C001|ENG|P|L1|PF|S1|Y|A1||M1|D1|MSH|MH|D1|Fine|0|N|256|\nC002|ENG|P\n");
  expect_error([&] { Vocabulary::load(p); }, eagle::ErrorCode::invalid_argument, "MRCONSO.RRF:2:");
}

TEST(DrugBankLoader, QuotedFieldsSynonymsAndStructures) {
  TempDir dir("drugbank");
  VocabularyPaths p;
  p.drugbank_vocabulary = dir.write(
      "drugbank_vocabulary.csv",
      "DrugBank ID,Accession Numbers,Common name,Name,CAS,UNII,Synonyms,Standard InChI Key\n"
      "DB00619,APRD01028 | DB03261,Imatinib,imatinib,152459-95-5,BKJ8M8G5HI,Imatinib | Imatinibum | "
      "STI-571,KEY\n"
      "DB00002,BIOD00071,Cetuximab,cetuximab,1,U,\"Cetuximab | Cétuximab | IgG1 (chimeric, \"\"C225\"\")\",\n"
      "DB09999,X,\"Drug, with comma\",drug with comma,,,\"multi\nline synonym\",\n");
  p.drugbank_structures = dir.write("drugbank_structures.csv",
                                    "DrugBank ID,Name,Drug Groups,SMILES\n"
                                    "DB00619,Imatinib,approved,CN1CCN(CC1)CC1=CC=C(C=C1)C(=O)N\n"
                                    "DB07777,Newdrugnib,investigational,\"C1=CC=CC=C1\"\n");
  auto v = Vocabulary::load(p);
  ASSERT_EQ(v.size(), 4u);
  const auto& imatinib = by_key(v, "DRUGBANK:DB00619");
  EXPECT_EQ(imatinib.name, "Imatinib");
  EXPECT_EQ(imatinib.type, EntityType::drug);
  EXPECT_EQ(imatinib.aliases, (std::vector<std::string>{"Imatinibum", "STI-571"}));  // "imatinib" is the name
  EXPECT_EQ(imatinib.smiles, "CN1CCN(CC1)CC1=CC=C(C=C1)C(=O)N");
  const auto& cetuximab = by_key(v, "DRUGBANK:DB00002");
  EXPECT_EQ(cetuximab.aliases, (std::vector<std::string>{"Cétuximab", "IgG1 (chimeric, \"C225\")"}));
  EXPECT_EQ(by_key(v, "DRUGBANK:DB09999").name, "Drug, with comma");
  EXPECT_EQ(by_key(v, "DRUGBANK:DB09999").aliases[0], "multi\nline synonym");
  const auto& added = by_key(v, "DRUGBANK:DB07777");  // a structure without a vocabulary row
  EXPECT_EQ(added.name, "Newdrugnib");
  EXPECT_EQ(added.smiles, "C1=CC=CC=C1");
  EXPECT_EQ(v.stats().structures_added, 1u);
  EXPECT_EQ(v.find("imatinib"), v.find_key("DRUGBANK:DB00619"));
  EXPECT_EQ(v.find("sti-571"), v.find_key("DRUGBANK:DB00619"));
}

TEST(DrugBankLoader, WrongFieldCountNamesFileAndLine) {
  TempDir dir("drugbank_bad");
  VocabularyPaths p;
  p.drugbank_vocabulary =
      dir.write("drugbank_vocabulary.csv",
                "DrugBank ID,Accession Numbers,Common name,Name,CAS,UNII,Synonyms,Standard InChI Key\n"
                "DB00001,A,Lepirudin,lepirudin,1,U,,\n"
                "DB00002,A,Cetuximab\n");
  expect_error([&] { Vocabulary::load(p); }, eagle::ErrorCode::invalid_argument,
               "drugbank_vocabulary.csv:3:");
}

TEST(GeneLoader, SymbolNameAndAliases) {
  TempDir dir("genes");
  VocabularyPaths p;
  p.genes = dir.write("genes_human.tsv",
                      "gene_id\tsymbol\tname\taliases\n"
                      "1956\tEGFR\tepidermal growth factor receptor\tERBB|ERBB1|HER1|EGFR\n"
                      "4233\tMET\tMET proto-oncogene, receptor tyrosine kinase\tAUTS9|HGFR|c-Met\n"
                      "7422\tVEGFA\tvascular endothelial growth factor A\t\n");
  auto v = Vocabulary::load(p);
  ASSERT_EQ(v.size(), 3u);
  const auto& egfr = by_key(v, "NCBIGENE:1956");
  EXPECT_EQ(egfr.name, "EGFR");
  EXPECT_EQ(egfr.type, EntityType::gene);
  EXPECT_EQ(egfr.aliases,
            (std::vector<std::string>{"ERBB", "ERBB1", "HER1", "epidermal growth factor receptor"}));
  EXPECT_EQ(by_key(v, "NCBIGENE:7422").aliases,
            std::vector<std::string>{"vascular endothelial growth factor A"});
  EXPECT_EQ(v.find("her1"), v.find_key("NCBIGENE:1956"));
  EXPECT_EQ(v.find("Epidermal Growth Factor Receptor"), v.find_key("NCBIGENE:1956"));
}

TEST(GeneLoader, MalformedLinesNameFileAndLine) {
  TempDir dir("genes_bad");
  VocabularyPaths p;
  p.genes = dir.write("genes_human.tsv", "gene_id\tsymbol\tname\taliases\n1\tA1BG\tname\tA1B\n2\tA2M\n");
  expect_error([&] { Vocabulary::load(p); }, eagle::ErrorCode::invalid_argument, "genes_human.tsv:3:");
  p.genes = dir.write("genes2.tsv", "gene_id\tsymbol\tname\taliases\nx1\tA1BG\tname\tA1B\n");
  expect_error([&] { Vocabulary::load(p); }, eagle::ErrorCode::invalid_argument, "genes2.tsv:2:");
  p.genes = dir.write("genes3.tsv", "id\tsymbol\n");
  expect_error([&] { Vocabulary::load(p); }, eagle::ErrorCode::invalid_argument, "genes3.tsv:1:");
}

TEST(MeshLoader, BranchesMergedLinesAndInvertedNames) {
  TempDir dir("mesh");
  VocabularyPaths p;
  p.mesh_trees = dir.write("mesh_trees_2019.txt",
                           "Breast;A01.236\n"
                           "Carcinoma, Non-Small-Cell Lung;C04.588.894.797.520.109\n"
                           "Imatinib Mesylate;D02.065.277.456\n"
                           "Carcinoma, Non-Small-Cell Lung;C08.381.540.140.500\n"
                           "Examplinib;D02.455.426\n"
                           "Aspirin;D02.241.223\n"
                           "DNA Methylation;G02.111.570\n"
                           "Glycolysis;G03.295\n"
                           "Cell Death;G04.146\n");
  auto v = Vocabulary::load(p);
  ASSERT_EQ(v.size(), 6u);  // Breast (A) and Cell Death (G04) are skipped
  EXPECT_EQ(v.stats().mesh_skipped, 2u);
  const auto& nsclc = by_key(v, "MESH:C04.588.894.797.520.109");
  EXPECT_EQ(nsclc.type, EntityType::disease);
  EXPECT_EQ(nsclc.aliases, std::vector<std::string>{"Non-Small-Cell Lung Carcinoma"});
  EXPECT_EQ(v.find("non-small-cell lung carcinoma"), v.find_key("MESH:C04.588.894.797.520.109"));
  EXPECT_EQ(by_key(v, "MESH:D02.065.277.456").type, EntityType::chemical);
  EXPECT_EQ(by_key(v, "MESH:D02.455.426").type, EntityType::drug);  // drug-suffix rule
  EXPECT_EQ(by_key(v, "MESH:G02.111.570").type, EntityType::pathway);
  EXPECT_EQ(by_key(v, "MESH:G03.295").type, EntityType::pathway);
  EXPECT_FALSE(v.find("breast").has_value());
}

TEST(MeshLoader, MalformedLineNamesFileAndLine) {
  TempDir dir("mesh_bad");
  VocabularyPaths p;
  p.mesh_trees = dir.write("mesh.txt", "Breast;A01.236\nno tree number here\n");
  expect_error([&] { Vocabulary::load(p); }, eagle::ErrorCode::invalid_argument, "mesh.txt:2:");
}

TEST(OboLoader, TermsSynonymsObsoleteAndRepeatedIds) {
  TempDir dir("obo");
  VocabularyPaths p;
  p.obo_files.push_back(dir.write("a.obo",
                                  "format-version: 1.2\n"
                                  "ontology: doid\n\n"
                                  "[Term]\n"
                                  "id: DOID:1612\n"
                                  "name: breast cancer\n"
                                  "synonym: \"mammary cancer\" EXACT []\n"
                                  "synonym: \"malignant tumor of \\\"breast\\\"\" RELATED [url:x]\n"
                                  "synonym: \"cancer\" BROAD []\n"
                                  "xref: MESH:D001943\n"
                                  "is_a: DOID:162 ! cancer\n\n"
                                  "[Term]\n"
                                  "id: DOID:0000000\n"
                                  "name: obsolete thing\n"
                                  "is_obsolete: true\n\n"
                                  "[Typedef]\n"
                                  "id: part_of\n"
                                  "name: part of\n"));
  p.obo_files.push_back(dir.write("b.obo",
                                  "[Term]\n"
                                  "id: DOID:1612\n"
                                  "name: breast cancer\n"
                                  "synonym: \"breast carcinoma\" EXACT []\n"
                                  "[Term]\n"
                                  "id: DOID:9352\n"
                                  "name: type 2 diabetes mellitus\n"
                                  "synonym: \"T2DM\" EXACT OMO:0003012 []\n"));
  auto v = Vocabulary::load(p);
  ASSERT_EQ(v.size(), 2u);  // DOID:1612 from both slims is one entity
  const auto& bc = by_key(v, "DOID:1612");
  EXPECT_EQ(bc.type, EntityType::disease);
  EXPECT_EQ(bc.aliases, (std::vector<std::string>{"mammary cancer", "malignant tumor of \"breast\"",
                                                  "breast carcinoma"}));
  EXPECT_FALSE(v.find("cancer").has_value());  // BROAD synonyms name another concept
  EXPECT_FALSE(v.find_key("DOID:0000000").has_value());
  EXPECT_FALSE(v.find_key("part_of").has_value());
  EXPECT_EQ(v.stats().obo_obsolete, 1u);
  EXPECT_EQ(v.find("T2DM"), v.find_key("DOID:9352"));
}

TEST(OboLoader, UnterminatedSynonymNamesFileAndLine) {
  TempDir dir("obo_bad");
  VocabularyPaths p;
  p.obo_files.push_back(dir.write("bad.obo", "[Term]\nid: DOID:1\nname: x\nsynonym: \"open EXACT []\n"));
  expect_error([&] { Vocabulary::load(p); }, eagle::ErrorCode::invalid_argument, "bad.obo:4:");
}

TEST(VocabularyPaths, MissingConfiguredFileIsNotFound) {
  TempDir dir("missing");
  VocabularyPaths p;
  p.genes = dir.path() / "genes_human.tsv";
  expect_error([&] { Vocabulary::load(p); }, eagle::ErrorCode::not_found, "genes_human.tsv");
  expect_error([&] { Vocabulary::load_cached(p, dir.path() / "c.bin"); }, eagle::ErrorCode::not_found,
               "genes_human.tsv");
  expect_error([&] { default_vocabulary_paths((dir.path() / "nope").string()); }, eagle::ErrorCode::not_found,
               "nope");
}

TEST(VocabularyPaths, DefaultLayout) {
  TempDir dir("layout");
  dir.write("drugbank_vocabulary.csv", "x");
  dir.write("genes_human.tsv", "x");
  dir.write("mesh_trees_2019.txt", "x");
  dir.write("doid/b.obo", "x");
  dir.write("doid/a.obo", "x");
  dir.write("umls_sample/MRCONSO.RRF", "x");
  dir.write("umls_sample/MRSTY.RRF", "x");
  auto p = default_vocabulary_paths(dir.path().string());
  EXPECT_EQ(p.drugbank_vocabulary, dir.path() / "drugbank_vocabulary.csv");
  EXPECT_FALSE(p.drugbank_structures.has_value());
  EXPECT_EQ(p.genes, dir.path() / "genes_human.tsv");
  EXPECT_EQ(p.mesh_trees, dir.path() / "mesh_trees_2019.txt");
  EXPECT_EQ(p.obo_files, (std::vector<fs::path>{dir.path() / "doid/a.obo", dir.path() / "doid/b.obo"}));
  EXPECT_EQ(p.umls_mrconso, dir.path() / "umls_sample/MRCONSO.RRF");
  EXPECT_EQ(p.umls_mrsty, dir.path() / "umls_sample/MRSTY.RRF");
  EXPECT_EQ(p.files().size(), 7u);
}

// vocabulary.h "Merging" and "Surface conflicts".
TEST(VocabularyMerge, SameNameAcrossSourcesAndPrecedence) {
  TempDir dir("merge");
  VocabularyPaths p;
  p.drugbank_vocabulary =
      dir.write("drugbank_vocabulary.csv",
                "DrugBank ID,Accession Numbers,Common name,Name,CAS,UNII,Synonyms,Standard InChI Key\n"
                "DB00619,A,Imatinib,imatinib,,,Imatinib mesylate | STI571,\n"
                "DB00945,A,Acetylsalicylic acid,acetylsalicylic acid,,,Aspirin,\n"
                "DB00134,A,Methionine,methionine,,,Met | L-Methionine,\n"
                "DB00001,A,Examplumab,examplumab,,,Insulin-like thing,\n");
  p.genes = dir.write("genes_human.tsv",
                      "gene_id\tsymbol\tname\taliases\n"
                      "4233\tMET\tMET proto-oncogene\tHGFR|ALS\n"
                      "3630\tINS\tinsulin\tIDDM2\n");
  p.obo_files.push_back(
      dir.write("d.obo",
                "[Term]\nid: DOID:332\nname: amyotrophic lateral sclerosis\n"
                "synonym: \"ALS\" EXACT []\n"
                "[Term]\nid: DOID:1\nname: imatinib\n"));  // a deliberately odd disease name
  p.mesh_trees = dir.write("mesh.txt",
                           "Imatinib Mesylate;D02.065.277.456\n"
                           "Acetylsalicylic Acid;D02.241.223\n"
                           "Insulin;D06.472.699\n");
  auto v = Vocabulary::load(p);
  // MeSH "Acetylsalicylic Acid" (chemical) is DrugBank's drug by name: merged.
  EXPECT_EQ(v.find_key("MESH:D02.241.223"), v.find_key("DRUGBANK:DB00945"));
  EXPECT_EQ(v.stats().merged, 1u);
  // MeSH "Imatinib Mesylate" stays its own (chemical) entity and keeps that surface,
  // while "imatinib" is DrugBank's drug, not the odd DOID name (drug > disease).
  ASSERT_TRUE(v.find_key("MESH:D02.065.277.456"));
  EXPECT_NE(v.find_key("MESH:D02.065.277.456"), v.find_key("DRUGBANK:DB00619"));
  EXPECT_EQ(v.find("Imatinib Mesylate"), v.find_key("MESH:D02.065.277.456"));
  EXPECT_EQ(v.find("IMATINIB"), v.find_key("DRUGBANK:DB00619"));
  // "MET": the gene's official symbol beats methionine's "Met" synonym.
  EXPECT_EQ(v.find("met"), v.find_key("NCBIGENE:4233"));
  // "ALS": a disease synonym beats a gene's symbol-like alias.
  EXPECT_EQ(v.find("ALS"), v.find_key("DOID:332"));
  // "insulin": MeSH's preferred name beats the gene's full name (an alias).
  EXPECT_EQ(v.find("insulin"), v.find_key("MESH:D06.472.699"));
  EXPECT_GE(v.stats().surface_conflicts, 4u);
}

TEST(VocabularyAdd, FindSeesNewEntitiesBeforeCompile) {
  using eagle::biomed::testing::make_entity;
  Vocabulary v;
  auto gene = v.add(make_entity("NCBIGENE:1", "ABC1", EntityType::gene, {"Foo"}));
  EXPECT_FALSE(v.compiled());
  EXPECT_EQ(v.find("abc1"), gene);
  auto drug = v.add(make_entity("BRAND:foo", "Foo", EntityType::drug));  // a brand name from a label
  EXPECT_EQ(v.find("FOO"), drug);                                        // drug name beats gene alias
  EXPECT_THROW(v.add(make_entity("BRAND:foo", "Other", EntityType::drug)), eagle::Error);
  EXPECT_THROW(v.entity(99), eagle::Error);
  v.compile();
  EXPECT_TRUE(v.compiled());
  EXPECT_EQ(v.find("FOO"), drug);
  EXPECT_EQ(v.find("abc1"), gene);
  EXPECT_EQ(v.find_key("BRAND:foo"), drug);
}
