// A collection as segments: each checkpoint seals the rows written since into a file of
// their own, merges follow the tiered policy, and searches over the segments return
// exactly what one index over the same live rows returns (the oracle: an in-memory
// collection given those rows in row order), before and after a reopen. A store of the
// previous format (one segment, deletions as row flags) opens and moves to the new
// format at its next checkpoint.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <atomic>
#include <cmath>
#include <random>
#include <thread>

#include "eagle/store/checked_file.h"
#include "eagle/store/collection.h"
#include "eagle/store/record_codec.h"
#include "eagle/core/file_system.h"
#include <cstring>

namespace fs = std::filesystem;
using namespace eagle;
using namespace eagle::store;
using nlohmann::json;

namespace {

constexpr uint32_t kSegDim = 8;

fs::path segments_dir(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("eagle_segments_test_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  return dir;
}

CollectionSchema flat_schema() {
  auto s = chunk_schema("seg", kSegDim);
  s.vector.index = VectorIndexKind::flat;  // exact: the oracle's vector hits are the same rows
  return s;
}

std::string words(std::mt19937& rng, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    s += "w" + std::to_string(static_cast<int>(std::pow(300, u))) + " ";
  }
  return s;
}

Record random_record(std::mt19937& rng, const CollectionSchema& schema, const std::string& id) {
  Record r{id, words(rng, 1 + static_cast<int>(rng() % 40)), std::vector<float>(kSegDim),
           std::vector<Value>(schema.fields.size())};
  for (auto& x : r.vector) x = std::uniform_real_distribution<float>(-1, 1)(rng);
  r.values[*schema.field_index("document_id")] = "doc" + std::to_string(rng() % 50);
  r.values[*schema.field_index("kb_name")] = std::string(rng() % 3 == 0 ? "ka" : "kb");
  return r;
}

json manifest_of(const fs::path& dir) {
  std::ifstream in(dir / "MANIFEST");
  return json::parse(in);
}

// The live rows in row order, with the vectors the collection stores.
std::vector<Record> live_rows(const Collection& c) {
  std::vector<Record> out;
  size_t from = 0;
  for (auto page = c.scan(0, 1000, &from); !page.empty(); page = c.scan(from, 1000, &from))
    for (auto& r : page) out.push_back(*c.get_with_vector(r.id));
  return out;
}

void expect_same_as_one_index(const Collection& c, std::mt19937& rng, const std::string& ctx) {
  auto oracle = Collection::in_memory(c.schema());
  oracle->insert(live_rows(c));
  ASSERT_EQ(oracle->count(), c.count()) << ctx;
  for (int q = 0; q < 30; ++q) {
    const std::string query = words(rng, 1 + q % 6);
    const std::string filter = q % 3 == 0 ? "document_id in [\"doc1\", \"doc2\", \"doc3\", \"doc4\"]" : "";
    const auto got = c.search_text(query, 20, filter);
    const auto want = oracle->search_text(query, 20, filter);
    ASSERT_EQ(got.size(), want.size()) << ctx << " '" << query << "'";
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i].score, want[i].score, 1e-9) << ctx << " rank " << i;
      if (got[i].id != want[i].id) {
        EXPECT_NEAR(got[i].score, want[i].score, 1e-12) << ctx << " rank " << i;
      }
    }
    std::vector<float> v(kSegDim);
    for (auto& x : v) x = std::uniform_real_distribution<float>(-1, 1)(rng);
    const auto vgot = c.search_vector(v, 15, filter);
    const auto vwant = oracle->search_vector(v, 15, filter);
    ASSERT_EQ(vgot.size(), vwant.size()) << ctx;
    for (size_t i = 0; i < vgot.size(); ++i) {
      EXPECT_EQ(vgot[i].id, vwant[i].id) << ctx << " vector rank " << i;
      EXPECT_NEAR(vgot[i].score, vwant[i].score, 1e-6) << ctx << " vector rank " << i;
    }
  }
  const std::string weighed = words(rng, 5);
  EXPECT_NEAR(c.query_weight(weighed), oracle->query_weight(weighed), 1e-9) << ctx;
  // A tenant's statistics alone (tenancy.isolate_statistics): the scores of an index
  // holding only that knowledge base's live rows, through segments, deletes and merges.
  auto tenant = Collection::in_memory(c.schema());
  std::vector<Record> ka;
  for (auto& r : live_rows(c))
    if (std::get<std::string>(r.values[*c.schema().field_index("kb_name")]) == "ka") ka.push_back(std::move(r));
  ASSERT_FALSE(ka.empty()) << ctx;
  tenant->insert(std::move(ka));
  const TemplateParams kbs = {{"kbs", json::array({"ka"})}};
  for (int q = 0; q < 20; ++q) {
    const std::string query = words(rng, 1 + q % 6);
    const auto got = c.search_text(query, 20, "kb_name in {kbs}", kbs, "kb_name in {kbs}");
    const auto want = tenant->search_text(query, 20);
    ASSERT_EQ(got.size(), want.size()) << ctx << " tenant '" << query << "'";
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i].score, want[i].score, 1e-9) << ctx << " tenant rank " << i;
      if (got[i].id != want[i].id) {
        EXPECT_NEAR(got[i].score, want[i].score, 1e-12) << ctx << " tenant rank " << i;
      }
    }
    // A query's weight (the biomed boost's mention share) from the same statistics.
    EXPECT_NEAR(c.query_weight(query, "kb_name in {kbs}", kbs), tenant->query_weight(query), 1e-9) << ctx;
    // Without the tenant's statistics the same search scores differently (the oracle
    // above is not vacuous).
    if (q == 0 && !got.empty()) {
      const auto shared = c.search_text(query, 20, "kb_name in {kbs}", kbs);
      ASSERT_FALSE(shared.empty());
      EXPECT_GT(std::abs(shared[0].score - got[0].score), 1e-6) << ctx;
      EXPECT_GT(std::abs(c.query_weight(query) - tenant->query_weight(query)), 1e-9) << ctx;
    }
  }
}

}  // namespace

