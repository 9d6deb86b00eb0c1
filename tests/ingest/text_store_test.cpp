#include "eagle/store/text_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "eagle/core/error.h"

namespace fs = std::filesystem;
using eagle::Document;
using eagle::store::TextStore;

namespace {
fs::path text_store_dir(const std::string& name) {
  auto p = fs::temp_directory_path() / ("eagle_store_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}
Document doc(std::string id, std::string text) { return Document{std::move(id), "", std::move(text), "{}"}; }
}  // namespace

TEST(TextStore, SavesReopensAndGrows) {
  auto dir = text_store_dir("grow");
  {
    TextStore s({}, {});
    s.add({doc("d1", "osimertinib in EGFR-mutant NSCLC"), doc("d2", "adalimumab for rheumatoid arthritis")});
    s.save(dir);
  }
  auto s = TextStore::open(dir);
  EXPECT_EQ(s.size(), 2u);
  auto hits = s.search("EGFR", 5);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].doc->id, "d1");
  s.add({doc("d3", "savolitinib plus osimertinib in MET-amplified NSCLC")});
  EXPECT_EQ(s.search("savolitinib", 5).at(0).doc->id, "d3");
  s.save(dir);
  EXPECT_EQ(TextStore::open(dir).size(), 3u);
  fs::remove_all(dir);
}

TEST(TextStore, DuplicateIdLeavesTheStoreUnchanged) {
  TextStore s({}, {});
  s.add({doc("d1", "a")});
  EXPECT_THROW(s.add({doc("d2", "b"), doc("d1", "c")}), eagle::Error);
  EXPECT_EQ(s.size(), 1u);
  EXPECT_EQ(s.find("d2"), nullptr);
}

TEST(TextStore, CorruptFileIsAClearErrorAndMissingStoreIsNotFound) {
  auto dir = text_store_dir("corrupt");
  try {
    TextStore::open(dir);
    FAIL();
  } catch (const eagle::Error& e) {
    EXPECT_EQ(e.code(), eagle::ErrorCode::not_found);
  }
  fs::create_directories(dir);
  std::ofstream(dir / eagle::store::kStoreFileName) << "garbage";
  try {
    TextStore::open(dir);
    FAIL();
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find(eagle::store::kStoreFileName), std::string::npos);
  }
  fs::remove_all(dir);
}
