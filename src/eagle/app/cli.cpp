#include "eagle/app/cli.h"
#include "eagle/plugin/plugin.h"

#include "eagle/core/error.h"

namespace eagle::app {

Config resolve_config(const GlobalFlags& g) {
  std::optional<std::filesystem::path> file;
  if (!g.config_file.empty()) file = g.config_file;
  auto cfg = load_config(file);
  for (const auto& kv : g.sets) {
    auto eq = kv.find('=');
    if (eq == std::string::npos) fail(ErrorCode::invalid_argument, "--set expects KEY=VALUE, got '" + kv + "'");
    set_option(cfg, kv.substr(0, eq), kv.substr(eq + 1));
  }
  if (!g.data_dir.empty()) cfg.data_dir = g.data_dir;
  return cfg;
}

std::string auto_reason(const std::string& resolved) {
  if (resolved == "core") {
    std::string plugins;
    for (const auto& n : plugin::namespaces())
      if (n != "core") plugins += (plugins.empty() ? "" : " or ") + n;
    return plugins.empty() ? "no plugin in this build" : "the store holds no " + plugins + " documents";
  }
  return "the store holds " + resolved + " documents";
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace eagle::app
