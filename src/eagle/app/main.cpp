// The `eagle` command: global options, then each subcommand registered by its own
// file (cli.h), then the one chosen is run with errors mapped to exit codes.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "eagle/app/cli.h"
#include "eagle/app/config.h"
#include "eagle/core/error.h"
#include "eagle/plugin/plugin.h"

namespace {

std::string key_list() {
  std::string s = "Configuration keys (YAML file, EAGLE_* environment, or --set KEY=VALUE):\n";
  for (const auto& o : eagle::app::config_options())
    s += "  " + o.key + " (" + o.env_name() + "): " + o.doc + "\n";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"eagle: biomedical retrieval engine (BM25 with a biomedical analyzer, BEIR evaluation)"};
  app.require_subcommand(1);
  app.footer(key_list());
  eagle::app::GlobalFlags g;
  app.add_option("--config", g.config_file,
                 "YAML configuration file (default: $EAGLE_CONFIG, else ./eagle.yaml when present)");
  app.add_option("--set", g.sets, "override a configuration key, KEY=VALUE (repeatable)");
  app.add_option("--data-dir", g.data_dir, "store folder (configuration key data_dir)");

  // Registration order is the order of `eagle --help` and of the unknown-command list.
  std::vector<eagle::app::Command> commands;
  eagle::app::add_config_command(app, g, commands);
  eagle::app::add_ingest_command(app, g, commands);
  eagle::app::add_search_command(app, g, commands);
  eagle::app::add_eval_commands(app, g, commands);
  eagle::app::add_compounds_command(app, g, commands);
  eagle::app::add_encoders_command(app, g, commands);
  eagle::app::add_store_commands(app, g, commands);
  eagle::app::add_serve_command(app, g, commands);
  eagle::app::add_mcp_command(app, g, commands);
  eagle::app::add_query_command(app, g, commands);
  // The plugins' own commands, after the core's (plugin/plugin.h).
  for (const auto* p : eagle::plugin::builtin_plugins()) p->add_commands(app, g, commands);

  // An unknown command gets a message that names it and the commands there are
  // (CLI11 would only say an argument was not expected).
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const auto* sub : app.get_subcommands({})) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "eagle: unknown command '%s'\ncommands: %s\n(eagle --help for more)\n", argv[1], names.c_str());
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    for (const auto& c : commands)
      if (*c.app) return c.run();
  } catch (const eagle::Error& e) {
    std::fprintf(stderr, "eagle: error (%s): %s\n", std::string(eagle::error_code_name(e.code())).c_str(),
                 e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "eagle: internal error: %s\n", e.what());
    return 3;
  }
  return 0;
}
