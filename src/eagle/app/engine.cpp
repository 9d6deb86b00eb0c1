#include "eagle/app/engine.h"

#include <cmath>

#include "eagle/answer/evidence.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <shared_mutex>

#include "eagle/core/error.h"
#include "eagle/encode/chem/chem_encoder.h"
#include "eagle/encode/image/descriptor_encoder.h"
#include "eagle/encode/registry_config.h"
#include "eagle/encode/static/word_vectors.h"
#include "eagle/encode/chem/chem.h"
#include "eagle/ingest/corpus_reader.h"
#include "eagle/search/registry_catalog.h"

#include <spdlog/spdlog.h>

namespace eagle::app {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The seed's core text slot, which falls back to the embedded GloVe vectors when the
// configuration does not map it to a model (a plugin's text slots do the same:
// Plugin::add_encoders).
const char* const kGloveTextSlots[] = {"text-embedding-v4"};
// The seed's general visual slot (Qwen3-VL-Embedding), which falls back to the
// embedded image descriptor. A plugin's medical-imaging slots never fall back to
// anything (seed: biomed-retrieval.txt, cross-modal): they stay unconfigured.
const char* const kDescriptorVisualSlots[] = {"qwen3-vl"};
// The embedded image descriptor's own label.
constexpr const char* kDescriptorLabel = "dct-lowfreq";

bool listed(const char* const* begin, const char* const* end, const std::string& label) {
  return std::find_if(begin, end, [&](const char* s) { return label == s; }) != end;
}

search::PipelineConfig pipeline_config_of(const Config& cfg) {
  search::PipelineConfig p;
  p.core_text_encoder = cfg.pipeline.text_encoder;
  p.core_visual_encoder = cfg.visual.encoder;
  p.default_text_encoder = cfg.pipeline.text_encoder;
  p.recall_top_k = cfg.pipeline.recall_top_k;
  p.final_top_k = cfg.pipeline.final_top_k;
  p.rrf_k = cfg.pipeline.rrf_k;
  p.hybrid_mode = cfg.pipeline.hybrid_mode == "alpha" ? search::HybridMode::alpha : search::HybridMode::true_hybrid;
  p.hybrid.fusion = cfg.pipeline.hybrid_fusion == "rrf" ? search::HybridFusion::rrf : search::HybridFusion::weighted;
  p.hybrid.rrf_k = cfg.pipeline.rrf_k;
  p.hybrid.dense_weight = cfg.pipeline.dense_weight;
  p.hybrid.adaptive = cfg.pipeline.adaptive_fusion;
  p.hybrid.agreement_min = cfg.pipeline.agreement_min;
  p.hybrid_alpha = cfg.pipeline.hybrid_alpha;
  p.max_scope_documents = cfg.pipeline.max_scope_documents;
  p.parent_doc_retrieval = cfg.pipeline.parent_doc_retrieval;
  p.isolate_statistics = cfg.pipeline.isolate_statistics;
  p.graph_expansion = cfg.pipeline.graph_expansion;
  p.expansion_relations = cfg.pipeline.expansion_relations;
  p.collapse_duplicates = cfg.pipeline.collapse_duplicates;
  p.exclude_chunk_types = cfg.pipeline.exclude_chunk_types;
  p.duplicate_similarity = cfg.pipeline.duplicate_similarity;
  for (const auto& [ns, policy] : cfg.pipeline.rerank_policy)
    p.rerank_policy[ns] = policy == "domain" ? search::RerankPolicy::domain
                          : policy == "general" ? search::RerankPolicy::general
                                                : search::RerankPolicy::none;
  p.general_reranker = cfg.pipeline.general_reranker;
  p.plugin_fields = plugin::plugin_chunk_fields();
  for (const auto* plugin : plugin::builtin_plugins()) plugin->configure_pipeline(cfg, p);
  return p;
}

}  // namespace

search::PipelineConfig pipeline_config(const Config& cfg) { return pipeline_config_of(cfg); }

std::string stand_in_of(const Config& cfg, const std::string& label) {
  if (cfg.encoders.is_object() && cfg.encoders.contains(label)) return {};
  if (listed(std::begin(kGloveTextSlots), std::end(kGloveTextSlots), label)) return kGloveStandIn;
  if (listed(std::begin(kDescriptorVisualSlots), std::end(kDescriptorVisualSlots), label))
    return "the embedded dct-lowfreq-v1 image descriptor";
  for (const auto* p : plugin::builtin_plugins())
    if (auto by = p->stand_in_of(cfg, label); !by.empty()) return by;
  return {};
}