TEST(Segments, SearchesOverSegmentsEqualOneIndexOverTheLiveRowsThroughDeletesMergesAndReopen) {
  const auto dir = segments_dir("oracle");
  const auto schema = flat_schema();
  std::mt19937 rng(77);
  CollectionOptions opts;
  opts.merges.segments_per_tier = 3;  // merges after a few checkpoints
  opts.merge_mode = CollectionOptions::Merges::in_checkpoint;  // each checkpoint merges before it returns
  size_t next_id = 0, most_segments = 0;
  {
    auto c = Collection::create(dir, schema, opts);
    for (int round = 0; round < 40; ++round) {
      std::vector<Record> batch;
      const size_t n = 1 + rng() % (round % 7 == 0 ? 300 : 12);
      for (size_t i = 0; i < n; ++i) batch.push_back(random_record(rng, schema, "r" + std::to_string(next_id++)));
      // Some upserts of earlier rows (their old rows become hidden in older segments).
      for (int i = 0; i < 3 && next_id > 10; ++i)
        batch.push_back(random_record(rng, schema, "r" + std::to_string(rng() % next_id)));
      std::sort(batch.begin(), batch.end(), [](const Record& a, const Record& b) { return a.id < b.id; });
      batch.erase(std::unique(batch.begin(), batch.end(), [](const Record& a, const Record& b) { return a.id == b.id; }),
                  batch.end());
      c->upsert(std::move(batch));
      if (round % 3 == 1) c->remove({"r" + std::to_string(rng() % next_id), "r" + std::to_string(rng() % next_id)});
      c->checkpoint();
      most_segments = std::max(most_segments, c->segment_count());
      EXPECT_LE(c->segment_count(), segment_bound(next_id, opts.merges));
      if (round % 10 == 9) expect_same_as_one_index(*c, rng, "round " + std::to_string(round));
    }
    // Rows written after the last checkpoint are in the active segment: searched too.
    c->upsert({random_record(rng, schema, "after-checkpoint")});
    expect_same_as_one_index(*c, rng, "with an active segment");
  }
  EXPECT_GT(most_segments, 2u);  // the walk above did make several segments
  // The manifest lists the segments in row order; they cover every row.
  const auto m = manifest_of(dir);
  EXPECT_EQ(m["format"], 3);
  EXPECT_GT(m["segments"].size(), 1u);
  auto c = Collection::open(dir, opts);
  expect_same_as_one_index(*c, rng, "reopened");
  c->compact();
  EXPECT_EQ(c->segment_count(), 1u);
  expect_same_as_one_index(*c, rng, "compacted");
  fs::remove_all(dir);
}

