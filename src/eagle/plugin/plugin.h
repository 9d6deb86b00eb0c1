#pragma once
// The plugin interface (Eagle-RAG's domain plugins). The core (eagle_text,
// eagle_visual, the core_* MCP tools) names no plugin; a plugin adds a namespace
// (exposure rule G3, docs/glossary.md) and everything that comes with it:
//
//   configuration   keys "<name>.*" with their docs; its settings in
//                   Config::plugin_settings[name] (plugin_settings.h)
//   collections     its collection / encoder slots: the default encoder of a slot,
//                   the stand-ins for its encoder labels, the pipeline settings
//   chunk fields    fields it stamps on chunks at ingest; filters may name them and
//                   the indexed ones are facets
//   hooks           its HookBus subscribers, attached when its namespace is first used
//   ingest          file kinds and formats it reads, its namespace's routing rule
//   MCP             tools listed when its namespace is the default one, and a sentence
//                   of the server's instructions about them
//   CLI             commands of its own
//
// The plugins of a build are chosen at configure time (cmake -DEAGLE_PLUGINS=biomed;
// empty: the core alone) and listed by builtin_plugins(). docs/plugins.md walks
// through writing one.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eagle/core/schema.h"
#include "eagle/encode/encoder.h"
#include "eagle/registry/registry.h"
#include "eagle/search/hookbus.h"
#include "eagle/search/orchestrator.h"

namespace CLI {
class App;
}
namespace eagle::app {
struct Config;
struct ConfigOption;
class Engine;
struct IngestExtensions;
struct GlobalFlags;
struct Command;
}  // namespace eagle::app
namespace eagle::mcp {
struct Tool;
}

namespace eagle::plugin {

// What a plugin's hooks work on when its namespace is first used: an Engine's store,
// or an in-memory evaluation's collection (eagle eval --beir).
struct Host {
  const app::Config& config;
  search::CollectionProvider collections;
  encode::EncoderRegistry& encoders;
  registry::DocumentRegistry* registry = nullptr;  // null: steps that read it abstain
  search::HookBus& bus;
};

// A plugin attached to one host: its hook subscribers are on the host's bus for as
// long as it lives (the host's life).
class Instance {
 public:
  virtual ~Instance() = default;
  // Subscribes its hooks on the host's bus: called once, with searches held back
  // (what was slow to load, the plugin loaded in attach, before).
  virtual void subscribe() = 0;
  // The entity names of a question (the evidence's entity signal, answer/evidence.h).
  virtual std::vector<std::string> question_entities(const std::string& question) {
    (void)question;
    return {};
  }
  // An ingest wrote documents of any namespace (a label's brand names to re-read).
  virtual void after_ingest() {}
  // `eagle reembed` moved a collection to another encoder label.
  virtual void set_collection_encoder(const std::string& collection, const std::string& label) {
    (void)collection;
    (void)label;
  }
};

class Plugin {
 public:
  virtual ~Plugin() = default;

  // The namespace: documents ingested in it, searches run in it, its MCP tools.
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;

  // Configuration keys ("<name>.*"), registered after the core's.
  virtual void add_options(std::vector<app::ConfigOption>& options) const { (void)options; }
  // What the plugin's settings change in the pipeline (the collections that run the
  // lexical leg, the core slots it renames).
  virtual void configure_pipeline(const app::Config& cfg, search::PipelineConfig& pipeline) const {
    (void)cfg;
    (void)pipeline;
  }
  // Its encoder slots: labels it adds to the registry when the configuration maps
  // them to no model (stand-ins), and what stands in for each.
  virtual void add_encoders(const app::Config& cfg, encode::EncoderRegistry& encoders) const {
    (void)cfg;
    (void)encoders;
  }
  virtual std::string stand_in_of(const app::Config& cfg, const std::string& label) const {
    (void)cfg;
    (void)label;
    return {};
  }
  // The encoder label of one of its slots' collections; nullopt for any other.
  virtual std::optional<std::string> slot_encoder(const app::Config& cfg, const std::string& collection) const {
    (void)cfg;
    (void)collection;
    return std::nullopt;
  }
  // The collection its namespace's text goes to (a core search over a store holding
  // only that says where the text is); empty when none.
  virtual std::string text_collection(const app::Config& cfg) const {
    (void)cfg;
    return {};
  }
  // Chunk fields it stamps at ingest.
  virtual std::vector<FieldSchema> chunk_fields() const { return {}; }

  // The plugin on a host: loads what it needs (searches go on meanwhile); its
  // subscribe() then puts its hooks on the host's bus.
  virtual std::unique_ptr<Instance> attach(const Host& host) const = 0;
  // Readers and formats (any namespace), and its routing rule when `plugin_namespace`
  // is its own.
  virtual void add_ingest_extensions(app::Engine& engine, const std::string& plugin_namespace,
                                     app::IngestExtensions& ext) const {
    (void)engine;
    (void)plugin_namespace;
    (void)ext;
  }

  // MCP: its tools (listed when its namespace is the default one) and what the
  // server's instructions say of them.
  virtual void add_mcp_tools(app::Engine& engine, std::vector<mcp::Tool>& tools) const {
    (void)engine;
    (void)tools;
  }
  virtual std::string mcp_instructions() const { return {}; }

  // CLI commands of its own, registered after the core's.
  virtual void add_commands(CLI::App& app, const app::GlobalFlags& g, std::vector<app::Command>& out) const {
    (void)app;
    (void)g;
    (void)out;
  }
  // Its plans recall at least `k` rows (eagle eval raises recall to its run depth).
  virtual void set_recall_floor(app::Config& cfg, size_t k) const {
    (void)cfg;
    (void)k;
  }
  // `eagle eval` on a BEIR corpus in memory: the collection the corpus goes to in this
  // namespace, with `cfg` set up for it (its slots embedded with the core text
  // encoder); empty: the core text collection.
  virtual std::string eval_text_collection(app::Config& cfg) const {
    (void)cfg;
    return {};
  }
};

// The plugins of this build (-DEAGLE_PLUGINS, in that order; defined by the generated
// plugin list, CMakeLists.txt), then those the embedding application registered.
const std::vector<const Plugin*>& builtin_plugins();
// Adds a plugin of the embedding application (docs/plugins.md): call it before the
// first configuration is read or engine made (configuration keys and each engine's
// plugin slots are taken once), from one thread. The plugin must outlive every
// engine. invalid_argument when its name is "core", "auto" or already taken.
void register_plugin(const Plugin& plugin);
// The plugin of a namespace; null for core and unknown names.
const Plugin* find_plugin(const std::string& name);
// "core", then each plugin's namespace.
std::vector<std::string> namespaces();
// Every plugin's chunk fields.
std::vector<FieldSchema> plugin_chunk_fields();

}  // namespace eagle::plugin
