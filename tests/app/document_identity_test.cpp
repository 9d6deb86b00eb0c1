// Issue 13, identity: one document_id per source document shared by its chunks, chunk
// ids that survive edits elsewhere, re-ingest that replaces a document's chunks, a
// single Markdown file read as Markdown, and a JSONL record's tags, kb_name, journal
// and nested metadata kept. Each case failed before the fix.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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
