// Transactions: a write of any size in many log records is
// all-or-nothing. Staged rows are invisible until the commit; a transaction never
// committed (a crash, an abort) leaves the collection as before, on every reopen; a
// transaction over several collections commits in all of them or none.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "eagle/core/error.h"
#include "eagle/store/collection.h"
#include "support/store_fixtures.h"
#include "eagle/store/wal.h"

namespace fs = std::filesystem;
using namespace eagle;
using namespace eagle::store;

namespace {

constexpr uint32_t kTxnDim = 4;

fs::path txn_dir(const std::string& tag) { return eagle::testing::fresh_temp_dir("txn", tag); }

Record txn_row(const CollectionSchema& s, const std::string& id, const std::string& text = "text") {
  return eagle::testing::chunk_record(s, id, text, {1, 2, 3, static_cast<float>(id.size())});
}

std::string text_of(const Collection& c, const std::string& id) {
  auto r = c.get(id);
  return r ? r->text : std::string("<absent>");
}

size_t log_frames(const fs::path& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("wal-", 0) == 0) n += scan_wal(e.path()).records;
  return n;
}

// What Catalog::commit writes first for a transaction over several collections: its
// record in the catalog's TRANSACTIONS log, here alone (a crash right after it).
void log_catalog_commit(const fs::path& root, uint64_t lsn, TxnId txn) {
  WalWriter log(root / "TRANSACTIONS", WalSync::always);
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(txn));
  log.append(lsn, WalOp::txn_commit, hex);
}

}  // namespace

TEST(Transaction, StagedRowsAreInvisibleUntilTheCommitThenAllAppearAtOnce) {
  const auto schema = chunk_schema("c", kTxnDim);
  auto c = Collection::in_memory(schema);
  c->upsert({txn_row(schema, "keep", "old keep"), txn_row(schema, "gone", "old gone")});
  const TxnId t = new_txn_id();
  c->stage(t, {"gone"}, {txn_row(schema, "keep", "new keep alpha"), txn_row(schema, "fresh", "fresh alpha")});
  c->stage(t, {}, {txn_row(schema, "later", "later alpha")});
  // Nothing of the transaction is seen: the replaced txn_row and the deleted one stay.
  EXPECT_EQ(c->count(), 2u);
  EXPECT_EQ(text_of(*c, "keep"), "old keep");
  EXPECT_EQ(text_of(*c, "gone"), "old gone");
  EXPECT_EQ(text_of(*c, "fresh"), "<absent>");
  EXPECT_TRUE(c->search_text("alpha", 10).empty());
  EXPECT_EQ(c->filter("").count(), 2u);
  EXPECT_EQ(c->commit(t), 1u);  // "gone" was live
  EXPECT_EQ(c->count(), 3u);
  EXPECT_EQ(text_of(*c, "keep"), "new keep alpha");
  EXPECT_EQ(text_of(*c, "gone"), "<absent>");
  EXPECT_EQ(c->search_text("alpha", 10).size(), 3u);
  EXPECT_FALSE(c->in_transaction());
}

TEST(Transaction, AnIdStagedTwiceKeepsTheLaterRow) {
  const auto schema = chunk_schema("c", kTxnDim);
  auto c = Collection::in_memory(schema);
  const TxnId t = new_txn_id();
  c->stage(t, {}, {txn_row(schema, "a", "first")});
  c->stage(t, {}, {txn_row(schema, "a", "second")});
  c->commit(t);
  EXPECT_EQ(c->count(), 1u);
  EXPECT_EQ(text_of(*c, "a"), "second");
  EXPECT_EQ(c->search_text("first", 5).size(), 0u);
}

