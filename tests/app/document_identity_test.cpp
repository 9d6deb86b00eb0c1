// Document identity: one document_id per source document shared by its chunks, chunk
// ids that survive edits elsewhere, re-ingest that replaces a document's chunks, a
// single Markdown file read as Markdown, and a JSONL record's tags, kb_name, journal
// and nested metadata kept.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "support/engine_config.h"
#include "support/temp_engine.h"
#include "eagle/app/engine.h"
#include "eagle/core/error.h"

namespace fs = std::filesystem;
using namespace eagle;
using namespace eagle::app;
using nlohmann::json;

namespace {

struct Store : eagle::test_support::TempEngine {
  Store() : TempEngine("identity") {}
  std::vector<std::string> hit_ids(const std::string& query) {
    std::vector<std::string> out;
    for (const auto& h : search(query, 20).hits) out.push_back(h.id);
    return out;
  }
};

size_t count(const std::vector<std::string>& v, const std::string& prefix) {
  return std::count_if(v.begin(), v.end(), [&](const std::string& s) { return s.rfind(prefix, 0) == 0; });
}

}  // namespace

TEST(DocumentIdentity, AMarkdownFileIsOneDocumentAndReingestReplacesItsSections) {
  Store s;
  const auto md = s.dir / "trial.md";
  std::ofstream(md) << "# Trial\nzqsum overview\n## Methods\nzqsum methods\n## Results\nzqsum results first\n"
                       "## Conclusion\nzqsum conclusion old\n";
  // A single .md file is read as Markdown (it used to be parsed as JSONL), with the
  // structure rules of the other formats: its first "#" heading is its title, the
  // text under it has no section, each "##" is a section with its summary.
  auto rep = s.engine->ingest({md.string()}, {});
  EXPECT_EQ(rep.rows, 7u);  // the text under the title, three sections, three summaries
  EXPECT_EQ(rep.documents, 1u);
  auto doc = s.engine->document("trial.md");
  ASSERT_TRUE(doc);
  EXPECT_EQ(doc->chunks.size(), 7u);
  for (const auto& c : doc->chunks) EXPECT_EQ(c.metadata.value("document_id", ""), "trial.md") << c.id;
  EXPECT_EQ(doc->record.file_name, "trial.md");
  EXPECT_EQ(doc->record.document_name, "Trial");
  auto ids = s.hit_ids("zqsum");
  EXPECT_EQ(count(ids, "trial.md#results:"), 1u);  // the chunk, its summary folded beside it

  // Cut to two sections and ingested again: the old Conclusion is gone, one Results.
  std::ofstream(md) << "# Trial\nzqsum overview\n## Results\nzqsum results second\n";
  s.engine->ingest({md.string()}, {});
  ids = s.hit_ids("zqsum");
  EXPECT_EQ(count(ids, "trial.md#conclusion"), 0u);
  EXPECT_EQ(count(ids, "trial.md#methods"), 0u);
  EXPECT_EQ(count(ids, "trial.md#results:"), 1u);
  doc = s.engine->document("trial.md");
  EXPECT_EQ(doc->chunks.size(), 3u);
  for (const auto& c : doc->chunks) EXPECT_EQ(c.text.find("results first"), std::string::npos) << c.id;
}

TEST(DocumentIdentity, JsonlChunksShareTheirDocumentAndKeepTagsKbAndMetadata) {
  Store s;
  const auto file = s.dir / "chunks.jsonl";
  std::ofstream(file)
      << json{{"_id", "p1#0"}, {"text", "zqmet amplification background"}, {"document_id", "paper-1"},
              {"kb_name", "onc"}, {"tags", {"met", "nsclc"}}, {"journal", "Lancet Oncol"},
              {"metadata", {{"doi", "10.1/x"}, {"authors", {"A. B", "C. D"}}, {"year", 2021}}}}
             .dump()
      << "\n"
      << json{{"_id", "p1#1"}, {"text", "zqmet savolitinib results"}, {"document_id", "paper-1"}, {"kb_name", "onc"}}
             .dump()
      << "\n"
      << json{{"_id", "solo"}, {"title", "Other"}, {"text", "zqmet unrelated"}}.dump() << "\n";
  auto rep = s.engine->ingest({file.string()}, {});
  EXPECT_EQ(rep.rows, 3u);
  EXPECT_EQ(rep.documents, 2u);
  auto doc = s.engine->document("paper-1");
  ASSERT_TRUE(doc);
  EXPECT_EQ(doc->chunks.size(), 2u);
  EXPECT_EQ(doc->record.kb_name, "onc");
  EXPECT_EQ(doc->tags, (std::vector<std::string>{"met", "nsclc"}));
  EXPECT_EQ(doc->record.year, 2021);
  const auto& first = doc->chunks[0];
  EXPECT_EQ(first.metadata.value("kb_name", ""), "onc");
  ASSERT_TRUE(first.metadata.contains("metadata")) << first.metadata.dump();
  EXPECT_EQ(first.metadata["metadata"]["journal"], "Lancet Oncol");
  EXPECT_EQ(first.metadata["metadata"]["doi"], "10.1/x");
  EXPECT_EQ(first.metadata["metadata"]["authors"][1], "C. D");
  ASSERT_TRUE(s.engine->document("solo"));  // a record that names no document is its own

  // Tags that are not a list of strings are a bad record: named, skippable.
  const auto bad = s.dir / "bad.jsonl";
  std::ofstream(bad) << json{{"_id", "b1"}, {"text", "x"}, {"tags", "met"}}.dump() << "\n";
  try {
    s.engine->ingest({bad.string()}, {});
    ADD_FAILURE() << "tags as a string were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.jsonl:1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tags"), std::string::npos) << e.what();
  }
  IngestOptions skip;
  skip.skip_bad = true;
  EXPECT_EQ(s.engine->ingest({bad.string()}, skip).skipped.size(), 1u);
}

