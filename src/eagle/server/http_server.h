#pragma once
// `eagle serve`: one warm process that owns the store and answers HTTP/JSON
// (docs/http-api.md, the contract in openapi.json). The event-driven listener
// (http_listener.h, Boost.Beast) reads the sockets; each request is checked on its
// headers here (Host, Origin, route, bearer token, body type) before its body is read,
// then run on a worker (searches in parallel, writes serialised) and answered with
// JSON or an error object; every request is counted in the Prometheus metrics.
#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "eagle/app/config.h"
#include "eagle/app/engine.h"

namespace eagle::server {

// A bearer token with the value read from its environment variable at start.
struct Token {
  std::string name;
  std::string value;
  std::vector<std::string> kb_names;  // empty: every knowledge base
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8686;  // 0: any free port
  size_t threads = 16;
  size_t max_body_bytes = 64ull << 20;
  std::string ingest_root;
  std::vector<std::string> allowed_hosts;
  std::vector<std::string> allowed_origins;
  double request_timeout_s = 30;  // body read, answer write
  double header_timeout_s = 10;   // request line and headers; keep-alive idle
  size_t max_connections = 10000;
  size_t io_threads = 1;
  int ingest_nice = 10;  // scheduling niceness of the ingest task thread
  bool repair_utf8 = false;  // ingest.repair_utf8: the default of an ingest's repair_utf8
  std::vector<Token> tokens;
  std::string default_namespace = "core";
  int mcp_discover_ttl_ms = 300000;
  size_t mcp_max_sessions = 1000;
  size_t mcp_max_sessions_per_token = 100;
  double mcp_session_idle_s = 3600;
};

// From the configuration: server.* and auth.tokens (each token_env must be set and
// non-empty, else invalid_argument naming it). Refuses a non-loopback host without a
// token.
ServerOptions server_options(const app::Config& cfg);

bool is_loopback_host(const std::string& host);

class Server {
 public:
  Server(app::Engine& engine, ServerOptions opts);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the listening socket; returns the port (the chosen one for port 0).
  // unavailable when the address cannot be bound.
  int bind();
  // Serves until stop(); call after bind().
  void run();
  void stop();
  // One connection's bytes through the whole HTTP layer in memory, no socket (the
  // HTTP fuzz target, tests): up to `max_requests` requests read in turn, as on a
  // keep-alive connection; returns the responses as sent (at most `max_out` bytes).
  std::string answer_bytes(std::string_view bytes, size_t max_requests = 8, size_t max_out = 1 << 20);
  // Ready once the engine's collections, registry and plugin are loaded.
  void set_ready(bool ready) { ready_ = ready; }
  bool ready() const { return ready_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<bool> ready_{false};
};

// The OpenAPI 3.1 document served at /openapi.json (embedded at build time).
const std::string& openapi_document();

}  // namespace eagle::server
