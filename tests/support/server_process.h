#pragma once
// One `eagle serve` child process on a free port (port 0; the port is read from its
// first line), for the tests that drive the server over real sockets.
#include <gtest/gtest.h>
#include "support/build_paths.h"
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace eagle::test_support {

inline std::string read_text_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// One `eagle serve` child process on a free port.
class ServerProcess {
 public:
  ServerProcess(const std::filesystem::path& data_dir, std::vector<std::string> extra, std::vector<std::string> env = {},
                bool wait_ready = true, std::vector<std::string> serve_args = {}) {
    log_ = data_dir.string() + ".serve.log";
    // A server started before on this store left its log: read before the child
    // truncates it, its "ready" line and port would be taken for this one's.
    std::filesystem::remove(log_);
    std::vector<std::string> args = {std::string(EAGLE_BIN_DIR) + "/eagle", "--data-dir", data_dir.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"serve", "--port", "0"});
    args.insert(args.end(), serve_args.begin(), serve_args.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      for (const auto& kv : env) ::putenv(const_cast<char*>((new std::string(kv))->c_str()));
      FILE* f = std::fopen(log_.c_str(), "w");
      ::dup2(fileno(f), 1);
      ::dup2(fileno(f), 2);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    // Ready when it says so; the port is in its first line.
    wait_for_log(wait_ready ? "eagle: ready" : "");
  }
  // Waits until the server's log says it is ready (its store and plugins loaded);
  // false when it exited first or did not say so within kStartLimit. The limit only
  // bounds a hung start: under ThreadSanitizer on a busy machine a start that takes
  // a second natively can take a minute.
  bool wait_until_ready() { return wait_for_log("eagle: ready"); }
  ~ServerProcess() {
    stop();
    // Under ThreadSanitizer (build-tsan) the server reports races to its log.
    EXPECT_EQ(log().find("ThreadSanitizer"), std::string::npos) << log();
  }
  // SIGTERM, then the exit status (0: a clean shutdown).
  int stop() {
    if (pid_ <= 0) return exit_;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    exit_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return exit_;
  }
  bool running() const { return pid_ > 0 && port_ > 0; }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string log() const { return read_text_file(log_); }

 private:
  static constexpr auto kStartLimit = std::chrono::minutes(10);

  // Polls the log until it holds `marker` (or, for an empty marker, the port), the
  // child exits, or kStartLimit passes. Records the port on the way.
  bool wait_for_log(const std::string& marker) {
    static const std::regex port_re("on http://[^:]+:([0-9]+)");
    const auto deadline = std::chrono::steady_clock::now() + kStartLimit;
    while (pid_ > 0 && std::chrono::steady_clock::now() < deadline) {
      const std::string log = read_text_file(log_);
      std::smatch m;
      if (port_ == 0 && std::regex_search(log, m, port_re)) port_ = std::stoi(m[1]);
      if (marker.empty() ? port_ > 0 : log.find(marker) != std::string::npos) return true;
      int status;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        exit_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  pid_t pid_ = -1;
  int port_ = 0;
  int exit_ = -1;
  std::string log_;
};

}  // namespace eagle::test_support
