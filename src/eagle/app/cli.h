#pragma once
// Shared pieces of the `eagle` command: global flags, configuration resolution, and
// the registration of its subcommands (each file adds its subcommands and the action
// to run when one was chosen; main.cpp registers them in --help order and dispatches).
#include <CLI/CLI.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "eagle/app/config.h"

namespace eagle::app {

struct GlobalFlags {
  std::string config_file;
  std::vector<std::string> sets;  // KEY=VALUE
  std::string data_dir;
};

// Defaults <- YAML file <- EAGLE_* environment <- --set <- --data-dir.
Config resolve_config(const GlobalFlags& g);

// Why `pipeline.namespace: auto` chose `resolved`: "the store holds biomed documents",
// or "the store holds no plugin's documents" for core.
std::string auto_reason(const std::string& resolved);

// Wall time since t0, in seconds (the timings the commands print).
double seconds_since(std::chrono::steady_clock::time_point t0);

using CommandAction = std::function<int()>;
struct Command {
  CLI::App* app;
  CommandAction run;
};

// config (the effective configuration as documented YAML).
void add_config_command(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out);
// ingest (documents into the store).
void add_ingest_command(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out);
// search (the retrieval pipeline's top hits).
void add_search_command(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out);
// eval and bench. Not const: eval's own --data-dir writes the global flag.
void add_eval_commands(CLI::App& app, GlobalFlags& g, std::vector<Command>& out);
// similar-compounds (Tanimoto neighbours or a SMARTS search over a compound CSV).
void add_compounds_command(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out);
// encoders (list them, or embed texts with one).
void add_encoders_command(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out);
// documents list|show|delete|tag, collections, knowledge-bases, tags, checkpoint, compact.
void add_store_commands(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out);
// serve (HTTP/JSON API).
void add_serve_command(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out);
// query (a question answered with citations: app/query.h).
void add_query_command(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out);
// mcp (the MCP server on stdio).
void add_mcp_command(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out);

}  // namespace eagle::app