// The cost of a checkpoint follows what was written since the last one: the new
// segment file holds those rows only.
TEST(Segments, ACheckpointWritesOnlyTheRowsSinceTheLast) {
  const auto dir = segments_dir("cost");
  const auto schema = flat_schema();
  std::mt19937 rng(5);
  auto c = Collection::create(dir, schema);
  std::vector<Record> rows;
  for (int i = 0; i < 3000; ++i) rows.push_back(random_record(rng, schema, "r" + std::to_string(i)));
  c->insert(std::move(rows));
  c->checkpoint();
  const auto first = manifest_of(dir)["segments"];
  ASSERT_EQ(first.size(), 1u);
  const auto big = fs::file_size(dir / first[0]["file"].get<std::string>());
  auto one = random_record(rng, schema, "one more");
  one.text = "zzsinglerow " + one.text;
  c->insert({one});
  c->checkpoint();
  const auto m = manifest_of(dir);
  ASSERT_EQ(m["segments"].size(), 2u);
  EXPECT_EQ(m["segments"][0], first[0]);  // the first segment's file is untouched
  EXPECT_EQ(m["segments"][1]["rows"], 1);
  EXPECT_LT(fs::file_size(dir / m["segments"][1]["file"].get<std::string>()) * 100, big);
  ASSERT_TRUE(c->get("one more"));
  EXPECT_EQ(c->search_text("zzsinglerow", 1).at(0).id, "one more");
  fs::remove_all(dir);
}

// An open points each row at its bytes in the mapped segment file (layout 3). A merge
// points them at its new file, so the files it replaces are unmapped, not kept on disk
// by the process after their removal; every row reads as before.
TEST(Segments, AMergeMovesRowsReadInPlaceToItsFileAndReleasesTheOldOnes) {
  const auto dir = segments_dir("in_place");
  const auto schema = flat_schema();
  std::mt19937 rng(9);
  std::vector<Record> all;
  CollectionOptions opts;
  opts.merge_mode = CollectionOptions::Merges::manual;
  {
    auto c = Collection::create(dir, schema, opts);
    for (int seg = 0; seg < 4; ++seg) {
      std::vector<Record> rows;
      for (int i = 0; i < 50; ++i) rows.push_back(random_record(rng, schema, "s" + std::to_string(seg) + "_" + std::to_string(i)));
      all.insert(all.end(), rows.begin(), rows.end());
      c->insert(std::move(rows));
      c->checkpoint();
    }
  }
  std::vector<std::string> old_files;
  const json before = manifest_of(dir);  // named: a range-for over a temporary's member dangles
  for (const auto& seg : before["segments"]) old_files.push_back(seg["file"]);
  ASSERT_EQ(old_files.size(), 4u);
  auto mapped = [&](const std::string& file) {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line))
      if (line.find((dir / file).string()) != std::string::npos) return true;
    return false;
  };
  auto c = Collection::open(dir, opts);
  for (const auto& f : old_files) EXPECT_TRUE(mapped(f)) << f << ": its rows are read in place";
  ASSERT_EQ(c->merge_now(), 1u);
  ASSERT_EQ(c->segment_count(), 1u);
  const std::string merged = manifest_of(dir)["segments"][0]["file"];
  for (const auto& f : old_files) EXPECT_FALSE(mapped(f)) << f << " is still mapped after the merge";
  EXPECT_TRUE(mapped(merged));
  for (const auto& r : all) {
    const auto got = c->get(r.id);
    ASSERT_TRUE(got) << r.id;
    EXPECT_EQ(got->text, r.text);
    EXPECT_EQ(got->values, r.values) << r.id;
  }
  size_t next = 0;
  EXPECT_EQ(c->scan(0, 1000, &next).size(), all.size());
  c.reset();
  fs::remove_all(dir);
}

