// Readers never wait for the disk. A search runs to completion while a writer is
// stopped inside an fsync (of the log, of a checkpoint's segment file, of a merge's
// manifest), held there on a latch by the file system below the store. No timers: the
// threads meet at latches, and a search that waited for the held fsync would never
// return (ctest's timeout would report the test). A write is also seen whole or not at
// all by searches that run while it is applied.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "eagle/core/file_system.h"
#include "eagle/store/collection.h"

namespace fs = std::filesystem;
using namespace eagle;
using namespace eagle::store;

// A named namespace: test files share a unity build.
namespace readers_test {

constexpr uint32_t kDim = 8;

// POSIX, except that the next sync of a file whose name contains a given part blocks
// until the test releases it.
class LatchedSyncFileSystem : public io::FileSystem {
 public:
  // Arms the latch: the next sync of a file whose name contains `name_part`.
  void hold_next_sync(std::string name_part) {
    std::lock_guard g(mu_);
    part_ = std::move(name_part);
    armed_ = true;
    holding_ = false;
    released_ = false;
  }
  // Returns once a sync is held (the writer is inside it).
  void wait_until_held() {
    std::unique_lock g(mu_);
    cv_.wait(g, [&] { return holding_; });
  }
  void release() {
    std::lock_guard g(mu_);
    released_ = true;
    cv_.notify_all();
  }
  std::string held_file() {
    std::lock_guard g(mu_);
    return held_;
  }

  std::unique_ptr<io::WritableFile> open_writable(const fs::path& file, OpenMode mode) override {
    return std::make_unique<File>(*this, base_.open_writable(file, mode));
  }
  void rename(const fs::path& from, const fs::path& to) override { base_.rename(from, to); }
  void remove(const fs::path& file) override { base_.remove(file); }
  void remove_all(const fs::path& dir) override { base_.remove_all(dir); }
  void create_directories(const fs::path& dir) override { base_.create_directories(dir); }
  void truncate(const fs::path& file, uint64_t size) override { base_.truncate(file, size); }
  void sync_path(const fs::path& p, bool is_dir) override {
    if (!is_dir) maybe_hold(p);
    base_.sync_path(p, is_dir);
  }

 private:
  class File : public io::WritableFile {
   public:
    File(LatchedSyncFileSystem& fs, std::unique_ptr<io::WritableFile> base) : fs_(fs), base_(std::move(base)) {}
    void append(const char* data, size_t n) override { base_->append(data, n); }
    void truncate(uint64_t size) override { base_->truncate(size); }
    void sync() override {
      fs_.maybe_hold(base_->path());
      base_->sync();
    }
    uint64_t size() const override { return base_->size(); }
    const fs::path& path() const override { return base_->path(); }

   private:
    LatchedSyncFileSystem& fs_;
    std::unique_ptr<io::WritableFile> base_;
  };

  void maybe_hold(const fs::path& file) {
    std::unique_lock g(mu_);
    if (!armed_ || file.filename().string().find(part_) == std::string::npos) return;
    armed_ = false;
    holding_ = true;
    held_ = file.filename().string();
    cv_.notify_all();
    cv_.wait(g, [&] { return released_; });
  }

