#pragma once
// The MCP server, independent of its transport (stdio: `eagle mcp`; Streamable HTTP:
// /mcp on `eagle serve`). It speaks two protocol revisions:
//   2025-11-25  stateful: initialize / notifications/initialized handshake, ping, an
//               optional session (HTTP: Mcp-Session-Id);
//   2026-07-28  stateless: no handshake; every request carries the protocol version
//               and the client's capabilities in params._meta; server/discover says
//               what the server supports; results carry resultType.
// A request whose _meta names a protocol version is served statelessly at that
// version; any other message belongs to the stateful handshake. Negotiation: a
// client calls server/discover (2026-07-28 and later) or initialize (older) and gets
// the highest revision both support.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "eagle/mcp/tools.h"

namespace eagle::mcp {

inline constexpr const char* kStatefulRevision = "2025-11-25";
inline constexpr const char* kStatelessRevision = "2026-07-28";
// _meta keys of the stateless revision.
inline constexpr const char* kMetaProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr const char* kMetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities";
inline constexpr const char* kMetaClientInfo = "io.modelcontextprotocol/clientInfo";
inline constexpr const char* kMetaServerInfo = "io.modelcontextprotocol/serverInfo";

// JSON-RPC and MCP error codes.
enum RpcError : int {
  kParseError = -32700,
  kInvalidRequest = -32600,
  kMethodNotFound = -32601,
  kInvalidParams = -32602,
  kInternalError = -32603,
  kHeaderMismatch = -32020,       // 2026-07-28: a header disagrees with the body, or is missing
  kUnsupportedVersion = -32022,   // 2026-07-28: _meta protocol version not supported
};

// The revisions this server speaks, newest first.
const std::vector<std::string>& supported_revisions();
// Whether a protocol version names a stateful (handshake) revision: 2025-11-25 and
// the dated revisions before it.
bool is_stateful_revision(const std::string& version);

// One stateful conversation (a stdio connection, or an HTTP Mcp-Session-Id).
struct Session {
  std::string protocol_version;  // set by initialize
  bool initialized = false;      // notifications/initialized received
  nlohmann::json client_info = nlohmann::json::object();
  nlohmann::json client_capabilities = nlohmann::json::object();
};

// The answer to one message: a JSON-RPC response, or none for a notification (or a
// response from the client); the HTTP status the Streamable HTTP transport should
// use with it.
struct Reply {
  std::optional<nlohmann::json> message;
  int http_status = 200;
  bool created_session = false;  // a successful initialize
};

struct ServerInfo {
  std::string name = "eagle";
  std::string title = "Eagle retrieval";
  std::string version = "0.1.0";
  std::string instructions;
};

// Eagle's name, version and instructions (what the tools are for), for a default
// namespace.
ServerInfo eagle_server_info(const std::string& default_namespace);

class McpServer {
 public:
  McpServer(const ToolSet& tools, ServerInfo info, int discover_ttl_ms);

  // One parsed JSON-RPC message (an object; batches were removed in 2025-06-18).
  // `session` is the caller's stateful session (null over HTTP before initialize, or
  // for stateless requests).
  // `header_version` is the HTTP MCP-Protocol-Version header (none on stdio); a
  // stateless request's _meta must agree with it.
  Reply handle(const nlohmann::json& message, Session* session, const ToolContext& ctx,
               const std::optional<std::string>& header_version = std::nullopt) const;

  // Whether a message is a stateless (2026-07-28 or later) request: its params._meta
  // names a protocol version, or the MCP-Protocol-Version header names a revision
  // that is not a stateful one.
  static bool is_stateless(const nlohmann::json& message, const std::optional<std::string>& header_version = std::nullopt);
  // A JSON-RPC error response.
  // The message's id when it is a valid JSON-RPC id (string or integer), else null:
  // what an error may echo.
  static nlohmann::json request_id(const nlohmann::json& message);
  // A null id (unknown, e.g. after a parse error) is left out, as MCP's schema wants.
  static nlohmann::json error(const nlohmann::json& id, int code, const std::string& message,
                              const nlohmann::json& data = nullptr);

  const ServerInfo& info() const { return info_; }
  const ToolSet& tools() const { return tools_; }

 private:
  Reply stateful(const nlohmann::json& msg, Session* session, const ToolContext& ctx) const;
  Reply stateless(const nlohmann::json& msg, const ToolContext& ctx, const std::optional<std::string>& header_version) const;
  // The methods both revisions share (tools, empty prompt/resource lists, completion):
  // the result, or nullopt for an unknown method. `stateless` adds caching hints.
  std::optional<nlohmann::json> common(const std::string& method, const nlohmann::json& params, const nlohmann::json& id,
                                       const ToolContext& ctx, bool stateless, int* http_status) const;
  nlohmann::json capabilities(bool stateless) const;

  const ToolSet& tools_;
  ServerInfo info_;
  int discover_ttl_ms_;
};

}  // namespace eagle::mcp
