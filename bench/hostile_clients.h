#pragma once
// Cheap hostile clients against an HTTP server on loopback, as bench_server's hostile
// phase holds them while real clients are measured: connections that send nothing,
// slowloris connections that send a request's headers a line at a time and never end
// them, and one client streaming a huge chunked body without a token. Each closed
// connection is opened again at once (an attacker keeps its hold), and what the server
// did to them is counted.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace eagle::bench {

class HostileClients {
 public:
  struct Plan {
    int port = 0;
    size_t idle = 1000;          // connections that send nothing
    size_t slowloris = 50;       // connections sending a header line a second, never ending
    uint64_t chunked_bytes = 300ull << 20;  // one chunked POST /ingest body, no token
  };

  explicit HostileClients(Plan plan) : plan_(plan) {}
  ~HostileClients() { stop(); }

  void start() {
    threads_.emplace_back([this] { hold_connections(); });
    if (plan_.chunked_bytes > 0) threads_.emplace_back([this] { stream_chunked(); });
  }

  void stop() {
    stop_ = true;
    for (auto& t : threads_)
      if (t.joinable()) t.join();
    threads_.clear();
  }

  nlohmann::json stats() const {
    return {{"idle_connections", plan_.idle},
            {"slowloris_connections", plan_.slowloris},
            {"connections_opened", opened_.load()},
            {"ms_to_open_every_hold", setup_ms_.load()},
            {"connections_closed_by_server", closed_by_server_.load()},
            {"connect_failures", connect_failures_.load()},
            {"slowloris_header_lines_sent", header_lines_.load()},
            {"chunked_body_bytes_planned", plan_.chunked_bytes},
            {"chunked_body_bytes_sent", chunked_sent_.load()},
            {"chunked_answer", chunked_answer_}};
  }

 private:
  // blocking = false: the connect is started and the socket returned at once (a full
  // listen backlog must not stall the attacker, only the server's real clients).
  int connect_once(bool blocking = true) {
    // CLOEXEC: the measuring clients (wrk) are spawned while these are held, and
    // inherited descriptors would push theirs past its event loop's size.
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (blocking ? 0 : SOCK_NONBLOCK), 0);
    if (fd < 0) return -1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(plan_.port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 && (blocking || errno != EINPROGRESS)) {
      ::close(fd);
      ++connect_failures_;
      return -1;
    }
    ++opened_;
    return fd;
  }

  static bool send_all(int fd, const char* p, size_t n) {
    while (n > 0) {
      const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
      if (w <= 0) return false;
      p += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  }

  // One thread holds every idle and slowloris connection: it polls them for the
  // server's close (and reopens), and sends each slowloris one more header line a second.
  void hold_connections() {
    struct Conn {
      int fd = -1;
      bool slow = false;
      bool started = false;  // a slowloris's request line is sent (once connected)
    };
    std::vector<Conn> conns(plan_.idle + plan_.slowloris);
    for (size_t i = 0; i < conns.size(); ++i) conns[i].slow = i >= plan_.idle;
    auto open = [&](Conn& c) {
      c.fd = connect_once(/*blocking=*/false);
      c.started = false;
    };
    const auto t0 = std::chrono::steady_clock::now();
    for (auto& c : conns) {
      if (stop_) break;
      open(c);
    }
    setup_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    auto next_line = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    std::vector<pollfd> fds;
    char buf[4096];
    while (!stop_) {
      fds.clear();
      for (const auto& c : conns)
        fds.push_back({c.fd, static_cast<short>(POLLIN | (c.slow && !c.started ? POLLOUT : 0)), 0});
      ::poll(fds.data(), fds.size(), 100);
      for (size_t i = 0; i < conns.size(); ++i) {
        auto& c = conns[i];
        if (c.fd < 0) {
          open(c);
          continue;
        }
        if (c.slow && !c.started && (fds[i].revents & POLLOUT) && !(fds[i].revents & (POLLHUP | POLLERR))) {
          static const char start[] = "POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\n";
          c.started = ::send(c.fd, start, sizeof(start) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) > 0;
        }
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
          // An answer (a 408, a 400) or a close: either way the server let go of it.
          const ssize_t r = ::recv(c.fd, buf, sizeof(buf), MSG_DONTWAIT);
          if (r <= 0 || (fds[i].revents & (POLLHUP | POLLERR))) {
            ::close(c.fd);
            c.fd = -1;
            ++closed_by_server_;
          }
        }
      }
      if (std::chrono::steady_clock::now() >= next_line) {
        next_line += std::chrono::seconds(1);
        for (auto& c : conns) {
          if (!c.slow || c.fd < 0 || !c.started) continue;
          static const char line[] = "X-Slow: a\r\n";
          if (::send(c.fd, line, sizeof(line) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) > 0) ++header_lines_;
        }
      }
    }
    for (auto& c : conns)
      if (c.fd >= 0) ::close(c.fd);
  }

  // POST /ingest with Transfer-Encoding: chunked and no token, as fast as the server
  // reads it, until the planned bytes are sent or the server answers or closes.
  void stream_chunked() {
    const int fd = connect_once();
    if (fd < 0) return;
    static const char head[] =
        "POST /ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n";
    const std::string chunk_body(64 << 10, 'x');
    char size_line[32];
    const int n = std::snprintf(size_line, sizeof(size_line), "%zx\r\n", chunk_body.size());
    std::string chunk = std::string(size_line, static_cast<size_t>(n)) + chunk_body + "\r\n";
    timeval tv{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (send_all(fd, head, sizeof(head) - 1)) {
      while (!stop_ && chunked_sent_ < plan_.chunked_bytes) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 0) > 0) break;  // the server answered (or closed) mid-body
        if (!send_all(fd, chunk.data(), chunk.size())) {
          if (errno == EAGAIN || errno == EWOULDBLOCK) continue;
          break;
        }
        chunked_sent_ += chunk_body.size();
      }
    }
    char buf[512];
    timeval rt{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &rt, sizeof(rt));
    const ssize_t r = ::recv(fd, buf, sizeof(buf) - 1, 0);
    if (r > 0) {
      buf[r] = '\0';
      chunked_answer_ = std::string(buf, static_cast<size_t>(r)).substr(0, std::string(buf).find('\r'));
    } else {
      chunked_answer_ = "(no answer)";
    }
    ::close(fd);
  }

  Plan plan_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  std::atomic<uint64_t> opened_{0}, closed_by_server_{0}, connect_failures_{0}, header_lines_{0}, chunked_sent_{0};
  std::atomic<double> setup_ms_{0};
  std::string chunked_answer_;  // written by its thread before stop() joins it
};

}  // namespace eagle::bench