  io::FileSystem& base_ = io::posix();
  std::mutex mu_;
  std::condition_variable cv_;
  std::string part_;
  std::string held_;
  bool armed_ = false;
  bool holding_ = false;
  bool released_ = false;
};

fs::path readers_dir(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("eagle_readers_test_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  return dir;
}

Record make_record(const CollectionSchema& schema, const std::string& id, const std::string& text, float seed,
                   const std::string& document = "doc") {
  Record r{id, text, std::vector<float>(kDim), std::vector<Value>(schema.fields.size())};
  for (uint32_t i = 0; i < kDim; ++i) r.vector[i] = std::sin(seed * static_cast<float>(i + 1)) + 1.5f;
  r.values[*schema.field_index("document_id")] = document;
  return r;
}

struct HeldStore {
  LatchedSyncFileSystem latch;
  fs::path dir;
  std::unique_ptr<Collection> c;

  explicit HeldStore(const std::string& name, CollectionOptions::Merges merges = CollectionOptions::Merges::manual) {
    dir = readers_dir(name);
    CollectionOptions opts;
    opts.file_system = &latch;
    opts.merge_mode = merges;
    c = Collection::create(dir, chunk_schema("held", kDim), opts);
    std::vector<Record> rows;
    for (int i = 0; i < 40; ++i)
      rows.push_back(make_record(c->schema(), "r" + std::to_string(i), "aspirin trial row " + std::to_string(i), i));
    c->insert(std::move(rows));
  }
  ~HeldStore() {
    c.reset();
    fs::remove_all(dir);
  }

  // Every kind of read, as a search would make it; returns the ids the text search found.
  std::vector<std::string> read_everything() const {
    std::vector<std::string> ids;
    for (const auto& h : c->search_text("aspirin trial", 100)) ids.push_back(h.id);
    const auto q = make_record(c->schema(), "q", "", 3).vector;
    EXPECT_FALSE(c->search_vector(q, 10).empty());
    EXPECT_FALSE(c->search_text("aspirin", 5, "document_id == \"doc\"").empty());
    EXPECT_TRUE(c->get("r1").has_value());
    EXPECT_GT(c->query_weight("aspirin"), 0.0);
    EXPECT_FALSE(c->describe().empty());
    return ids;
  }
};

bool contains(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

TEST(Readers, SearchWhileTheLogFsyncOfAWriteIsHeld) {
  HeldStore s("log");
  s.latch.hold_next_sync("wal-");
  std::thread writer([&] {
    s.c->upsert({make_record(s.c->schema(), "new", "aspirin trial newcomer", 99)});
  });
  s.latch.wait_until_held();
  // The writer is inside the log's fsync: the write is not acknowledged, so no search
  // sees it, and every search completes.
  const auto during = s.read_everything();
  EXPECT_EQ(during.size(), 40u);
  EXPECT_FALSE(contains(during, "new"));
  EXPECT_EQ(s.c->count(), 40u);
  EXPECT_FALSE(s.c->get("new").has_value());
  s.latch.release();
  writer.join();
  EXPECT_TRUE(contains(s.read_everything(), "new"));
  EXPECT_EQ(s.c->count(), 41u);
}

TEST(Readers, SearchWhileADeleteAndATransactionCommitAreInTheirFsync) {
  HeldStore s("delete");
  s.latch.hold_next_sync("wal-");
  std::thread deleter([&] { EXPECT_EQ(s.c->remove({"r3", "r4"}), 2u); });
  s.latch.wait_until_held();
  EXPECT_TRUE(contains(s.read_everything(), "r3"));
  s.latch.release();
  deleter.join();
  EXPECT_FALSE(contains(s.read_everything(), "r3"));

  const TxnId txn = new_txn_id();
  s.c->stage(txn, {"r5"}, {make_record(s.c->schema(), "staged", "aspirin trial staged", 7)});
  EXPECT_FALSE(contains(s.read_everything(), "staged"));  // staged: hidden
  s.latch.hold_next_sync("wal-");
  std::thread committer([&] { s.c->commit(txn); });
  s.latch.wait_until_held();
  const auto during = s.read_everything();
  EXPECT_FALSE(contains(during, "staged"));
  EXPECT_TRUE(contains(during, "r5"));
  s.latch.release();
  committer.join();
  const auto after = s.read_everything();
  EXPECT_TRUE(contains(after, "staged"));
  EXPECT_FALSE(contains(after, "r5"));
}

TEST(Readers, SearchWhileACheckpointSyncsItsSegmentAndItsManifest) {
  for (const std::string file : {"seg-", "deleted-", "MANIFEST"}) {
    SCOPED_TRACE(file);
    HeldStore s("checkpoint");
    s.c->upsert({make_record(s.c->schema(), "r1", "aspirin trial row one again", 1)});  // a deletion to write
    s.latch.hold_next_sync(file);
    std::thread checkpointer([&] { s.c->checkpoint(); });
    s.latch.wait_until_held();
    EXPECT_NE(s.latch.held_file().find(file), std::string::npos);
    EXPECT_EQ(s.read_everything().size(), 40u);
    s.latch.release();
    checkpointer.join();
    EXPECT_EQ(s.read_everything().size(), 40u);
    EXPECT_EQ(s.c->segment_count(), 1u);
  }
}

TEST(Readers, SearchWhileAMergeSyncsItsSegmentAndItsManifest) {
  for (const std::string file : {"seg-", "MANIFEST"}) {
    SCOPED_TRACE(file);
    HeldStore s("merge");
    // Four sealed segments: the tiered policy merges them (merge_policy.h, T = 4).
    s.c->checkpoint();
    for (int seg = 1; seg < 4; ++seg) {
      std::vector<Record> rows;  // as large as the first, so the four make one tier
      for (int i = 0; i < 40; ++i)
        rows.push_back(make_record(s.c->schema(), "m" + std::to_string(seg) + "_" + std::to_string(i),
                                   "ibuprofen dose", static_cast<float>(i)));
      s.c->insert(std::move(rows));
      s.c->checkpoint();
    }
    ASSERT_EQ(s.c->segment_count(), 4u);
    s.latch.hold_next_sync(file);
    std::thread merger([&] { EXPECT_EQ(s.c->merge_now(), 1u); });
    s.latch.wait_until_held();
    EXPECT_EQ(s.read_everything().size(), 40u);
    EXPECT_EQ(s.c->segment_count(), 4u);  // not published yet
    s.latch.release();
    merger.join();
    EXPECT_EQ(s.read_everything().size(), 40u);
    EXPECT_EQ(s.c->segment_count(), 1u);
    EXPECT_EQ(s.c->count(), 160u);
  }
}

// Catalog::commit over two collections: every commit record is fsynced before the
// caller's exclusive section (where the engine holds its searches back) is entered.
TEST(Readers, ACatalogCommitHoldsSearchesBackOnlyAfterEveryCommitRecordIsDurable) {
  LatchedSyncFileSystem latch;
  const auto root = readers_dir("catalog");
  CollectionOptions opts;
  opts.file_system = &latch;
  {
    Catalog cat(root, opts);
    auto& a = cat.create(chunk_schema("a", kDim));
    auto& b = cat.create(chunk_schema("b", kDim));
    const TxnId txn = new_txn_id();
    a.stage(txn, {}, {make_record(a.schema(), "a1", "aspirin", 1)});
    b.stage(txn, {}, {make_record(b.schema(), "b1", "aspirin", 2)});
    for (const std::string held : {"TRANSACTIONS", "wal-"}) {
      SCOPED_TRACE(held);
      const TxnId t = held == "wal-" ? txn : new_txn_id();
      if (held != "wal-") {
        a.stage(t, {}, {make_record(a.schema(), "a2", "aspirin", 3)});
        b.stage(t, {}, {make_record(b.schema(), "b2", "aspirin", 4)});
      }
      std::atomic<bool> published{false};
      latch.hold_next_sync(held);
      std::thread committer([&] {
        cat.commit(t, {&a, &b}, [&](const std::function<bool()>& publish) {
          published = true;
          publish();
        });
      });
      latch.wait_until_held();
      EXPECT_FALSE(published.load());  // the exclusive section comes after the disk
      EXPECT_EQ(a.search_text("aspirin", 10).size() + b.search_text("aspirin", 10).size(), held == "wal-" ? 2u : 0u);
      latch.release();
      committer.join();
      EXPECT_TRUE(published.load());
    }
    EXPECT_EQ(a.count() + b.count(), 4u);
  }
  fs::remove_all(root);
}

// A write of many rows is indexed a row at a time, so searches run between its rows;
// they must still see all of it or none of it: every write here adds 25 rows of one
// document, so a count of a document's rows is 0 or 25, never between.
TEST(Readers, AManyRowWriteIsSeenWholeOrNotAtAllWhileItIsIndexed) {
  HeldStore s("whole", CollectionOptions::Merges::background);
  constexpr int kWrites = 30, kRows = 25;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int w = 0; w < kWrites; ++w) {
      std::vector<Record> rows;
      for (int i = 0; i < kRows; ++i)
        rows.push_back(make_record(s.c->schema(), "w" + std::to_string(w) + "_" + std::to_string(i),
                                   "aspirin batch " + std::to_string(w), static_cast<float>(i),
                                   "batch" + std::to_string(w)));
      if (w % 2) {
        s.c->upsert(std::move(rows));
      } else {
        const TxnId txn = new_txn_id();
        s.c->stage(txn, {}, std::move(rows));
        s.c->commit(txn);
      }
      if (w % 7 == 6) s.c->checkpoint();
    }
    done = true;
  });
  size_t reads = 0;
  while (!done || reads == 0) {
    for (int w = 0; w < kWrites; w += 3) {
      const auto hits = s.c->search_text("aspirin batch", 1000, "document_id == \"batch" + std::to_string(w) + "\"");
      ASSERT_TRUE(hits.empty() || hits.size() == kRows) << "write " << w << ": " << hits.size() << " rows seen";
      const auto filtered = s.c->filter("document_id == \"batch" + std::to_string(w) + "\"").count();
      ASSERT_TRUE(filtered == 0 || filtered == kRows) << "write " << w << ": " << filtered << " rows pass";
    }
    ++reads;
  }
  writer.join();
  EXPECT_EQ(s.c->count(), 40u + kWrites * kRows);
}

}  // namespace readers_test
