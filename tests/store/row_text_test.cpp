// Row texts are kept on disk and read by reference (row_texts.h), so the memory of
// a large ingest (a million rows) does not grow with its texts.
// These tests hold the references to an exact oracle (a map of every id to the text
// it was given) through every state change that moves them: spill buffer, spill file,
// checkpoint into a segment, upserts, deletes, compaction and reopening; and check
// that a flipped byte in a referenced text is reported, never served.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "eagle/core/error.h"
#include "eagle/store/collection.h"
#include "eagle/store/row_texts.h"
#include "support/store_fixtures.h"

namespace fs = std::filesystem;
using namespace eagle;
using namespace eagle::store;

namespace {

constexpr uint32_t kRowTextDim = 4;

std::string text_for(std::mt19937& rng, int i) {
  // Varied lengths (empty, then up to ~3,000 bytes), multi-byte UTF-8, and the id
  // inside so every other text is distinct.
  static const char* words[] = {"kinase", "inhibitor", "β-lactam", "EGFR", "naïve", "T790M", "cell", "出血"};
  if (i % 97 == 0) return "";
  std::string t = "row " + std::to_string(i) + ":";
  const int n = static_cast<int>(rng() % 300);
  for (int w = 0; w < n; ++w) t += std::string(" ") + words[rng() % 8];
  return t;
}

void expect_texts(const Collection& c, const std::map<std::string, std::string>& oracle, const char* when) {
  ASSERT_EQ(c.count(), oracle.size()) << when;
  for (const auto& [id, text] : oracle) {
    const auto got = c.get(id);
    ASSERT_TRUE(got.has_value()) << when << ": " << id;
    ASSERT_EQ(got->text, text) << when << ": " << id;
  }
  // The page walk reads them too.
  size_t from = 0, next = 0, seen = 0;
  for (;;) {
    const auto page = c.scan(from, 500, &next);
    if (page.empty()) break;
    for (const auto& r : page) {
      ASSERT_EQ(r.text, oracle.at(r.id)) << when << " (scan): " << r.id;
      ++seen;
    }
    from = next;
  }
  EXPECT_EQ(seen, oracle.size()) << when;
}

TEST(RowTexts, ReferencesFollowEveryStateChangeExactly) {
  const auto dir = eagle::testing::fresh_temp_dir("row_texts", "states");
  const auto schema = chunk_schema("c", kRowTextDim);
  std::mt19937 rng(12);
  std::map<std::string, std::string> oracle;
  auto make = [&](int from, int to, const std::string& tag) {
    std::vector<Record> rows;
    for (int i = from; i < to; ++i) {
      const std::string id = "r" + std::to_string(i);
      const std::string text = tag + text_for(rng, i);
      oracle[id] = text;
      rows.push_back(eagle::testing::chunk_record(schema, id, text, {1, 2, 3, static_cast<float>(i % 7)}));
    }
    return rows;
  };
  {
    auto c = Collection::create(dir, schema);
    // ~3 MB of text: more than the spill's 1 MB buffer, so some texts are read back
    // from the spill file and the last ones from its buffer.
    c->insert(make(0, 3000, ""));
    expect_texts(*c, oracle, "spilled");
    c->checkpoint();
    expect_texts(*c, oracle, "after the checkpoint (segment)");
    // Newer rows in the spill beside older ones in the segment; upserts and deletes.
    c->insert(make(3000, 3500, ""));
    c->upsert(make(100, 400, "v2 "));
    std::vector<std::string> gone;
    for (int i = 1000; i < 1300; ++i) gone.push_back("r" + std::to_string(i));
    c->remove(gone);
    for (const auto& id : gone) oracle.erase(id);
    expect_texts(*c, oracle, "segment and spill");
    // Rows staged and aborted stay behind as hidden rows; a checkpoint rewrites them
    // too and every visible text still reads back.
    const TxnId txn = new_txn_id();
    auto before = oracle;
    c->stage(txn, {}, make(5000, 5200, "staged "));
    c->abort(txn);
    oracle = before;
    c->checkpoint();
    expect_texts(*c, oracle, "after an aborted transaction and a checkpoint");
  }
  {
    auto c = Collection::open(dir);  // the segment, then the log replayed into a fresh spill
    expect_texts(*c, oracle, "reopened");
    c->compact();  // rows renumbered and rebuilt in batches
    expect_texts(*c, oracle, "compacted");
    c->insert(make(4000, 4100, ""));
    expect_texts(*c, oracle, "compacted, then written");
  }
  expect_texts(*Collection::open(dir), oracle, "reopened after compaction");
  auto mem = Collection::in_memory(schema);  // its spill is in the temporary folder
  oracle.clear();
  mem->insert(make(0, 50, "m "));
  expect_texts(*mem, oracle, "in memory");
  fs::remove_all(dir);
}

namespace row_text_test {  // named: test files share a unity build
// The collection's one segment file (empty when there is none).
fs::path only_segment(const fs::path& dir) {
  fs::path segment;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("seg-", 0) == 0) segment = e.path();
  return segment;
}

std::string file_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}
}  // namespace row_text_test

