#pragma once
// What the benchmarks that drive a real `eagle serve` share: starting it (forked, its
// output in a log file) and waiting for its "eagle: ready" line, stopping it, reading
// its memory from /proc, and percentiles of latencies.
#include <signal.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace eagle::bench {

inline double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p / 100.0 * static_cast<double>(v.size())))];
}

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A line of /proc/PID/status in MB: "VmRSS:" in all, "RssAnon:" the heap and stacks,
// "RssFile:" mapped files (page cache: shared and reclaimable, not growth).
inline double status_mb(pid_t pid, const std::string& key = "VmRSS:") {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) return std::stod(line.substr(key.size())) / 1024.0;
  return 0;
}

// Runs `args` (searched in PATH when not a path) with stdout and stderr in `log`.
inline pid_t spawn(const std::vector<std::string>& args, const std::filesystem::path& log) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    FILE* f = std::fopen(log.c_str(), "w");
    if (f) {
      ::dup2(fileno(f), 1);
      ::dup2(fileno(f), 2);
    }
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

inline void stop_process(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

// `eagle ... serve --port 0` started and waited for until it prints "eagle: ready"
// (the port from its "on http://HOST:PORT" line): its pid and port. A server that is
// not ready within `wait` is stopped and its log thrown.
// A free TCP port on 127.0.0.1 (bound and released: a race only with other listeners).
inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("no free port on 127.0.0.1");
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

inline std::pair<pid_t, int> start_server(const std::vector<std::string>& args, const std::filesystem::path& log,
                                          std::chrono::seconds wait = std::chrono::seconds(600)) {
  std::filesystem::remove(log);  // a log of an earlier run must not be read as this server's
  const pid_t pid = spawn(args, log);
  static const std::regex port_re("on http://[^:]+:([0-9]+)");
  int port = 0;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = read_text(log);
    std::smatch m;
    if (!port && std::regex_search(text, m, port_re)) port = std::stoi(m[1]);
    if (port && text.find("eagle: ready") != std::string::npos) return {pid, port};
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) throw std::runtime_error("eagle serve exited: " + read_text(log));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  stop_process(pid);
  throw std::runtime_error("eagle serve was not ready in time: " + read_text(log));
}

}  // namespace eagle::bench
