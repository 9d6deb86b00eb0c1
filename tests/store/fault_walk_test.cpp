// The crash walk: a sequence of store operations -- creating collections,
// an ingest transaction over two collections, upserts, deletes, checkpoints (a merge of
// segments among them), a
// single-collection transaction, a replace, a compaction and a rebuild of a collection
// with vectors of another dimension (`eagle reembed`) -- is run once per I/O
// call of the store, with that call faulted:
//   crash + power loss (every unsynced byte and folder change dropped),
//   crash + power loss keeping half of each file's unsynced bytes (torn writes),
//   an I/O error (the process then stops cleanly),
//   a short write (half the buffer, then an error).
// After each, the store is reopened with the real file system and must hold exactly
// the state after the last acknowledged operation, or after the one in flight
// (which may have become durable just before the fault) -- every row compared by id,
// text, vector and fields -- and must accept and keep a new write.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <iostream>
#include <map>

#include "eagle/core/error.h"
#include "eagle/store/collection.h"
#include "support/fault_file_system.h"

namespace fs = std::filesystem;
using namespace eagle;
using namespace eagle::store;
using eagle::testing::FaultFileSystem;
using eagle::testing::SimulatedCrash;

namespace {

constexpr uint32_t kWalkDim = 4;

struct RowData {
  std::string text;
  std::vector<float> vector;
  std::string kb;
  bool operator==(const RowData&) const = default;
};
// Collection name -> id -> row; an absent collection has no key.
using State = std::map<std::string, std::map<std::string, RowData>>;

CollectionSchema schema_of(const std::string& name) { return chunk_schema(name, kWalkDim, Metric::ip); }

RowData data_for(const std::string& id, int version) {
  const float v = static_cast<float>(std::hash<std::string>{}(id) % 1000) / 7.0f + static_cast<float>(version);
  return {"text of " + id + " v" + std::to_string(version), {v, -v, v * 0.5f, 1.0f}, "kb" + std::to_string(version % 3)};
}

Record record(const std::string& coll, const std::string& id, int version) {
  const auto schema = schema_of(coll);
  const RowData d = data_for(id, version);
  Record r;
  r.id = id;
  r.text = d.text;
  r.vector = d.vector;
  r.values.assign(schema.fields.size(), std::monostate{});
  r.values[*schema.field_index("kb_name")] = d.kb;
  return r;
}

std::vector<float> rebuilt_vector(const std::vector<float>& v) { return {v[0], v[1], v[2], v[3], v[0] + v[1], 7.0f}; }

struct Op {
  std::string name;
  std::function<void(Catalog&)> run;
  std::function<void(State&)> model;
};

std::vector<Record> records(const std::string& coll, const std::string& prefix, int from, int to, int version) {
  std::vector<Record> out;
  for (int i = from; i < to; ++i) out.push_back(record(coll, prefix + std::to_string(i), version));
  return out;
}

void model_upsert(State& s, const std::string& coll, const std::string& prefix, int from, int to, int version) {
  for (int i = from; i < to; ++i) s[coll][prefix + std::to_string(i)] = data_for(prefix + std::to_string(i), version);
}

// An ingest's shape: a transaction staged by `stage` in `colls` and committed through
// the catalog, or aborted in every one of them if anything throws.
template <typename F>
void committed_transaction(Catalog& cat, const std::vector<Collection*>& colls, F&& stage) {
  const TxnId t = new_txn_id();
  try {
    stage(t);
    cat.commit(t, colls);
  } catch (...) {
    for (auto* c : colls) c->abort(t);
    throw;
  }
}

std::vector<Op> operations() {
  std::vector<Op> ops;
  ops.push_back({"create c", [](Catalog& cat) { cat.create(schema_of("c")); }, [](State& s) { s["c"]; }});
  ops.push_back({"create d", [](Catalog& cat) { cat.create(schema_of("d")); }, [](State& s) { s["d"]; }});
  ops.push_back({"ingest over c and d",
                 [](Catalog& cat) {
                   auto& c = cat.get("c");
                   auto& d = cat.get("d");
                   committed_transaction(cat, {&c, &d}, [&](TxnId t) {
                     for (int part = 0; part < 3; ++part) c.stage(t, {}, records("c", "c", part * 10, part * 10 + 10, 1));
                     d.stage(t, {}, records("d", "d", 0, 5, 1));
                   });
                 },
                 [](State& s) {
                   model_upsert(s, "c", "c", 0, 30, 1);
                   model_upsert(s, "d", "d", 0, 5, 1);
                 }});
  ops.push_back({"upsert c",
                 [](Catalog& cat) {
                   auto r = records("c", "c", 30, 34, 2);
                   r.push_back(record("c", "c0", 2));
                   cat.get("c").upsert(std::move(r));
                 },
                 [](State& s) {
                   model_upsert(s, "c", "c", 30, 34, 2);
                   s["c"]["c0"] = data_for("c0", 2);
                 }});
  ops.push_back({"delete from c", [](Catalog& cat) { cat.get("c").remove({"c1", "c2", "c3", "c30"}); },
                 [](State& s) {
                   for (const char* id : {"c1", "c2", "c3", "c30"}) s["c"].erase(id);
                 }});
  ops.push_back({"checkpoint c and d",
                 [](Catalog& cat) {
                   cat.get("c").checkpoint();
                   cat.get("d").checkpoint();
                 },
                 [](State&) {}});
  ops.push_back({"upsert c after the checkpoint", [](Catalog& cat) { cat.get("c").upsert({record("c", "c40", 3)}); },
                 [](State& s) { s["c"]["c40"] = data_for("c40", 3); }});
  ops.push_back({"delete from d", [](Catalog& cat) { cat.get("d").remove({"d0"}); },
                 [](State& s) { s["d"].erase("d0"); }});
  // Segments: each checkpoint seals the rows written since into a file of their own;
  // the third segment of c is as large as the second, so the merge that follows
  // (merge_now: the background merger's path, in this thread) makes them one (the
  // walk's merge policy: two segments a tier).
  ops.push_back({"checkpoint c: a second segment", [](Catalog& cat) { cat.get("c").checkpoint(); },
                 [](State&) {}});
  ops.push_back({"upsert c for a third segment", [](Catalog& cat) { cat.get("c").upsert({record("c", "c41", 3)}); },
                 [](State& s) { s["c"]["c41"] = data_for("c41", 3); }});
  ops.push_back({"checkpoint c: a third segment", [](Catalog& cat) { cat.get("c").checkpoint(); },
                 [](State&) {}});
  ops.push_back({"merge c",
                 [](Catalog& cat) {
                   auto& c = cat.get("c");
                   const size_t before = c.segment_count();
                   EXPECT_EQ(c.merge_now(), 1u);  // the second and third segments
                   EXPECT_EQ(c.segment_count(), before - 1);
                 },
                 [](State&) {}});
  ops.push_back({"transaction in c",
                 [](Catalog& cat) {
                   auto& c = cat.get("c");
                   committed_transaction(cat, {&c}, [&](TxnId t) {
                     c.stage(t, {"c4", "c5"}, records("c", "c", 50, 52, 4));
                     c.stage(t, {}, {record("c", "c52", 4), record("c", "c6", 4)});
                   });
                 },
                 [](State& s) {
                   s["c"].erase("c4");
                   s["c"].erase("c5");
                   model_upsert(s, "c", "c", 50, 53, 4);
                   s["c"]["c6"] = data_for("c6", 4);
                 }});
  // A transaction whose staged rows a checkpoint seals mid-way (a bulk ingest's
  // bounded growing segment): the MANIFEST names them until the commit record comes.
  ops.push_back({"transaction over c and d sealed mid-way",
                 [](Catalog& cat) {
                   auto& c = cat.get("c");
                   auto& d = cat.get("d");
                   committed_transaction(cat, {&c, &d}, [&](TxnId t) {
                     c.stage(t, {"c9"}, records("c", "c", 60, 63, 6));
                     d.stage(t, {}, records("d", "d", 10, 12, 6));
                     c.checkpoint();
                     d.checkpoint();
                     c.stage(t, {}, {record("c", "c60", 7), record("c", "c63", 7)});
                   });
                 },
                 [](State& s) {
                   s["c"].erase("c9");
                   model_upsert(s, "c", "c", 61, 63, 6);
                   s["c"]["c60"] = data_for("c60", 7);
                   s["c"]["c63"] = data_for("c63", 7);
                   model_upsert(s, "d", "d", 10, 12, 6);
                 }});
  ops.push_back({"transaction in c sealed, then aborted",
                 [](Catalog& cat) {
                   auto& c = cat.get("c");
                   const TxnId t = new_txn_id();
                   c.stage(t, {"c10"}, records("c", "c", 70, 72, 8));
                   c.checkpoint();
                   c.abort(t);
                   c.checkpoint();
                 },
                 [](State&) {}});
  ops.push_back({"replace in c", [](Catalog& cat) { cat.get("c").replace({"c7"}, {record("c", "c8", 5)}); },
                 [](State& s) {
                   s["c"].erase("c7");
                   s["c"]["c8"] = data_for("c8", 5);
                 }});
  ops.push_back({"compact c", [](Catalog& cat) { cat.get("c").compact(); }, [](State&) {}});
  // `eagle reembed`: d rebuilt with vectors of another dimension, swapped in whole.
  ops.push_back({"rebuild d",
                 [](Catalog& cat) {
                   auto& d = cat.get("d");
                   auto built = cat.begin_rebuild(chunk_schema("d", kWalkDim + 2, Metric::ip));
                   try {
                     std::vector<Record> rows;
                     for (const auto& r : d.fetch("", {}, kMaxSearchK)) {
                       auto full = *d.get_with_vector(r.id);
                       full.vector = rebuilt_vector(full.vector);
                       rows.push_back(std::move(full));
                     }
                     built->upsert(std::move(rows));
                   } catch (...) {
                     cat.abort_rebuild(std::move(built));
                     throw;
                   }
                   cat.finish_rebuild(std::move(built));
                 },
                 [](State& s) {
                   for (auto& [id, row] : s["d"]) row.vector = rebuilt_vector(row.vector);
                 }});
  return ops;
}

// Runs the operations until one fails; returns how many were acknowledged.
size_t run_operations(const fs::path& root, FaultFileSystem& ffs) {
  CollectionOptions o;
  o.file_system = &ffs;
  o.checkpoint_wal_bytes = 1ull << 40;  // only the explicit checkpoints
  o.merges.segments_per_tier = 2;       // two like-sized segments merge
  o.merge_mode = CollectionOptions::Merges::manual;  // merge_now(): every I/O call in order
  size_t acked = 0;
  try {
    Catalog cat(root, o);
    for (const auto& op : operations()) {
      op.run(cat);
      ++acked;
    }
  } catch (const SimulatedCrash&) {
  } catch (const Error&) {
  }
  return acked;
}

State read_state(const fs::path& root) {
  State s;
  Catalog cat(root);
  for (const char* name : {"c", "d"}) {
    if (!cat.exists(name)) continue;
    auto& c = cat.get(name);
    auto& rows = s[name];
    const auto kb = *c.schema().field_index("kb_name");
    for (const auto& r : c.fetch("", {}, kMaxSearchK)) {
      auto full = c.get_with_vector(r.id);
      const auto* k = std::get_if<std::string>(&full->values[kb]);
      rows[r.id] = {full->text, full->vector, k ? *k : std::string()};
    }
    if (rows.size() != c.count()) ADD_FAILURE() << name << ": fetch and count disagree";
  }
  return s;
}

std::vector<State> model_states() {
  std::vector<State> states{State{}};
  for (const auto& op : operations()) {
    State next = states.back();
    op.model(next);
    states.push_back(std::move(next));
  }
  return states;
}

std::string describe(const State& s) {
  std::string out;
  for (const auto& [name, rows] : s) {
    out += name + "{";
    for (const auto& [id, d] : rows) out += id + ":" + d.text + ",";
    out += "} ";
  }
  return out.empty() ? "(no collections)" : out;
}

struct WalkMode {
  const char* name;
  FaultFileSystem::Fault fault;
  bool power_loss;
  double keep_unsynced;
};

uint64_t count_calls(const fs::path& root, bool exchange) {
  fs::remove_all(root);
  FaultFileSystem ffs;
  ffs.set_exchange_supported(exchange);
  EXPECT_EQ(run_operations(root, ffs), operations().size());
  fs::remove_all(root);
  return ffs.calls();
}

// The rebuild swaps folders by RENAME_EXCHANGE where the file system has it, else by
// two renames: the walk runs both ways.
void walk(const WalkMode& mode, bool exchange) {
  const fs::path root = fs::temp_directory_path() / ("eagle_walk_" + std::to_string(::getpid()));
  const auto states = model_states();
  const uint64_t calls = count_calls(root, exchange);
  ASSERT_GT(calls, 50u);
  uint64_t faulted = 0;
  for (uint64_t n = 1; n <= calls; ++n) {
    fs::remove_all(root);
    FaultFileSystem ffs;
    ffs.set_exchange_supported(exchange);
    ffs.arm(mode.fault, n);
    const size_t acked = run_operations(root, ffs);
    if (!ffs.fired()) continue;  // a short write armed on a call that is not an append
    ++faulted;
    // An operation may absorb a fault and still succeed (a rebuild whose swap failed
    // once finishes it again); the store must then hold the final state.
    const bool all_acked = acked == operations().size();
    if (mode.power_loss) ffs.lose_power(mode.keep_unsynced);
    const std::string where = std::string(mode.name) + " at I/O call " + std::to_string(n) + " of " +
                              std::to_string(calls) + (all_acked ? ", absorbed by its operation"
                                                                 : ", during '" + operations()[acked].name + "'");
    State got;
    try {
      got = read_state(root);
    } catch (const std::exception& e) {
      FAIL() << where << ": the store does not open: " << e.what();
    }
    // Everything acknowledged, exactly; the operation in flight whole or not at all.
    const State& in_flight = all_acked ? states[acked] : states[acked + 1];
    EXPECT_TRUE(got == states[acked] || got == in_flight)
        << where << "\n  got       " << describe(got) << "\n  acked     " << describe(states[acked])
        << "\n  in flight " << describe(in_flight);
    // And the store takes a new write and keeps it.
    try {
      {
        Catalog cat(root);
        if (!cat.exists("c")) cat.create(schema_of("c"));
        cat.get("c").upsert({record("c", "after", 9)});
      }
      Catalog cat(root);
      EXPECT_TRUE(cat.get("c").get("after").has_value()) << where;
    } catch (const std::exception& e) {
      ADD_FAILURE() << where << ": a write after reopening failed: " << e.what();
    }
  }
  fs::remove_all(root);
  std::cout << "{\"fault_walk\": \"" << mode.name << "\", \"swap\": \"" << (exchange ? "exchange" : "two renames")
            << "\", \"io_calls\": " << calls
            << ", \"faults_injected\": " << faulted << "}" << std::endl;
  ::testing::Test::RecordProperty("io_calls", static_cast<int>(calls));
  ::testing::Test::RecordProperty("faults_injected", static_cast<int>(faulted));
  EXPECT_GT(faulted, 0u);
}

}  // namespace

