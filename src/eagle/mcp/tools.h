#pragma once
// The MCP tools (seed retrieval.txt §12: they call the retrievers directly and take
// kb_name, top_k and facet filters). Each has a JSON Schema 2020-12 input schema with
// a bound on every number, string and list, an output schema, and answers with
// structuredContent plus a readable text block. Exposure (rule G3, docs/glossary.md):
// every core_* tool, plus the tools of the configured default namespace's plugin
// (plugin/plugin.h: Plugin::add_mcp_tools).
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include "eagle/app/engine.h"

namespace eagle::mcp {

// What a call may see: the caller's knowledge bases (a bearer token's scope).
struct ToolContext {
  app::AccessScope scope;
  // Queues an ingest task for core_ingest as POST /ingest would, for this caller
  // (its scope and token): returns {task_id, state}. Set by `eagle serve`; empty on
  // stdio (a reader).
  std::function<nlohmann::json(const nlohmann::json& args)> ingest;
  // Answers core_query within a session (Engine::converse, owned by this caller's
  // token): session_id "" starts one. Set by `eagle serve`; empty on stdio, where
  // core_query keeps no session.
  std::function<app::QueryResult(const app::QueryRequest&, const std::string& session_id)> converse;
};

struct ToolOutput {
  nlohmann::json structured;  // matches the tool's output schema
  std::string text;           // the same, for a person or a model to read
};

struct Tool {
  std::string name;
  std::string title;
  std::string description;
  std::string plugin_namespace;  // core or a plugin's: exposure rule G3 (docs/glossary.md)
  bool read_only = true;         // false: it changes the store (annotations readOnlyHint, destructiveHint)
  nlohmann::json input_schema;
  nlohmann::json output_schema;
  std::function<ToolOutput(const nlohmann::json& args, const ToolContext& ctx)> run;
};

class ToolSet {
 public:
  // The tools exposed for `default_namespace` (G3: core_* plus that namespace's
  // own), each schema checked to use only
  // keywords the validator enforces.
  // `default_namespace` may be auto: resolved once here, from the store's documents.
  // `with_ingest`: list core_ingest (a server that owns the store).
  ToolSet(app::Engine& engine, const std::string& default_namespace, bool with_ingest = false);
  // The namespace the tools were exposed for (core or a plugin's).
  const std::string& default_namespace() const { return default_namespace_; }

  const std::vector<Tool>& tools() const { return tools_; }
  const Tool* find(const std::string& name) const;
  // tools/list entries: name, title, description, inputSchema, outputSchema, annotations.
  nlohmann::json list_json() const;
  // A tools/call result for a known tool: arguments checked against the input schema,
  // then run; any failure (bad arguments, engine errors, out of scope) is a result
  // with isError true and a message, never a protocol error.
  nlohmann::json call(const Tool& tool, const nlohmann::json& arguments, const ToolContext& ctx) const;

 private:
  std::vector<Tool> tools_;
  std::string default_namespace_;
};

}  // namespace eagle::mcp