// A store of the previous format: one segment whose row flags are its deletions, the
// manifest naming it as "segment". It opens with every row and deletion, and its next
// checkpoint writes the segment list.
TEST(Segments, AStoreOfThePreviousFormatOpensAndMovesToSegmentsAtItsNextCheckpoint) {
  const auto dir = segments_dir("format2");
  const auto schema = flat_schema();
  std::mt19937 rng(9);
  std::string segment;
  uint64_t lsn = 0;
  {
    auto c = Collection::create(dir, schema);
    std::vector<Record> rows;
    for (int i = 0; i < 200; ++i) rows.push_back(random_record(rng, schema, "r" + std::to_string(i)));
    c->insert(std::move(rows));
    c->remove({"r3", "r7"});
    c->checkpoint();
    const auto m = manifest_of(dir);
    ASSERT_EQ(m["segments"].size(), 1u);
    segment = m["segments"][0]["file"];
    lsn = m["last_lsn"];
    fs::remove(dir / m["deleted"].get<std::string>());
  }
  {
    // The format-2 manifest, as the previous release wrote it.
    std::ofstream(dir / "MANIFEST") << with_checksum({{"format", 2}, {"segment", segment}, {"last_lsn", lsn}}).dump();
  }
  auto c = Collection::open(dir);
  EXPECT_EQ(c->count(), 198u);
  EXPECT_FALSE(c->get("r3"));
  EXPECT_TRUE(c->get("r4"));
  c->insert({random_record(rng, schema, "new")});
  c->checkpoint();
  const auto m = manifest_of(dir);
  EXPECT_EQ(m["format"], 3);
  EXPECT_EQ(m["segments"].size(), 2u);
  EXPECT_EQ(m["segments"][0]["file"], segment);
  c.reset();
  auto again = Collection::open(dir);
  EXPECT_EQ(again->count(), 199u);
  EXPECT_FALSE(again->get("r7"));
  fs::remove_all(dir);
}

// Merges on the collection's own thread: searches and writes go on while they run,
// the bound holds once they settle, the answers are the oracle's, and a pause holds
// them back until resumed.
TEST(Segments, BackgroundMergesSettleWithinTheBoundWhileSearchesAndWritesGoOn) {
  const auto dir = segments_dir("background");
  const auto schema = flat_schema();
  std::mt19937 rng(123);
  CollectionOptions opts;
  opts.merges.segments_per_tier = 2;
  opts.merges.max_segments = 8;
  ASSERT_EQ(opts.merge_mode, CollectionOptions::Merges::background);  // the default
  auto c = Collection::create(dir, schema, opts);
  std::atomic<bool> stop{false};
  std::atomic<int> searches{0}, failures{0};
  std::thread reader([&] {
    std::mt19937 qrng(1);
    while (!stop) {
      try {
        c->search_text(words(qrng, 3), 10);
        std::vector<float> v(kSegDim, 0.5f);
        c->search_vector(v, 10);
        ++searches;
      } catch (...) {
        ++failures;
      }
    }
  });
  size_t next_id = 0;
  for (int round = 0; round < 60; ++round) {
    std::vector<Record> batch;
    for (int i = 0; i < 1 + round % 9; ++i) batch.push_back(random_record(rng, schema, "r" + std::to_string(next_id++)));
    c->upsert(std::move(batch));
    if (round % 5 == 4) c->remove({"r" + std::to_string(rng() % next_id)});
    c->checkpoint();
  }
  c->wait_for_merges();
  stop = true;
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(searches.load(), 0);
  // Settled: within the policy's bound (the active segment is empty after a checkpoint).
  EXPECT_LE(c->segment_count(), segment_bound(next_id, opts.merges));
  expect_same_as_one_index(*c, rng, "after background merges");
  // Paused: checkpoints seal segments and nothing merges them.
  c->pause_merges(true);
  const size_t before = c->segment_count();
  for (int round = 0; round < 4; ++round) {
    c->upsert({random_record(rng, schema, "p" + std::to_string(round))});
    c->checkpoint();
  }
  c->wait_for_merges();  // returns at once while paused
  EXPECT_EQ(c->segment_count(), before + 4);
  c->pause_merges(false);
  c->checkpoint();  // asks again
  c->wait_for_merges();
  EXPECT_LT(c->segment_count(), before + 4);
  expect_same_as_one_index(*c, rng, "resumed");
  c.reset();
  auto reopened = Collection::open(dir, opts);
  expect_same_as_one_index(*reopened, rng, "reopened");
  fs::remove_all(dir);
}