void walk_both_ways(const WalkMode& mode) {
  for (bool exchange : {false, true}) {
    SCOPED_TRACE(exchange ? "swap by RENAME_EXCHANGE" : "swap by two renames");
    walk(mode, exchange);
  }
}

TEST(FaultWalk, CrashWithPowerLossAtEveryIoCall) {
  walk_both_ways({"crash, unsynced bytes lost", FaultFileSystem::Fault::crash, true, 0.0});
}

TEST(FaultWalk, CrashWithTornWritesAtEveryIoCall) {
  walk_both_ways({"crash, half of the unsynced bytes kept", FaultFileSystem::Fault::crash, true, 0.5});
}

TEST(FaultWalk, IoErrorAtEveryIoCall) { walk_both_ways({"I/O error", FaultFileSystem::Fault::error, false, 0.0}); }

TEST(FaultWalk, ShortWriteAtEveryAppend) {
  walk_both_ways({"short write", FaultFileSystem::Fault::short_write, false, 0.0});
}

TEST(FaultWalk, TheModelDropsUnsyncedBytesAndUnsyncedRenames) {
  // The double itself: what it drops on power loss is what a real disk may drop.
  const fs::path dir = fs::temp_directory_path() / ("eagle_faultfs_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  FaultFileSystem ffs;
  {
    auto f = ffs.open_writable(dir / "a", io::FileSystem::OpenMode::append);
    f->append("synced", 6);
    f->sync();
    f->append("-lost", 5);
  }
  ffs.sync_path(dir, true);  // a's entry is durable
  io::write_file_atomic(ffs, dir / "b", [](std::ostream& out) { out << "new"; });  // synced, folder too
  {
    auto f = ffs.open_writable(dir / "c.tmp", io::FileSystem::OpenMode::truncate);
    f->append("x", 1);
    f->sync();
  }
  ffs.sync_path(dir, true);  // c.tmp's entry is durable
  ffs.rename(dir / "c.tmp", dir / "c");  // the folder is not synced after it
  ffs.lose_power();
  std::ifstream a(dir / "a");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a), {}), "synced");
  EXPECT_TRUE(fs::exists(dir / "b"));
  EXPECT_FALSE(fs::exists(dir / "c"));
  EXPECT_TRUE(fs::exists(dir / "c.tmp"));
  fs::remove_all(dir);
}