TEST(Transaction, ALargeTransactionSurvivesReopenWhole) {
  // More rows than one write may carry (kMaxBatch) and parts split by bytes.
  const auto dir = txn_dir("large");
  auto schema = chunk_schema("c", kTxnDim);
  schema.vector.index = VectorIndexKind::flat;  // the log is under test, not the graph
  const size_t n = kMaxBatch + 20000;
  {
    auto c = Collection::create(dir, schema);
    const TxnId t = new_txn_id();
    for (size_t start = 0; start < n; start += 40000) {
      std::vector<Record> part;
      for (size_t i = start; i < std::min(n, start + 40000); ++i)
        part.push_back(txn_row(schema, "r" + std::to_string(i), "row " + std::to_string(i)));
      c->stage(t, {}, std::move(part));
    }
    // Two records of 20 MB: more than kTxnPartBytes in one stage() call, so two parts.
    c->stage(t, {}, {txn_row(schema, "big1", std::string(20u << 20, 'x')), txn_row(schema, "big2", std::string(20u << 20, 'y'))});
    EXPECT_EQ(c->count(), 0u);
    c->commit(t);
    EXPECT_EQ(c->count(), n + 2);
  }
  // 3 parts of rows + 2 parts for the big records + the commit record.
  EXPECT_EQ(log_frames(dir), 3u + 2u + 1u);
  auto c = Collection::open(dir);
  EXPECT_EQ(c->count(), n + 2);
  EXPECT_EQ(text_of(*c, "r" + std::to_string(n - 1)), "row " + std::to_string(n - 1));
  EXPECT_EQ(text_of(*c, "big2").size(), 20u << 20);
  fs::remove_all(dir);
}

TEST(Transaction, AnUncommittedTransactionIsNeverSeenAfterReopenAndLaterWritesAre) {
  const auto dir = txn_dir("uncommitted");
  const auto schema = chunk_schema("c", kTxnDim);
  {
    auto c = Collection::create(dir, schema);
    c->upsert({txn_row(schema, "a", "old a")});
    const TxnId t = new_txn_id();
    c->stage(t, {"a"}, {txn_row(schema, "b", "staged b")});
    // A write between the parts and the crash: acknowledged, so it must survive.
    c->upsert({txn_row(schema, "c", "plain c")});
    c->stage(t, {}, {txn_row(schema, "d", "staged d")});
    // The process "dies" here: no commit.
  }
  for (int round = 0; round < 2; ++round) {  // and a second open after the first one appended
    auto c = Collection::open(dir);
    EXPECT_EQ(c->count(), 2u + round);
    EXPECT_EQ(text_of(*c, "a"), "old a");
    EXPECT_EQ(text_of(*c, "b"), "<absent>");
    EXPECT_EQ(text_of(*c, "c"), "plain c");
    EXPECT_EQ(text_of(*c, "d"), "<absent>");
    EXPECT_FALSE(c->in_transaction());
    if (round == 0) c->upsert({txn_row(schema, "e", "after")});
  }
  fs::remove_all(dir);
}

TEST(Transaction, AnAbortedTransactionLeavesNothingAndCannotCommitLater) {
  const auto dir = txn_dir("abort");
  const auto schema = chunk_schema("c", kTxnDim);
  {
    auto c = Collection::create(dir, schema);
    const TxnId t = new_txn_id();
    c->stage(t, {}, {txn_row(schema, "x", "staged")});
    c->abort(t);
    EXPECT_EQ(c->commit(t), 0u);  // nothing staged any more
    EXPECT_EQ(c->count(), 0u);
  }
  auto c = Collection::open(dir);
  EXPECT_EQ(c->count(), 0u);
  fs::remove_all(dir);
}

// A checkpoint while a transaction is open seals its staged rows with the rest,
// hidden, and names them in the MANIFEST with the deletes still to apply: the commit
// record in the new log makes them live on every reopen, and a transaction that never
// commits leaves them deleted, after any number of checkpoints and merges.
TEST(Transaction, ACheckpointSealsStagedRowsAndTheCommitAfterItStillAppliesThemWhole) {
  const auto dir = txn_dir("checkpoint");
  const auto schema = chunk_schema("c", kTxnDim);
  const TxnId t = new_txn_id(), lost = new_txn_id();
  {
    auto c = Collection::create(dir, schema);
    c->upsert({txn_row(schema, "a", "old a"), txn_row(schema, "gone", "gone")});
    c->stage(t, {"gone"}, {txn_row(schema, "b", "staged b"), txn_row(schema, "a", "new a")});
    c->stage(lost, {"a"}, {txn_row(schema, "never", "never")});
    c->checkpoint();  // seals both transactions' rows, hidden
    EXPECT_TRUE(fs::exists(dir / "MANIFEST"));
    EXPECT_EQ(log_frames(dir), 0u);  // their parts left with the old log
    EXPECT_EQ(c->count(), 2u);
    EXPECT_THROW(c->compact(), Error);  // compaction renumbers rows: not while staged
    c->stage(t, {}, {txn_row(schema, "d", "staged after")});
    c->checkpoint();
    c->stage(t, {}, {txn_row(schema, "b", "staged again")});  // replaces a sealed staged row
    EXPECT_EQ(c->segment_count(), 3u);
    EXPECT_EQ(c->commit(t, /*auto_checkpoint=*/false), 1u);
    EXPECT_EQ(c->count(), 3u);
    EXPECT_EQ(text_of(*c, "b"), "staged again");
    // `lost` is never committed: the process "dies" with it open.
  }
  for (int round = 0; round < 2; ++round) {  // replayed, then sealed by a checkpoint
    auto c = Collection::open(dir);
    EXPECT_EQ(c->count(), 3u) << "round " << round;
    EXPECT_EQ(text_of(*c, "a"), "new a");
    EXPECT_EQ(text_of(*c, "b"), "staged again");
    EXPECT_EQ(text_of(*c, "d"), "staged after");
    EXPECT_EQ(text_of(*c, "gone"), "<absent>");
    EXPECT_EQ(text_of(*c, "never"), "<absent>");
    EXPECT_EQ(c->search_text("never", 5).size(), 0u);
    EXPECT_EQ(c->search_text("staged", 5).size(), 2u);
    EXPECT_FALSE(c->in_transaction());
    c->checkpoint();
  }
  fs::remove_all(dir);
}

