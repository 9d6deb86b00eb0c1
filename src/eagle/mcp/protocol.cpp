#include "eagle/mcp/protocol.h"

#include "eagle/plugin/plugin.h"

namespace eagle::mcp {
using nlohmann::json;

const std::vector<std::string>& supported_revisions() {
  static const std::vector<std::string> v = {kStatelessRevision, kStatefulRevision};
  return v;
}

ServerInfo eagle_server_info(const std::string& default_namespace) {
  ServerInfo i;
  i.instructions =
      "Eagle retrieves passages from a knowledge base of documents. Use core_retrieve_text for passages relevant "
      "to a question, core_search for the whole pipeline with routing and explanations, core_list_documents to see "
      "what is indexed.";
  // The default namespace's plugin says what its own tools do (exposure rule G3).
  if (const auto* p = plugin::find_plugin(default_namespace); p && !p->mcp_instructions().empty())
    i.instructions += " " + p->mcp_instructions();
  return i;
}

McpServer::McpServer(const ToolSet& tools, ServerInfo info, int discover_ttl_ms)
    : tools_(tools), info_(std::move(info)), discover_ttl_ms_(discover_ttl_ms) {}

bool is_stateful_revision(const std::string& v) {
  return v == "2025-11-25" || v == "2025-06-18" || v == "2025-03-26" || v == "2024-11-05";
}

json McpServer::error(const json& id, int code, const std::string& message, const json& data) {
  json e = {{"code", code}, {"message", message}};
  if (!data.is_null()) e["data"] = data;
  json out = {{"jsonrpc", "2.0"}, {"error", e}};
  if (!id.is_null()) out["id"] = id;
  return out;
}

namespace {

json result(const json& id, json r) { return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(r)}}; }

const json* meta_of(const json& msg) {
  auto p = msg.find("params");
  if (p == msg.end() || !p->is_object()) return nullptr;
  auto m = p->find("_meta");
  return m != p->end() && m->is_object() ? &*m : nullptr;
}

// Lists whose content is the same for every caller and changes only with a new
// binary; "private" still keeps shared caches out when tokens are in use.
constexpr const char* kCacheScope = "private";

}  // namespace

json McpServer::request_id(const json& message) {
  if (!message.is_object() || !message.contains("id")) return nullptr;
  const json& id = message["id"];
  return id.is_string() || id.is_number_integer() ? id : json();
}

bool McpServer::is_stateless(const json& message, const std::optional<std::string>& header_version) {
  const json* meta = meta_of(message);
  if (meta && meta->contains(kMetaProtocolVersion)) return true;
  return header_version && !header_version->empty() && !is_stateful_revision(*header_version);
}

json McpServer::capabilities(bool stateless) const {
  // No listChanged / subscribe: the lists never change while the server runs.
  json c = {{"tools", json::object()}, {"prompts", json::object()}, {"resources", json::object()},
            {"completions", json::object()}};
  if (!stateless) c["logging"] = json::object();  // logging/setLevel is accepted (no log messages are sent)
  return c;
}

std::optional<json> McpServer::common(const std::string& method, const json& params, const json& id,
                                      const ToolContext& ctx, bool stateless, int* http_status) const {
  auto cacheable = [&](json r) {
    if (stateless) {
      r["ttlMs"] = discover_ttl_ms_;
      r["cacheScope"] = kCacheScope;
    }
    return r;
  };
  if (method == "tools/list" || method == "prompts/list" || method == "resources/list" ||
      method == "resources/templates/list") {
    if (params.contains("cursor")) {
      *http_status = 400;
      return error(id, kInvalidParams, "invalid cursor: the list has one page");
    }
    if (method == "tools/list") return result(id, cacheable({{"tools", tools_.list_json()}}));
    // Eagle offers tools only; the other lists are empty (and say so to caches).
    if (method == "prompts/list") return result(id, cacheable({{"prompts", json::array()}}));
    if (method == "resources/list") return result(id, cacheable({{"resources", json::array()}}));
    return result(id, cacheable({{"resourceTemplates", json::array()}}));
  }
  if (method == "tools/call") {
    if (!params.contains("name") || !params["name"].is_string()) {
      *http_status = 400;
      return error(id, kInvalidParams, "tools/call needs params.name (a string)");
    }
    const std::string name = params["name"].get<std::string>();
    const Tool* tool = tools_.find(name);
    // An unknown tool is a failed call the model can read, not a dead request.
    if (!tool)
      return result(id, {{"content", json::array({{{"type", "text"}, {"text", "Unknown tool: " + name}}})},
                         {"isError", true}});
    json args = params.value("arguments", json::object());
    if (args.is_null()) args = json::object();
    return result(id, tools_.call(*tool, args, ctx));
  }
  if (method == "resources/read") {
    const json uri = params.value("uri", json());
    return error(id, kInvalidParams, "Resource not found", {{"uri", uri}});
  }
  if (method == "prompts/get") {
    return error(id, kInvalidParams, "Unknown prompt", {{"name", params.value("name", json())}});
  }
  if (method == "completion/complete")
    return result(id, {{"completion", {{"values", json::array()}, {"total", 0}, {"hasMore", false}}}});
  return std::nullopt;
}

