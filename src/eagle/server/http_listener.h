#pragma once
// The event-driven HTTP/1.1 listener under `eagle serve` (Boost.Beast on Asio, epoll):
// a connection costs a socket and a small state object, never a thread, so idle and
// slow clients (slowloris) cannot starve the others. Per connection, in turn:
//   headers, within `header_timeout_s` (also the keep-alive idle limit), at most
//   `max_header_bytes`; then `screen` decides on the headers alone (auth, route, Host):
//   a refusal is sent with Connection: close and the body is never read; then the body,
//   within `body_timeout_s`, at most `max_body_bytes` on every transfer coding (Beast
//   counts a chunked body while reading); then `handle` runs on a bounded worker pool
//   (`workers` threads; beyond `max_pending` requests waiting or running, 503), and the
//   answer is written back within `body_timeout_s`.
// Connections beyond `max_connections` are closed as they are accepted. Why Beast and
// not libmicrohttpd: docs/plans/event-driven-http.md (MHD has idle timeouts only, no
// header or body deadline).
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "eagle/server/http_message.h"

namespace eagle::server {

struct ListenerLimits {
  size_t io_threads = 1;
  size_t workers = 16;
  size_t max_pending = 256;  // requests queued or running on the workers; 503 beyond
  size_t max_connections = 10000;
  double header_timeout_s = 10;
  double body_timeout_s = 30;  // reading the body; writing the answer
  size_t max_header_bytes = 32 * 1024;
  size_t max_body_bytes = 64ull << 20;
  size_t keep_alive_requests = 1000;
};

struct HttpHandlers {
  // On the headers only (req.body empty). True: read the body and handle it; false:
  // `res` is the refusal.
  std::function<bool(const HttpRequest& req, HttpResponse& res)> screen;
  // The whole request, on a worker thread.
  std::function<void(HttpRequest& req, HttpResponse& res)> handle;
  // A request the listener refused itself (unreadable, too large, server busy): for the
  // metrics. May be empty.
  std::function<void(const HttpRequest& req, const HttpResponse& res)> refused;
};

class HttpListener {
 public:
  HttpListener(ListenerLimits limits, HttpHandlers handlers);
  ~HttpListener();
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  // Binds and listens; returns the port (the chosen one for port 0), or -1 when the
  // address cannot be bound.
  int bind(const std::string& host, int port);
  // Serves on this thread and io_threads - 1 more until stop() is called from another
  // thread. stop() closes the loop and waits for the requests running on the workers;
  // join the thread in run() before destroying the listener.
  void run();
  void stop();

  // One connection's bytes through the same rules in memory, no socket (the HTTP fuzz
  // target, tests): up to `max_requests` requests in turn, as on a keep-alive
  // connection; the answers as sent, at most `max_out` bytes. Handlers run inline.
  static std::string answer_bytes(std::string_view bytes, const ListenerLimits& limits, const HttpHandlers& handlers,
                                  size_t max_requests, size_t max_out);

  struct Impl;  // the .cpp's; named here so its connection objects can refer to it

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace eagle::server