std::string glove_vectors_file(const Config& cfg) {
  const std::string file = glove_file_of(cfg);
  if (!fs::exists(file)) {
    if (!fs::exists(cfg.glove_json))
      fail(ErrorCode::not_found, "GloVe vectors not found at " + cfg.glove_json +
                                     " (scripts/setup.sh installs them; or set glove.json)");
    std::fprintf(stderr, "converting %s -> %s (once)...\n", cfg.glove_json.c_str(), file.c_str());
    auto n = encode::convert_wink_json(cfg.glove_json, file);
    std::fprintf(stderr, "converted %zu words\n", n);
  }
  return file;
}

encode::EncoderRegistry build_encoder_registry(const Config& cfg) {
  encode::EncoderRegistry reg;
  encode::add_from_config(reg, cfg.encoders);
  auto glove_file = [&]() { return glove_vectors_file(cfg); };
  if (!reg.has_encoder("glove")) reg.add(encode::make_identified_static("glove", glove_file()));
  for (const char* slot : kGloveTextSlots)
    if (!reg.has_encoder(slot) && !reg.has_reranker(slot)) reg.add(encode::make_identified_static(slot, glove_file()));
  if (!reg.has_encoder("molformer")) reg.add(encode::make_identified_chem("molformer"));
  if (!reg.has_encoder(kDescriptorLabel)) reg.add(encode::make_descriptor_encoder(kDescriptorLabel));
  for (const char* slot : kDescriptorVisualSlots)
    if (!reg.has_encoder(slot) && !reg.has_reranker(slot)) reg.add(encode::make_descriptor_encoder(slot));
  for (const auto* p : plugin::builtin_plugins()) p->add_encoders(cfg, reg);
  return reg;
}

ingest::ImageStore Engine::image_store() const { return ingest::ImageStore(fs::path(cfg_.data_dir) / "images"); }


bool AccessScope::allows(const std::string& kb) const {
  return kb_names.empty() || std::find(kb_names.begin(), kb_names.end(), kb) != kb_names.end();
}

Engine::Engine(Config cfg, StoreAccess access, const std::string& owner)
    : cfg_(std::move(cfg)),
      base_pipeline_(pipeline_config_of(cfg_)),
      access_(access),
      plugin_ready_(std::make_unique<std::atomic<bool>[]>(plugin::builtin_plugins().size())),
      instances_(plugin::builtin_plugins().size()) {
  store::CollectionOptions copts;
  copts.bm25 = cfg_.bm25;
  copts.analyzer = cfg_.analyzer;
  copts.read_only = access_ == StoreAccess::read_only;
  copts.checkpoint_wal_bytes = cfg_.checkpoint_wal_bytes;
  copts.merges = cfg_.merges;
  copts.map_vectors = cfg_.map_vectors;
  copts.background_linking = cfg_.background_linking;
  copts.max_unlinked_rows = cfg_.max_unlinked_rows;
  copts.writer_links = cfg_.writer_links;
  copts.builder_threads = cfg_.builder_threads;
  // The writer's lock comes first: nothing of the store is touched before we own it.
  if (access_ == StoreAccess::write) lock_.emplace(store::StoreLock::acquire(cfg_.data_dir, owner));
  catalog_ = std::make_unique<store::Catalog>(fs::path(cfg_.data_dir) / "collections", copts);
  registry_url_ =
      cfg_.registry_url.empty() ? "sqlite:" + (fs::path(cfg_.data_dir) / "registry.db").string() : cfg_.registry_url;
  // A reader of a store whose registry does not exist yet sees an empty one (and
  // creates nothing).
  if (access_ == StoreAccess::read_only && cfg_.registry_url.empty() &&
      !fs::exists(fs::path(cfg_.data_dir) / "registry.db"))
    registry_url_ = "sqlite::memory:";
  encoders_ = build_encoder_registry(cfg_);
  if (!cfg_.pipeline.telemetry_file.empty())
    sink_ = std::make_shared<search::JsonlFileSink>(cfg_.pipeline.telemetry_file);
}

Engine::~Engine() = default;