Reply McpServer::handle(const json& msg, Session* session, const ToolContext& ctx,
                        const std::optional<std::string>& header_version) const {
  const json id = request_id(msg);
  if (!msg.is_object() || !msg.contains("jsonrpc") || msg["jsonrpc"] != "2.0")
    return {error(id, kInvalidRequest, "not a JSON-RPC 2.0 message"), 400};
  if (!msg.contains("method")) {
    // A response from the client (to a request we never send): nothing to answer.
    if (msg.contains("result") || msg.contains("error")) return {std::nullopt, 202};
    return {error(id, kInvalidRequest, "a message needs a method"), 400};
  }
  if (!msg["method"].is_string()) return {error(id, kInvalidRequest, "'method' must be a string"), 400};
  if (msg.contains("id") && id.is_null())
    return {error(json(), kInvalidRequest, "'id' must be a string or an integer"), 400};
  if (msg.contains("params") && !msg["params"].is_object())
    return {error(id, kInvalidParams, "'params' must be an object"), 400};
  if (is_stateless(msg, header_version)) return stateless(msg, ctx, header_version);
  return stateful(msg, session, ctx);
}

Reply McpServer::stateful(const json& msg, Session* session, const ToolContext& ctx) const {
  const std::string method = msg["method"].get<std::string>();
  if (!msg.contains("id")) {
    if (method == "notifications/initialized" && session) session->initialized = true;
    // Other notifications (cancelled, progress, roots) need nothing from a server
    // whose tools answer at once.
    return {std::nullopt, 202};
  }
  const json id = msg["id"];
  const json params = msg.value("params", json::object());
  if (method == "initialize") {
    if (!params.contains("protocolVersion") || !params["protocolVersion"].is_string())
      return {error(id, kInvalidParams, "initialize needs params.protocolVersion"), 400};
    // The highest stateful revision we speak; a client that cannot use it disconnects.
    json res = {{"protocolVersion", kStatefulRevision},
                {"capabilities", capabilities(false)},
                {"serverInfo", {{"name", info_.name}, {"title", info_.title}, {"version", info_.version}}}};
    if (!info_.instructions.empty()) res["instructions"] = info_.instructions;
    if (session) {
      session->protocol_version = kStatefulRevision;
      session->client_info = params.value("clientInfo", json::object());
      session->client_capabilities = params.value("capabilities", json::object());
    }
    Reply r{result(id, std::move(res))};
    r.created_session = true;
    return r;
  }
  if (method == "ping") return {result(id, json::object())};
  if (!session || session->protocol_version.empty())
    return {error(id, kInvalidRequest, "send initialize first (or give params._meta[\"" +
                                           std::string(kMetaProtocolVersion) + "\"] for a stateless request)"),
            400};
  if (method == "logging/setLevel") return {result(id, json::object())};
  int status = 200;
  if (auto r = common(method, params, id, ctx, false, &status)) return {*r, 200};
  return {error(id, kMethodNotFound, "Method not found: " + method)};
}

Reply McpServer::stateless(const json& msg, const ToolContext& ctx, const std::optional<std::string>& header_version) const {
  const std::string method = msg["method"].get<std::string>();
  if (!msg.contains("id")) return {std::nullopt, 202};
  const json id = msg["id"];
  auto fail_with = [&](int status, int code, const std::string& message, const json& data = nullptr) {
    return Reply{error(id, code, message, data), status};
  };
  // The order the revision gives: _meta present, then the header agrees with it,
  // then the version is one we speak.
  const json* meta = meta_of(msg);
  if (!meta || !meta->contains(kMetaProtocolVersion) || !meta->contains(kMetaClientCapabilities)) {
    std::string missing;
    for (const char* k : {kMetaProtocolVersion, kMetaClientCapabilities})
      if (!meta || !meta->contains(k)) missing += (missing.empty() ? "" : ", ") + std::string(k);
    return fail_with(400, kInvalidParams, "Invalid params: missing _meta keys: " + missing);
  }
  const json& version = (*meta)[kMetaProtocolVersion];
  if (!version.is_string() || !(*meta)[kMetaClientCapabilities].is_object())
    return fail_with(400, kInvalidParams, "Invalid params: _meta protocolVersion must be a string and "
                                          "clientCapabilities an object");
  if (header_version && *header_version != version.get<std::string>())
    return fail_with(400, kHeaderMismatch, "MCP-Protocol-Version header '" + *header_version +
                                               "' does not match params._meta protocolVersion '" +
                                               version.get<std::string>() + "'");
  if (version.get<std::string>() != kStatelessRevision)
    return fail_with(400, kUnsupportedVersion, "Unsupported protocol version",
                     {{"supported", json::array({kStatelessRevision})}, {"requested", version}});
  auto complete = [&](json reply) {
    if (reply.contains("result")) {
      reply["result"]["resultType"] = "complete";
      reply["result"]["_meta"] = {{kMetaServerInfo, {{"name", info_.name}, {"title", info_.title}, {"version", info_.version}}}};
    }
    return reply;
  };
  const json params = msg.value("params", json::object());
  if (method == "server/discover") {
    json res = {{"supportedVersions", supported_revisions()},
                {"capabilities", capabilities(true)},
                {"serverInfo", {{"name", info_.name}, {"title", info_.title}, {"version", info_.version}}},
                {"ttlMs", discover_ttl_ms_},
                {"cacheScope", kCacheScope}};
    if (!info_.instructions.empty()) res["instructions"] = info_.instructions;
    return {complete(result(id, std::move(res)))};
  }
  int status = 200;
  if (auto r = common(method, params, id, ctx, true, &status)) return {complete(*r), status};
  // initialize, ping, logging/setLevel and the subscription methods do not exist here.
  return fail_with(404, kMethodNotFound, "Method not found: " + method);
}

}  // namespace eagle::mcp
