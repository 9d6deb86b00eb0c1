#include "eagle/plugin/plugin.h"

#include "eagle/core/error.h"

namespace eagle::plugin {

// Defined by the generated plugin list (CMakeLists.txt): the -DEAGLE_PLUGINS ones.
const std::vector<const Plugin*>& compiled_plugins();

namespace {
std::vector<const Plugin*>& all_plugins() {
  static std::vector<const Plugin*> plugins = compiled_plugins();
  return plugins;
}
}  // namespace

const std::vector<const Plugin*>& builtin_plugins() { return all_plugins(); }

void register_plugin(const Plugin& plugin) {
  const std::string name = plugin.name();
  if (name.empty() || name == "core" || name == "auto" || find_plugin(name))
    fail(ErrorCode::invalid_argument, "cannot register plugin '" + name + "': the name is reserved or taken");
  all_plugins().push_back(&plugin);
}

const Plugin* find_plugin(const std::string& name) {
  for (const auto* p : builtin_plugins())
    if (p->name() == name) return p;
  return nullptr;
}

std::vector<std::string> namespaces() {
  std::vector<std::string> out = {"core"};
  for (const auto* p : builtin_plugins()) out.push_back(p->name());
  return out;
}

std::vector<FieldSchema> plugin_chunk_fields() {
  std::vector<FieldSchema> out;
  for (const auto* p : builtin_plugins())
    for (auto& f : p->chunk_fields()) out.push_back(std::move(f));
  return out;
}

}  // namespace eagle::plugin