void Engine::require_writer(const char* what) const {
  if (access_ != StoreAccess::write)
    fail(ErrorCode::conflict, std::string("cannot ") + what + ": the store is open read-only");
}

registry::DocumentRegistry& Engine::registry() {
  std::call_once(registry_once_, [&] {
    registry_ = registry::open_registry(registry_url_, access_ == StoreAccess::read_only);
  });
  return *registry_;
}

search::CollectionProvider Engine::collections() {
  return [this](const std::string& name) -> store::Collection* { return catalog_->find(name); };
}

std::string Engine::default_encoder(const std::string& collection) const {
  for (const auto* p : plugin::builtin_plugins())
    if (auto label = p->slot_encoder(cfg_, collection)) return *label;
  if (collection == base_pipeline_.core_visual_collection) return cfg_.visual.encoder;
  return cfg_.pipeline.text_encoder;  // the core text collection and any other text collection
}

void Engine::ensure_plugin(const std::string& ns) {
  const auto& plugins = plugin::builtin_plugins();
  size_t index = plugins.size();
  for (size_t i = 0; i < plugins.size(); ++i)
    if (plugins[i]->name() == ns) index = i;
  if (ns != "core" && index == plugins.size())
    fail(ErrorCode::invalid_argument, "unknown plugin namespace '" + ns + "'");
  // A plugin registered after this engine was made has no slot here (register_plugin).
  if (ns != "core" && index >= instances_.size())
    fail(ErrorCode::invalid_argument, "plugin '" + ns + "' was registered after this engine was made");
  if (ns == "core" ? core_ready_.load() : plugin_ready_[index].load()) return;
  // One attach at a time (a plugin's data loads once). The slow parts (the registry,
  // a plugin's own data such as a vocabulary) load without holding searches back;
  // only subscribing the hooks excludes them.
  std::lock_guard attaching(attach_mu_);
  if (ns == "core" ? core_ready_.load() : plugin_ready_[index].load()) return;
  registry();
  std::unique_ptr<plugin::Instance> instance;
  if (ns != "core") instance = plugins[index]->attach(plugin::Host{cfg_, collections(), encoders_, &registry(), bus_});
  // Subscribing hooks changes what running searches read: exclusive.
  std::unique_lock state(state_mu_);
  ensure_plugin_locked(ns);
  if (instance) {
    std::lock_guard init(init_mu_);
    instance->subscribe();
    instances_[index] = std::move(instance);
    plugin_ready_[index] = true;
  }
}

plugin::Instance* Engine::plugin_instance(const std::string& ns) {
  if (ns == "core") return nullptr;
  ensure_plugin(ns);
  const auto& plugins = plugin::builtin_plugins();
  std::lock_guard init(init_mu_);
  for (size_t i = 0; i < plugins.size(); ++i)
    if (plugins[i]->name() == ns) return instances_[i].get();
  return nullptr;
}

void Engine::plugins_after_ingest() {
  std::vector<plugin::Instance*> attached;
  {
    std::lock_guard init(init_mu_);
    for (auto& instance : instances_)
      if (instance) attached.push_back(instance.get());
  }
  for (auto* instance : attached) instance->after_ingest();
}

void Engine::ensure_plugin_locked(const std::string& ns) {
  (void)ns;
  std::lock_guard init(init_mu_);
  if (!orchestrator_) {
    // Scope tags and the scope-aware collection union read the registry.
    doc_catalog_ = std::make_unique<search::RegistryCatalog>(registry());
    auto pipeline = base_pipeline_;
    // As for a plugin's slots: the vectors the core text collection holds decide the
    // encoder its plans use (`eagle reembed` may have given them another label).
    if (auto* c = catalog_->find(pipeline.core_text_collection); c && !c->schema().vector.encoder.empty())
      pipeline.core_text_encoder = c->schema().vector.encoder;
    if (auto* c = catalog_->find(pipeline.core_visual_collection); c && !c->schema().vector.encoder.empty())
      pipeline.core_visual_encoder = c->schema().vector.encoder;
    orchestrator_ = std::make_unique<search::Orchestrator>(collections(), encoders_, bus_, std::move(pipeline), sink_,
                                                           doc_catalog_.get());
    core_ready_ = true;
  }
}

void Engine::preload(const std::string& ns) {
  for (const auto& name : catalog_->list()) catalog_->get(name);
  registry();
  ensure_plugin(resolve_namespace(ns));
}

