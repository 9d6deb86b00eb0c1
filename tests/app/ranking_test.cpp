// Ranking rules, each checked on the path a user takes (`eagle ingest`, then
// `eagle search`) over the real data in ../shared/data.
#include <gtest/gtest.h>
#include "support/build_paths.h"
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "shared_data.h"
#include "support/subprocess.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A throwaway store with the shared vocabulary (and its compiled cache in the build tree).
struct Store {
  fs::path dir;
  std::string global;

  explicit Store(const std::string& name) {
    dir = fs::temp_directory_path() / ("eagle_ranking_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    const fs::path shared = eagle::testing::shared_data();
    global = std::string(EAGLE_BIN_DIR) + "/eagle --data-dir " + (dir / "store").string() +
             " --set biomed.vocab_dir=" + (shared / "vocab").string() + " --set biomed.vocab_cache=" +
             (fs::path(EAGLE_BIN_DIR).parent_path() / "data" / "biomed-vocab.bin").string() + " ";
  }
  ~Store() { fs::remove_all(dir); }

  eagle::test_support::RunResult run(const std::string& args) const {
    return eagle::test_support::run_shell(global + args);
  }
  void ingest(const std::string& shared_path) const {
    auto r = run("ingest --namespace biomed --skip-bad " + (eagle::testing::shared_data() / shared_path).string());
    ASSERT_EQ(r.rc, 0) << r.out;
  }
  // `search --json --explain` in the biomed namespace; the response object.
  json search(const std::string& query, int k, const std::string& ns = "biomed",
              const std::string& settings = "") const {
    auto r = run(settings + " search --json --explain --namespace " + ns + " -k " + std::to_string(k) + " '" +
                 query + "'");
    EXPECT_EQ(r.rc, 0) << r.out;
    auto pos = r.out.rfind("\n{\"hits\"");
    return json::parse(r.out.substr(pos == std::string::npos ? 0 : pos + 1), nullptr, false);
  }
};

std::vector<std::string> audits_of(const json& resp) {
  std::vector<std::string> out;
  for (const auto& a : resp["metadata"]["audits"]) out.push_back(a.value("audit", ""));
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::string section_of(const json& hit) { return hit["metadata"].value("biomed_section", ""); }

}  // namespace

// Chunks expanded from an injected section summary are no more evidence than it is:
// its +100 boost does not make Tier-2 rank them first, and route step 12's hint also
// stops the summary's connect_to edges from pulling in every chunk of the section.
TEST(Ranking, InjectedSummariesAndTheirChildrenDoNotCrowdOutTheAnswer) {
  Store s("expansion");
  s.ingest("spl");
  auto moa = s.search("mechanism of action of sildenafil", 4);
  ASSERT_FALSE(moa["hits"].empty()) << moa.dump();
  EXPECT_EQ(section_of(moa["hits"][0]), "mechanism_of_action") << moa["hits"][0].dump();
  const auto contraindications = std::count_if(moa["hits"].begin(), moa["hits"].end(), [](const json& h) {
    return section_of(h) == "contraindications";
  });
  EXPECT_LE(contraindications, 1) << moa["hits"].dump();

  auto mtx = s.search("adalimumab combined with methotrexate", 4);
  ASSERT_GE(mtx["hits"].size(), 3u) << mtx.dump();
  EXPECT_NE(mtx["hits"][0].value("text", "").rfind("11 DESCRIPTION", 0), 0u) << mtx["hits"][0].dump();
  bool methotrexate_in_top3 = false;
  for (size_t i = 0; i < 3; ++i) methotrexate_in_top3 |= mtx["hits"][i].value("text", "").rfind("7.1 Methotrexate", 0) == 0;
  EXPECT_TRUE(methotrexate_in_top3) << mtx["hits"].dump();
}

// A biomedical corpus goes whole to one collection. Split per document, BioASQ in the
// biomed namespace puts 926 of its snippets in the core collection and 19,628 in the
// biomedical one; a biomed search then merges the top of the 926 as an equal (a
// Klinefelter snippet first for Keutel syndrome) and a core search sees only the 926.
TEST(Ranking, ABiomedicalCorpusGoesWholeToTheBiomedicalCollection) {
  Store s("profile");
  auto r = s.run("ingest --namespace biomed " + (eagle::testing::shared_data() / "bioasq").string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("into collection eagle_text_biomed (encoder pubmedbert)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("eagle_text +"), std::string::npos) << r.out;
  auto keutel = s.search("Is Keutel syndrome a common genetic disorder?", 3);
  ASSERT_FALSE(keutel["hits"].empty());
  EXPECT_NE(keutel["hits"][0].value("text", "").find("Keutel"), std::string::npos) << keutel["hits"][0].dump();
  // A search naming no namespace runs in biomed (pipeline.namespace auto); an explicit
  // core search says where the text is instead of a bare "no document matches".
  auto by_default = s.run("search 'Which gene is mutated in cystic fibrosis?'");
  EXPECT_EQ(by_default.rc, 0) << by_default.out;
  EXPECT_NE(by_default.out.find("namespace: biomed (auto"), std::string::npos) << by_default.out;
  EXPECT_EQ(by_default.out.find("no document matches"), std::string::npos) << by_default.out;
  auto core = s.run("search --namespace core 'Which gene is mutated in cystic fibrosis?'");
  EXPECT_EQ(core.rc, 0) << core.out;
  EXPECT_NE(core.out.find("search it with --namespace biomed"), std::string::npos) << core.out;
}

// A chemical question over a store without a compound collection ("ligand" over
// papers), or about a compound without a structure (an antibody), still answers; and
// "compounds similar to imatinib" ranks its neighbours by structure, not all at -2.8
// under the cross-drug penalty.
TEST(Ranking, ChemicalQuestionsAnswerWithoutAStructureAndNeighboursRankByStructure) {
  Store papers("papers");
  papers.ingest("scifact");
  auto ligand = papers.search("CCL19 is a ligand for CCR7.", 5);
  EXPECT_EQ(ligand["route"]["hints"].value("intent", ""), "chemical");
  EXPECT_FALSE(ligand["hits"].empty()) << ligand.dump();
  EXPECT_EQ(ligand["route"]["hints"]["why"].value("eagle_text_biomed", ""), "chemical_without_structure")
      << ligand["route"].dump();
  EXPECT_FALSE(has(audits_of(ligand), "plan_failed")) << ligand["metadata"].dump();

  // A structure to search with, but no compound collection: the text plans answer.
  auto imatinib_papers = papers.search("compounds similar to imatinib", 5);
  EXPECT_FALSE(imatinib_papers["hits"].empty()) << imatinib_papers.dump();
  EXPECT_TRUE(has(audits_of(imatinib_papers), "route_fallback_text")) << imatinib_papers["metadata"].dump();

  Store labels("labels");
  labels.ingest("spl");
  labels.ingest("vocab/drugbank_structures.csv");
  auto antibody = labels.search("compounds similar to adalimumab", 5);
  ASSERT_FALSE(antibody["hits"].empty()) << antibody.dump();
  EXPECT_EQ(antibody["hits"][0]["metadata"].value("file_name", ""), "humira.xml") << antibody["hits"][0].dump();
  EXPECT_FALSE(has(audits_of(antibody), "plan_failed")) << antibody["metadata"].dump();

  auto similar = labels.search("compounds similar to imatinib", 10);
  const auto& hits = similar["hits"];
  ASSERT_EQ(hits.size(), 10u) << similar.dump();
  EXPECT_EQ(hits[0]["id"], "DB00619");  // imatinib itself
  bool nilotinib = false;
  for (size_t i = 0; i < hits.size(); ++i) {
    const double score = hits[i]["score"];
    EXPECT_GE(score, 0.0) << hits[i].dump();
    if (i) {
      EXPECT_LE(score, hits[i - 1]["score"].get<double>());
    }
    // Ranked by structure, and the explanation says so.
    if (hits[i]["explain"].contains("chemical_max_merge")) {
      EXPECT_DOUBLE_EQ(hits[i]["explain"]["chemical_max_merge"]["structure"].get<double>(), score) << hits[i].dump();
    }
    nilotinib |= hits[i]["id"] == "DB04868";
  }
  EXPECT_TRUE(nilotinib) << hits.dump();
  EXPECT_TRUE(hits[1]["explain"].contains("chemical_max_merge")) << hits[1].dump();
}

// The quality bar on SciFact: the seed's Tier-2 entity evidence lifts every
// abstract naming a drug the claim mentions in passing. "There is a relation between
// Erythromycin use and hypertrophic pyloric stenosis" is about the disease as much as
// the drug (the drug carries under a quarter of the claim's idf), and its answer,
// 21239672, speaks of macrolides. With the evidence gated by that share it ranks first;
// with the seed's ungated evidence, abstracts naming erythromycin bury it.
TEST(Ranking, EntityEvidenceCountsOnlyWhenTheClaimIsAboutTheDrug) {
  Store papers("papers_share");
  papers.ingest("scifact");
  const std::string claim = "There is a relation between Erythromycin use and hypertrophic pyloric stenosis.";
  auto gated = papers.search(claim, 3);
  ASSERT_EQ(gated["hits"].size(), 3u) << gated.dump();
  EXPECT_EQ(gated["hits"][0]["id"], "21239672") << gated["hits"].dump();
  bool noted = false;
  for (const auto& h : gated["hits"])
    if (h["explain"].contains("tier2_entity_share")) {
      noted = true;
      EXPECT_LT(h["explain"]["tier2_entity_share"]["share"].get<double>(), 0.25) << h.dump();
      EXPECT_EQ(h["explain"]["tier2"]["entity"].get<double>(), 0.0) << h.dump();
    }
  EXPECT_TRUE(noted) << gated["hits"].dump();
  auto seed = papers.search(claim, 3, "biomed", "--set biomed.entity_min_query_share=0");
  ASSERT_EQ(seed["hits"].size(), 3u) << seed.dump();
  EXPECT_NE(seed["hits"][0]["id"], "21239672") << seed["hits"].dump();
  // A question about its drug keeps the evidence.
  auto about = papers.search("erythromycin", 3);
  ASSERT_FALSE(about["hits"].empty()) << about.dump();
  EXPECT_GT(about["hits"][0]["explain"]["tier2"]["entity"].get<double>(), 0.0) << about["hits"][0].dump();
}

// Near duplicates: identical chunks of two OTC labels, and a section summary beside
// the chunk it restates, are one hit listing the other as its duplicate; with the
// collapse off they come back side by side.
TEST(Ranking, NearDuplicatesFoldIntoOneHitThatListsThem) {
  Store s("duplicates");
  s.ingest("spl");
  auto folded_ids = [](const json& resp) {
    std::vector<std::string> out;
    for (const auto& h : resp["hits"])
      if (h.contains("duplicates"))
        for (const auto& d : h["duplicates"]) out.push_back(d["id"]);
    return out;
  };
  auto texts_repeat = [](const json& resp) {
    std::set<std::string> seen;
    for (const auto& h : resp["hits"]) {
      std::string t = h.value("text", "");
      std::transform(t.begin(), t.end(), t.begin(), ::tolower);
      if (!seen.insert(t).second) return true;
    }
    return false;
  };
  for (const std::string q : {"warnings", "indications and usage"}) {
    auto on = s.search(q, 5);
    ASSERT_EQ(on["hits"].size(), 5u) << on.dump();  // the list is refilled after folding
    EXPECT_FALSE(folded_ids(on).empty()) << q << ": " << on["hits"].dump();
    EXPECT_FALSE(texts_repeat(on)) << q << ": " << on["hits"].dump();
    for (const auto& id : folded_ids(on))
      for (const auto& h : on["hits"]) EXPECT_NE(h["id"], id) << q;
  }
  // Off: the label copies come back side by side.
  auto r = s.run("--set pipeline.collapse_duplicates=false search --json --namespace biomed -k 10 warnings");
  ASSERT_EQ(r.rc, 0) << r.out;
  auto off = json::parse(r.out.substr(r.out.rfind("\n{\"hits\"") + 1));
  EXPECT_TRUE(folded_ids(off).empty());
  EXPECT_TRUE(texts_repeat(off)) << off["hits"].dump();
}

// The labels teach their brand names: without them "Humira" classifies as general,
// "Lipitor dosing" is answered from the Viagra label and `eagle entities "Humira
// Lipitor"` finds nothing, although the store's labels state them.
TEST(Ranking, BrandNamesTheLabelsStateAreKnown) {
  Store s("brands");
  s.ingest("spl");
  auto ents = s.run("entities --json Humira Lipitor");
  ASSERT_EQ(ents.rc, 0) << ents.out;
  auto e = json::parse(ents.out.substr(ents.out.find('[')));
  ASSERT_EQ(e.size(), 2u) << e.dump();
  EXPECT_EQ(e[0]["name"], "Adalimumab");
  EXPECT_EQ(e[1]["name"], "Atorvastatin");

  auto boxed = s.search("Does Humira have a boxed warning?", 3);
  ASSERT_FALSE(boxed["hits"].empty());
  EXPECT_EQ(boxed["route"]["hints"].value("intent", ""), "regulatory");
  EXPECT_EQ(section_of(boxed["hits"][0]), "boxed_warning") << boxed["hits"][0].dump();
  EXPECT_EQ(boxed["hits"][0]["metadata"].value("file_name", ""), "humira.xml");

  auto lipitor = s.search("Lipitor dosing in hepatic impairment", 3);
  ASSERT_EQ(lipitor["hits"].size(), 3u);
  for (const auto& h : lipitor["hits"])
    EXPECT_EQ(h["metadata"].value("file_name", "").rfind("lipitor", 0), 0u) << h.dump();
}