// The commit's only record is the catalog's (a crash before the collection logged its
// own): the sealed rows are applied on open all the same.
TEST(Transaction, RowsSealedBeforeACatalogCommitAreAppliedWhenOnlyTheCatalogRecordSurvives) {
  const auto root = txn_dir("sealed-catalog");
  const auto sa = chunk_schema("a", kTxnDim), sb = chunk_schema("b", kTxnDim);
  const TxnId t = new_txn_id();
  {
    Catalog cat(root);
    auto& a = cat.create(sa);
    auto& b = cat.create(sb);
    a.stage(t, {}, {txn_row(sa, "a1")});
    b.stage(t, {}, {txn_row(sb, "b1")});
    a.checkpoint();
    b.checkpoint();
    log_catalog_commit(root, 1, t);
  }
  for (int round = 0; round < 2; ++round) {
    Catalog cat(root);
    EXPECT_TRUE(cat.get("a").get("a1").has_value()) << "round " << round;
    EXPECT_TRUE(cat.get("b").get("b1").has_value()) << "round " << round;
  }
  fs::remove_all(root);
}

// A bulk ingest is one transaction: its growing segment is sealed whenever the log
// passes checkpoint_wal_bytes, not only after the commit.
TEST(Transaction, ALongTransactionIsSealedAsItsLogGrows) {
  const auto dir = txn_dir("bounded");
  const auto schema = chunk_schema("c", kTxnDim);
  CollectionOptions o;
  o.checkpoint_wal_bytes = 4u << 10;
  o.merge_mode = CollectionOptions::Merges::manual;
  const TxnId t = new_txn_id();
  size_t rows = 0;
  {
    auto c = Collection::create(dir, schema, o);
    for (int part = 0; part < 40; ++part) {
      std::vector<Record> batch;
      for (int i = 0; i < 20; ++i, ++rows)
        batch.push_back(txn_row(schema, "r" + std::to_string(rows), "row " + std::to_string(rows)));
      c->stage(t, {}, std::move(batch));
    }
    const size_t sealed = c->segment_count();
    EXPECT_GT(sealed, 5u);
    EXPECT_GT(c->merge_now(), 0u);  // merges keep the staged rows, hidden and numbered as they were
    EXPECT_LT(c->segment_count(), sealed);
    EXPECT_EQ(c->count(), 0u);
    c->commit(t, false);
    EXPECT_EQ(c->count(), rows);
  }
  auto c = Collection::open(dir, o);
  EXPECT_EQ(c->count(), rows);
  EXPECT_EQ(text_of(*c, "r0"), "row 0");
  EXPECT_EQ(text_of(*c, "r" + std::to_string(rows - 1)), "row " + std::to_string(rows - 1));
  fs::remove_all(dir);
}

TEST(Transaction, AReaderNeverSeesAnOpenTransaction) {
  const auto dir = txn_dir("reader");
  const auto schema = chunk_schema("c", kTxnDim);
  auto writer = Collection::create(dir, schema);
  const TxnId t = new_txn_id();
  writer->stage(t, {}, {txn_row(schema, "staged")});
  CollectionOptions ro;
  ro.read_only = true;
  EXPECT_EQ(Collection::open(dir, ro)->count(), 0u);
  writer->commit(t);
  EXPECT_EQ(Collection::open(dir, ro)->count(), 1u);
  writer.reset();
  fs::remove_all(dir);
}