void apply_document_kind(registry::DocumentQuery& q, const std::string& kind) {
  if (kind.empty()) q.exclude_source_type = "compound";
  else if (kind != "all") q.source_type = kind;
}

std::map<std::string, size_t> Engine::namespace_counts(const std::vector<std::string>& kb_names) {
  std::string key;
  for (const auto& kb : kb_names) key += kb + '\n';
  const auto now = std::chrono::steady_clock::now();
  const uint64_t writes = writes_.load();
  {
    std::lock_guard lock(ns_counts_mu_);
    auto it = ns_counts_.find(key);
    // Another process may write the registry (a PostgreSQL registry shared by stores,
    // a writer beside this reader): a second's staleness is the bound.
    if (it != ns_counts_.end() && it->second.writes == writes && now - it->second.at < std::chrono::seconds(1))
      return it->second.counts;
  }
  std::map<std::string, size_t> counts;
  for (const auto& ns : plugin::namespaces()) {
    registry::DocumentQuery q;
    q.kb_names = kb_names;
    q.plugin_namespace = ns;
    if (size_t n = registry().count(q)) counts[ns] = n;
  }
  std::lock_guard lock(ns_counts_mu_);
  if (ns_counts_.size() > 256) ns_counts_.clear();  // bounded: one entry per distinct token scope
  ns_counts_[key] = {writes, now, counts};
  return counts;
}

std::string Engine::resolve_namespace(const std::string& configured, const std::vector<std::string>& kb_names) {
  const auto names = plugin::namespaces();
  if (std::find(names.begin(), names.end(), configured) != names.end()) return configured;
  if (configured != "auto")
    fail(ErrorCode::invalid_argument,
         "unknown plugin namespace '" + configured + "' (" + join_words(names) + " or auto)");
  // The first plugin (in build order) whose namespace holds documents of the scope.
  const auto counts = namespace_counts(kb_names);
  for (const auto* p : plugin::builtin_plugins())
    if (counts.count(p->name())) return p->name();
  return "core";
}

answer::Evidence Engine::evidence_of(const search::RetrievalRequest& req, const search::HitList& hits, size_t top_n,
                                     bool collect_all_signals) {
  const text::Analyzer analyzer(cfg_.analyzer);
  auto options = cfg_.evidence;
  options.top_n = top_n;
  std::vector<std::string> texts;
  // A passage is read with its place: the section path and the document's name (a
  // label's "WARNINGS AND PRECAUTIONS" heading answers "warnings on the label").
  for (size_t i = 0; i < hits.size() && i < options.max_hits; ++i) {
    const auto& h = hits[i];
    // An image tile is read by its indexed text (its page's words, its caption).
    texts.push_back(h.field("document_name") + "\n" + h.field("path") + "\n" + h.text);
  }
  const auto question = question_terms(req, hits, req.plugin_namespace != "core");
  // Each hit's BM25 over the question's own maximum, in its collection (the caller's
  // statistics): a filtered search of the one row.
  std::vector<double> bm25;
  const std::string statistics =
      cfg_.pipeline.isolate_statistics && !req.allowed_kbs.empty() ? "kb_name in {allowed_kbs}" : "";
  // Only when the model weighs it: a filtered search per hit costs as much as the
  // rest of the evidence (about 7 ms per query at 10 hits, bench: docs/benchmarks.md).
  if (options.w_bm25 != 0 || collect_all_signals) {
    std::shared_lock state(state_mu_);
    for (size_t i = 0; i < texts.size(); ++i) {
      double ratio = 0;
      const store::Collection* coll = hits[i].is_image ? nullptr : catalog_->find(hits[i].collection);
      if (coll && !req.query.empty()) {
        store::TemplateParams params = {{"hit", hits[i].id}};
        if (!statistics.empty()) params["allowed_kbs"] = req.allowed_kbs;
        const double max = (cfg_.bm25.k1 + 1) * coll->query_weight(req.query, statistics, params);
        const auto found = coll->search_text(req.query, 1, "id == {hit}", params, statistics);
        if (max > 0 && !found.empty()) ratio = std::min(1.0, found[0].score / max);
      }
      bm25.push_back(ratio);
    }
  }
  return answer::assess_evidence(question, texts, [&](std::string_view t) { return analyzer.terms(t); }, options, bm25);
}

