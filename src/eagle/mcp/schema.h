#pragma once
// The pieces MCP tools are made of (the core's in tools.cpp, a plugin's in its own
// folder): bounded JSON Schema 2020-12 fragments, and a tool with its schemas.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eagle/app/request_json.h"
#include "eagle/mcp/tools.h"
#include "eagle/search/orchestrator.h"

namespace eagle::mcp {

// String bounds are in characters (code points, as JSON Schema counts them), a
// quarter of the byte bounds the request readers enforce, so a string the schema
// admits always fits them (a UTF-8 character is at most 4 bytes).
inline constexpr size_t kQueryChars = search::kMaxQueryBytes / 4;
inline constexpr size_t kKeyChars = app::kMaxKeyBytes / 4;
inline constexpr size_t kFilterChars = app::kMaxFilterBytes / 4;

nlohmann::json string_schema(const std::string& description, size_t max_chars, size_t min_chars = 0);
nlohmann::json integer_schema(const std::string& description, int64_t lo, int64_t hi, int64_t fallback);
// A list of at most max_items strings of at most kKeyChars.
nlohmann::json string_list_schema(const std::string& description, size_t max_items);
// An input object: these properties, no others.
nlohmann::json object_schema(nlohmann::json properties, std::vector<std::string> required = {});
// An output schema: an object with these required members.
nlohmann::json result_schema(nlohmann::json properties, std::vector<std::string> required);
nlohmann::json array_of(nlohmann::json items);
nlohmann::json typed(const char* type);
// A tool of namespace `ns` (exposure rule G3) with its schemas; its `run` is the caller's.
Tool make_tool(std::string name, std::string title, std::string description, std::string ns, nlohmann::json input,
               nlohmann::json output);

}  // namespace eagle::mcp
