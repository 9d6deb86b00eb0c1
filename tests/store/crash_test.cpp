// Kills a writer process with SIGKILL at random points during a long ingest (20
// times, including during checkpoints) and checks after each kill that the
// collection opens and every acknowledged write is there (issue 3 acceptance).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <set>
#include <thread>

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
    // Let it run a random while (long enough to cross checkpoints), then kill it.
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(30, 400)(rng)));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ++kills;
    // Every line fully printed was acknowledged before the kill.
    std::string data;
    char buf[4096];
    ssize_t n;
    while ((n = read(out[0], buf, sizeof(buf))) > 0) data.append(buf, static_cast<size_t>(n));
    close(out[0]);
    size_t pos = 0;
    while (true) {
      size_t nl = data.find('\n', pos);
      if (nl == std::string::npos) break;
      auto line = data.substr(pos, nl - pos);
      if (line.rfind("ack ", 0) == 0) acked.insert(line.substr(4));
      pos = nl + 1;
    }
    auto c = eagle::store::Collection::open(dir);
    for (const auto& id : acked) ASSERT_TRUE(c->get(id).has_value()) << "round " << round << " lost " << id;
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
  EXPECT_GT(acked.size(), 200u);
  fs::remove_all(dir);
}