void Engine::attach_evidence(const search::RetrievalRequest& req, search::RetrievalResponse& resp, size_t top_n) {
  const auto ev = evidence_of(req, resp.hits, top_n);
  nlohmann::json per_hit = nlohmann::json::array();
  for (double p : ev.per_hit) per_hit.push_back(std::round(p * 1e4) / 1e4);
  resp.metadata["evidence"] = {{"level", ev.level}, {"score", std::round(ev.score * 1e4) / 1e4}, {"hits", per_hit}};
}

search::RetrievalResponse Engine::search(const search::RetrievalRequest& request) {
  search::RetrievalRequest req = request;
  auto resp = retrieve(req);
  attach_evidence(req, resp, cfg_.evidence.top_n);
  return resp;
}

search::RetrievalResponse Engine::retrieve(search::RetrievalRequest& req) {
  const std::string requested = req.plugin_namespace;
  const std::string ns = resolve_namespace(requested, req.allowed_kbs);
  req.plugin_namespace = ns;
  ensure_plugin(ns);
  // The namespace step: which namespace ran, how it was chosen, and which namespaces
  // the caller's documents are in, so a core search over biomed data says so.
  nlohmann::json ns_step = {{"name", "namespace"}, {"used", ns}, {"requested", requested}};
  nlohmann::json store_has = nlohmann::json::array();
  const auto counts = namespace_counts(req.allowed_kbs);
  for (const auto& [name, n] : counts) store_has.push_back(name);
  ns_step["store_has"] = store_has;
  if (ns == "core")
    for (const auto& [other, n] : counts)
      if (other != "core") {
        ns_step["note"] = "documents of this scope were ingested in the " + other +
                          " namespace; the core pipeline does not search them: use plugin_namespace " + other +
                          " (or auto)";
        break;
      }
  search::RetrievalResponse resp;
  {
    std::shared_lock state(state_mu_);
    resp = orchestrator_->retrieve(req);
  }
  resp.metadata["namespace_step"] = std::move(ns_step);
  // Each plan's encoder as it really is: a slot left to a stand-in says what runs in it.
  for (const auto& plan : resp.route.plans)
    if (const auto by = stand_in_of(cfg_, plan.encoder); !by.empty()) resp.metadata["stand_ins"][plan.encoder] = by;
  // A core search of a store whose text was all ingested in a plugin's namespace (its
  // routing sends the inputs to its own collection) finds nothing: say where the text
  // is instead of a bare "no document matches".
  const std::string& core_text = orchestrator_->config().core_text_collection;
  if (req.plugin_namespace == "core" && resp.hits.empty() && !catalog_->exists(core_text))
    for (const auto* p : plugin::builtin_plugins()) {
      const std::string text = p->text_collection(cfg_);
      if (text.empty() || !catalog_->exists(text)) continue;
      const std::string hint = "collection '" + core_text + "' does not exist; this store's text is in '" + text +
                               "' (ingested with --namespace " + p->name() + "): search it with --namespace " +
                               p->name();
      spdlog::warn("{}", hint);
      resp.metadata["audits"].push_back({{"audit", "namespace_hint"}, {"message", hint}});
      break;
    }
  return resp;
}

std::vector<store::Collection*> Engine::document_collections() {
  std::vector<store::Collection*> out;
  for (const auto& name : catalog_->list())
    if (auto* c = catalog_->find(name); c && c->schema().field_index("document_id")) out.push_back(c);
  return out;
}

namespace {
registry::DocumentRecord record_in_scope(registry::DocumentRegistry& reg, const std::string& id,
                                         const AccessScope& scope) {
  auto rec = reg.get(id);
  // Out of scope reads as absent: a scoped caller learns nothing about other KBs.
  if (!rec || !scope.allows(rec->kb_name)) fail(ErrorCode::not_found, "no document '" + id + "'");
  return *rec;
}
}  // namespace

