// The biomedical plugin (seed: biomed-retrieval.txt) behind the plugin interface
// (plugin/plugin.h): namespace "biomed", its seven collection slots, the hooks of
// BiomedPlugin, drug labels and compound tables at ingest with the document profile
// routing (TDR), the entity and compound MCP tools, `eagle entities`.
#include <spdlog/spdlog.h>

#include "eagle/biomed/app/biomed_app.h"
#include "eagle/encode/registry_config.h"

namespace eagle::biomed {
namespace {

// The seed's biomedical text slots, on the embedded GloVe vectors unless the
// configuration maps them to a model.
const char* const kGloveTextSlots[] = {"pubmedbert", "medcpt-query", "medcpt-article"};

bool glove_slot(const std::string& label) {
  for (const char* s : kGloveTextSlots)
    if (label == s) return true;
  return false;
}

class BiomedAppPlugin : public plugin::Plugin {
 public:
  std::string name() const override { return kNamespace; }
  std::string description() const override {
    return "biomedical retrieval (seed: biomed-retrieval.txt): query routing over seven collections, entity "
           "expansion and supplement, Tier-1 and Tier-2 reranks, drug labels and compound tables";
  }
  void add_options(std::vector<app::ConfigOption>& options) const override { add_biomed_options(options); }
  void configure_pipeline(const app::Config& cfg, search::PipelineConfig& p) const override {
    const auto& o = biomed_settings(cfg).options;
    p.core_text_collection = o.core_text.collection;
    p.core_visual_collection = o.visual.collection;
    for (const auto& c : o.hybrid_text_collections) p.hybrid_text_collections.insert(c);
  }
  void add_encoders(const app::Config& cfg, encode::EncoderRegistry& reg) const override {
    for (const char* slot : kGloveTextSlots)
      if (!reg.has_encoder(slot) && !reg.has_reranker(slot))
        reg.add(encode::make_identified_static(slot, app::glove_vectors_file(cfg)));
  }
  std::string stand_in_of(const app::Config& cfg, const std::string& label) const override {
    if (cfg.encoders.is_object() && cfg.encoders.contains(label)) return {};
    return glove_slot(label) ? app::kGloveStandIn : std::string();
  }
  std::optional<std::string> slot_encoder(const app::Config& cfg, const std::string& collection) const override {
    const auto& o = biomed_settings(cfg).options;
    for (const auto* slot : {&o.text_biomed, &o.text_medcpt, &o.chemical, &o.radiology, &o.pathology, &o.visual})
      if (slot->collection == collection) return slot->encoder;
    return std::nullopt;
  }
  std::string text_collection(const app::Config& cfg) const override {
    return biomed_settings(cfg).options.text_biomed.collection;
  }
  // biomed_chunk_transform's stamps (CHUNK): the query-time entity boost reads them.
  std::vector<FieldSchema> chunk_fields() const override { return biomed::chunk_fields(); }
  std::unique_ptr<plugin::Instance> attach(const plugin::Host& host) const override {
    return std::make_unique<BiomedInstance>(host);
  }
  void add_ingest_extensions(app::Engine& engine, const std::string& ns, app::IngestExtensions& ext) const override {
    add_biomed_ingest_extensions(engine, ns, ext);
  }
  void add_mcp_tools(app::Engine& engine, std::vector<mcp::Tool>& tools) const override {
    add_biomed_mcp_tools(engine, tools);
  }
  std::string mcp_instructions() const override {
    return "Its documents are biomedical (papers, abstracts, trials, drug labels, compounds): biomed_query_entities "
           "names the drugs, genes and diseases in a text; biomed_retrieve_compounds finds structurally similar "
           "compounds or a substructure.";
  }
  void add_commands(CLI::App& app, const app::GlobalFlags& g, std::vector<app::Command>& out) const override {
    add_entities_command(app, g, out);
  }
  void set_recall_floor(app::Config& cfg, size_t k) const override {
    auto& o = biomed_settings(cfg).options;
    o.collection_recall_top_k = std::max(o.collection_recall_top_k, k);
  }
  // The biomedical text slot, embedded with the core text encoder (so the run
  // compares with the core namespace's), as are the core text slot's plans.
  std::string eval_text_collection(app::Config& cfg) const override {
    auto& o = biomed_settings(cfg).options;
    o.text_biomed.encoder = cfg.pipeline.text_encoder;
    o.core_text.encoder = cfg.pipeline.text_encoder;
    return o.text_biomed.collection;
  }
};

}  // namespace

BiomedInstance::BiomedInstance(const plugin::Host& host)
    : host_(host), knowledge_(std::make_unique<BrandAwareKnowledge>(load_knowledge(host.config))) {
  refresh_brands();
}

void BiomedInstance::subscribe() {
  auto opts = biomed_settings(host_.config).options;
  // The vectors a collection holds decide the encoder its plans use (a slot's
  // default label would not compare with them).
  for (auto* slot : collection_slots(opts))
    if (auto* c = host_.collections(slot->collection)) {
      const auto& recorded = c->schema().vector.encoder;
      if (!recorded.empty()) slot->encoder = recorded;
    }
  hooks_ = std::make_unique<BiomedPlugin>(*knowledge_, host_.collections, host_.encoders, host_.registry, opts);
  hooks_->register_hooks(host_.bus, kNamespace);
}

void BiomedInstance::refresh_brands() {
  if (!host_.registry) return;
  // Brand names improve matching; a registry that cannot be read leaves the
  // vocabulary as it is, said once, and the caller's own registry use reports it.
  try {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (auto& b : host_.registry->brands(kNamespace)) pairs.emplace_back(std::move(b.brand), std::move(b.generic));
    knowledge_->set_brands(pairs);
  } catch (const std::exception& e) {
    spdlog::warn("brand names of the store's drug labels not loaded: {}", e.what());
  }
}

std::vector<std::string> BiomedInstance::question_entities(const std::string& question) {
  std::vector<std::string> out;
  for (const auto& m : knowledge_->match_entities(question)) out.push_back(m.text);
  return out;
}

void BiomedInstance::set_collection_encoder(const std::string& collection, const std::string& label) {
  if (hooks_) hooks_->set_collection_encoder(collection, label);
}

BiomedInstance& biomed_instance(app::Engine& engine) {
  return static_cast<BiomedInstance&>(*engine.plugin_instance(kNamespace));
}

const plugin::Plugin& biomed_plugin() {
  static const BiomedAppPlugin plugin;
  return plugin;
}

}  // namespace eagle::biomed
