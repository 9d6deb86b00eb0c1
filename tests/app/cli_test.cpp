// End-to-end tests of the `eagle` binary: ingest, search, eval, errors.
#include <gtest/gtest.h>
#include "support/build_paths.h"
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <functional>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "support/temp_cleanup.h"
#include "shared_data.h"
#include "support/subprocess.h"

namespace fs = std::filesystem;

namespace {

using Result = eagle::test_support::RunResult;

Result run(const std::string& args) { return eagle::test_support::run_shell(std::string(EAGLE_BIN_DIR) + "/eagle " + args); }

fs::path temp_dir(const std::string& name) {
  auto p = fs::temp_directory_path() / ("eagle_cli_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return eagle::test_support::remove_at_end(p);
}

}  // namespace

// Every file's path, size and bytes: "the store is left unchanged" means this is equal.
std::string tree_digest(const fs::path& dir) {
  std::string out;
  std::vector<fs::path> files;
  // LOCK holds only who last owned the store (an advisory note beside the flock).
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != "LOCK") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    out += f.string() + ":" + std::to_string(bytes.size()) + ":" + std::to_string(std::hash<std::string>{}(bytes)) + "\n";
  }
  return out;
}

TEST(Cli, HelpDocumentsCommandsAndOptions) {
  auto r = run("--help");
  EXPECT_EQ(r.rc, 0);
  for (const char* s : {"ingest", "search", "eval", "bench", "config", "--data-dir", "bm25.k1", "EAGLE_BM25_K1"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  auto ing = run("ingest --help");
  EXPECT_NE(ing.out.find("--skip-bad"), std::string::npos);
}

TEST(Cli, IngestsTheSampleCorpusAndSearches) {
  auto dir = temp_dir("sample");
  auto empty = run("--data-dir " + dir.string() + " search anything");
  EXPECT_EQ(empty.rc, 2);
  EXPECT_NE(empty.out.find("no collections yet"), std::string::npos) << empty.out;
  auto r = run("--data-dir " + dir.string() + " ingest " + std::string(EAGLE_SOURCE_DIR) + "/examples");
  ASSERT_EQ(r.rc, 0) << r.out;
  auto s = run("--data-dir " + dir.string() + " search savolitinib osimertinib MET amplification -k 3");
  ASSERT_EQ(s.rc, 0) << s.out;
  EXPECT_NE(s.out.find("1. "), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("avolitinib"), std::string::npos) << s.out;
  auto j = run("--data-dir " + dir.string() + " search --json PD-1 -k 2");
  EXPECT_EQ(j.rc, 0);
  EXPECT_EQ(j.out.rfind("{\"hits\":", 0), 0u) << j.out;
  fs::remove_all(dir);
}

TEST(Cli, BadLineStopsIngestWithoutTouchingTheStore) {
  auto dir = temp_dir("bad");
  auto good = dir / "good.jsonl";
  auto bad = dir / "bad.jsonl";
  std::ofstream(good) << R"({"_id":"g1","text":"imatinib in CML"})" << "\n";
  std::ofstream(bad) << R"({"_id":"b1","text":"nilotinib"})" << "\n{broken\n";
  auto store = dir / "store";
  ASSERT_EQ(run("--data-dir " + store.string() + " ingest " + good.string()).rc, 0);
  auto before = tree_digest(store);
  auto r = run("--data-dir " + store.string() + " ingest " + bad.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("bad.jsonl:2:"), std::string::npos) << r.out;
  EXPECT_EQ(tree_digest(store), before);
  // Dense search always answers with the nearest rows; b1 must not be among them.
  EXPECT_EQ(run("--data-dir " + store.string() + " search nilotinib").out.find("b1"), std::string::npos);
  auto skip = run("--data-dir " + store.string() + " ingest --skip-bad " + bad.string());
  EXPECT_EQ(skip.rc, 0) << skip.out;
  EXPECT_NE(skip.out.find("bad.jsonl:2"), std::string::npos);
  EXPECT_NE(run("--data-dir " + store.string() + " search nilotinib").out.find("b1"), std::string::npos);
  fs::remove_all(dir);
}

TEST(Cli, EvalWritesATrecRunAndMetrics) {
  auto dir = temp_dir("eval");
  std::ofstream(dir / "corpus.jsonl") << R"({"_id":"d1","title":"","text":"egfr mutation lung cancer"})" << "\n"
                                      << R"({"_id":"d2","title":"","text":"kras mutation colon cancer"})" << "\n"
                                      << R"({"_id":"d3","title":"","text":"aspirin for headache"})" << "\n";
  std::ofstream(dir / "queries.jsonl") << R"({"_id":"q1","text":"egfr lung"})" << "\n"
                                       << R"({"_id":"q2","text":"colon cancer"})" << "\n"
                                       << R"({"_id":"q3","text":"not judged"})" << "\n";
  fs::create_directories(dir / "qrels");
  std::ofstream(dir / "qrels" / "test.tsv") << "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n";
  auto runf = dir / "run.txt";
  auto csv = dir / "pq.csv";
  auto r = run("eval --beir " + dir.string() + " --split test --retriever bm25 --run " + runf.string() +
               " --per-query " + csv.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("ndcg_cut_10"), std::string::npos);
  EXPECT_NE(r.out.find("1.0000"), std::string::npos) << r.out;
  std::ifstream in(runf);
  std::string qid, q0, doc, tag;
  int rank;
  double score;
  ASSERT_TRUE(in >> qid >> q0 >> doc >> rank >> score >> tag);
  EXPECT_EQ(q0, "Q0");
  EXPECT_EQ(rank, 1);
  EXPECT_TRUE(fs::exists(csv));
  // Scoring the written run file gives the same summary as the live evaluation.
  auto rescored = run("eval --beir " + dir.string() + " --split test --score-run " + runf.string());
  ASSERT_EQ(rescored.rc, 0) << rescored.out;
  auto table = [](const std::string& out) { return out.substr(out.find("metric")); };
  EXPECT_EQ(table(rescored.out), table(r.out));
  auto unknown = run("eval --beir " + dir.string() + " --split test --retriever nope");
  EXPECT_EQ(unknown.rc, 2);
  EXPECT_NE(unknown.out.find("nope"), std::string::npos);
  fs::remove_all(dir);
}

#if EAGLE_TEST_WITH_BIOMED  // the biomed plugin's
// The biomedical plugin over the real SPL labels and DrugBank structures: a regulatory
// question returns a Humira warnings chunk first; a chemical question routes to the
// compound collection and finds nilotinib among imatinib's 10 nearest structures.
TEST(Cli, BiomedDemoRegulatoryAndChemicalQuestions) {
  const fs::path shared(EAGLE_SHARED_DATA);
  ASSERT_TRUE(fs::exists(shared / "spl")) << "shared data missing: " << shared;
  auto dir = temp_dir("biomed");
  const std::string g = "--data-dir " + (dir / "store").string() + " --set biomed.vocab_dir=" +
                        (shared / "vocab").string() + " --set biomed.vocab_cache=" +
                        (fs::path(EAGLE_BIN_DIR).parent_path() / "data" / "biomed-vocab.bin").string() + " ";
  auto spl = run(g + "ingest --namespace biomed --skip-bad " + (shared / "spl").string());
  ASSERT_EQ(spl.rc, 0) << spl.out;
  EXPECT_NE(spl.out.find("into collection eagle_text_biomed"), std::string::npos) << spl.out;
  // XML of another vocabulary and an empty file: reported, skipped.
  EXPECT_NE(spl.out.find("1_otc-bars.xml: not an SPL label, JATS article or PubMed XML (root <barcodes>)"),
            std::string::npos)
      << spl.out;
  EXPECT_NE(spl.out.find("6_otc-bars.xml: not an SPL label, JATS article or PubMed XML (no root element)"),
            std::string::npos)
      << spl.out;
  auto chem = run(g + "ingest --namespace biomed " + (shared / "vocab/drugbank_structures.csv").string());
  ASSERT_EQ(chem.rc, 0) << chem.out;
  EXPECT_NE(chem.out.find("into collection eagle_chemical (encoder molformer)"), std::string::npos) << chem.out;

  auto last_json = [](const std::string& out) {
    auto pos = out.rfind("\n{\"hits\"");
    return nlohmann::json::parse(out.substr(pos == std::string::npos ? 0 : pos + 1));
  };
  // The compound cards are listed apart: the default listing is the labels, named by
  // product rather than the Highlights boilerplate.
  auto docs_out = run(g + "documents list --limit 100");
  ASSERT_EQ(docs_out.rc, 0) << docs_out.out;
  EXPECT_NE(docs_out.out.find("(6 of 6 documents"), std::string::npos) << docs_out.out;
  EXPECT_NE(docs_out.out.find("Lipitor (atorvastatin calcium)"), std::string::npos) << docs_out.out;
  EXPECT_EQ(docs_out.out.find("These highlights do not include"), std::string::npos) << docs_out.out;
  auto compounds_out = run(g + "documents list --kind compound --limit 1");
  EXPECT_NE(compounds_out.out.find("(1 of "), std::string::npos) << compounds_out.out;
  EXPECT_EQ(compounds_out.out.find("(1 of 6 documents"), std::string::npos) << compounds_out.out;
  auto all_out = run(g + "documents list --kind all --limit 1");
  EXPECT_NE(all_out.out.find("(1 of "), std::string::npos) << all_out.out;
  auto reg = run(g + "search --json --explain --namespace biomed -k 3 What are the warnings on the Humira label?");
  ASSERT_EQ(reg.rc, 0) << reg.out;
  auto r = last_json(reg.out);
  ASSERT_FALSE(r["hits"].empty()) << reg.out;
  const auto& top = r["hits"][0];
  const std::string section = top["metadata"].value("biomed_section", "");
  EXPECT_TRUE(section == "warnings" || section == "warnings_and_precautions" || section == "boxed_warning") << top;
  EXPECT_EQ(top["metadata"]["file_name"], "humira.xml") << top;
  EXPECT_EQ(r["route"]["hints"]["intent"], "regulatory");
  EXPECT_TRUE(top["explain"].contains("tier2")) << top;

  // pipeline.namespace auto (the default): the labels were ingested in the biomed
  // namespace, so a search that names none runs there and finds the Lipitor label.
  auto renal = run(g + "search --json -k 3 atorvastatin dosing in renal impairment");
  ASSERT_EQ(renal.rc, 0) << renal.out;
  auto rn = last_json(renal.out);
  EXPECT_EQ(rn["metadata"]["namespace_step"]["used"], "biomed") << rn["metadata"];
  EXPECT_EQ(rn["metadata"]["namespace_step"]["requested"], "auto");
  bool lipitor = false;
  for (const auto& h : rn["hits"])
    lipitor = lipitor || h["metadata"].value("file_name", "").starts_with("lipitor");
  EXPECT_TRUE(lipitor) << rn["hits"].dump();
  // An explicit core search over these biomed documents says where they are.
  auto core = run(g + "search --namespace core -k 3 atorvastatin dosing in renal impairment");
  ASSERT_EQ(core.rc, 0) << core.out;
  EXPECT_NE(core.out.find("note: documents of this scope were ingested in the biomed namespace"), std::string::npos)
      << core.out;
  auto autos = run(g + "search -k 1 atorvastatin dosing in renal impairment");
  EXPECT_NE(autos.out.find("namespace: biomed (auto: the store holds biomed documents)"), std::string::npos) << autos.out;
  auto bad_ns = run(g + "--set pipeline.namespace=chem search -k 1 atorvastatin");
  EXPECT_NE(bad_ns.rc, 0);
  EXPECT_NE(bad_ns.out.find("pipeline.namespace: expected core, biomed or auto, got 'chem'"), std::string::npos)
      << bad_ns.out;

  // Evidence: the labels hold the Humira question, not an office memo's.
  auto humira = last_json(run(g + "search --json -k 3 What are the warnings on the Humira label?").out);
  EXPECT_EQ(humira["metadata"]["evidence"]["level"], "strong") << humira["metadata"]["evidence"];
  auto budget = last_json(run(g + "search --json -k 3 quarterly budget meeting in Paris").out);
  EXPECT_EQ(budget["metadata"]["evidence"]["level"], "none") << budget["metadata"]["evidence"];
  // The answer: cited from a Lipitor chunk that speaks of renal impairment; none for the memo.
  auto answer = run(g + "query --json atorvastatin dosing in renal impairment");
  ASSERT_EQ(answer.rc, 0) << answer.out;
  const auto a = nlohmann::json::parse(answer.out.substr(answer.out.rfind("\n{\"answer\"") + 1));
  ASSERT_FALSE(a["citations"].empty()) << a.dump();
  const auto& cited = a["sources"][a["citations"][0]["n"].get<size_t>() - 1];
  EXPECT_TRUE(cited["metadata"].value("file_name", "").starts_with("lipitor")) << cited.dump();
  EXPECT_NE(a["citations"][0]["quote"].get<std::string>().find("enal"), std::string::npos) << a["citations"][0];
  auto no_answer = run(g + "query quarterly budget meeting in Paris");
  EXPECT_NE(no_answer.out.find("No passage in the knowledge base answers this question."), std::string::npos)
      << no_answer.out;
  // The evidence report keeps away from test splits.
  auto test_split = run(g + "eval --queries " + (shared / "scifact/queries.jsonl").string() + " --qrels " +
                        (shared / "scifact/qrels/test.tsv").string() + " --evidence-report " + (dir / "rows").string());
  EXPECT_NE(test_split.rc, 0);
  EXPECT_NE(test_split.out.find("is a test split"), std::string::npos) << test_split.out;
  EXPECT_FALSE(fs::exists(dir / "rows"));

  auto sim = run(g + "search --json --namespace biomed -k 10 compounds similar to imatinib");
  ASSERT_EQ(sim.rc, 0) << sim.out;
  auto c = last_json(sim.out);
  ASSERT_EQ(c["route"]["plans"].size(), 1u) << c["route"];
  EXPECT_EQ(c["route"]["plans"][0]["collection"], "eagle_chemical");
  std::vector<std::string> ids;
  for (const auto& h : c["hits"]) ids.push_back(h["id"]);
  EXPECT_NE(std::find(ids.begin(), ids.end(), "DB04868"), ids.end()) << c["hits"].dump();  // nilotinib
  fs::remove_all(dir);
}
#endif

#if EAGLE_TEST_WITH_BIOMED  // the biomed plugin's
// TDR (doc_profile.py): text ingested in the biomed namespace is routed by its profile.
// By default each input goes whole to one collection: the
// oncology abstracts' file to the biomedical collection, the office memos' file to
// the core one. Unit "document" is the seed's per-document split of one mixed file.
TEST(Cli, BiomedIngestRoutesGeneralTextToTheCoreCollection) {
  const fs::path shared(EAGLE_SHARED_DATA);
  ASSERT_TRUE(fs::exists(shared / "vocab")) << "shared data missing: " << shared;
  auto dir = temp_dir("tdr");
  const std::string memo =
      R"({"_id":"memo","text":"The quarterly budget meeting is moved to Friday. Please send your travel receipts to the finance office before the end of the month."})";
  const std::string onc =
      R"({"_id":"onc","title":"Osimertinib in EGFR T790M NSCLC","text":"Osimertinib improved progression-free survival in patients with EGFR T790M-positive non-small cell lung cancer after progression on gefitinib."})";
  std::ofstream(dir / "memos.jsonl") << memo << "\n";
  std::ofstream(dir / "papers.jsonl") << onc << "\n";
  std::ofstream(dir / "mixed.jsonl") << memo << "\n" << onc << "\n";
  // A store per case: re-ingesting a document moves it, so the counts below would mix.
  int stores = 0;
  auto g_of = [&] {
    return "--data-dir " + (dir / ("store" + std::to_string(++stores))).string() + " --set biomed.vocab_dir=" +
           (shared / "vocab").string() + " --set biomed.vocab_cache=" +
           (fs::path(EAGLE_BIN_DIR).parent_path() / "data" / "biomed-vocab.bin").string() + " ";
  };
  auto r = run(g_of() + "ingest --namespace biomed " + (dir / "memos.jsonl").string() + " " + (dir / "papers.jsonl").string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("eagle_text_biomed +1 = 1 rows"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("eagle_text +1 = 1 rows"), std::string::npos) << r.out;
  // One mixed input: one collection (half its documents are biomedical)...
  auto mixed = run(g_of() + "ingest --namespace biomed " + (dir / "mixed.jsonl").string());
  EXPECT_NE(mixed.out.find("eagle_text_biomed +2 = 2 rows"), std::string::npos) << mixed.out;
  // ...or the seed's per-document split.
  auto per_doc = run(g_of() + "--set biomed.document_profile_unit=document ingest --namespace biomed " +
                     (dir / "mixed.jsonl").string());
  EXPECT_NE(per_doc.out.find("eagle_text_biomed +1 = 1 rows"), std::string::npos) << per_doc.out;
  EXPECT_NE(per_doc.out.find("eagle_text +1 = 1 rows"), std::string::npos) << per_doc.out;
  auto bad = run(g_of() + "--set biomed.document_profile_unit=row ingest --namespace biomed " + (dir / "mixed.jsonl").string());
  EXPECT_NE(bad.rc, 0);
  EXPECT_NE(bad.out.find("biomed.document_profile_unit must be input or document, got 'row'"), std::string::npos) << bad.out;
  // Off: everything to the core collection.
  auto off = run(g_of() + "--set biomed.document_profile_routing=false ingest --namespace biomed " +
                 (dir / "mixed.jsonl").string());
  EXPECT_NE(off.out.find("eagle_text +2 = 2 rows"), std::string::npos) << off.out;
  fs::remove_all(dir);
}
#endif

// A Latin-1 file in a folder: an error naming the file and byte (not a JSON library's
// internal error), the store unchanged; --skip-bad skips it, --repair-utf8 keeps it.
// And `eagle repair` cuts a damaged log so the store opens again.
TEST(Cli, InvalidUtf8IsNamedSkippedOrRepaired) {
  auto dir = temp_dir("utf8");
  auto docs = dir / "docs";
  fs::create_directories(docs);
  std::ofstream(docs / "good.md") << "# Heading\n\nbody text\n";
  std::ofstream(docs / "latin1.txt", std::ios::binary) << "na\xEFve text";
  const std::string store = "--data-dir " + (dir / "store").string() + " ";
  ASSERT_EQ(run(store + "ingest --skip-bad " + docs.string()).rc, 0);
  const std::string before = tree_digest(dir / "store");
  auto strict = run(store + "ingest " + docs.string());
  EXPECT_NE(strict.rc, 0);
  EXPECT_NE(strict.out.find("latin1.txt: invalid UTF-8 at byte 2"), std::string::npos) << strict.out;
  EXPECT_EQ(strict.out.find("internal error"), std::string::npos) << strict.out;
  EXPECT_EQ(tree_digest(dir / "store"), before);
  auto repaired = run(store + "ingest --repair-utf8 " + docs.string());
  ASSERT_EQ(repaired.rc, 0) << repaired.out;
  auto found = run(store + "search --json -k 1 \"na ve text\"");
  EXPECT_NE(found.out.find("na\xEF\xBF\xBDve text"), std::string::npos) << found.out;
}

TEST(Cli, RepairCutsADamagedLogSoTheStoreOpensAgain) {
  auto dir = temp_dir("repair");
  const std::string store = "--data-dir " + (dir / "store").string() + " ";
  // Three ingests, no checkpoint: each is a transaction of two log records (its part
  // and its commit record) that live only in the log.
  for (int i = 0; i < 3; ++i) {
    const auto f = dir / ("one" + std::to_string(i) + ".jsonl");
    std::ofstream(f) << "{\"_id\":\"d" << i << "\",\"text\":\"zzrepair record number" << i << "\"}\n";
    ASSERT_EQ(run(store + "--set ingest.checkpoint=false ingest " + f.string()).rc, 0);
  }
  fs::path log;
  for (const auto& e : fs::directory_iterator(dir / "store" / "collections" / "eagle_text"))
    if (e.path().extension() == ".log") log = e.path();
  ASSERT_FALSE(log.empty());
  uint64_t third = 0;  // where the third record (the second ingest's part) begins
  {
    std::fstream io(log, std::ios::in | std::ios::out | std::ios::binary);
    for (int frame = 0; frame < 2; ++frame) {
      uint32_t len = 0;
      io.seekg(static_cast<std::streamoff>(third));
      io.read(reinterpret_cast<char*>(&len), 4);
      third += 17 + len;
    }
    // A byte inside the third record's payload: intact records follow it.
    io.seekp(static_cast<std::streamoff>(third + 17 + 10));
    io.put('#');
  }
  const std::string damaged_at = std::to_string(third);
  auto broken = run(store + "search zzrepair");
  EXPECT_NE(broken.rc, 0);
  EXPECT_NE(broken.out.find("data_loss"), std::string::npos) << broken.out;
  EXPECT_NE(broken.out.find("corrupt at byte " + damaged_at), std::string::npos) << broken.out;
  auto fixed = run(store + "repair");
  ASSERT_EQ(fixed.rc, 0) << fixed.out;
  EXPECT_NE(fixed.out.find("cut at byte " + damaged_at + ", 2 intact records kept"), std::string::npos) << fixed.out;
  auto after = run(store + "search --json zzrepair");
  ASSERT_EQ(after.rc, 0) << after.out;
  EXPECT_NE(after.out.find("\"d0\""), std::string::npos) << after.out;
  EXPECT_EQ(after.out.find("\"d1\""), std::string::npos) << after.out;  // damaged
  EXPECT_EQ(after.out.find("\"d2\""), std::string::npos) << after.out;  // it followed the damage
  EXPECT_NE(run(store + "repair").out.find("nothing to repair"), std::string::npos);
}

// An ingest is one transaction. Killed (SIGKILL) after it has staged
// batches in the log, it leaves the store as it was: the same rows, the same hits,
// and the next ingest works. The corpus: BioASQ dev snippets, several batches' worth.
TEST(Cli, AKilledIngestLeavesTheStoreAsItWas) {
  auto dir = temp_dir("killed");
  fs::create_directories(dir);
  const std::string store = "--data-dir " + (dir / "store").string() + " ";
  const fs::path bioasq = eagle::testing::shared_data() / "bioasq" / "corpus.jsonl";
  ASSERT_TRUE(fs::exists(bioasq)) << "shared data missing: " << bioasq;
  {
    std::ofstream first(dir / "first.jsonl");
    first << "{\"_id\":\"kept1\",\"text\":\"cystic fibrosis transmembrane conductance regulator\"}\n"
          << "{\"_id\":\"kept2\",\"text\":\"bleomycin pulmonary fibrosis in mice\"}\n";
  }
  ASSERT_EQ(run(store + "ingest " + (dir / "first.jsonl").string()).rc, 0);
  auto hits = [&] {
    auto r = run(store + "search --json -k 5 \"cystic fibrosis\"");
    auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')), nullptr, false);
    std::vector<std::string> ids;
    if (j.is_object())
      for (const auto& h : j["hits"]) ids.push_back(h.value("id", ""));
    return ids;
  };
  const auto before = hits();
  ASSERT_EQ(before.size(), 2u);
  const fs::path log = dir / "store" / "collections" / "eagle_text";
  auto log_bytes = [&] { return eagle::test_support::log_bytes(log); };
  const uint64_t log_before = log_bytes();
  // The child ingests the whole BioASQ corpus in batches of 256 rows; it is killed as
  // soon as its first staged batch reaches the log.
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string bin = std::string(EAGLE_BIN_DIR) + "/eagle";
    const std::string data = (dir / "store").string();
    ::execl(bin.c_str(), bin.c_str(), "--data-dir", data.c_str(), "--set", "ingest.commit_rows=256", "ingest",
            bioasq.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  const bool killed = eagle::test_support::kill_when(pid, [&] { return log_bytes() > log_before; }, status);
  ASSERT_TRUE(killed) << "the ingest ended before it was killed (exit " << status << ")";
  EXPECT_GT(log_bytes(), log_before);  // staged parts are in the log ...
  EXPECT_EQ(hits(), before);            // ... and none of them is seen
  auto listed = run(store + "collections --json");
  auto cj = nlohmann::json::parse(listed.out.substr(std::min(listed.out.find('{'), listed.out.size())), nullptr, false);
  ASSERT_TRUE(cj.is_object()) << listed.out;
  ASSERT_EQ(cj["collections"].size(), 1u) << listed.out;
  EXPECT_EQ(cj["collections"][0].value("rows", -1), 2) << listed.out;
  // The store takes the next ingest.
  ASSERT_EQ(run(store + "ingest " + (dir / "first.jsonl").string()).rc, 0);
  EXPECT_EQ(hits(), before);
  fs::remove_all(dir);
}

// `eagle eval --data-dir STORE --queries --qrels` evaluates a store
// built by `eagle ingest` through the Engine (what `eagle search` returns), and the
// in-memory BEIR shortcut gives the very same figures (SciFact train, pipeline, core).
TEST(Cli, EvalOfAStoreMatchesTheBeirShortcutOnSciFactTrain) {
  const fs::path scifact = eagle::testing::shared_data() / "scifact";
  ASSERT_TRUE(fs::exists(scifact / "qrels" / "train.tsv")) << "shared data missing: " << scifact;
  auto dir = temp_dir("eval_store");
  fs::create_directories(dir);
  const std::string store = (dir / "store").string();
  ASSERT_EQ(run("--data-dir " + store + " ingest " + scifact.string()).rc, 0);
  auto metrics = [](const std::string& out) {
    // The metric table: every line from "metric" on, up to the store's failure classes.
    const auto at = out.find("metric ");
    if (at == std::string::npos) return std::string();
    const auto classes = out.find("failure classes:", at);
    return out.substr(at, classes == std::string::npos ? std::string::npos : classes - at);
  };
  auto from_store = run("eval --data-dir " + store + " --queries " + (scifact / "queries.jsonl").string() +
                        " --qrels " + (scifact / "qrels" / "train.tsv").string() + " --depth 100 --run " +
                        (dir / "store.run").string());
  ASSERT_EQ(from_store.rc, 0) << from_store.out;
  auto shortcut = run("eval --beir " + scifact.string() + " --split train --retriever pipeline --depth 100 --run " +
                      (dir / "beir.run").string());
  ASSERT_EQ(shortcut.rc, 0) << shortcut.out;
  EXPECT_NE(from_store.out.find("queries 809"), std::string::npos) << from_store.out;
  ASSERT_FALSE(metrics(from_store.out).empty()) << from_store.out;
  EXPECT_EQ(metrics(from_store.out), metrics(shortcut.out));
  // The seed's failure class of every query (all the gold is stored and searched).
  EXPECT_NE(from_store.out.find("failure classes: ok "), std::string::npos) << from_store.out;
  EXPECT_EQ(from_store.out.find("gold_corpus_gap"), std::string::npos) << from_store.out;
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  // The same documents, ranks and scores (compared line by line: a failure names the
  // first difference rather than diffing 80,900 lines).
  std::istringstream a(slurp(dir / "store.run")), b(slurp(dir / "beir.run"));
  size_t lines = 0;
  for (std::string la, lb; std::getline(a, la);) {
    ASSERT_TRUE(std::getline(b, lb)) << "the shortcut's run ends at line " << lines;
    ASSERT_EQ(la, lb) << "line " << lines + 1;
    ++lines;
  }
  EXPECT_EQ(lines, 80900u);  // 809 queries x depth 100
  // Wrong use is an error naming what is missing.
  auto lonely = run("eval --data-dir " + store + " --queries " + (scifact / "queries.jsonl").string());
  EXPECT_NE(lonely.rc, 0);
  EXPECT_NE(lonely.out.find("--qrels"), std::string::npos) << lonely.out;
  fs::remove_all(dir);
}

// On real data: the hit count a user asks for is what they get (-k above the recall
// depth too), a bad count or a blank query is an error naming what is wrong (not 10
// hits, or hits scored 0.0 with exit 0), a facet given twice on one field matches
// either value (not only the last), and the indexed fields biomed_section,
// primary_drugs and kb_name can be faceted.
TEST(Cli, SearchGivesTheHitsAskedForAndFacetsEveryIndexedField) {
  auto dir = temp_dir("search_k");
  fs::create_directories(dir);
  const std::string sf = "--data-dir " + (dir / "scifact").string() + " ";
  ASSERT_EQ(run(sf + "ingest " + (eagle::testing::shared_data() / "scifact").string()).rc, 0);
  auto hits_of = [](const Result& r) {
    auto j = nlohmann::json::parse(r.out.substr(std::min(r.out.find('{'), r.out.size())), nullptr, false);
    return j.is_object() ? j["hits"] : nlohmann::json::array();
  };
  auto k100 = run(sf + "search --json -k 100 cancer");
  ASSERT_EQ(k100.rc, 0) << k100.out;
  EXPECT_EQ(hits_of(k100).size(), 100u);
  auto blank = run(sf + "search '   '");
  EXPECT_NE(blank.rc, 0);
  EXPECT_NE(blank.out.find("the query is empty"), std::string::npos) << blank.out;
  auto stop_words = run(sf + "search 'the of and'");  // scored 0.77 by the dense leg alone
  EXPECT_NE(stop_words.rc, 0);
  EXPECT_NE(stop_words.out.find("the query has no searchable words"), std::string::npos) << stop_words.out;
  auto zero = run(sf + "search -k 0 cancer");
  EXPECT_NE(zero.rc, 0);
  EXPECT_NE(zero.out.find("-k must be in [1, 1000], got 0"), std::string::npos) << zero.out;
  auto env = eagle::test_support::run_shell("EAGLE_SEARCH_TOP_K=5000 " + std::string(EAGLE_BIN_DIR) + "/eagle " + sf +
                                           "search cancer");
  EXPECT_NE(env.rc, 0);
  EXPECT_NE(env.out.find("search.top_k"), std::string::npos) << env.out;

#if EAGLE_TEST_WITH_BIOMED  // the facets of the biomed plugin's chunk fields, on its labels
  const std::string spl = "--data-dir " + (dir / "spl").string() + " ";
  ASSERT_EQ(run(spl + "ingest --namespace biomed --skip-bad " + (eagle::testing::shared_data() / "spl").string()).rc, 0);
  auto years = [&](const std::string& facets) {
    std::set<int64_t> out;
    auto r = run(spl + "search --namespace biomed --json -k 100 " + facets + " dosage");
    EXPECT_EQ(r.rc, 0) << r.out;
    for (const auto& h : hits_of(r)) out.insert(h["metadata"].value("year", int64_t{0}));
    return out;
  };
  const auto only_2010 = years("--facet year=2010"), only_2017 = years("--facet year=2017");
  ASSERT_EQ(only_2010, (std::set<int64_t>{2010}));
  ASSERT_EQ(only_2017, (std::set<int64_t>{2017}));
  EXPECT_EQ(years("--facet year=2010 --facet year=2017"), (std::set<int64_t>{2010, 2017}));
  for (const std::string facet : {"biomed_section=warnings", "primary_drugs=sildenafil", "kb_name=none"}) {
    auto r = run(spl + "search --namespace biomed --json -k 20 --facet " + facet + " dosage");
    ASSERT_EQ(r.rc, 0) << facet << ": " << r.out;
    const auto field = facet.substr(0, facet.find('=')), value = facet.substr(facet.find('=') + 1);
    for (const auto& h : hits_of(r)) {
      const auto& v = h["metadata"][field];
      EXPECT_TRUE(v == value || (v.is_array() && std::find(v.begin(), v.end(), value) != v.end()))
          << facet << " let through " << v.dump();
    }
    if (field != "kb_name") {
      EXPECT_FALSE(hits_of(r).empty()) << facet;
    }
  }
#endif
  fs::remove_all(dir);
}

// Caches (the converted GloVe vectors, the biomed vocabulary) go to the cache folder,
// never the working directory: a run from another folder leaves that folder as it was.
TEST(Cli, CachesGoToTheCacheFolderNeverTheWorkingDirectory) {
  const auto dir = temp_dir("cache");
  const auto cwd = dir / "elsewhere";
  fs::create_directories(cwd);
  const std::string eagle = std::string(EAGLE_BIN_DIR) + "/eagle";
  auto r = eagle::test_support::run_shell("cd " + cwd.string() + " && XDG_CACHE_HOME=" + (dir / "xdg").string() + " " +
                                          eagle + " --data-dir " + (dir / "store").string() + " ingest " +
                                          std::string(EAGLE_SOURCE_DIR) + "/examples/sample");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(fs::is_empty(cwd)) << "the run wrote into its working directory";
  EXPECT_TRUE(fs::exists(dir / "xdg" / "eagle" / "glove100.eaglewv")) << r.out;
  // Where each default lands: XDG_CACHE_HOME, else HOME/.cache, else DATA_DIR/cache.
  auto where = [&](const std::string& env) {
    auto c = eagle::test_support::run_shell("cd " + cwd.string() + " && env -u XDG_CACHE_HOME -u HOME " + env + " " +
                                            eagle + " --data-dir " + (dir / "store").string() + " config");
    EXPECT_EQ(c.rc, 0) << c.out;
    const auto at = c.out.find("\ncache_dir: ");
    return at == std::string::npos ? std::string() : c.out.substr(at + 12, c.out.find('\n', at + 1) - at - 12);
  };
  EXPECT_EQ(where("XDG_CACHE_HOME=/x/y"), "/x/y/eagle");
  EXPECT_EQ(where("XDG_CACHE_HOME=relative HOME=/h"), "/h/.cache/eagle");  // XDG paths must be absolute
  EXPECT_EQ(where(""), (dir / "store" / "cache").string());
  EXPECT_EQ(where("HOME=/h EAGLE_CACHE_DIR=/c"), "/c");
  EXPECT_TRUE(fs::is_empty(cwd));
}
