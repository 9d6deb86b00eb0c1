#pragma once
// The biomedical plugin as the engine sees it (plugin/plugin.h): its settings, its
// instance on an engine (the vocabulary with the store's brand names, the hook
// subscribers of plugin.h's BiomedPlugin), the compound retrieval, the ingest of
// drug labels and compound tables, its MCP tools and CLI commands.
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eagle/app/config.h"
#include "eagle/app/engine.h"
#include "eagle/biomed/brand_knowledge.h"
#include "eagle/biomed/knowledge.h"
#include "eagle/biomed/plugin.h"
#include "eagle/plugin/plugin.h"

namespace eagle::biomed {

inline constexpr const char* kNamespace = "biomed";

// biomed.*: the vocabularies and the hooks' options (one source of defaults:
// BiomedOptions, the seed's numbers).
struct BiomedSettings {
  std::string vocab_dir;    // empty = ../shared/data/vocab when that folder exists
  std::string vocab_cache;  // empty = CACHE_DIR/biomed-vocab.bin (vocab_cache_of)
  BiomedOptions options;
};
BiomedSettings& biomed_settings(app::Config& cfg);
const BiomedSettings& biomed_settings(const app::Config& cfg);

// biomed.vocab_cache, else CACHE_DIR/biomed-vocab.bin.
std::string vocab_cache_of(const app::Config& cfg);
// biomed.vocab_dir, else ../shared/data/vocab (from the working folder, then from the
// source tree) when it exists; not_found otherwise.
std::string resolve_vocab_dir(const app::Config& cfg);
// The production EntityKnowledge: the vocabulary (from its binary cache) and the
// Aho-Corasick matcher.
std::unique_ptr<EntityKnowledge> load_knowledge(const app::Config& cfg, std::string* report = nullptr);

// The biomed.* configuration keys (options.cpp).
void add_biomed_options(std::vector<app::ConfigOption>& o);

// The plugin on one host: the vocabulary plus the brand names the store's drug
// labels teach, and the hooks of BiomedPlugin on the host's bus.
class BiomedInstance : public plugin::Instance {
 public:
  explicit BiomedInstance(const plugin::Host& host);
  void subscribe() override;
  const EntityKnowledge& knowledge() const { return *knowledge_; }
  // Re-reads the labels' brand names from the registry.
  void refresh_brands();
  std::vector<std::string> question_entities(const std::string& question) override;
  void after_ingest() override { refresh_brands(); }
  void set_collection_encoder(const std::string& collection, const std::string& label) override;

 private:
  plugin::Host host_;
  std::unique_ptr<BrandAwareKnowledge> knowledge_;
  std::unique_ptr<BiomedPlugin> hooks_;
};

// The biomed instance of an engine (attached on first use of the namespace).
BiomedInstance& biomed_instance(app::Engine& engine);

// A compound query (MCP biomed_retrieve_compounds): exactly one of name, smiles or
// smarts; k results; kb_name narrows to one knowledge base.
struct CompoundQuery {
  std::string name, smiles, smarts;
  size_t k = 10;
  std::string kb_name;
};

struct CompoundHit {
  std::string id, name, smiles, document_id, kb_name;
  double score = 0;  // Tanimoto on Morgan fingerprints; 1.0 for a substructure match
};

struct CompoundResult {
  std::string collection;
  std::string query_kind;    // name | smiles | smarts
  std::string query_smiles;  // the structure searched with (name, smiles)
  std::optional<CompoundHit> query;  // the compound a name resolved to
  std::vector<CompoundHit> hits;
};

// Structural neighbours of a compound (by name or SMILES), or the compounds holding
// a SMARTS substructure, in the chemical collection; a caller's scope holds.
CompoundResult retrieve_compounds(app::Engine& engine, const CompoundQuery& q, const app::AccessScope& scope = {});

// Entity matches: [{text, start, end, type, name, id}] (byte offsets into the text).
nlohmann::json entities_json(const EntityKnowledge& kb, const std::vector<EntityMatch>& matches);
// A compound retrieval: {collection, query_kind, query_smiles, query, compounds}.
nlohmann::json compounds_json(const CompoundResult& r);

// The biomed plugin's parts registered elsewhere (ingest.cpp, mcp_tools.cpp, cmd_entities.cpp).
void add_biomed_ingest_extensions(app::Engine& engine, const std::string& plugin_namespace, app::IngestExtensions& ext);
void add_biomed_mcp_tools(app::Engine& engine, std::vector<mcp::Tool>& tools);
void add_entities_command(CLI::App& app, const app::GlobalFlags& g, std::vector<app::Command>& out);

// The plugin itself (builtin_plugins() lists it when the build includes biomed).
const plugin::Plugin& biomed_plugin();

}  // namespace eagle::biomed