TEST(Transaction, OverTwoCollectionsTheCatalogRecordIsTheCommitPoint) {
  const auto root = txn_dir("catalog");
  const auto sa = chunk_schema("a", kTxnDim), sb = chunk_schema("b", kTxnDim);
  // 1. Committed through the catalog: both collections have it.
  {
    Catalog cat(root);
    auto& a = cat.create(sa);
    auto& b = cat.create(sb);
    const TxnId t = new_txn_id();
    a.stage(t, {}, {txn_row(sa, "a1")});
    b.stage(t, {}, {txn_row(sb, "b1")});
    cat.commit(t, {&a, &b});
    EXPECT_EQ(a.count() + b.count(), 2u);
  }
  {
    Catalog cat(root);
    EXPECT_EQ(cat.get("a").count(), 1u);
    EXPECT_EQ(cat.get("b").count(), 1u);
  }
  // 2. A crash after the catalog's record, before either collection's own commit
  //    record: both apply it on open. 3. No catalog record: neither does.
  const TxnId committed = new_txn_id(), lost = new_txn_id();
  {
    Catalog cat(root);
    for (TxnId t : {committed, lost}) {
      cat.get("a").stage(t, {}, {txn_row(sa, "a-" + std::to_string(t))});
      cat.get("b").stage(t, {}, {txn_row(sb, "b-" + std::to_string(t))});
    }
    log_catalog_commit(root, 2, committed);
  }
  for (int round = 0; round < 2; ++round) {
    Catalog cat(root);
    EXPECT_EQ(cat.get("a").count(), 2u);
    EXPECT_EQ(cat.get("b").count(), 2u);
    EXPECT_TRUE(cat.get("a").get("a-" + std::to_string(committed)).has_value());
    EXPECT_TRUE(cat.get("b").get("b-" + std::to_string(committed)).has_value());
    EXPECT_FALSE(cat.get("a").get("a-" + std::to_string(lost)).has_value());
    EXPECT_FALSE(cat.get("b").get("b-" + std::to_string(lost)).has_value());
  }
  fs::remove_all(root);
}

// commit() in two steps: once the commit record is logged the transaction is
// committed, so whatever comes next (its publication, another write, an abort, a
// checkpoint) shows its rows, in the log's order.
TEST(Transaction, ALoggedCommitIsPublishedByWhateverComesNext) {
  const auto dir = txn_dir("logged");
  const auto s = chunk_schema("logged", kTxnDim);
  auto c = Collection::create(dir, s);
  c->insert({txn_row(s, "old", "old text")});
  const TxnId t1 = new_txn_id();
  c->stage(t1, {"old"}, {txn_row(s, "x", "staged x")});
  EXPECT_FALSE(c->log_commit(new_txn_id()));  // nothing staged under that id
  EXPECT_TRUE(c->log_commit(t1));
  EXPECT_FALSE(c->get("x").has_value());       // durable, not yet visible
  // Another write first: the logged commit is applied before it, as replay would.
  c->upsert({txn_row(s, "x", "upserted after")});
  EXPECT_EQ(text_of(*c, "x"), "upserted after");
  EXPECT_FALSE(c->get("old").has_value());
  EXPECT_EQ(c->publish_commit(t1), 0u);  // already published
  // An abort of a logged commit publishes it (the log says committed).
  const TxnId t2 = new_txn_id();
  c->stage(t2, {}, {txn_row(s, "y", "staged y")});
  ASSERT_TRUE(c->log_commit(t2));
  c->abort(t2);
  EXPECT_EQ(text_of(*c, "y"), "staged y");
  EXPECT_FALSE(c->in_transaction());
  // A checkpoint publishes a logged commit rather than waiting for it.
  const TxnId t3 = new_txn_id();
  c->stage(t3, {"y"}, {txn_row(s, "z", "staged z")});
  ASSERT_TRUE(c->log_commit(t3));
  c->checkpoint();
  EXPECT_EQ(text_of(*c, "z"), "staged z");
  EXPECT_FALSE(c->get("y").has_value());
  c.reset();
  auto reopened = Collection::open(dir);
  EXPECT_EQ(text_of(*reopened, "x"), "upserted after");
  EXPECT_EQ(text_of(*reopened, "z"), "staged z");
  EXPECT_EQ(reopened->count(), 2u);
  reopened.reset();
  fs::remove_all(dir);
}
