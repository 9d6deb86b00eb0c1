#pragma once
// Requests as JSON, read the same way by every front end (the HTTP API and the MCP
// tools): each field checked for type, presence and bounds, each error naming the
// field. Sizes and counts from requests are bounded, so no request can ask for
// unbounded work; docs/http-api.md lists the bounds.
#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

#include "eagle/app/engine.h"
#include "eagle/app/query.h"
#include "eagle/search/orchestrator.h"

namespace eagle::app {

inline constexpr size_t kMaxKeyBytes = 1024;   // kb names, ids, tags, namespaces
inline constexpr size_t kMaxScopeItems = 500;  // scope lists (= max_scope_documents)
inline constexpr size_t kMaxFacetFields = 16;
inline constexpr size_t kMaxFacetValues = 100;
inline constexpr size_t kMaxFilterBytes = 4096;
inline constexpr size_t kMaxListLimit = 1000;

// A request the caller got wrong, or may not make: an HTTP status (400 shape, 403
// scope, 404, 409, 503 ...), a stable code, a message and the field it is about.
struct RequestError {
  int status;
  std::string code;
  std::string message;
  std::string field;
};

[[noreturn]] void bad_request(const std::string& field, const std::string& message);

// The member, or null when absent or JSON null.
const nlohmann::json* json_field(const nlohmann::json& obj, const std::string& name);
void only_fields(const nlohmann::json& obj, const std::set<std::string>& allowed);
std::string str_field(const nlohmann::json& obj, const std::string& name, size_t max_bytes, bool required = false,
                      const std::string& fallback = {});
int64_t int_field(const nlohmann::json& obj, const std::string& name, int64_t lo, int64_t hi, int64_t fallback);
bool bool_field(const nlohmann::json& obj, const std::string& name, bool fallback);
// A list of strings, each at most kMaxKeyBytes; `path` names it in errors when nested.
std::vector<std::string> list_field(const nlohmann::json& obj, const std::string& name, size_t max_items,
                                    const std::string& path = {});

// The fields of POST /search (and of the MCP search tools): query, top_k, kb_name,
// scope, scope_filter, facets, filter, route_mode, plugin_namespace, explain. A
// caller limited to knowledge bases (`scope`) may name only its own (403
// permission_denied otherwise), and its KBs are forced onto the whole search. A
// request without top_k gets `default_top_k` (pipeline.final_top_k).
search::RetrievalRequest search_request_from_json(const nlohmann::json& body, const std::string& default_namespace,
                                                  const AccessScope& scope, size_t default_top_k);

// The fields of POST /query (and MCP core_query): those of POST /search plus top_n
// (1..20, default generation.top_n), mode (auto | extractive) and session_id.
struct QueryRequestFields {
  QueryRequest request;
  std::string session_id;  // empty: none given
};
QueryRequestFields query_request_from_json(const nlohmann::json& body, const std::string& default_namespace,
                                           const AccessScope& scope, size_t default_top_k);

// The KBs a caller names must be in its scope: 403 permission_denied naming the field.
void check_kbs(const AccessScope& scope, const std::vector<std::string>& kbs, const std::string& field_name);

}  // namespace eagle::app
