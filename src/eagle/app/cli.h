#pragma once
// Shared pieces of the `eagle` command: global flags, configuration resolution, and
// the registration of subcommands that live outside main.cpp (each file adds its
// subcommands and the action to run when one was chosen).
#include <CLI/CLI.hpp>
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

using CommandAction = std::function<int()>;
struct Command {
  CLI::App* app;
  CommandAction run;
};

// documents list|show|delete|tag, collections, knowledge-bases, tags, checkpoint, compact.
void add_store_commands(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out);
// serve (HTTP/JSON API).
void add_serve_command(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out);
// query (a question answered with citations: app/query.h).
void add_query_command(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out);
// mcp (the MCP server on stdio).
void add_mcp_command(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out);

}  // namespace eagle::app
