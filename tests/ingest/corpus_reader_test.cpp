#include "eagle/ingest/corpus_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "eagle/core/error.h"

namespace fs = std::filesystem;
using namespace eagle::ingest;

namespace {
fs::path temp_dir(const std::string& name) {
  auto p = fs::temp_directory_path() / ("eagle_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}
}  // namespace

TEST(CorpusReader, ParsesBeirAndPlainRecords) {
  auto d = parse_json_record(R"({"_id":"4983","title":"T","text":"body","metadata":{"pmid":"1"}})");
  EXPECT_EQ(d.id, "4983");
  EXPECT_EQ(d.title, "T");
  EXPECT_EQ(d.text, "body");
  EXPECT_EQ(d.metadata_json, R"({"pmid":"1"})");
  auto p = parse_json_record(R"({"id":17,"text":"x","year":2021})");
  EXPECT_EQ(p.id, "17");
  EXPECT_EQ(p.metadata_json, R"({"year":2021})");
  EXPECT_THROW(parse_json_record(R"({"text":"no id"})"), eagle::Error);
  EXPECT_THROW(parse_json_record(R"({"_id":"1"})"), eagle::Error);
  EXPECT_THROW(parse_json_record(R"({"_id":"1","text":5})"), eagle::Error);
  EXPECT_THROW(parse_json_record(R"([1,2])"), eagle::Error);
}

TEST(CorpusReader, MalformedLineIsReportedWithFileAndLine) {
  auto dir = temp_dir("bad");
  auto f = dir / "c.jsonl";
  std::ofstream(f) << R"({"_id":"a","text":"ok"})" << "\n"
                   << "\n"
                   << R"({"_id":"b","text": oops})" << "\n"
                   << R"({"_id":"c","text":"ok"})" << "\n";
  ReadOptions strict;
  try {
    read_corpus(f, strict);
    FAIL() << "expected an error";
  } catch (const eagle::Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("c.jsonl:3:"), std::string::npos) << msg;
  }
  ReadOptions lenient;
  lenient.skip_bad = true;
  auto r = read_corpus(f, lenient);
  ASSERT_EQ(r.documents.size(), 2u);
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_EQ(r.skipped[0].line, 3u);
  fs::remove_all(dir);
}

TEST(CorpusReader, DuplicateIdsAreRejectedOrSkipped) {
  auto dir = temp_dir("dup");
  auto f = dir / "c.jsonl";
  std::ofstream(f) << R"({"_id":"a","text":"one"})" << "\n" << R"({"_id":"a","text":"two"})" << "\n";
  EXPECT_THROW(read_corpus(f, {}), eagle::Error);
  ReadOptions lenient;
  lenient.skip_bad = true;
  auto r = read_corpus(f, lenient);
  EXPECT_EQ(r.documents.size(), 1u);
  EXPECT_EQ(r.documents[0].text, "one");
  fs::remove_all(dir);
}

TEST(CorpusReader, MarkdownSplitsIntoHeadingSections) {
  auto parts = split_markdown("paper.md",
                              "# Title\nintro text\n## Methods\nwe did\n```\n# not a heading\n```\n"
                              "## Results\n### Efficacy\nORR 40%\n");
  // "## Results" has no body of its own, so it makes no passage.
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].title, "Title");
  EXPECT_EQ(parts[1].title, "Title / Methods");
  EXPECT_NE(parts[1].text.find("# not a heading"), std::string::npos);
  EXPECT_EQ(parts[2].title, "Title / Results / Efficacy");
  EXPECT_EQ(parts[2].text, "ORR 40%");
  EXPECT_EQ(parts[2].id, "paper.md#2");
}

TEST(CorpusReader, FolderReadsMarkdownTextAndJsonl) {
  auto dir = temp_dir("folder");
  std::ofstream(dir / "a.md") << "# A\nalpha text\n";
  std::ofstream(dir / "b.txt") << "plain text file\n";
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "sub" / "c.jsonl") << R"({"_id":"c1","text":"json text"})" << "\n";
  std::ofstream(dir / "ignored.bin") << "zzz";
  auto r = read_corpus(dir, {});
  ASSERT_EQ(r.documents.size(), 3u);
  EXPECT_EQ(r.documents[0].id, "a.md#0");
  EXPECT_EQ(r.documents[1].id, "b.txt");
  EXPECT_EQ(r.documents[2].id, "c1");
  fs::remove_all(dir);
}

TEST(CorpusReader, MissingInputIsNotFound) {
  try {
    read_corpus("/nonexistent/eagle/input", {});
    FAIL();
  } catch (const eagle::Error& e) {
    EXPECT_EQ(e.code(), eagle::ErrorCode::not_found);
  }
}
