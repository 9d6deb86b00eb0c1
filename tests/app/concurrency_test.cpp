// The Engine under concurrent use, as `eagle serve` drives it: many threads search
// while ingests, re-ingests (upserts) and deletes run. A reader sees each commit
// whole or not at all, and a document never appears after its delete returned. Run
// in the normal build and under ThreadSanitizer (build-tsan, scripts/test.sh).
#include <gtest/gtest.h>
#include "support/build_paths.h"
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/engine_config.h"
#include "eagle/app/engine.h"
#include "eagle/core/error.h"

namespace fs = std::filesystem;
using namespace eagle;
using namespace eagle::app;

namespace {

Config test_config(const fs::path& dir) {
  Config cfg = eagle::test_support::engine_test_config(dir);
  cfg.ingest_commit_rows = 64;
  cfg.pipeline.recall_top_k = 200;  // every row carrying a marker is recalled (counts are exact)
  return cfg;
}

fs::path temp_dir(const std::string& tag) {
  auto d = fs::temp_directory_path() / ("eagle_conc_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// `n` records that all carry `marker`, in one JSONL file (one ingest = one commit
// when n <= ingest.commit_rows).
fs::path write_batch(const fs::path& dir, const std::string& name, const std::string& marker, int n,
                     const std::string& id_prefix) {
  auto file = dir / (name + ".jsonl");
  std::ofstream out(file);
  for (int i = 0; i < n; ++i)
    out << nlohmann::json{{"_id", id_prefix + std::to_string(i)},
                          {"text", marker + " oncology trial number " + std::to_string(i) + " of pembrolizumab"}}
               .dump()
        << "\n";
  return file;
}

size_t count_marker(const search::RetrievalResponse& r, const std::string& marker) {
  size_t n = 0;
  for (const auto& h : r.hits)
    if (h.text.find(marker) != std::string::npos) ++n;
  return n;
}

// Distinct tokens, none a substring of another ("zqm1q" is not inside "zqm11q").
std::string marker_of(int round) { return "zqm" + std::to_string(round) + "q"; }

search::RetrievalRequest query(const std::string& q, size_t k) {
  search::RetrievalRequest r;
  r.query = q;
  r.top_k = k;
  return r;
}

}  // namespace

TEST(EngineConcurrency, ReadersSeeEachCommitWholeAndNeverADeletedDocument) {
  auto dir = temp_dir("whole");
  Engine engine(test_config(dir / "store"), StoreAccess::write, "test");
  IngestOptions opts;
  engine.ingest({write_batch(dir, "seed", "seedmarker", 40, "seed").string()}, opts);
  engine.preload("core");

  constexpr int kBatch = 30;  // one commit each (ingest.commit_rows = 64)
  constexpr int kRounds = 12;
  std::atomic<bool> stop{false};
  std::atomic<int> deleted_round{-1};  // rounds whose documents were deleted (in order)
  std::atomic<int> partial{0}, resurrected{0}, searches{0}, failures{0};
  std::atomic<bool> deleting{false};

  auto reader = [&](int seed) {
    int round = seed % kRounds;
    while (!stop) {
      const std::string marker = marker_of(round);
      const int gone_before = deleted_round.load();
      try {
        auto r = engine.search(query(marker, 100));
        const size_t n = count_marker(r, marker);
        // A commit is whole: all kBatch rows with the marker, or none of them (deletes
        // go a document at a time, so only while ingests run).
        if (!deleting && n != 0 && n != static_cast<size_t>(kBatch)) ++partial;
        // Deleted before this search started: never seen again.
        if (round <= gone_before && n != 0) ++resurrected;
        ++searches;
      } catch (const std::exception& e) {
        ++failures;
        ADD_FAILURE() << e.what();
      }
      round = (round + 1) % kRounds;
    }
  };
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) readers.emplace_back(reader, t);

  for (int round = 0; round < kRounds; ++round) {
    const std::string marker = marker_of(round);
    engine.ingest({write_batch(dir, "b" + std::to_string(round), marker, kBatch, "r" + std::to_string(round) + "-").string()},
                  opts);
    // Re-ingest the same ids (an upsert of every row) while readers run.
    engine.ingest({write_batch(dir, "u" + std::to_string(round), marker, kBatch, "r" + std::to_string(round) + "-").string()},
                  opts);
  }
  // Delete every round's documents, one round at a time, publishing each round only
  // after all its deletes returned.
  deleting = true;
  for (int round = 0; round < kRounds; ++round) {
    for (int i = 0; i < kBatch; ++i) engine.delete_document("r" + std::to_string(round) + "-" + std::to_string(i));
    deleted_round = round;
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(partial.load(), 0);
  EXPECT_EQ(resurrected.load(), 0);
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(searches.load(), 0);
  // The seed documents survived everything; the deleted ones are gone for good.
  EXPECT_EQ(count_marker(engine.search(query("seedmarker", 100)), "seedmarker"), 40u);
  for (int round = 0; round < kRounds; ++round)
    EXPECT_EQ(count_marker(engine.search(query(marker_of(round), 100)), marker_of(round)), 0u);
  fs::remove_all(dir);
}

TEST(EngineConcurrency, AReadOnlyEngineBesideTheWriterSeesCommittedDataAndWritesNothing) {
  auto dir = temp_dir("ro");
  auto cfg = test_config(dir / "store");
  Engine writer(cfg, StoreAccess::write, "test writer");
  IngestOptions opts;
  writer.ingest({write_batch(dir, "a", "alphamark", 20, "a").string()}, opts);
  // A second writer is refused at once; a reader opens beside it.
  EXPECT_THROW(Engine(cfg, StoreAccess::write, "second"), Error);
  {
    Engine reader(cfg, StoreAccess::read_only);
    EXPECT_EQ(count_marker(reader.search(query("alphamark", 50)), "alphamark"), 20u);
    EXPECT_THROW(reader.delete_document("a0"), Error);
    EXPECT_THROW(reader.ingest({write_batch(dir, "b", "betamark", 2, "b").string()}, opts), Error);
  }
  // Written after the checkpoint that ended the first ingest: a new reader replays it
  // from the log without modifying it.
  cfg.checkpoint_after_ingest = false;
  Engine* w = &writer;
  w->ingest({write_batch(dir, "c", "gammamark", 5, "c").string()}, opts);
  Engine reader(cfg, StoreAccess::read_only);
  EXPECT_EQ(count_marker(reader.search(query("gammamark", 50)), "gammamark"), 5u);
  fs::remove_all(dir);
}

// `eagle reembed` while searches run: every search answers from the old
// vectors or the new ones -- its plan's encoder always the one that made the vectors
// it searches, so no plan fails -- and finds every row.
TEST(EngineConcurrency, SearchesDuringAReembedSeeTheOldOrTheNewVectorsNeverAMix) {
  auto dir = temp_dir("reembed");
  auto cfg = test_config(dir / "store");
  cfg.encoders = {{"tiny", {{"type", "bert"},
                            {"path", (fs::path(EAGLE_SOURCE_DIR) / "tests/fixtures/bert/tiny-a").string()},
                            {"pooling", "cls"}}}};
  Engine engine(cfg, StoreAccess::write, "test");
  constexpr int kRows = 300;
  engine.ingest({write_batch(dir, "rows", "reembedmarker", kRows, "row").string()}, {});
  engine.preload("core");
  std::atomic<bool> stop{false};
  std::atomic<int> searches{0}, failures{0}, incomplete{0}, on_new{0};
  auto reader = [&] {
    while (!stop) {
      try {
        auto r = engine.search(query("reembedmarker", 100));
        if (r.metadata.value("audits", nlohmann::json::array()).dump().find("plan_failed") != std::string::npos) {
          ++failures;
          ADD_FAILURE() << r.metadata.dump();
        }
        if (count_marker(r, "reembedmarker") != 100) ++incomplete;
        if (!r.route.plans.empty() && r.route.plans.front().encoder == "tiny") ++on_new;
        ++searches;
      } catch (const std::exception& e) {
        ++failures;
        ADD_FAILURE() << e.what();
      }
    }
  };
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) readers.emplace_back(reader);
  // Waits for `n` of `counter`, failing (not hanging) when the readers stop making
  // progress (a deadlock). A deadline on progress, not a timing assertion.
  auto await = [&](std::atomic<int>& counter, int n) {
    for (int i = 0; i < 60000 && counter.load() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return counter.load() >= n;
  };
  const bool searched_old = await(searches, 2);  // some searches on the old vectors
  const auto rep = engine.reembed("eagle_text", "tiny");
  const bool searched_new = await(on_new, 4);    // and some on the new ones
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_TRUE(searched_old);
  EXPECT_TRUE(searched_new);
  EXPECT_EQ(rep.rows, static_cast<size_t>(kRows));
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(incomplete.load(), 0);
  fs::remove_all(dir);
}

// Deletes do not wait for a reembed's embedding: a document deleted while its rows
// are being re-embedded (here: from the progress callback, between two pages) is gone
// from the rebuilt collection too.
TEST(EngineConcurrency, ADocumentDeletedDuringAReembedStaysDeleted) {
  auto dir = temp_dir("reembed_delete");
  auto cfg = test_config(dir / "store");
  Engine engine(cfg, StoreAccess::write, "test");
  constexpr int kRows = 600;  // three pages of the rebuild
  engine.ingest({write_batch(dir, "rows", "deletemarker", kRows, "row").string()}, {});
  bool deleted = false;
  const auto rep = engine.reembed("eagle_text", "text-embedding-v4", [&](size_t done, size_t) {
    // After the first page: row5 was read and embedded already, row500 not yet.
    if (deleted || done == 0) return;
    EXPECT_EQ(engine.delete_document("row5"), 1u);
    EXPECT_EQ(engine.delete_document("row500"), 1u);
    deleted = true;
  });
  ASSERT_TRUE(deleted);
  EXPECT_EQ(rep.rows, static_cast<size_t>(kRows - 2));
  auto& c = engine.catalog().get("eagle_text");
  EXPECT_EQ(c.schema().vector.encoder, "text-embedding-v4");
  EXPECT_EQ(c.count(), static_cast<size_t>(kRows - 2));
  EXPECT_FALSE(c.get("row5"));
  EXPECT_FALSE(c.get("row500"));
  EXPECT_TRUE(c.get("row6"));
  EXPECT_FALSE(engine.document("row5"));
  fs::remove_all(dir);
}
