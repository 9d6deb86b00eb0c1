// Kills a writer process with SIGKILL during a long run of writes (20 times, some
// right as a checkpoint starts) and checks after each kill that the collection opens
// and every acknowledged write is there with its exact content. No clock decides
// anything: the kill comes after a number of acknowledgements drawn from a seeded
// generator, so the run is the same on a fast or a slow disk.
#include <gtest/gtest.h>
#include "support/build_paths.h"
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <set>

#include "eagle/store/collection.h"

namespace fs = std::filesystem;

TEST(CrashSafety, SigkillAtRandomPointsLosesNoAcknowledgedWrite) {
  const fs::path dir = fs::temp_directory_path() / ("eagle_crash_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string writer = std::string(EAGLE_BIN_DIR) + "/eagle_crash_writer";
  ASSERT_TRUE(fs::exists(writer)) << writer;
  std::mt19937 rng(2026);
  std::set<std::string> acked;
  int kills = 0;
  for (int round = 0; round < 20; ++round) {
    int out[2];
    ASSERT_EQ(pipe(out), 0);
    pid_t pid = fork();
    if (pid == 0) {
      dup2(out[1], 1);
      close(out[0]);
      close(out[1]);
      std::string first = std::to_string(round * 100000);
      execl(writer.c_str(), writer.c_str(), dir.c_str(), first.c_str(), "100000", nullptr);
      _exit(127);
    }
    close(out[1]);
    // Kill after K acknowledgements: anywhere in the next write, or (K a multiple of
    // 25) just as the writer starts a checkpoint.
    const int k = round % 4 == 3 ? 25 * std::uniform_int_distribution<int>(1, 4)(rng)
                                 : std::uniform_int_distribution<int>(1, 120)(rng);
    std::string data;
    char buf[256];
    int acks_seen = 0;
    ssize_t n;
    while (acks_seen < k && (n = read(out[0], buf, sizeof(buf))) > 0) {
      data.append(buf, static_cast<size_t>(n));
      acks_seen = static_cast<int>(std::count(data.begin(), data.end(), '\n'));
    }
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ++kills;
    // Every line fully printed was acknowledged before the kill.
    while ((n = read(out[0], buf, sizeof(buf))) > 0) data.append(buf, static_cast<size_t>(n));
    close(out[0]);
    size_t pos = 0;
    size_t acked_this_round = 0;
    while (true) {
      size_t nl = data.find('\n', pos);
      if (nl == std::string::npos) break;
      auto line = data.substr(pos, nl - pos);
      if (line.rfind("ack ", 0) == 0) {
        acked.insert(line.substr(4));
        ++acked_this_round;
      }
      pos = nl + 1;
    }
    EXPECT_GE(acked_this_round, static_cast<size_t>(k)) << "round " << round;
    auto c = eagle::store::Collection::open(dir);
    for (const auto& id : acked) {
      auto r = c->get(id);
      ASSERT_TRUE(r.has_value()) << "round " << round << " lost " << id;
      // The content too, exactly as eagle_crash_writer made it (text and fields; the
      // vector lives in the same log frame, under the same CRC).
      const long i = std::stol(id.substr(1));
      EXPECT_EQ(r->text, "record number " + std::to_string(i)) << id;
      EXPECT_EQ(std::get<std::string>(r->values[0]), i % 2 ? "odd" : "even") << id;
      EXPECT_EQ(std::get<int64_t>(r->values[1]), 2000 + i % 25) << id;
    }
    EXPECT_GE(c->count(), acked.size());
    // The reopened collection still answers searches over what it holds.
    if (c->count() > 1) {
      std::vector<float> q(8, 1.0f);
      EXPECT_FALSE(c->search_vector(q, 5).empty());
      EXPECT_FALSE(c->search_text("record", 5, "kb_name == \"odd\"").empty());
    }
  }
  std::printf("crash test: %d SIGKILLs, %zu acknowledged writes, all present after reopen\n", kills, acked.size());
  EXPECT_EQ(kills, 20);
  fs::remove_all(dir);
}