// Segments a process left for merging (a bulk ingest seals one every
// checkpoint_wal_bytes and exits before its merges run) are merged by the next writer
// that opens the collection, without waiting for a write; a reader leaves them alone.
TEST(Segments, AWriterThatOpensSegmentsLeftForMergingMergesThemWithoutAWrite) {
  const auto dir = segments_dir("merge-on-open");
  const auto schema = flat_schema();
  std::mt19937 rng(7);
  CollectionOptions opts;
  opts.merges.segments_per_tier = 2;
  opts.merge_mode = CollectionOptions::Merges::manual;  // the writer that leaves them
  size_t sealed = 0;
  {
    auto c = Collection::create(dir, schema, opts);
    for (int round = 0; round < 6; ++round) {
      std::vector<Record> batch;
      for (int i = 0; i < 4; ++i) batch.push_back(random_record(rng, schema, "r" + std::to_string(round * 4 + i)));
      c->upsert(std::move(batch));
      c->checkpoint();
    }
    sealed = c->segment_count();
    ASSERT_EQ(sealed, 6u);
  }
  CollectionOptions ro = opts;
  ro.merge_mode = CollectionOptions::Merges::background;
  ro.read_only = true;
  {
    auto reader = Collection::open(dir, ro);
    reader->wait_for_merges();
    EXPECT_EQ(reader->segment_count(), sealed);  // a reader never merges
  }
  CollectionOptions writer = opts;
  writer.merge_mode = CollectionOptions::Merges::background;
  auto c = Collection::open(dir, writer);
  c->wait_for_merges();
  EXPECT_LT(c->segment_count(), sealed);
  EXPECT_LE(c->segment_count(), segment_bound(24, writer.merges));
  EXPECT_EQ(c->count(), 24u);
  expect_same_as_one_index(*c, rng, "merged on open");
  fs::remove_all(dir);
}

// Sealed segments' HNSW node blocks are read in place from their mapped files
// (CollectionOptions::map_vectors): when a store opens, and when a checkpoint seals or
// a merge writes a segment. The searches are those of a collection that copies them.
TEST(Segments, MappedVectorIndexesSearchAsCopiedOnes) {
  const auto dir = segments_dir("mapped");
  auto schema = chunk_schema("seg", kSegDim);
  schema.vector.index = VectorIndexKind::hnsw;
  std::mt19937 rng(11);
  CollectionOptions mapped;
  mapped.merge_mode = CollectionOptions::Merges::in_checkpoint;
  mapped.map_vectors_min_rows = 1;  // these segments are small; by default only large ones are mapped
  CollectionOptions copied = mapped;
  copied.map_vectors = false;
  copied.read_only = true;  // a second view of the same folder
  auto mapped_bytes = [](const Collection& c) { return c.describe()["vector_index_mapped_bytes"].get<size_t>(); };
  {
    auto c = Collection::create(dir, schema, mapped);
    size_t sealed_bytes = 0;
    for (int seg = 0; seg < 4; ++seg) {  // four of one tier: the fourth checkpoint merges them
      std::vector<Record> rows;
      for (int i = 0; i < 300; ++i)
        rows.push_back(random_record(rng, schema, "s" + std::to_string(seg) + "_" + std::to_string(i)));
      c->insert(std::move(rows));
      EXPECT_EQ(mapped_bytes(*c), sealed_bytes) << "the active segment is in memory";
      c->checkpoint();
      EXPECT_GT(mapped_bytes(*c), sealed_bytes) << "sealed segment " << seg;
      sealed_bytes = mapped_bytes(*c);
    }
    EXPECT_EQ(c->segment_count(), 1u);
    c->insert({random_record(rng, schema, "active")});
  }
  auto a = Collection::open(dir, mapped);
  auto b = Collection::open(dir, copied);
  EXPECT_GT(mapped_bytes(*a), 0u);
  EXPECT_EQ(mapped_bytes(*b), 0u);
  ASSERT_EQ(a->count(), 1201u);
  for (int q = 0; q < 30; ++q) {
    std::vector<float> query(kSegDim);
    for (auto& x : query) x = std::uniform_real_distribution<float>(-1, 1)(rng);
    const std::string filter = q % 2 ? "document_id in [\"doc1\", \"doc2\", \"doc3\"]" : "";
    const auto x = a->search_vector(query, 10, filter);
    const auto y = b->search_vector(query, 10, filter);
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(x[i].id, y[i].id);
      EXPECT_EQ(x[i].score, y[i].score);
    }
  }
  // By default a segment this small keeps its copy.
  CollectionOptions defaults;
  defaults.read_only = true;
  auto c = Collection::open(dir, defaults);
  EXPECT_EQ(mapped_bytes(*c), 0u);
  c.reset();
  a.reset();
  b.reset();
  fs::remove_all(dir);
}

namespace {
std::string file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
}  // namespace

