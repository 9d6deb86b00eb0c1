#include "eagle/mcp/http_transport.h"

#include <algorithm>
#include <cstdio>

#include <spdlog/spdlog.h>

#include "eagle/core/json_input.h"
#include "eagle/core/base64.h"
#include "eagle/core/error.h"
#include "eagle/core/random_id.h"

namespace eagle::mcp {
using nlohmann::json;

namespace {

constexpr int kSessionNotFound = -32001;

HttpResponse rpc(int status, const json& message) {
  HttpResponse r;
  r.status = status;
  r.body = message.dump(-1, ' ', false, json::error_handler_t::replace);
  r.headers.push_back({"Content-Type", "application/json"});
  return r;
}

HttpResponse rpc_error(int status, int code, const std::string& message, const json& id = nullptr) {
  return rpc(status, McpServer::error(id, code, message));
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool accepts(const std::string& accept, const std::string& type) {
  if (accept.empty()) return true;
  const std::string a = lower(accept);
  return a.find(type) != std::string::npos || a.find("*/*") != std::string::npos;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// An Mcp-Param header value: "=?base64?...?=" is Base64 (RFC 4648, padded, strict),
// anything else is literal. nullopt when the Base64 is malformed.
std::optional<std::string> decode_param_header(const std::string& v) {
  const std::string prefix = "=?base64?", suffix = "?=";
  if (v.size() < prefix.size() + suffix.size() || v.compare(0, prefix.size(), prefix) != 0 ||
      v.compare(v.size() - suffix.size(), suffix.size(), suffix) != 0)
    return v;
  return base64_decode(std::string_view(v).substr(prefix.size(), v.size() - prefix.size() - suffix.size()));
}

// An argument as its header carries it: strings as they are, other scalars as JSON.
std::string header_form(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

std::optional<HttpResponse> HttpTransport::check_stateless_headers(const HttpRequest& req, const json& msg,
                                                                   const std::string& h_version) const {
  const json id = McpServer::request_id(msg);
  auto reject = [&](const std::string& why) { return rpc_error(400, kHeaderMismatch, why, id); };
  if (h_version.empty()) return reject("Missing MCP-Protocol-Version header");
  // The routing headers repeat what the body says, so proxies can route on them;
  // a disagreement means someone rewrote one of them.
  const std::string method = msg.value("method", json()).is_string() ? msg["method"].get<std::string>() : "";
  const std::string h_method = trim(req.header("Mcp-Method"));
  if (h_method.empty()) return reject("Missing Mcp-Method header");
  if (h_method != method) return reject("Mcp-Method header '" + h_method + "' does not match the body's method '" + method + "'");
  const json params = msg.value("params", json::object());
  std::string name_field = method == "tools/call" || method == "prompts/get" ? "name" : method == "resources/read" ? "uri" : "";
  if (!name_field.empty() && params.is_object() && params.contains(name_field)) {
    const std::string h_name = trim(req.header("Mcp-Name"));
    const std::string body_name = header_form(params[name_field]);
    if (h_name.empty()) return reject("Missing Mcp-Name header");
    if (h_name != body_name) return reject("Mcp-Name header '" + h_name + "' does not match the body's " + name_field);
  }
  // Arguments a tool mirrors into headers (x-mcp-header): each present argument
  // needs its Mcp-Param-<Name> header, equal to it once decoded.
  if (method == "tools/call" && params.is_object() && params.contains("name") && params["name"].is_string()) {
    if (const Tool* tool = server_.tools().find(params["name"].get<std::string>())) {
      const json args = params.value("arguments", json::object());
      const json properties = tool->input_schema.value("properties", json::object());
      for (const auto& [prop, schema] : properties.items()) {
        if (!schema.contains("x-mcp-header")) continue;
        const std::string header = "Mcp-Param-" + schema["x-mcp-header"].get<std::string>();
        const std::string raw = trim(req.header(header));
        const bool in_body = args.is_object() && args.contains(prop) && !args[prop].is_null();
        if (!in_body) {
          if (!raw.empty()) return reject(header + " header given but argument '" + prop + "' is absent");
          continue;
        }
        if (raw.empty()) return reject("Missing " + header + " header for argument '" + prop + "'");
        auto decoded = decode_param_header(raw);
        if (!decoded) return reject(header + " header is not valid Base64");
        if (*decoded != header_form(args[prop])) return reject(header + " header does not match argument '" + prop + "'");
      }
    }
  }
  return std::nullopt;
}

std::string new_session_id() { return random_hex(16); }

HttpTransport::HttpTransport(const McpServer& server, size_t max_sessions, double session_idle_s,
                             size_t max_sessions_per_token)
    : server_(server), max_sessions_(max_sessions), idle_(session_idle_s), max_per_principal_(max_sessions_per_token) {}

size_t HttpTransport::sessions() const {
  std::lock_guard lock(mu_);
  return sessions_.size();
}

void HttpTransport::evict_locked(std::chrono::steady_clock::time_point now, const std::string& principal) {
  for (auto it = sessions_.begin(); it != sessions_.end();)
    it = now - it->second.used > idle_ ? sessions_.erase(it) : std::next(it);
  std::map<std::string, size_t> held;
  for (const auto& [id, e] : sessions_) ++held[e.principal];
  auto drop_idlest_of = [&](const std::string& who) {
    auto idlest = sessions_.end();
    for (auto it = sessions_.begin(); it != sessions_.end(); ++it)
      if (it->second.principal == who && (idlest == sessions_.end() || it->second.used < idlest->second.used))
        idlest = it;
    if (idlest == sessions_.end()) return false;
    sessions_.erase(idlest);
    --held[who];
    return true;
  };
  while (held[principal] >= max_per_principal_ && drop_idlest_of(principal)) {
  }
  while (sessions_.size() >= max_sessions_) {
    // The newcomer counts as holding one more: between equals, its own goes first.
    std::string most = principal;
    size_t most_held = held[principal] + 1;
    for (const auto& [who, n] : held)
      if (n > most_held) most = who, most_held = n;
    if (!drop_idlest_of(most)) break;
  }
}

HttpResponse HttpTransport::handle(const HttpRequest& req, const ToolContext& ctx) {
  if (req.method == "POST") {
    try {
      return post(req, ctx);
    } catch (const std::exception& e) {
      // An answer in JSON-RPC's shape, without internals; the log has the detail.
      spdlog::error("mcp: {}", e.what());
      return rpc_error(500, kInternalError, "internal error (see the server log)");
    }
  }
  if (req.method == "DELETE") return end_session(req);
  // No server-to-client stream: every answer comes in the POST's response.
  HttpResponse r = rpc_error(405, kInvalidRequest, "Method not allowed: /mcp takes POST (and DELETE to end a session)");
  r.headers.push_back({"Allow", "POST, DELETE"});
  return r;
}

HttpResponse HttpTransport::end_session(const HttpRequest& req) {
  const std::string id = req.header("Mcp-Session-Id");
  if (id.empty()) return rpc_error(400, kInvalidRequest, "Bad Request: DELETE needs an Mcp-Session-Id header");
  std::lock_guard lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second.principal != req.principal)
    return rpc_error(404, kSessionNotFound, "Session not found");
  sessions_.erase(it);
  HttpResponse r;
  r.status = 200;
  return r;
}

HttpResponse HttpTransport::post(const HttpRequest& req, const ToolContext& ctx) {
  const std::string content_type = lower(req.header("Content-Type"));
  if (content_type.rfind("application/json", 0) != 0)
    return rpc_error(415, kInvalidRequest, "Unsupported Media Type: the body must be application/json");
  if (!accepts(req.header("Accept"), "application/json"))
    return rpc_error(406, kInvalidRequest, "Not Acceptable: the client must accept application/json");
  if (json_too_deep(req.body))
    return rpc_error(400, kParseError,
                     "Parse error: the body nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  json msg = json::parse(req.body, nullptr, false);
  if (msg.is_discarded()) return rpc_error(400, kParseError, "Parse error: the body is not valid JSON");
  if (msg.is_array()) return rpc_error(400, kInvalidRequest, "JSON-RPC batches are not supported");
  if (!msg.is_object()) return rpc_error(400, kInvalidRequest, "the body must be a JSON-RPC message (an object)");
  const json id = McpServer::request_id(msg);

  const std::string h_version = req.header("MCP-Protocol-Version");
  if (McpServer::is_stateless(msg, h_version.empty() ? std::nullopt : std::optional(h_version))) {
    if (auto rejected = check_stateless_headers(req, msg, h_version)) return *rejected;
    Reply r = server_.handle(msg, nullptr, ctx, h_version);
    if (!r.message) return HttpResponse{202, {}, ""};
    return rpc(r.http_status, *r.message);
  }

  if (!h_version.empty()) {
    const auto& revs = supported_revisions();
    if (std::find(revs.begin(), revs.end(), h_version) == revs.end())
      return rpc_error(400, kInvalidRequest, "Bad Request: unsupported MCP-Protocol-Version '" + h_version + "'", id);
  }
  const auto now = std::chrono::steady_clock::now();
  const bool initialize = msg.value("method", json()) == "initialize";
  if (initialize) {
    Session session;
    Reply r = server_.handle(msg, &session, ctx);
    HttpResponse out = r.message ? rpc(r.http_status, *r.message) : HttpResponse{202, {}, ""};
    if (r.created_session) {
      const std::string sid = new_session_id();
      std::lock_guard lock(mu_);
      evict_locked(now, req.principal);
      sessions_[sid] = Entry{std::move(session), req.principal, now};
      out.headers.push_back({"Mcp-Session-Id", sid});
    }
    return out;
  }
  const std::string sid = req.header("Mcp-Session-Id");
  if (sid.empty()) {
    // ping is allowed without a session; everything else needs the handshake's id.
    if (msg.value("method", json()) == "ping" || !msg.contains("method")) {
      Reply r = server_.handle(msg, nullptr, ctx);
      return r.message ? rpc(r.http_status, *r.message) : HttpResponse{202, {}, ""};
    }
    return rpc_error(400, kInvalidRequest, "Bad Request: no Mcp-Session-Id (send initialize first)", id);
  }
  Session session;
  {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(sid);
    if (it == sessions_.end() || now - it->second.used > idle_ || it->second.principal != req.principal) {
      if (it != sessions_.end() && it->second.principal == req.principal) sessions_.erase(it);
      return rpc_error(404, kSessionNotFound, "Session not found", id);
    }
    it->second.used = now;
    session = it->second.session;
  }
  // The tool runs without the session table locked; the session's state is copied
  // back (only the handshake changes it).
  Reply r = server_.handle(msg, &session, ctx);
  {
    std::lock_guard lock(mu_);
    if (auto it = sessions_.find(sid); it != sessions_.end()) it->second.session = session;
  }
  if (!r.message) return HttpResponse{202, {}, ""};
  return rpc(r.http_status, *r.message);
}

}  // namespace eagle::mcp
