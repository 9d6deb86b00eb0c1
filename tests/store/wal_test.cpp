#include "eagle/store/wal.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "eagle/core/error.h"

namespace fs = std::filesystem;
using namespace eagle::store;

namespace {
fs::path temp_file(const std::string& name) {
  return fs::temp_directory_path() / ("eagle_wal_" + name + "_" + std::to_string(::getpid()) + ".log");
}
std::vector<std::pair<uint64_t, std::string>> read_all(const fs::path& f, WalReplayStats* stats = nullptr) {
  std::vector<std::pair<uint64_t, std::string>> out;
  auto st = replay_wal(f, [&](uint64_t lsn, WalOp, const std::string& p) { out.emplace_back(lsn, p); });
  if (stats) *stats = st;
  return out;
}
}  // namespace

TEST(Wal, AppendsAndReplaysInOrder) {
  auto f = temp_file("order");
  fs::remove(f);
  {
    WalWriter w(f, WalSync::always);
    for (uint64_t i = 1; i <= 100; ++i) w.append(i, WalOp::insert, "payload-" + std::to_string(i));
  }
  WalReplayStats st;
  auto recs = read_all(f, &st);
  ASSERT_EQ(recs.size(), 100u);
  EXPECT_EQ(recs[41].first, 42u);
  EXPECT_EQ(recs[41].second, "payload-42");
  EXPECT_FALSE(st.truncated_tail);
  fs::remove(f);
}

TEST(Wal, TornTailIsCutAndTheLogStaysAppendable) {
  auto f = temp_file("torn");
  fs::remove(f);
  {
    WalWriter w(f, WalSync::none);
    w.append(1, WalOp::insert, "one");
    w.append(2, WalOp::insert, "two");
  }
  const auto good = fs::file_size(f);
  for (size_t cut : {1, 5, 17, 19}) {  // inside the header and inside the payload
    fs::resize_file(f, good);
    {
      WalWriter w(f, WalSync::none);
      w.append(3, WalOp::insert, "three");
    }
    fs::resize_file(f, good + cut);
    WalReplayStats st;
    auto recs = read_all(f, &st);
    EXPECT_EQ(recs.size(), 2u) << cut;
    EXPECT_TRUE(st.truncated_tail);
    EXPECT_EQ(fs::file_size(f), good);
  }
  {
    WalWriter w(f, WalSync::none);
    w.append(3, WalOp::insert, "three");
  }
  EXPECT_EQ(read_all(f).size(), 3u);
  fs::remove(f);
}

TEST(Wal, CorruptionBeforeTheEndIsDataLossNotATornTail) {
  auto f = temp_file("crc");
  fs::remove(f);
  {
    WalWriter w(f, WalSync::none);
    w.append(1, WalOp::insert, "aaaa");
    w.append(2, WalOp::insert, "bbbb");
    w.append(3, WalOp::insert, "cccc");
  }
  const auto size = fs::file_size(f);
  {
    std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(17 + 4 + 17 + 1);  // a byte inside the second payload
    io.put('X');
  }
  try {
    read_all(f);
    FAIL() << "replay went on past corruption";
  } catch (const eagle::Error& e) {
    EXPECT_EQ(e.code(), eagle::ErrorCode::data_loss);
    EXPECT_NE(std::string(e.what()).find("corrupt at byte 21 (after 1 intact records; 42 bytes follow)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(fs::file_size(f), size);  // nothing cut
  auto st = scan_wal(f);
  EXPECT_TRUE(st.corrupt);
  EXPECT_EQ(st.bytes, 21u);
  EXPECT_EQ(st.records, 1u);
  fs::remove(f);
}

TEST(Wal, ALengthFieldDamagedInsideTheLogIsCorruptionToo) {
  auto f = temp_file("len");
  fs::remove(f);
  {
    WalWriter w(f, WalSync::none);
    for (uint64_t i = 1; i <= 3; ++i) w.append(i, WalOp::insert, "payload");
  }
  {
    // The second frame's length now runs past the end of the file.
    std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(24 + 2);
    io.put(static_cast<char>(0x7f));
  }
  EXPECT_TRUE(scan_wal(f).corrupt);
  EXPECT_THROW(read_all(f), eagle::Error);
  fs::remove(f);
}

TEST(Wal, MissingFileReplaysNothing) {
  auto recs = read_all("/nonexistent/eagle.log");
  EXPECT_TRUE(recs.empty());
}