TEST(Segments, TheBuilderLinksTheGraphTheWriterWouldHaveAndWritersWaitForIt) {
  // Two stores given the same writes, one linking each row as it is written, one
  // leaving it to the builder thread (with little room, so writers wait for it), then
  // reopened so the log's rows are replayed unlinked: their sealed segments are the
  // same bytes, and every row is found meanwhile.
  auto schema = chunk_schema("seg", kSegDim);
  schema.vector.index = VectorIndexKind::hnsw;
  const auto inline_dir = segments_dir("link_inline");
  const auto builder_dir = segments_dir("link_builder");
  CollectionOptions inline_opts;
  inline_opts.background_linking = false;
  inline_opts.checkpoint_wal_bytes = uint64_t{1} << 40;  // only explicit checkpoints
  CollectionOptions builder_opts = inline_opts;
  builder_opts.background_linking = true;
  builder_opts.max_unlinked_rows = 32;
  builder_opts.writer_links = false;  // the builder alone: the same graph, byte for byte
  auto unlinked = [](const Collection& c) { return c.describe()["vector_rows_unlinked"].get<size_t>(); };
  std::vector<std::vector<Record>> batches;
  std::mt19937 rng(21);
  for (int b = 0; b < 60; ++b) {
    std::vector<Record> rows;
    for (int i = 0; i < 25; ++i)
      rows.push_back(random_record(rng, schema, "r" + std::to_string(b) + "_" + std::to_string(i)));
    batches.push_back(std::move(rows));
  }
  for (const auto& [dir, opts] : {std::pair{inline_dir, inline_opts}, std::pair{builder_dir, builder_opts}}) {
    auto c = Collection::create(dir, schema, opts);
    for (size_t b = 0; b < batches.size(); ++b) {
      c->insert(batches[b]);
      EXPECT_LE(unlinked(*c), opts.max_unlinked_rows) << "a writer waits while too many rows await linking";
      if (b == 29) c->checkpoint();  // the first half sealed; the rest stays in the log
    }
  }
  // Reopened: the log's 750 rows are replayed and left to the builder.
  for (const auto& dir : {inline_dir, builder_dir}) {
    auto c = Collection::open(dir, builder_opts);
    ASSERT_EQ(c->count(), 1500u);
    for (size_t b = 30; b < batches.size(); b += 7)
      for (const auto& r : batches[b]) {
        const auto hits = c->search_vector(r.vector, 1);
        ASSERT_EQ(hits.size(), 1u);
        EXPECT_EQ(hits[0].id, r.id) << "a replayed row, linked or not, is its own nearest neighbour";
      }
    c->checkpoint();
    EXPECT_EQ(unlinked(*c), 0u) << "a checkpoint seals a whole graph";
  }
  const auto names = manifest_of(inline_dir)["segments"];
  ASSERT_EQ(names, manifest_of(builder_dir)["segments"]);
  ASSERT_EQ(names.size(), 2u);
  for (const auto& seg : names) {
    const std::string file = seg["file"];
    EXPECT_EQ(file_bytes(inline_dir / file), file_bytes(builder_dir / file)) << file;
  }
  fs::remove_all(inline_dir);
  fs::remove_all(builder_dir);
}

TEST(Segments, AWriterWaitingForTheBuilderLinksRowsBesideItAndEveryRowIsReachable) {
  // store.writer_links: the writer links rows while it waits for room, in parallel
  // with the builders (plans under shared holds, writes in claim order), while a
  // reader searches. The graph differs from a one-linker build, so the oracle is
  // reachability: after the checkpoint every row is linked and a graph search for its
  // own vector finds it first. With one builder and with two (store.builder_threads).
  for (const uint32_t builders : {1u, 2u}) {
    SCOPED_TRACE(builders);
    auto schema = chunk_schema("seg", kSegDim);
    schema.vector.index = VectorIndexKind::hnsw;
    const auto dir = segments_dir("writer_links");
    CollectionOptions opts;
    opts.checkpoint_wal_bytes = uint64_t{1} << 40;
    opts.max_unlinked_rows = 32;
    opts.builder_threads = builders;
    ASSERT_TRUE(opts.writer_links) << "the default";
    std::mt19937 rng(33);
    std::vector<Record> all;
    auto c = Collection::create(dir, schema, opts);
    std::atomic<bool> done{false};
    std::atomic<size_t> searches{0};
    std::thread reader([&] {
      std::mt19937 qrng(5);
      while (!done) {
        const auto q = random_record(qrng, schema, "q").vector;
        EXPECT_LE(c->search_vector(q, 5).size(), 5u);
        searches.fetch_add(1);
      }
    });
    for (int b = 0; b < 60; ++b) {
      std::vector<Record> rows;
      for (int i = 0; i < 25; ++i)
        rows.push_back(random_record(rng, schema, "w" + std::to_string(b) + "_" + std::to_string(i)));
      all.insert(all.end(), rows.begin(), rows.end());
      c->insert(rows);
      EXPECT_LE(c->describe()["vector_rows_unlinked"].get<size_t>(), opts.max_unlinked_rows);
    }
    done = true;
    reader.join();
    EXPECT_GT(c->describe()["vector_rows_linked_by_writers"].get<uint64_t>(), 0u)
        << "with 32 rows of room, the writer waited and linked some itself";
    c->checkpoint();
    ASSERT_EQ(c->describe()["vector_rows_unlinked"].get<size_t>(), 0u);
    for (const auto& r : all) {
      const auto hits = c->search_vector(r.vector, 1);
      ASSERT_EQ(hits.size(), 1u);
      EXPECT_EQ(hits[0].id, r.id) << "every row reachable through the graph";
    }
    EXPECT_GT(searches.load(), 0u);
    c.reset();
    fs::remove_all(dir);
  }
}

