// `eagle entities TEXT`: the biomedical entities the configured vocabularies find in a
// text; with a store at --data-dir, its drug labels' brand names count too.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eagle/app/cli.h"
#include "eagle/app/engine.h"
#include "eagle/biomed/app/biomed_app.h"

namespace fs = std::filesystem;

namespace eagle::biomed {
using app::GlobalFlags;
using app::Command;
namespace {
using nlohmann::json;

struct EntityFlags {
  std::vector<std::string> words;
  bool as_json = false, drugs_only = false;
};

int cmd_entities(const GlobalFlags& g, const std::vector<std::string>& words, bool as_json, bool drugs_only) {
  auto cfg = app::resolve_config(g);
  std::string text;
  for (const auto& w : words) text += (text.empty() ? "" : " ") + w;
  auto t0 = std::chrono::steady_clock::now();
  std::string report;
  // With a store, its drug labels' brand names count too ("Humira" is adalimumab).
  std::unique_ptr<eagle::app::Engine> engine;
  std::unique_ptr<EntityKnowledge> vocabulary;
  const EntityKnowledge* kb = nullptr;
  if (fs::is_directory(cfg.data_dir)) {
    engine = std::make_unique<eagle::app::Engine>(cfg, eagle::app::StoreAccess::read_only);
    kb = &biomed_instance(*engine).knowledge();
    report = "vocabulary and the brand names of the labels in " + cfg.data_dir;
  } else {
    vocabulary = load_knowledge(cfg, &report);
    kb = vocabulary.get();
  }
  const double load_s = app::seconds_since(t0);
  auto matches = drugs_only ? kb->match_drug_entities(text) : kb->match_entities(text);
  json out = entities_json(*kb, matches);
  if (as_json) {
    std::cout << out.dump() << "\n";
    return 0;
  }
  std::printf("vocabulary: %s (%.3f s)\n", report.c_str(), load_s);
  for (const auto& m : out)
    std::printf("  [%zu, %zu) %-24s %-9s %s (%s)\n", m["start"].get<size_t>(), m["end"].get<size_t>(),
                m["text"].get<std::string>().c_str(), m["type"].get<std::string>().c_str(),
                m["name"].get<std::string>().c_str(), m["id"].get<std::string>().c_str());
  if (out.empty()) std::printf("  (no entity)\n");
  return 0;
}

}  // namespace

void add_entities_command(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out) {
  auto f = std::make_shared<EntityFlags>();
  auto* entities = app.add_subcommand("entities", "match biomedical entities in a text with the configured vocabularies");
  entities->add_option("text", f->words, "text to match")->required();
  entities->add_flag("--json", f->as_json, "print [{text, start, end, type, name, id}] as JSON");
  entities->add_flag("--drugs", f->drugs_only, "drug entities only (match_drug_entities)");
  out.push_back({entities, [&g, f] { return cmd_entities(g, f->words, f->as_json, f->drugs_only); }});
}

}  // namespace eagle::biomed
