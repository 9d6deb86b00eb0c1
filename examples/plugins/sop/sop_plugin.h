#pragma once
// An example plugin (docs/plugins.md walks through it): `sop`, for a customer's
// standard operating procedures. It uses nothing but the plugin interface
// (plugin/plugin.h) and the core's public headers:
//   configuration  sop.section_aliases (heading word -> section), sop.section_boost
//   chunk field    sop_section, stamped at ingest (CHUNK) from the chunk's heading
//                  path; indexed, so searches may facet on it
//   hooks          RERANK_MERGED: a question that names a section ("who is
//                  responsible ...") lifts that section's chunks by section_boost
//   MCP            sop_sections: the sections and the heading words that map to them
//   CLI            eagle sop-sections (the same, for a person)
// A build includes it with -DEAGLE_PLUGINS=biomed,sop... once it has a sop.cmake; an
// embedding application (and its test, tests/plugins/sop_plugin_test.cpp) registers it
// with plugin::register_plugin(eagle::sop::sop_plugin()) instead.
#include <map>
#include <string>
#include <vector>

#include "eagle/app/config.h"
#include "eagle/plugin/plugin.h"

namespace eagle::sop {

inline constexpr const char* kNamespace = "sop";

struct SopSettings {
  // A heading word (lower case) -> the section it names.
  std::map<std::string, std::string> section_aliases = {
      {"purpose", "purpose"},         {"scope", "scope"},           {"responsibilities", "responsibilities"},
      {"responsible", "responsibilities"}, {"roles", "responsibilities"}, {"procedure", "procedure"},
      {"steps", "procedure"},         {"records", "records"},       {"references", "references"}};
  // Added to a hit's score when its section is the one the question names. The fused
  // scores a domain rerank sees lie in [0, 1] (weighted hybrid fusion), so 1 puts the
  // named section's chunks first (before others of equal score); less only lifts them.
  double section_boost = 1.0;
};
const SopSettings& sop_settings(const app::Config& cfg);

// The section a heading path or a question names: the first of its words (lower
// case) that is an alias; "" when none is.
std::string section_named(const SopSettings& s, const std::string& text);

const plugin::Plugin& sop_plugin();

}  // namespace eagle::sop