namespace {
// The segment file `from` (layout 2) rewritten in layout 1, as the previous release
// wrote segments: per row [id][text][flag][values as a JSON array].
void rewrite_as_layout1(const fs::path& from, const fs::path& to, const CollectionSchema& schema) {
  const std::string bytes = file_bytes(from);
  const uint64_t content = verify_checked_file(from);
  size_t at = 0;
  auto take = [&](size_t n) {
    const std::string s = bytes.substr(at, n);
    at += n;
    return s;
  };
  auto pod64 = [&] {
    uint64_t v;
    std::memcpy(&v, bytes.data() + at, 8);
    at += 8;
    return v;
  };
  ASSERT_EQ(take(8), std::string("EGLSEG2\0", 8));
  const uint64_t lsn = pod64(), rows = pod64();
  std::string out = std::string("EGLSEG1\0", 8);
  auto put64 = [&](uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); };
  put64(lsn);
  put64(rows);
  for (uint64_t r = 0; r < rows; ++r) {
    const std::string id = take(pod64());
    take(4);  // the text's CRC: layout 1 has none
    const std::string text = take(pod64());
    const std::string flag = take(1);
    const auto values = decode_values(take(pod64()), schema);
    json arr = json::array();
    for (const auto& v : values) arr.push_back(value_to_json(v));
    const std::string dumped = arr.dump();
    for (const auto* s : {&id, &text}) {
      put64(s->size());
      out += *s;
    }
    out += flag;
    put64(dumped.size());
    out += dumped;
  }
  out += bytes.substr(at, content - at);  // the BM25 and vector indexes, as they are
  write_checked_file(io::or_posix(nullptr), to, [&](std::ostream& o) { o.write(out.data(), static_cast<std::streamsize>(out.size())); });
}

// The segment file `from` (layout 3: rows without texts, texts, indexes, section
// table) rewritten in layout 2, as the previous release wrote segments: per row
// [id][text CRC][text][flag][values], then the indexes.
void rewrite_as_layout2(const fs::path& from, const fs::path& to) {
  const std::string bytes = file_bytes(from);
  const uint64_t content = verify_checked_file(from);
  auto pod64_at = [&](uint64_t at) {
    uint64_t v;
    std::memcpy(&v, bytes.data() + at, 8);
    return v;
  };
  ASSERT_EQ(bytes.substr(0, 8), std::string("EGLSEG3\0", 8));
  ASSERT_EQ(bytes.substr(content - 8, 8), std::string("EGLSECT1", 8));
  const uint64_t texts = pod64_at(content - 32), bm25 = pod64_at(content - 24);
  std::string out = std::string("EGLSEG2\0", 8) + bytes.substr(8, 16);  // lsn, rows
  const uint64_t rows = pod64_at(16);
  auto u32_at = [&](uint64_t at) {
    uint32_t v;
    std::memcpy(&v, bytes.data() + at, 4);
    return v;
  };
  auto put64 = [&](uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); };
  uint64_t at = 24, text_at = texts;
  for (uint64_t r = 0; r < rows; ++r) {
    // Layout 3: [u32 id length][id][u32 values length][values][u32 crc][u32 text length][u8 flag]
    const uint32_t id_length = u32_at(at);
    const std::string id = bytes.substr(at + 4, id_length);
    at += 4 + id_length;
    const uint32_t values_length = u32_at(at);
    const std::string values = bytes.substr(at + 4, values_length);
    at += 4 + values_length;
    const std::string crc = bytes.substr(at, 4);
    const uint32_t text_length = u32_at(at + 4);
    const std::string flag = bytes.substr(at + 8, 1);
    at += 9;
    // Layout 2: [u64 id length][id][u32 crc][u64 text length][text][u8 flag][u64 values length][values]
    put64(id_length);
    out += id + crc;
    put64(text_length);
    out += bytes.substr(text_at, text_length);
    text_at += text_length;
    out += flag;
    put64(values_length);
    out += values;
  }
  ASSERT_EQ(at, texts);
  ASSERT_EQ(text_at, bm25);
  out += bytes.substr(bm25, content - 32 - bm25);  // the BM25 and vector indexes, as they are
  write_checked_file(io::or_posix(nullptr), to, [&](std::ostream& o) { o.write(out.data(), static_cast<std::streamsize>(out.size())); });
}
}  // namespace

