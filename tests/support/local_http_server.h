#pragma once
// An httplib server on a free loopback port, served on its own thread for one test:
// the stand-in for a remote encoder, reranker or chat model.
#include <httplib.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

namespace eagle::test_support {

class LocalHttpServer {
 public:
  // `routes`: handlers set before the server starts (a handler added later races with
  // the serving thread as ThreadSanitizer sees it).
  explicit LocalHttpServer(const std::function<void(httplib::Server&)>& routes = {}) {
    if (routes) routes(server_);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // httplib 0.11 has no wait_until_ready(): poll is_running().
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~LocalHttpServer() {
    server_.stop();
    thread_.join();
  }
  LocalHttpServer(const LocalHttpServer&) = delete;
  LocalHttpServer& operator=(const LocalHttpServer&) = delete;
  httplib::Server& server() { return server_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace eagle::test_support
