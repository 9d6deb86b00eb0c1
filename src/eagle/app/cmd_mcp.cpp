// `eagle mcp`: the MCP server on stdio for an agent that starts Eagle as a child
// process. The store is opened read-only (every tool reads), so it runs beside an
// `eagle serve` or an ingest that owns the store; it sees the documents committed
// when it started.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "eagle/app/cli.h"
#include "eagle/app/engine.h"
#include "eagle/core/error.h"
#include "eagle/mcp/protocol.h"
#include "eagle/mcp/stdio.h"

namespace eagle::app {
namespace {

struct McpFlags {
  std::string plugin_namespace;
};

int mcp_stdio(const GlobalFlags& g, const McpFlags& f) {
  // stdout carries the protocol only: every log line goes to stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("eagle-mcp"));
  auto cfg = resolve_config(g);
  if (!f.plugin_namespace.empty()) cfg.pipeline.plugin_namespace = f.plugin_namespace;
  // A reader creates nothing: a mistyped --data-dir would serve an empty store.
  if (!std::filesystem::is_directory(cfg.data_dir))
    fail(ErrorCode::not_found, "no store at " + cfg.data_dir + " (create one with eagle ingest, or give --data-dir)");
  Engine engine(cfg, StoreAccess::read_only);
  engine.preload(cfg.pipeline.plugin_namespace);
  mcp::ToolSet tools(engine, cfg.pipeline.plugin_namespace);
  mcp::McpServer server(tools, mcp::eagle_server_info(tools.default_namespace()), cfg.mcp.discover_ttl_ms);
  std::ios::sync_with_stdio(false);
  mcp::serve_stdio(server, std::cin, std::cout, {});
  return 0;
}

}  // namespace

void add_mcp_command(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out) {
  auto f = std::make_shared<McpFlags>();
  auto* cmd = app.add_subcommand("mcp", "serve MCP (Model Context Protocol) on stdin/stdout for an agent: the search "
                                        "tools over a read-only store (README: Adding Eagle to an MCP client)");
  cmd->add_option("--namespace", f->plugin_namespace,
                  "default plugin namespace; its tools are listed beside core_* (pipeline.namespace)");
  out.push_back({cmd, [&g, f] { return mcp_stdio(g, *f); }});
}

}  // namespace eagle::app
