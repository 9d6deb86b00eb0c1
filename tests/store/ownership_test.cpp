// Store ownership: one writer per data folder (StoreLock), readers that never modify
// the store and see the last checkpoint plus the complete log records, document
// replacement as one write, and compaction that keeps every live row's results.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "eagle/core/error.h"
#include "eagle/store/collection.h"
#include "support/store_fixtures.h"
#include "eagle/store/store_lock.h"

namespace fs = std::filesystem;
using namespace eagle;
using namespace eagle::store;

namespace {

constexpr uint32_t kOwnerDim = 8;

fs::path temp_dir(const std::string& tag) { return eagle::testing::fresh_temp_dir("own", tag); }

Record rec(const CollectionSchema& schema, const std::string& id, const std::string& doc, uint32_t seed,
           const std::string& text = "") {
  Record r;
  r.id = id;
  r.text = text.empty() ? "text of " + id : text;
  std::mt19937 rng(seed);
  std::normal_distribution<float> g;
  for (uint32_t i = 0; i < kOwnerDim; ++i) r.vector.push_back(g(rng));
  r.values.assign(schema.fields.size(), std::monostate{});
  r.values[*schema.field_index("document_id")] = doc;
  return r;
}

std::vector<std::string> files_of(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    out.push_back(e.path().filename().string() + ":" + std::to_string(fs::file_size(e.path())));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(StoreLock, ASecondWriterFailsAtOnceNamingTheHolder) {
  auto dir = temp_dir("lock");
  {
    auto first = StoreLock::acquire(dir, "eagle serve on 127.0.0.1:8686");
    try {
      StoreLock::acquire(dir, "eagle ingest");
      FAIL() << "a second writer got the lock";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::conflict);
      const std::string msg = e.what();
      EXPECT_NE(msg.find("pid " + std::to_string(::getpid())), std::string::npos) << msg;
      EXPECT_NE(msg.find("eagle serve on 127.0.0.1:8686"), std::string::npos) << msg;
      EXPECT_NE(msg.find("HTTP API"), std::string::npos) << msg;
    }
  }
  // Released with its owner: the next writer gets it.
  EXPECT_NO_THROW(StoreLock::acquire(dir, "eagle ingest"));
  fs::remove_all(dir);
}

TEST(StoreLock, AChildProcessCannotTakeALockItsParentHolds) {
  auto dir = temp_dir("lockfork");
  auto held = StoreLock::acquire(dir, "parent");
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // flock is per open file: the child opens LOCK anew and must be refused.
    try {
      StoreLock::acquire(dir, "child");
      ::_exit(1);
    } catch (const Error& e) {
      ::_exit(e.code() == ErrorCode::conflict ? 0 : 2);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  fs::remove_all(dir);
}

TEST(ReadOnlyOpen, NeverTruncatesDeletesOrWritesAndSeesCompleteRecords) {
  auto dir = temp_dir("ro");
  auto schema = chunk_schema("c", kOwnerDim);
  {
    auto w = Collection::create(dir, schema);
    w->upsert({rec(schema, "a", "d1", 1), rec(schema, "b", "d1", 2)});
    w->checkpoint();
    w->upsert({rec(schema, "c", "d2", 3)});  // in the log after the segment
  }
  // Leftovers a writer would clean up, and a torn frame at the log's end (a write in
  // progress as far as a reader can tell).
  { std::ofstream(dir / "seg-00000000000000000099.eagle.tmp") << "partial"; }
  fs::path wal;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("wal-", 0) == 0) wal = e.path();
  ASSERT_FALSE(wal.empty());
  { std::ofstream(wal, std::ios::app | std::ios::binary) << std::string("\x40\x00\x00\x00garbage", 11); }
  const auto before = files_of(dir);

  CollectionOptions ro;
  ro.read_only = true;
  auto r = Collection::open(dir, ro);
  EXPECT_EQ(r->count(), 3u);
  EXPECT_TRUE(r->get("c").has_value());
  EXPECT_EQ(files_of(dir), before) << "a read-only open changed the folder";
  EXPECT_THROW(r->upsert({rec(schema, "z", "d9", 9)}), Error);
  EXPECT_THROW(r->remove({"a"}), Error);
  EXPECT_THROW(r->checkpoint(), Error);
  EXPECT_EQ(files_of(dir), before);

  // The writer's open does cut the torn tail (it was never acknowledged).
  r.reset();
  auto w = Collection::open(dir);
  EXPECT_EQ(w->count(), 3u);
  EXPECT_FALSE(fs::exists(dir / "seg-00000000000000000099.eagle.tmp"));
  fs::remove_all(dir);
}

TEST(ReadOnlyOpen, AReaderNeverCutsAWriteTheWriterIsAppending) {
  // The defect this guards: a reader that truncated a "torn" tail could cut a record
  // the writer acknowledged a moment later. Readers open again and again while the
  // writer appends; afterwards every acknowledged write is in the log.
  auto dir = temp_dir("race");
  auto schema = chunk_schema("c", kOwnerDim);
  auto w = Collection::create(dir, schema);
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    CollectionOptions ro;
    ro.read_only = true;
    size_t last = 0;
    while (!stop) {
      auto r = Collection::open(dir, ro);
      EXPECT_GE(r->count(), last);  // a reader's view only grows
      last = r->count();
    }
  });
  const int n = 300;
  for (int i = 0; i < n; ++i) {
    w->upsert({rec(schema, "r" + std::to_string(i), "d", i)});
    if (i % 97 == 96) w->checkpoint();  // readers race checkpoints too
  }
  stop = true;
  reader.join();
  w.reset();
  auto again = Collection::open(dir);
  EXPECT_EQ(again->count(), static_cast<size_t>(n));
  fs::remove_all(dir);
}

