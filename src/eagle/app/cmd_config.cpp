// `eagle config`: the configuration every other command would run with (file,
// environment, --set and --data-dir resolved), printed as documented YAML.
#include <cstdio>

#include "eagle/app/cli.h"
#include "eagle/app/config.h"

namespace eagle::app {

void add_config_command(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out) {
  auto* cmd = app.add_subcommand("config", "print the effective configuration as documented YAML");
  out.push_back({cmd, [&g] {
                   std::fputs(describe_config(resolve_config(g)).c_str(), stdout);
                   return 0;
                 }});
}

}  // namespace eagle::app
