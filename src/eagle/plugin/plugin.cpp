#include "eagle/plugin/plugin.h"

namespace eagle::plugin {

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