std::optional<DocumentView> Engine::document(const std::string& document_id, const AccessScope& scope) {
  auto rec = registry().get(document_id);
  if (!rec || !scope.allows(rec->kb_name)) return std::nullopt;
  DocumentView v;
  v.record = *rec;
  v.tags = registry().keywords(document_id, rec->plugin_namespace);
  // One filtered read per collection, in row order; a scoped caller sees only the
  // chunks of its knowledge bases.
  std::string filter = "document_id == {doc}";
  store::TemplateParams params = {{"doc", document_id}};
  if (!scope.kb_names.empty()) {
    filter += " and kb_name in {kbs}";
    params["kbs"] = scope.kb_names;
  }
  std::shared_lock state(state_mu_);
  for (auto* c : document_collections()) {
    if (!c->schema().field_index("kb_name") && !scope.kb_names.empty()) continue;
    for (auto& r : c->fetch(filter, params, store::kMaxSearchK)) {
      auto hit = search::hit_from_record(r, c->schema(), c->schema().name, 0);
      if (hit.field("type") == "caption") continue;  // its table or figure holds the caption already
      v.chunks.push_back({r.id, c->schema().name, std::move(r.text), std::move(hit.metadata)});
    }
  }
  return v;
}

std::optional<TileImage> Engine::tile_image(const std::string& image_id, const AccessScope& scope) {
  std::string name;
  {
    std::shared_lock state(state_mu_);
    // Every collection of image tiles: eagle_visual and the medical slots CLASSIFY_VISUAL
    // sends figures to.
    for (const auto& collection : catalog_->list()) {
      auto* c = catalog_->find(collection);
      if (!c) continue;
      const auto& schema = c->schema();
      const auto image = schema.field_index("image");
      if (!image) continue;
      auto row = c->get(image_id);
      if (!row) continue;
      const auto kb = schema.field_index("kb_name");
      const auto* kb_value = kb ? std::get_if<std::string>(&row->values[*kb]) : nullptr;
      if (!scope.allows(kb_value ? *kb_value : std::string())) return std::nullopt;
      const auto* n = std::get_if<std::string>(&row->values[*image]);
      if (!n) return std::nullopt;
      name = *n;
      break;
    }
  }
  if (name.empty()) return std::nullopt;
  const auto store = image_store();
  return TileImage{image_id, ingest::ImageStore::media_type(name), store.get(name)};
}

size_t Engine::delete_document(const std::string& document_id, const AccessScope& scope) {
  require_writer("delete a document");
  std::lock_guard writer(write_mu_);
  auto rec = registry().get(document_id);
  std::vector<std::pair<store::Collection*, std::vector<std::string>>> chunks;
  for (auto* c : document_collections()) {
    auto ids = c->ids_where_equals("document_id", document_id);
    if (!ids.empty()) chunks.emplace_back(c, std::move(ids));
  }
  if (!rec && chunks.empty()) fail(ErrorCode::not_found, "no document '" + document_id + "'");
  if (rec && !scope.allows(rec->kb_name)) fail(ErrorCode::not_found, "no document '" + document_id + "'");
  if (!scope.kb_names.empty()) {
    // Chunks of a scoped delete must all lie in the caller's KBs.
    for (auto& [c, ids] : chunks)
      if (c->filter("document_id == {doc} and kb_name in {kbs}", {{"doc", document_id}, {"kbs", scope.kb_names}})
              .count() != ids.size())
        fail(ErrorCode::not_found, "no document '" + document_id + "'");
  }
  // Every collection at once, as one transaction: no search sees the document half
  // deleted, and searches are held back only for the swap, never for the log's fsyncs.
  const store::TxnId txn = store::new_txn_id();
  std::vector<store::Collection*> touched;
  size_t removed = 0;
  // Caption rows go with their table or figure but are not chunks of the document's
  // view (document()): the count says what the view listed.
  size_t captions = 0;
  for (auto& [c, ids] : chunks)
    if (c->schema().field_index("type"))
      captions += c->filter("document_id == {doc} and type == {caption}", {{"doc", document_id}, {"caption", "caption"}})
                      .count();
  try {
    for (auto& [c, ids] : chunks) {
      c->stage(txn, ids, {});
      touched.push_back(c);
    }
    removed = catalog_->commit(txn, touched, [&](const std::function<bool()>& publish) {
      std::unique_lock state(state_mu_);
      publish();
    });
  } catch (...) {
    for (auto* c : touched) c->abort(txn);
    throw;
  }
  for (auto* c : touched) c->checkpoint_if_due();
  if (rec) registry().remove(document_id);
  ++deletes_;
  ++writes_;
  return removed - std::min(captions, removed);
}

