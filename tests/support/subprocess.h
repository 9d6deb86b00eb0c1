#pragma once
// A shell command's exit code and combined stdout + stderr (tests of the `eagle`
// binary and of `eagle serve` drive it this way).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>

namespace eagle::test_support {

struct RunResult {
  int rc;
  std::string out;
};

inline RunResult run_shell(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  // popen fails when the command cannot start (a command line past the kernel's
  // argument limit): a failed run, not a crash of the test.
  if (!p) return {-1, "popen failed: " + cmd.substr(0, 200)};
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// SIGKILLs child `pid` as soon as `now()` holds (polled every `poll_us`: the test
// waits on a condition, never on a time limit) and reaps it. False when the child
// ended first; `status` then holds how.
inline bool kill_when(pid_t pid, const std::function<bool()>& now, int& status, useconds_t poll_us = 2000) {
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (now()) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return true;
    }
    ::usleep(poll_us);
  }
  return false;
}

// Bytes in the write-ahead logs (*.log) of one collection folder.
inline uint64_t log_bytes(const std::filesystem::path& collection) {
  uint64_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(collection))
    if (e.path().extension() == ".log") n += std::filesystem::file_size(e.path());
  return n;
}

}  // namespace eagle::test_support
