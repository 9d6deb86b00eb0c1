// Rebuilding a collection under its name (Catalog::begin_rebuild / finish_rebuild,
// what `eagle reembed` runs on): the new rows replace the old ones whole, every
// interrupted state a crash can leave is finished or discarded when the catalog opens,
// and a reader never finds the name missing. The crash walk over a rebuild at every
// I/O call is in fault_walk_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "eagle/core/error.h"
#include "eagle/core/file_system.h"
#include "eagle/store/collection.h"
#include "support/fault_file_system.h"

namespace fs = std::filesystem;
using namespace eagle;
using namespace eagle::store;

namespace {

fs::path temp_root(const std::string& tag) {
  auto d = fs::temp_directory_path() / ("eagle_rebuild_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

CollectionSchema schema_with_dim(uint32_t dim) { return chunk_schema("c", dim, Metric::ip); }

Record row(const CollectionSchema& s, int i, float first) {
  Record r;
  r.id = "r" + std::to_string(i);
  r.text = "row " + std::to_string(i) + " about imatinib";
  r.vector.assign(s.vector.dim, 0.5f);
  r.vector[0] = first + static_cast<float>(i);
  r.values.assign(s.fields.size(), std::monostate{});
  r.values[*s.field_index("kb_name")] = std::string("kb") + std::to_string(i % 2);
  return r;
}

// Old: 4 dims, first component i. New: 6 dims, first component 100 + i.
void make_old(Catalog& cat, int rows = 5) {
  auto& c = cat.create(schema_with_dim(4));
  std::vector<Record> batch;
  for (int i = 0; i < rows; ++i) batch.push_back(row(c.schema(), i, 0));
  c.upsert(std::move(batch));
}

std::unique_ptr<Collection> built_new(Catalog& cat, int rows = 5) {
  auto b = cat.begin_rebuild(schema_with_dim(6));
  std::vector<Record> batch;
  for (int i = 0; i < rows; ++i) batch.push_back(row(b->schema(), i, 100));
  b->upsert(std::move(batch));
  return b;
}

// "old" / "new" by the vectors' dimension and content, after checking every row.
std::string which(Catalog& cat, int rows = 5) {
  auto& c = cat.get("c");
  EXPECT_EQ(c.count(), static_cast<size_t>(rows));
  const uint32_t dim = c.schema().vector.dim;
  const float base = dim == 6 ? 100.0f : 0.0f;
  for (int i = 0; i < rows; ++i) {
    auto r = c.get_with_vector("r" + std::to_string(i));
    if (!r) {
      ADD_FAILURE() << "row r" << i << " missing";
      continue;
    }
    EXPECT_EQ(r->vector.size(), dim);
    EXPECT_FLOAT_EQ(r->vector[0], base + static_cast<float>(i));
    EXPECT_EQ(r->text, "row " + std::to_string(i) + " about imatinib");
  }
  return dim == 6 ? "new" : dim == 4 ? "old" : "?";
}

std::vector<std::string> hidden_entries(const fs::path& root) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(root))
    if (e.path().filename().string().starts_with(".")) out.push_back(e.path().filename().string());
  return out;
}

void mark(const fs::path& dir) { std::ofstream(dir / "REPLACES") << ""; }

}  // namespace

TEST(Rebuild, SwapsTheNewRowsInUnderTheSameNameAndLeavesNoFolderBehind) {
  const auto root = temp_root("swap");
  {
    Catalog cat(root);
    make_old(cat);
    Collection& before = cat.get("c");
    EXPECT_EQ(which(cat), "old");
    bool exclusive_ran = false;
    cat.finish_rebuild(built_new(cat), [&](const std::function<bool()>& swap) {
      exclusive_ran = true;
      // Until the swap the old collection serves.
      EXPECT_EQ(cat.get("c").schema().vector.dim, 4u);
      EXPECT_TRUE(swap());
    });
    EXPECT_TRUE(exclusive_ran);
    EXPECT_NE(&cat.get("c"), &before);
    EXPECT_EQ(which(cat), "new");
    EXPECT_TRUE(hidden_entries(root).empty());
    // It takes writes like any collection, and they persist.
    auto& c = cat.get("c");
    c.upsert({row(c.schema(), 7, 100)});
  }
  Catalog reopened(root);
  EXPECT_EQ(reopened.get("c").count(), 6u);
  EXPECT_EQ(reopened.get("c").schema().vector.dim, 6u);
  EXPECT_EQ(reopened.list(), std::vector<std::string>{"c"});
  fs::remove_all(root);
}

TEST(Rebuild, AnAbortedRebuildLeavesTheOldCollection) {
  const auto root = temp_root("abort");
  Catalog cat(root);
  make_old(cat);
  cat.abort_rebuild(built_new(cat));
  EXPECT_EQ(which(cat), "old");
  EXPECT_TRUE(hidden_entries(root).empty());
  EXPECT_THROW(cat.begin_rebuild(chunk_schema("absent", 4, Metric::ip)), Error);
  fs::remove_all(root);
}

