#pragma once
// The engine a command runs on: the store's collections (catalog), the document
// registry, the encoders, the HookBus with its plugins, and the query pipeline.
// `eagle ingest`, `eagle search` and `eagle entities` all go through one Engine, so
// what the CLI does is what an embedding application gets.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "eagle/app/config.h"
#include "eagle/biomed/knowledge.h"
#include "eagle/biomed/plugin.h"
#include "eagle/encode/encoder.h"
#include "eagle/registry/registry.h"
#include "eagle/search/hookbus.h"
#include "eagle/search/orchestrator.h"
#include "eagle/store/collection.h"

namespace eagle::app {

// The embedded encoders: `glove` (GloVe 6B 100d, converted once from the npm asset),
// the seed's text slots (pubmedbert, medcpt-query, medcpt-article, text-embedding-v4)
// on the same GloVe vectors unless `encoders:` configures them, and `molformer` on
// RDKit Morgan fingerprints unless configured. Configured labels always win.
encode::EncoderRegistry build_encoder_registry(const Config& cfg);

// biomed.vocab_dir, else ../shared/data/vocab (from the working folder, then from the
// source tree) when it exists; not_found otherwise.
std::string resolve_vocab_dir(const Config& cfg);

// The production EntityKnowledge: the vocabulary (from its binary cache) and the
// Aho-Corasick matcher.
std::unique_ptr<biomed::EntityKnowledge> load_knowledge(const Config& cfg, std::string* report = nullptr);

struct IngestOptions {
  std::string collection;      // empty: eagle_text, or the biomed slot for spl/compounds
  std::string encoder;         // empty: the collection's recorded encoder, else the slot's default
  std::string kb_name;
  std::string plugin_namespace = "core";
  std::string format = "auto";  // auto | beir | jsonl | folder | spl | compounds
  bool skip_bad = false;
};

struct IngestReport {
  std::string collection;  // "a + b" when the document profile split the input
  std::string encoder;
  std::vector<std::pair<std::string, size_t>> per_collection;  // rows written to each
  size_t documents = 0;
  size_t rows = 0;
  std::vector<std::string> skipped;  // "FILE:LINE: message" or "FILE: message"
};

using ProgressFn = std::function<void(size_t done, size_t total)>;

class Engine {
 public:
  explicit Engine(Config cfg);
  ~Engine();

  const Config& config() const { return cfg_; }
  store::Catalog& catalog() { return *catalog_; }
  // Opened on first use: commands that never need it (a failing ingest, a core
  // search) leave the registry file untouched.
  registry::DocumentRegistry& registry();
  encode::EncoderRegistry& encoders() { return encoders_; }
  search::CollectionProvider collections();

  // Reads the inputs, embeds them, writes them to their collection (created on first
  // use) and records each document in the registry. Everything is read, validated and
  // embedded before the first write, so a bad record (without skip_bad) or a failing
  // encoder leaves the store unchanged. Each collection's write is atomic; when the
  // document profile splits the input over two collections they are two writes, and
  // the registry rows follow the collection writes.
  IngestReport ingest(const std::vector<std::string>& inputs, const IngestOptions& opts, const ProgressFn& progress = {});

  // The query pipeline; the biomed plugin and its vocabulary load on first use of
  // the biomed namespace.
  search::RetrievalResponse search(const search::RetrievalRequest& req);
  const biomed::EntityKnowledge& knowledge();

 private:
  void ensure_plugin(const std::string& ns);
  std::string default_encoder(const std::string& collection) const;

  Config cfg_;
  std::unique_ptr<store::Catalog> catalog_;
  std::unique_ptr<registry::DocumentRegistry> registry_;
  std::string registry_url_;
  encode::EncoderRegistry encoders_;
  search::HookBus bus_;
  std::unique_ptr<biomed::EntityKnowledge> knowledge_;
  std::unique_ptr<biomed::BiomedPlugin> biomed_;
  std::unique_ptr<search::DocumentCatalog> doc_catalog_;
  std::unique_ptr<search::Orchestrator> orchestrator_;
  std::shared_ptr<search::TelemetrySink> sink_;
};

}  // namespace eagle::app

namespace eagle::app {
// The pipeline settings of a configuration (pipeline.* and the biomed hybrid collections).
search::PipelineConfig pipeline_config(const Config& cfg);
}  // namespace eagle::app