TEST(RowTexts, AFlippedByteInAReferencedTextIsDataLossNamingFileAndRange) {
  const auto dir = eagle::testing::fresh_temp_dir("row_texts", "flip");
  const auto schema = chunk_schema("c", kRowTextDim);
  const std::string target = "the text of row seven, unique in the file";
  {
    auto c = Collection::create(dir, schema);
    std::vector<Record> rows;
    for (int i = 0; i < 20; ++i)
      rows.push_back(eagle::testing::chunk_record(schema, "r" + std::to_string(i),
                                                  i == 7 ? target : "text " + std::to_string(i), {1, 2, 3, 4}));
    c->insert(std::move(rows));
    c->checkpoint();
  }
  auto c = Collection::open(dir);  // the segment verifies whole here
  const fs::path segment = row_text_test::only_segment(dir);
  ASSERT_FALSE(segment.empty());
  const std::string bytes = row_text_test::file_bytes(segment);
  const size_t at = bytes.find(target);
  ASSERT_NE(at, std::string::npos);
  {
    std::fstream io(segment, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(static_cast<std::streamoff>(at + 4));
    io.put('T');
  }
  try {
    c->get("r7");
    FAIL() << "a damaged text was served";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::data_loss);
    const std::string m = e.what();
    EXPECT_NE(m.find(segment.string()), std::string::npos) << m;
    const std::string range = "[" + std::to_string(at) + ", " + std::to_string(at + target.size()) + ")";
    EXPECT_NE(m.find(range), std::string::npos) << m;
  }
  // The other rows are untouched.
  EXPECT_EQ(c->get("r6")->text, "text 6");
  EXPECT_EQ(c->get("r8")->text, "text 8");
  fs::remove_all(dir);
}

TEST(RowTexts, SpillReadsComeFromTheBufferAndTheFileAlike) {
  const auto dir = eagle::testing::fresh_temp_dir("row_texts", "spill");
  fs::create_directories(dir);
  RowTexts texts(dir);
  std::vector<std::pair<TextRef, std::string>> written;
  for (int i = 0; i < 5000; ++i) {  // ~2.5 MB: several flushes
    std::string t(static_cast<size_t>(i % 997), static_cast<char>('a' + i % 26));
    t += std::to_string(i);
    written.emplace_back(texts.spill(t), t);
  }
  EXPECT_GT(texts.spill_bytes(), size_t{2} << 20);
  for (const auto& [ref, t] : written) ASSERT_EQ(texts.read(ref), t);
  texts.flush();
  for (const auto& [ref, t] : written) ASSERT_EQ(texts.read(ref), t);
  // The spill is unnamed: nothing is left in the folder.
  EXPECT_TRUE(fs::is_empty(dir));
  texts.clear();
  EXPECT_EQ(texts.spill_bytes(), 0u);
  const auto ref = texts.spill("again");
  EXPECT_EQ(ref.offset, 0u);
  EXPECT_EQ(texts.read(ref), "again");
  fs::remove_all(dir);
}

}  // namespace

// An open verifies every block of a segment but its texts' (layout 3 keeps them apart,
// and each has a CRC of its own): a text damaged while the store was closed opens, and
// is data_loss when read, its neighbours untouched. A damaged byte among the rows is
// still refused at the open.
TEST(RowTexts, ATextDamagedWhileClosedIsFoundWhenReadAndRowDamageAtTheOpen) {
  const auto dir = eagle::testing::fresh_temp_dir("row_texts", "flip_closed");
  const auto schema = chunk_schema("c", kRowTextDim);
  const std::string target = "the text of row seven, unique in the file";
  const std::string long_text(200000, 'x');  // the texts span whole checksum blocks
  {
    auto c = Collection::create(dir, schema);
    std::vector<Record> rows;
    for (int i = 0; i < 20; ++i)
      rows.push_back(eagle::testing::chunk_record(schema, "r" + std::to_string(i),
                                                  i == 7 ? target : i == 8 ? long_text : "text " + std::to_string(i),
                                                  {1, 2, 3, 4}));
    c->insert(std::move(rows));
    c->checkpoint();
  }
  const fs::path segment = row_text_test::only_segment(dir);
  ASSERT_FALSE(segment.empty());
  const std::string bytes = row_text_test::file_bytes(segment);
  auto flip_at = [&](size_t at) {
    std::fstream io(segment, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(static_cast<std::streamoff>(at));
    io.put(static_cast<char>(bytes[at] ^ 0x20));
  };
  auto restore = [&] { std::ofstream(segment, std::ios::binary | std::ios::trunc) << bytes; };
  // In the middle of the long text: a whole 64 KiB block of text, not verified at the open.
  const size_t in_text = bytes.find(long_text) + long_text.size() / 2;
  flip_at(in_text);
  {
    auto c = Collection::open(dir);
    EXPECT_EQ(c->count(), 20u);
    try {
      c->get("r8");
      FAIL() << "a damaged text was served";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::data_loss) << e.what();
      EXPECT_NE(std::string(e.what()).find(segment.string()), std::string::npos) << e.what();
    }
    EXPECT_EQ(c->get("r7")->text, target);
  }
  restore();
  // A row's id, before the texts: the open refuses the file.
  const size_t in_rows = bytes.find("r13");
  ASSERT_LT(in_rows, bytes.find(target));
  flip_at(in_rows + 1);
  try {
    Collection::open(dir);
    FAIL() << "a segment with damaged rows was opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::data_loss) << e.what();
    EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos) << e.what();
  }
  restore();
  EXPECT_EQ(Collection::open(dir)->get("r8")->text, long_text);
  fs::remove_all(dir);
}