// A scoped ingest keeps its documents as "<kb>:<id>": an id another tenant holds is
// ingested exactly as an absent one (refusing it told the tenant that it existed), the
// tenant's own plain-id documents are still replaced in place, edges follow the new
// ids, and "<kb>:" is kept for that knowledge base's documents.
TEST(DocumentIdentity, AScopedIngestKeepsItsIdsUnderItsKnowledgeBase) {
  const fs::path dir = fs::temp_directory_path() / ("eagle_identity_scoped_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto cfg = eagle::test_support::engine_test_config(dir / "store");
  cfg.auth_tokens = json::parse(R"([{"name": "a", "token_env": "UNUSED", "kb_names": ["ka"]}])");
  {
    Engine engine(cfg, StoreAccess::write, "test");
    auto write = [&](const std::string& name, const std::string& text) {
      std::ofstream(dir / name) << text;
      return (dir / name).string();
    };
    IngestOptions theirs;
    theirs.kb_name = "kb";
    engine.ingest({write("theirs.jsonl", R"({"id": "shared", "text": "zqtenant theirs"})" "\n")}, theirs);
    IngestOptions own_before;
    own_before.kb_name = "ka";
    engine.ingest({write("own.jsonl", R"({"id": "own", "text": "zqtenant own old"})" "\n")}, own_before);

    IngestOptions scoped;
    scoped.kb_name = "ka";
    scoped.scope.kb_names = {"ka"};
    const std::string mine = write("mine.jsonl", R"({"id": "shared", "text": "zqtenant mine"})" "\n"
                                                 R"({"id": "absent", "text": "zqtenant fresh"})" "\n"
                                                 R"({"id": "own", "text": "zqtenant own new"})" "\n");
    auto rep = engine.ingest({mine}, scoped);
    EXPECT_EQ(rep.documents, 3u);
    // The other tenant's document is untouched; the tenant's copy sits under its KB,
    // just as the id no one held.
    auto other = engine.document("shared");
    ASSERT_TRUE(other);
    EXPECT_EQ(other->record.kb_name, "kb");
    ASSERT_EQ(other->chunks.size(), 1u);
    EXPECT_EQ(other->chunks[0].text, "zqtenant theirs");
    for (const std::string id : {"ka:shared", "ka:absent"}) {
      auto d = engine.document(id);
      ASSERT_TRUE(d) << id;
      EXPECT_EQ(d->record.kb_name, "ka");
      ASSERT_EQ(d->chunks.size(), 1u);
      EXPECT_EQ(d->chunks[0].id, id);
    }
    EXPECT_FALSE(engine.document("absent"));
    // Its own plain-id document is replaced in place.
    auto own = engine.document("own");
    ASSERT_TRUE(own);
    ASSERT_EQ(own->chunks.size(), 1u);
    EXPECT_EQ(own->chunks[0].text, "zqtenant own new");
    EXPECT_FALSE(engine.document("ka:own"));
    // Again: the same documents, not "ka:ka:...".
    engine.ingest({mine}, scoped);
    EXPECT_FALSE(engine.document("ka:ka:shared"));
    EXPECT_TRUE(engine.document("ka:shared"));

    // A structured document's chunks and their edges follow the new id.
    const std::string md = write("trial.md", "# Trial\nzqedge overview\n## Methods\nzqedge methods\n");
    engine.ingest({md}, scoped);
    auto trial = engine.document("ka:trial.md");
    ASSERT_TRUE(trial);
    std::set<std::string> ids;
    for (const auto& c : trial->chunks) ids.insert(c.id);
    size_t edges = 0;
    for (const auto& c : trial->chunks) {
      EXPECT_EQ(c.id.rfind("ka:trial.md", 0), 0u) << c.id;
      EXPECT_EQ(c.metadata.value("document_id", ""), "ka:trial.md");
      if (!c.metadata.contains("connect_to") || !c.metadata["connect_to"].is_array()) continue;
      for (const auto& e : c.metadata["connect_to"]) {
        const std::string target = e.is_string() ? e.get<std::string>() : e.value("target", "");
        EXPECT_TRUE(ids.count(target)) << "edge to " << target;
        ++edges;
      }
    }
    EXPECT_GT(edges, 0u);

    // An unscoped ingest into another KB may not take "ka:" ids; into ka it may.
    const std::string reserved = write("reserved.jsonl", R"({"id": "ka:zz", "text": "zqtenant reserved"})" "\n");
    EXPECT_THROW(engine.ingest({reserved}, theirs), Error);
    EXPECT_NO_THROW(engine.ingest({reserved}, own_before));
  }
  fs::remove_all(dir);
}
