#pragma once
// A shell command's exit code and combined stdout + stderr (tests of the `eagle`
// binary and of `eagle serve` drive it this way).
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace eagle::test_support {

struct RunResult {
  int rc;
  std::string out;
};

inline RunResult run_shell(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace eagle::test_support
