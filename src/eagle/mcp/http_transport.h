#pragma once
// The Streamable HTTP transport of MCP (/mcp on `eagle serve`), without the socket:
// the HTTP server hands each /mcp request here after its own Host, Origin and token
// checks. POST carries one JSON-RPC message and gets a JSON answer (the tools answer
// at once, so no SSE stream is opened); GET (a server-to-client stream) is 405;
// DELETE ends a session. Stateful (2025-11-25) sessions are named by Mcp-Session-Id,
// bound to the token that opened them, and dropped when idle or when there are too
// many; stateless (2026-07-28) requests need no session, and their Mcp-Method /
// Mcp-Name headers must agree with the body.
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "eagle/mcp/protocol.h"

namespace eagle::mcp {

struct HttpRequest {
  std::string method;  // GET | POST | DELETE | ...
  std::function<std::string(const std::string&)> header;  // "" when absent
  std::string body;
  std::string principal;  // the bearer token's name ("" without auth)
};

struct HttpResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // JSON, or empty
};

class HttpTransport {
 public:
  // max_sessions: over all tokens; max_sessions_per_token: one token's (a principal's).
  HttpTransport(const McpServer& server, size_t max_sessions, double session_idle_s,
                size_t max_sessions_per_token = SIZE_MAX);

  HttpResponse handle(const HttpRequest& req, const ToolContext& ctx);
  size_t sessions() const;

 private:
  struct Entry {
    Session session;
    std::string principal;
    std::chrono::steady_clock::time_point used;
  };
  HttpResponse post(const HttpRequest& req, const ToolContext& ctx);
  HttpResponse end_session(const HttpRequest& req);
  // 2026-07-28: MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-* must be
  // present and agree with the body (400, -32020 otherwise).
  std::optional<HttpResponse> check_stateless_headers(const HttpRequest& req, const nlohmann::json& msg,
                                                      const std::string& h_version) const;
  // Makes room for a session of `principal`: drops idle sessions, then that
  // principal's idlest while it holds its cap, then, while the server holds its cap,
  // the idlest session of the principal holding the most. A token can only ever push
  // out its own sessions, or those of a token holding more than it does.
  void evict_locked(std::chrono::steady_clock::time_point now, const std::string& principal);

  const McpServer& server_;
  size_t max_sessions_;
  std::chrono::duration<double> idle_;
  size_t max_per_principal_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> sessions_;
};

// A session id: 128 random bits from the kernel, as hex.
std::string new_session_id();

}  // namespace eagle::mcp
