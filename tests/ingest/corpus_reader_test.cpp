#include "eagle/ingest/corpus_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "eagle/core/error.h"

namespace fs = std::filesystem;
using namespace eagle::ingest;
using nlohmann::json;

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
  // Ids come from the heading path, not the position, so edits elsewhere keep them.
  EXPECT_EQ(parts[0].id, "paper.md#title");
  EXPECT_EQ(parts[2].id, "paper.md#title-results-efficacy");
  EXPECT_EQ(json::parse(parts[2].metadata_json)["document_id"], "paper.md");
  // A section added before it, or cut elsewhere, leaves its id unchanged; a heading
  // path repeated in one file is numbered in order.
  auto edited = split_markdown("paper.md", "# Title\nnew intro\n## Background\nnew\n## Results\n### Efficacy\n"
                                           "ORR 41%\n## Results\n### Efficacy\nsecond\n");
  ASSERT_EQ(edited.size(), 4u);
  EXPECT_EQ(edited[2].id, "paper.md#title-results-efficacy");
  EXPECT_EQ(edited[3].id, "paper.md#title-results-efficacy~2");
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
  EXPECT_EQ(r.documents[0].id, "a.md#a");
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

// Invalid UTF-8 is an error naming the file and the byte, which --skip-bad skips and
// --repair-utf8 repairs; never a JSON library's type_error that ends the whole ingest.
TEST(CorpusReader, InvalidUtf8NamesFileAndByteAndCanBeSkippedOrRepaired) {
  auto dir = temp_dir("utf8");
  std::ofstream(dir / "good.md") << "# Title\n\nclean text\n";
  std::ofstream(dir / "bad.txt", std::ios::binary) << "caf\xE9 au lait";  // Latin-1, not UTF-8
  ReadOptions opt;
  opt.format = InputFormat::folder;
  try {
    read_corpus(dir, opt);
    FAIL() << "invalid UTF-8 was read";
  } catch (const eagle::Error& e) {
    EXPECT_EQ(e.code(), eagle::ErrorCode::invalid_argument);
    const std::string m = e.what();
    EXPECT_NE(m.find((dir / "bad.txt").string() + ": invalid UTF-8 at byte 3"), std::string::npos) << m;
  }
  opt.skip_bad = true;
  auto skipped = read_corpus(dir, opt);
  ASSERT_EQ(skipped.documents.size(), 1u);
  ASSERT_EQ(skipped.skipped.size(), 1u);
  EXPECT_EQ(skipped.skipped[0].file, (dir / "bad.txt").string());
  opt.skip_bad = false;
  opt.repair_utf8 = true;
  auto repaired = read_corpus(dir, opt);
  ASSERT_EQ(repaired.documents.size(), 2u);
  EXPECT_EQ(repaired.documents[0].text, "caf\xEF\xBF\xBD au lait");

  // In JSONL the offset is the file's, and the line is named.
  auto jsonl = dir / "records.jsonl";
  fs::remove(dir / "bad.txt");
  std::ofstream(jsonl, std::ios::binary) << R"({"_id":"a","text":"ok"})" << "\n"
                                         << "{\"_id\":\"b\",\"text\":\"\xFF\"}\n";
  ReadOptions strict;
  try {
    read_corpus(jsonl, strict);
    FAIL();
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find("records.jsonl:2: invalid UTF-8 at byte 43"), std::string::npos) << e.what();
  }
  // A file name that is not UTF-8 is refused too (it becomes the document id).
  fs::remove(jsonl);
  std::ofstream(dir / "na\xEFve.txt") << "text";
  ReadOptions plain;
  plain.format = InputFormat::folder;
  try {
    read_corpus(dir, plain);
    FAIL();
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find("the file name is not valid UTF-8"), std::string::npos) << e.what();
  }
  auto named = read_corpus(dir, opt);  // repair_utf8
  bool found = false;
  for (const auto& d : named.documents) found = found || d.id == "na\xEF\xBF\xBDve.txt";
  EXPECT_TRUE(found);
  fs::remove_all(dir);
}