TEST(Replace, DeletesStaleChunksAndUpsertsNewOnesInOneWrite) {
  auto dir = temp_dir("replace");
  auto schema = chunk_schema("c", kOwnerDim);
  {
    auto c = Collection::create(dir, schema);
    c->upsert({rec(schema, "doc#1", "doc", 1), rec(schema, "doc#2", "doc", 2), rec(schema, "doc#3", "doc", 3),
               rec(schema, "other#1", "other", 4)});
    EXPECT_EQ(c->ids_where_equals("document_id", "doc"), (std::vector<std::string>{"doc#1", "doc#2", "doc#3"}));
    // Re-ingest of "doc" with two chunks: #3 must not survive.
    EXPECT_EQ(c->replace({"doc#1", "doc#2", "doc#3"}, {rec(schema, "doc#1", "doc", 5), rec(schema, "doc#2", "doc", 6)}),
              3u);
    EXPECT_EQ(c->count(), 3u);
    EXPECT_FALSE(c->get("doc#3").has_value());
  }
  auto c = Collection::open(dir);  // replayed from the log
  EXPECT_EQ(c->count(), 3u);
  EXPECT_FALSE(c->get("doc#3").has_value());
  EXPECT_EQ(c->ids_where_equals("document_id", "doc"), (std::vector<std::string>{"doc#1", "doc#2"}));
  fs::remove_all(dir);
}

TEST(GetWithFilter, ReturnsTheRowOnlyWhenItPassesTheFilter) {
  auto schema = chunk_schema("c", kOwnerDim);
  auto c = Collection::in_memory(schema);
  auto a = rec(schema, "a", "d1", 1);
  a.values[*schema.field_index("kb_name")] = std::string("kb1");
  c->upsert({a});
  EXPECT_TRUE(c->get("a", "kb_name == {k}", {{"k", "kb1"}}).has_value());
  EXPECT_FALSE(c->get("a", "kb_name == {k}", {{"k", "kb2"}}).has_value());
  EXPECT_FALSE(c->get("missing", "kb_name == {k}", {{"k", "kb1"}}).has_value());
  EXPECT_THROW(c->get("a", "kb_name ==", {}), Error);
}

class CompactTest : public ::testing::TestWithParam<VectorIndexKind> {};

TEST_P(CompactTest, DropsDeletedRowsAndKeepsEveryLiveRowsResults) {
  auto dir = temp_dir("compact");
  auto schema = chunk_schema("c", kOwnerDim);
  schema.vector.index = GetParam();
  auto c = Collection::create(dir, schema);
  std::vector<Record> recs;
  for (int i = 0; i < 200; ++i) recs.push_back(rec(schema, "r" + std::to_string(i), "d" + std::to_string(i % 7), i,
                                                   "word" + std::to_string(i % 13) + " common"));
  c->upsert(recs);
  std::vector<std::string> gone;
  for (int i = 0; i < 200; i += 3) gone.push_back("r" + std::to_string(i));
  c->remove(gone);
  const auto q = rec(schema, "q", "", 777).vector;
  // Exact flat results are identical; HNSW is compared on the exact plan (all rows
  // allowed through a filter narrow enough for the exact scan).
  auto before_text = c->search_text("word5 common", 20);
  auto before_vec = c->search_vector(q, 10, "document_id in [\"d1\", \"d2\"]");
  const size_t live = c->count();
  c->compact();
  EXPECT_EQ(c->count(), live);
  EXPECT_EQ(c->describe()["deleted"], 0);
  EXPECT_EQ(c->describe()["rows"], live);
  auto ids = [](const std::vector<CollectionHit>& hits) {
    std::vector<std::string> out;
    for (const auto& h : hits) out.push_back(h.id);
    return out;
  };
  EXPECT_EQ(ids(c->search_text("word5 common", 20)), ids(before_text));
  EXPECT_EQ(ids(c->search_vector(q, 10, "document_id in [\"d1\", \"d2\"]")), ids(before_vec));
  c.reset();
  auto again = Collection::open(dir);
  EXPECT_EQ(again->count(), live);
  EXPECT_EQ(ids(again->search_text("word5 common", 20)), ids(before_text));
  for (const auto& id : gone) EXPECT_FALSE(again->get(id).has_value());
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(FlatAndHnsw, CompactTest, ::testing::Values(VectorIndexKind::flat, VectorIndexKind::hnsw));
