#include "sop_plugin.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include <CLI/CLI.hpp>

#include "eagle/app/cli.h"
#include "eagle/core/error.h"
#include "eagle/mcp/schema.h"

namespace eagle::sop {
namespace {
using nlohmann::json;

SopSettings& settings(app::Config& cfg) { return app::settings_of<SopSettings>(cfg, kNamespace); }

// "purpose=purpose,roles=responsibilities": the alias table as one value.
std::string aliases_value(const SopSettings& s) {
  std::vector<std::string> pairs;
  for (const auto& [word, section] : s.section_aliases) pairs.push_back(word + "=" + section);
  return app::join_list(pairs);
}

// The chunk's own heading: the last segment of the chunker's `path`
// ("doc/Calibration/Responsibilities"), else the source's `section`.
std::string heading_of(const json& chunk) {
  for (const char* f : {"path", "section"})
    if (auto it = chunk.find(f); it != chunk.end() && it->is_string() && !it->get<std::string>().empty()) {
      const std::string v = it->get<std::string>();
      return v.substr(v.rfind('/') == std::string::npos ? 0 : v.rfind('/') + 1);
    }
  return {};
}

json sections_json(const SopSettings& s) {
  std::map<std::string, std::vector<std::string>> by_section;
  for (const auto& [word, section] : s.section_aliases) by_section[section].push_back(word);
  json out = json::array();
  for (const auto& [section, words] : by_section) out.push_back({{"section", section}, {"words", words}});
  return out;
}

// The plugin on one engine: its two hooks.
class SopInstance : public plugin::Instance {
 public:
  explicit SopInstance(const plugin::Host& host) : host_(host), settings_(sop_settings(host.config)) {}

  void subscribe() override {
    const SopSettings s = settings_;
    // CHUNK (TRANSFORM): sop_section on every chunk whose heading names a section.
    host_.bus.subscribe<search::HookPoint::CHUNK>(
        kNamespace, 100,
        [s](search::HookContext&, const json& chunks) -> std::optional<json> {
          json out = chunks;
          for (auto& c : out)
            if (!c.contains("sop_section"))
              if (auto section = section_named(s, heading_of(c)); !section.empty()) c["sop_section"] = section;
          return out;
        },
        "sop_section_stamp");
    // RERANK_MERGED (FIRST): the named section's chunks first among equals.
    host_.bus.subscribe<search::HookPoint::RERANK_MERGED>(
        kNamespace, 100,
        [s](search::HookContext&, const std::string& query, const search::HitList& merged)
            -> std::optional<search::HitList> {
          const std::string wanted = section_named(s, query);
          if (wanted.empty()) return std::nullopt;
          search::HitList out = merged;
          for (auto& h : out)
            if (h.field("sop_section") == wanted) h.score += s.section_boost;
          std::stable_sort(out.begin(), out.end(), [&](const search::ScoredHit& a, const search::ScoredHit& b) {
            if (a.score != b.score) return a.score > b.score;
            return a.field("sop_section") == wanted && b.field("sop_section") != wanted;
          });
          return out;
        },
        "sop_section_boost");
  }

 private:
  plugin::Host host_;
  SopSettings settings_;
};

class SopPlugin : public plugin::Plugin {
 public:
  std::string name() const override { return kNamespace; }
  std::string description() const override {
    return "standard operating procedures: a section facet from headings, and the section a question names first";
  }
  void add_options(std::vector<app::ConfigOption>& o) const override {
    o.push_back({"sop.section_aliases", "heading words and the section each names, comma-separated WORD=SECTION",
                 [](app::Config& c, const std::string& v) {
                   std::map<std::string, std::string> aliases;
                   for (const auto& pair : app::split_list(v)) {
                     const auto eq = pair.find('=');
                     if (eq == std::string::npos || eq == 0 || eq + 1 == pair.size())
                       fail(ErrorCode::invalid_argument,
                            "sop.section_aliases: expected WORD=SECTION, got '" + pair + "'");
                     std::string word = pair.substr(0, eq);
                     std::transform(word.begin(), word.end(), word.begin(),
                                    [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
                     aliases[word] = pair.substr(eq + 1);
                   }
                   settings(c).section_aliases = std::move(aliases);
                 },
                 [](const app::Config& c) { return aliases_value(sop_settings(c)); }});
    o.push_back({"sop.section_boost", "score added to the chunks of the section a question names",
                 [](app::Config& c, const std::string& v) {
                   const double d = app::to_double("sop.section_boost", v);
                   if (!(d >= 0)) fail(ErrorCode::invalid_argument, "sop.section_boost must be a number >= 0");
                   settings(c).section_boost = d;
                 },
                 [](const app::Config& c) { return app::fmt(sop_settings(c).section_boost); }});
  }
  std::vector<FieldSchema> chunk_fields() const override { return {{"sop_section", FieldType::string, true}}; }
  std::unique_ptr<plugin::Instance> attach(const plugin::Host& host) const override {
    return std::make_unique<SopInstance>(host);
  }
  void add_mcp_tools(app::Engine& engine, std::vector<mcp::Tool>& tools) const override {
    auto t = mcp::make_tool(
        "sop_sections", "SOP sections", "The sections of a standard operating procedure and the heading words "
        "that map to each (facet sop_section with one of them).",
        kNamespace, mcp::object_schema(json::object()),
        mcp::result_schema({{"sections", mcp::array_of(mcp::result_schema(
                                             {{"section", mcp::typed("string")},
                                              {"words", mcp::array_of(mcp::typed("string"))}},
                                             {"section", "words"}))}},
                           {"sections"}));
    app::Engine* e = &engine;
    t.run = [e](const json&, const mcp::ToolContext&) {
      const json sections = sections_json(sop_settings(e->config()));
      return mcp::ToolOutput{{{"sections", sections}}, std::to_string(sections.size()) + " sections"};
    };
    tools.push_back(std::move(t));
  }
  std::string mcp_instructions() const override {
    return "sop_sections lists the sections of a standard operating procedure (facet sop_section).";
  }
  void add_commands(CLI::App& app, const app::GlobalFlags& g, std::vector<app::Command>& out) const override {
    auto* cmd = app.add_subcommand("sop-sections", "the SOP sections and the heading words that name each");
    out.push_back({cmd, [&g] {
                     const auto cfg = app::resolve_config(g);
                     for (const auto& s : sections_json(sop_settings(cfg)))
                       std::printf("%s: %s\n", s["section"].get<std::string>().c_str(),
                                   app::join_words(s["words"].get<std::vector<std::string>>()).c_str());
                     return 0;
                   }});
  }
};

}  // namespace

const SopSettings& sop_settings(const app::Config& cfg) { return app::settings_of<SopSettings>(cfg, kNamespace); }

std::string section_named(const SopSettings& s, const std::string& text) {
  std::string word;
  for (size_t i = 0; i <= text.size(); ++i) {
    const unsigned char c = i < text.size() ? static_cast<unsigned char>(text[i]) : ' ';
    if (std::isalpha(c)) {
      word += static_cast<char>(std::tolower(c));
      continue;
    }
    if (auto it = s.section_aliases.find(word); !word.empty() && it != s.section_aliases.end()) return it->second;
    word.clear();
  }
  return {};
}

const plugin::Plugin& sop_plugin() {
  static const SopPlugin plugin;
  return plugin;
}

}  // namespace eagle::sop