// Each state a crash can leave, made by hand, and what the next open must find.
TEST(Rebuild, AnOpeningCatalogFinishesOrDiscardsEveryInterruptedState) {
  struct Case {
    const char* name;
    std::function<void(const fs::path& root)> leave;  // from: old "c" live, new in .rebuild-c
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"crash while filling", [](const fs::path&) {}, "old"},
      {"complete, not yet swapped",
       [](const fs::path& root) {
         mark(root / ".rebuild-c");
         fs::rename(root / ".rebuild-c", root / ".new-c");
       },
       "new"},
      {"first of two renames done",
       [](const fs::path& root) {
         mark(root / ".rebuild-c");
         fs::rename(root / ".rebuild-c", root / ".new-c");
         fs::rename(root / "c", root / ".old-c");
       },
       "new"},
      {"both renames done, marker still there",
       [](const fs::path& root) {
         mark(root / ".rebuild-c");
         fs::rename(root / ".rebuild-c", root / ".new-c");
         fs::rename(root / "c", root / ".old-c");
         fs::rename(root / ".new-c", root / "c");
       },
       "new"},
      {"exchanged, marker still there",
       [](const fs::path& root) {
         mark(root / ".rebuild-c");
         fs::rename(root / ".rebuild-c", root / ".new-c");
         fs::rename(root / "c", root / ".swap");
         fs::rename(root / ".new-c", root / "c");
         fs::rename(root / ".swap", root / ".new-c");  // the old one, without a marker
       },
       "new"},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(k.name);
    const auto root = temp_root("states");
    {
      Catalog cat(root);
      make_old(cat);
      auto b = built_new(cat);
      b->checkpoint();
      // The process dies here: nothing more is written by it.
    }
    k.leave(root);
    {
      // A reader between the two renames finds the complete new one, not nothing.
      CollectionOptions ro;
      ro.read_only = true;
      Catalog reader(root, ro);
      if (std::string(k.name) == "first of two renames done") EXPECT_EQ(which(reader), "new");
      else EXPECT_TRUE(reader.exists("c"));
    }
    Catalog cat(root);
    EXPECT_EQ(which(cat), k.expect);
    EXPECT_TRUE(hidden_entries(root).empty()) << ::testing::PrintToString(hidden_entries(root));
    EXPECT_FALSE(fs::exists(root / "c" / "REPLACES"));
    fs::remove_all(root);
  }
}

TEST(Rebuild, ThePosixFileSystemExchangesTwoFoldersAtomically) {
  // The swap relies on renameat2(RENAME_EXCHANGE) where the file system has it; this
  // machine's temporary folder is ext4 or tmpfs, which both do.
  const auto root = temp_root("exchange");
  fs::create_directories(root / "a");
  fs::create_directories(root / "b");
  std::ofstream(root / "a" / "x") << "a";
  std::ofstream(root / "b" / "y") << "b";
  if (!io::posix().exchange(root / "a", root / "b")) {
    fs::remove_all(root);
    GTEST_SKIP() << "RENAME_EXCHANGE is not supported on the file system of " << root
                 << " (rebuilds swap by two renames there; the other Rebuild tests cover that path)";
  }
  EXPECT_TRUE(fs::exists(root / "a" / "y"));
  EXPECT_TRUE(fs::exists(root / "b" / "x"));
  EXPECT_THROW(io::posix().exchange(root / "a", root / "missing"), Error);
  fs::remove_all(root);
}

// An I/O error at any call of finish_rebuild, the process going on: the rebuild
// either is swapped in or leaves the old collection, the catalog never serves or
// writes a folder that is garbage, and a write acknowledged after the error is still
// there when the store is opened again.
TEST(Rebuild, AnIoErrorAtAnyStepOfTheSwapLosesNoLaterWrite) {
  using eagle::testing::FaultFileSystem;
  const auto root = temp_root("errors");
  auto calls_of_finish = [&](bool exchange) {
    fs::remove_all(root);
    FaultFileSystem ffs;
    ffs.set_exchange_supported(exchange);
    CollectionOptions o;
    o.file_system = &ffs;
    Catalog cat(root, o);
    make_old(cat);
    auto built = built_new(cat);
    const uint64_t before = ffs.calls();
    cat.finish_rebuild(std::move(built));
    return std::make_pair(before, ffs.calls());
  };
  for (bool exchange : {true, false}) {
    const auto [first, last] = calls_of_finish(exchange);
    ASSERT_GT(last, first + 5);
    for (uint64_t n = first + 1; n <= last; ++n) {
      SCOPED_TRACE(std::string(exchange ? "exchange" : "two renames") + ", error at I/O call " + std::to_string(n));
      fs::remove_all(root);
      FaultFileSystem ffs;
      ffs.set_exchange_supported(exchange);
      CollectionOptions o;
      o.file_system = &ffs;
      bool wrote_after = false;
      {
        Catalog cat(root, o);
        make_old(cat);
        auto built = built_new(cat);
        ffs.arm(FaultFileSystem::Fault::error, n);
        try {
          cat.finish_rebuild(std::move(built));
        } catch (const Error&) {
        }
        ffs.arm(FaultFileSystem::Fault::none, 0);
        // The process goes on: a write now, if the collection is available, must last.
        try {
          auto& c = cat.get("c");
          Record r = row(c.schema(), 5, c.schema().vector.dim == 6 ? 100 : 0);
          c.upsert({r});
          wrote_after = true;
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), ErrorCode::unavailable) << e.what();
        }
      }
      Catalog reopened(root);
      const std::string got = which(reopened, wrote_after ? 6 : 5);
      EXPECT_TRUE(got == "old" || got == "new") << got;
      EXPECT_TRUE(hidden_entries(root).empty()) << ::testing::PrintToString(hidden_entries(root));
    }
  }
  fs::remove_all(root);
}