TEST(Segments, SegmentsOfThePreviousRowLayoutsOpenAndReadAsTheCurrentOne) {
  // Layout 3 keeps the rows apart from their texts; layout 2 stores each text after
  // its row, layout 1 also has no text CRC and JSON values. A store whose segment is
  // of either older layout opens to the same rows, texts and values.
  for (const int layout : {2, 1}) {
  SCOPED_TRACE(layout);
  const auto dir = segments_dir("layout" + std::to_string(layout));
  auto schema = chunk_schema("seg", kSegDim);
  schema.vector.index = VectorIndexKind::hnsw;
  std::mt19937 rng(31);
  {
    auto c = Collection::create(dir, schema);
    std::vector<Record> rows;
    for (int i = 0; i < 300; ++i) rows.push_back(random_record(rng, schema, "r" + std::to_string(i)));
    c->insert(std::move(rows));
    c->checkpoint();
  }
  const std::string file = manifest_of(dir)["segments"][0]["file"];
  ASSERT_EQ(file_bytes(dir / file).substr(0, 8), std::string("EGLSEG3\0", 8));
  const auto copy = segments_dir("layout" + std::to_string(layout) + "_copy");
  fs::copy(dir, copy);
  rewrite_as_layout2(dir / file, copy / file);
  if (layout == 1) {
    const auto layout2 = copy / (file + ".layout2");
    fs::rename(copy / file, layout2);
    rewrite_as_layout1(layout2, copy / file, schema);
    fs::remove(layout2);
  }
  const std::string magic = "EGLSEG" + std::to_string(layout);
  ASSERT_EQ(file_bytes(copy / file).substr(0, 8), std::string(magic.c_str(), 8));
  auto now = Collection::open(dir);
  auto before = Collection::open(copy);
  ASSERT_EQ(before->count(), 300u);
  for (int i = 0; i < 300; i += 7) {
    const std::string id = "r" + std::to_string(i);
    const auto a = now->get_with_vector(id), b = before->get_with_vector(id);
    ASSERT_TRUE(a && b) << id;
    EXPECT_EQ(a->text, b->text);
    EXPECT_EQ(a->values, b->values);
    EXPECT_EQ(a->vector, b->vector);
  }
  const auto q = random_record(rng, schema, "q");
  EXPECT_EQ(now->search_text(q.text, 10).size(), before->search_text(q.text, 10).size());
  for (const auto& [x, y] : {std::pair{now->search_text(q.text, 10), before->search_text(q.text, 10)}}) {
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(x[i].id, y[i].id);
  }
  // Its next checkpoint with rows to seal writes layout 3; the old segment stays as is.
  const Record added = random_record(rng, schema, "added");
  before->insert({added});
  before->checkpoint();
  before.reset();
  before = Collection::open(copy);  // both layouts in one store
  ASSERT_TRUE(before->get("added"));
  EXPECT_EQ(before->get("added")->text, added.text);
  EXPECT_EQ(before->get("r7")->text, now->get("r7")->text);
  const json copy_manifest = manifest_of(copy);  // named: a range-for over a temporary's member dangles
  for (const auto& seg : copy_manifest["segments"]) {
    const std::string name = seg["file"];
    EXPECT_EQ(file_bytes(copy / name).substr(0, 8), std::string(name == file ? magic.c_str() : "EGLSEG3\0", 8)) << name;
  }
  now.reset();
  before.reset();
  fs::remove_all(dir);
  fs::remove_all(copy);
  }
}