std::vector<std::string> Engine::set_tags(const std::string& document_id, const std::string& plugin_namespace,
                                          const std::vector<std::string>& tags, const AccessScope& scope) {
  require_writer("tag a document");
  std::lock_guard writer(write_mu_);
  record_in_scope(registry(), document_id, scope);
  registry().set_keywords(document_id, plugin_namespace, tags);
  return registry().keywords(document_id, plugin_namespace);
}

std::vector<registry::DocumentRecord> Engine::list_documents(const registry::DocumentQuery& q, size_t* total) {
  if (total) *total = registry().count(q);
  return registry().list(q);
}

std::vector<registry::NameCount> Engine::knowledge_bases(const AccessScope& scope) {
  return registry().knowledge_bases(scope.kb_names);
}

std::vector<registry::NameCount> Engine::tags(std::optional<std::string> plugin_namespace, const AccessScope& scope) {
  std::optional<std::string_view> ns;
  if (plugin_namespace) ns = *plugin_namespace;
  return registry().tags(ns, scope.kb_names);
}

CollectionInfo Engine::collection_info(const std::string& name, const AccessScope& scope) {
  std::shared_lock state(state_mu_);  // a reembed swaps the object under the exclusive lock
  auto* c = catalog_->find(name);
  if (!c) fail(ErrorCode::not_found, "no collection named '" + name + "'");
  const auto& v = c->schema().vector;
  CollectionInfo i;
  i.name = name;
  i.dimension = v.dim;
  i.metric = std::string(metric_name(v.metric));
  i.encoder = v.encoder;
  i.encoder_identity = v.encoder_identity;
  i.stand_in = stand_in_of(cfg_, v.encoder);
  i.index = v.index == VectorIndexKind::hnsw ? "hnsw" : "flat";
  if (!scope.kb_names.empty()) {
    // The filter is parsed with the names as parameters, never spliced.
    i.rows = c->schema().field_index("kb_name") ? c->filter("kb_name in {kbs}", {{"kbs", scope.kb_names}}).count() : 0;
    if (i.rows == 0) fail(ErrorCode::not_found, "no collection named '" + name + "'");
    return i;
  }
  auto d = c->describe();
  i.rows = d.value("live", size_t{0});
  i.deleted = d.value("deleted", size_t{0});
  i.log_bytes = d.value("log_bytes", uint64_t{0});
  i.last_lsn = d.value("last_lsn", uint64_t{0});
  return i;
}

std::vector<CollectionInfo> Engine::collection_infos(const AccessScope& scope) {
  std::vector<CollectionInfo> out;
  for (const auto& name : catalog_->list()) {
    try {
      out.push_back(collection_info(name, scope));
    } catch (const Error& e) {
      if (e.code() != ErrorCode::not_found) throw;  // none of the scope's rows: not listed
    }
  }
  return out;
}

std::vector<std::pair<std::string, store::LogRepair>> Engine::repair() {
  require_writer("repair the store");
  std::vector<std::pair<std::string, store::LogRepair>> out;
  for (const auto& name : catalog_->list())
    for (auto& r : store::repair_logs(fs::path(cfg_.data_dir) / "collections" / name)) out.emplace_back(name, r);
  return out;
}

void Engine::checkpoint() {
  require_writer("checkpoint");
  std::lock_guard writer(write_mu_);
  for (const auto& name : catalog_->list()) catalog_->get(name).checkpoint();
}

size_t Engine::compact() {
  require_writer("compact");
  // Compaction renumbers rows: not while an ingest stages rows or a reembed reads them.
  std::lock_guard ingesting(ingest_mu_);
  std::lock_guard writer(write_mu_);
  std::set<std::string> images;  // the kept images rows still name
  for (const auto& name : catalog_->list()) {
    auto& c = catalog_->get(name);
    // Compaction renumbers rows: searches wait for the swap only (inside compact()).
    c.compact();
    if (const auto image = c.schema().field_index("image")) {
      size_t from = 0;
      for (auto page = c.scan(0, 4096, &from); !page.empty(); page = c.scan(from, 4096, &from))
        for (const auto& r : page)
          if (const auto* n = std::get_if<std::string>(&r.values[*image])) images.insert(*n);
    }
  }
  // No ingest can be writing images now (ingest_mu_): the unreferenced ones are the
  // deleted documents' and a failed ingest's.
  return image_store().remove_unreferenced(images);
}

}  // namespace eagle::app
