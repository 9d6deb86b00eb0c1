// The `eagle` command: ingest, search, eval, bench, config.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "eagle/app/cli.h"
#include "eagle/app/config.h"
#include "eagle/app/engine.h"
#include "eagle/app/eval_evidence.h"
#include "eagle/app/json_views.h"
#include "eagle/eval/failure_class.h"
#include "eagle/biomed/plugin.h"
#include "eagle/registry/registry.h"
#include "eagle/app/progress.h"
#include "eagle/core/error.h"
#include "eagle/encode/chem/chem.h"
#include "eagle/encode/registry_config.h"
#include "eagle/encode/static/word_vectors.h"
#include "eagle/eval/beir.h"
#include "eagle/eval/lexical_run.h"
#include "eagle/eval/metrics.h"
#include "eagle/ingest/corpus_reader.h"
#include "eagle/search/orchestrator.h"
#include "eagle/store/text_store.h"

namespace fs = std::filesystem;
using eagle::Error;
using eagle::ErrorCode;
using nlohmann::json;

namespace {

using eagle::app::GlobalFlags;
using eagle::app::resolve_config;

std::string snippet(const std::string& text, size_t max_chars) {
  std::string s;
  for (char c : text) s += (c == '\n' || c == '\t' || c == '\r') ? ' ' : c;
  if (s.size() <= max_chars) return s;
  size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // UTF-8 boundary
  return s.substr(0, cut) + "...";
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string key_list() {
  std::string s = "Configuration keys (YAML file, EAGLE_* environment, or --set KEY=VALUE):\n";
  for (const auto& o : eagle::app::config_options())
    s += "  " + o.key + " (" + o.env_name() + "): " + o.doc + "\n";
  return s;
}

struct IngestFlags {
  std::string format = "auto";
  bool skip_bad = false;
  bool repair_utf8 = false;
  bool reindex = false;
  std::string collection, encoder, kb_name, plugin_namespace = "core";
};

int cmd_ingest(const GlobalFlags& g, const std::vector<std::string>& inputs, const IngestFlags& f) {
  auto cfg = resolve_config(g);
  auto t0 = std::chrono::steady_clock::now();
  eagle::app::Engine engine(cfg, eagle::app::StoreAccess::write, "eagle ingest");
  eagle::app::IngestOptions o;
  o.format = f.format;
  o.skip_bad = f.skip_bad || cfg.skip_bad;
  o.repair_utf8 = f.repair_utf8 || cfg.repair_utf8;
  o.collection = f.collection;
  o.encoder = f.encoder;
  o.kb_name = f.kb_name;
  o.plugin_namespace = f.plugin_namespace;
  o.reindex = f.reindex;
  eagle::app::Progress progress("ingesting");
  auto rep = engine.ingest(inputs, o, [&](size_t done, size_t total) { progress.update(done, total, "records"); });
  progress.finish();
  for (const auto& s : rep.skipped) std::fprintf(stderr, "skipped %s\n", s.c_str());
  for (const auto& s : rep.unchanged) std::fprintf(stderr, "unchanged %s\n", s.c_str());
  const std::string unchanged =
      rep.unchanged.empty() ? "" : ", " + std::to_string(rep.unchanged.size()) + " files unchanged (--reindex reads them)";
  if (rep.rows == 0) {  // every input skipped, unchanged or empty: no collection was written
    std::printf("nothing ingested (%zu skipped%s) in %.2f s\n", rep.skipped.size(), unchanged.c_str(),
                seconds_since(t0));
    return 0;
  }
  std::printf("ingested %zu documents as %zu rows (%zu skipped%s) into collection %s (encoder %s) in %.2f s",
              rep.documents, rep.rows, rep.skipped.size(), unchanged.c_str(), rep.collection.c_str(),
              rep.encoder.c_str(), seconds_since(t0));
  // A slot left to a stand-in says so: its vectors are not the model the slot is named after.
  for (const auto& [collection, label] : rep.encoders_used)
    if (const auto by = eagle::app::stand_in_of(cfg, label); !by.empty())
      std::fprintf(stderr, "note: %s ran on %s (a stand-in: set encoders.%s to the real model)\n", label.c_str(),
                   by.c_str(), label.c_str());
  std::string holds;
  for (const auto& [name, n] : rep.per_collection)
    holds += (holds.empty() ? "" : ", ") + name + " +" + std::to_string(n) + " = " +
             std::to_string(engine.catalog().get(name).count()) + " rows";
  std::printf("%s%s\n", holds.empty() ? "" : "; ", holds.c_str());
  return 0;
}

struct SearchFlags {
  std::optional<size_t> k;  // unset: search.top_k
  bool as_json = false;
  bool explain = false;
  std::string plugin_namespace;
  std::string kb_name;
  std::vector<std::string> scope_kbs, scope_docs, tags, legacy_scope, facets;
  std::string route_mode = "text";
  std::string filter;
  std::optional<double> min_score;
  std::string image_file;  // --image: a PNG or JPEG to search the visual collection with
};

// KEY=VALUE facets: integers for year, a comma list becomes an `in` list.
std::map<std::string, json> parse_facets(const std::vector<std::string>& kvs) {
  std::map<std::string, json> out;
  std::map<std::string, std::vector<json>> merged;
  for (const auto& kv : kvs) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      eagle::fail(ErrorCode::invalid_argument, "--facet expects FIELD=VALUE[,VALUE...], got '" + kv + "'");
    const std::string field = kv.substr(0, eq);
    std::vector<json> values;
    std::stringstream ss(kv.substr(eq + 1));
    for (std::string v; std::getline(ss, v, ',');) {
      if (field == "year") {
        try {
          size_t pos;
          long long y = std::stoll(v, &pos);
          if (pos != v.size()) throw std::invalid_argument(v);
          values.push_back(y);
        } catch (const std::exception&) {
          eagle::fail(ErrorCode::invalid_argument, "--facet year expects integers, got '" + v + "'");
        }
      } else {
        values.push_back(v);
      }
    }
    // A field given twice matches either (--facet year=2017 --facet year=2018).
    auto& all = merged[field];
    for (auto& v : values)
      if (std::find(all.begin(), all.end(), v) == all.end()) all.push_back(std::move(v));
  }
  for (auto& [field, values] : merged) out[field] = values.size() == 1 ? values[0] : json(values);
  return out;
}

int cmd_search(const GlobalFlags& g, const std::vector<std::string>& words, const SearchFlags& f) {
  auto cfg = resolve_config(g);
  // A count from the command line or from search.top_k (which its parser bounds).
  if (f.k && (*f.k == 0 || *f.k > eagle::search::kMaxFinalTopK))
    eagle::fail(ErrorCode::invalid_argument,
                "-k must be in [1, " + std::to_string(eagle::search::kMaxFinalTopK) + "], got " + std::to_string(*f.k));
  const size_t k = f.k.value_or(cfg.top_k);
  eagle::search::RetrievalRequest req;
  for (const auto& w : words) req.query += (req.query.empty() ? "" : " ") + w;
  req.top_k = k;
  req.plugin_namespace = f.plugin_namespace.empty() ? cfg.pipeline.plugin_namespace : f.plugin_namespace;
  req.kb_name = f.kb_name;
  req.scope_filter.kb_names = f.scope_kbs;
  req.scope_filter.document_ids = f.scope_docs;
  req.scope_filter.tags = f.tags;
  req.legacy_scope = f.legacy_scope;
  req.facets = parse_facets(f.facets);
  req.route_mode = eagle::search::parse_route_mode(f.route_mode);
  req.explain = f.explain;
  req.filter = f.filter;
  req.min_score = f.min_score;
  if (!f.image_file.empty()) {
    std::error_code ec;
    const auto size = fs::file_size(f.image_file, ec);
    if (ec) eagle::fail(ErrorCode::not_found, "--image: cannot read " + f.image_file + ": " + ec.message());
    if (size > eagle::search::kMaxQueryImageBytes)
      eagle::fail(ErrorCode::too_large, "--image: " + f.image_file + " is " + std::to_string(size) +
                                            " bytes, more than " + std::to_string(eagle::search::kMaxQueryImageBytes));
    std::ifstream in(f.image_file, std::ios::binary);
    req.image.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) eagle::fail(ErrorCode::unavailable, "--image: cannot read " + f.image_file);
    req.has_image = true;
  } else if (req.query.empty()) {
    eagle::fail(ErrorCode::invalid_argument, "give a query, an --image, or both");
  }
  // A reader: never modifies the store, so it runs beside a server or an ingest.
  eagle::app::Engine engine(cfg, eagle::app::StoreAccess::read_only);
  if (engine.catalog().list().empty())
    eagle::fail(ErrorCode::not_found, "the store at " + cfg.data_dir +
                                          " has no collections yet: add documents with `eagle ingest` first");
  auto resp = engine.search(req);
  if (f.as_json) {
    json out = {{"query", req.query}, {"took_ms", resp.metadata["took_ms"]}, {"hits", json::array()},
                {"route", resp.route.to_json()}, {"metadata", resp.metadata}};
    out["hits"] = eagle::app::sources_json(resp, f.explain);
    std::cout << out.dump() << "\n";
    return 0;
  }
  std::string plans;
  for (const auto& p : resp.route.plans) plans += (plans.empty() ? "" : ", ") + p.collection + "/" + p.encoder;
  const std::string asked = req.query + (f.image_file.empty() ? "" : (req.query.empty() ? "" : " + ") +
                                                                       std::string("image ") + f.image_file);
  std::printf("query: %s  (%zu hits, %.2f ms, route %s: %s)\n", asked.c_str(), resp.hits.size(),
              resp.metadata.value("took_ms", 0.0), resp.route.source.c_str(), plans.c_str());
  if (const auto& ns = resp.metadata["namespace_step"]; ns.is_object()) {
    if (ns.value("requested", "") == "auto")
      std::printf("namespace: %s (auto: the store %s biomed documents)\n", ns.value("used", "").c_str(),
                  ns.value("used", "") == "biomed" ? "holds" : "holds no");
    if (ns.contains("note")) std::printf("note: %s\n", ns.value("note", "").c_str());
  }
  int rank = 0;
  const auto images = engine.image_store();
  for (const auto& h : resp.hits) {
    std::printf("%3d. %8.4f  %s  [%s]", ++rank, h.score, h.id.c_str(), h.collection.c_str());
    const std::string section = h.field("biomed_section");
    if (!section.empty()) std::printf("  {%s}", section.c_str());
    if (h.is_image) {
      // An image tile: where it lies and where its image is kept (to open it).
      const std::string image = h.field("image");
      std::printf("  %s tile", h.field("chunk_type").c_str());
      if (h.metadata.contains("page")) std::printf(", p. %lld", h.metadata["page"].get<long long>());
      std::printf(", box %s", h.field("position").c_str());
      if (eagle::ingest::ImageStore::valid_name(image)) std::printf("\n      image: %s", images.path_of(image).c_str());
    }
    std::printf("\n      %s\n", snippet(h.text, 160).c_str());
    if (h.duplicates.is_array())
      for (const auto& d : h.duplicates)
        std::printf("      duplicate: %s [%s]\n", d.value("id", "").c_str(), d.value("collection", "").c_str());
    if (f.explain) std::printf("      explain: %s\n", h.explain.legs.dump().c_str());
  }
  if (resp.hits.empty()) std::printf("  (no document matches)\n");
  if (f.explain) {
    std::printf("route: %s\n", resp.route.to_json().dump().c_str());
    std::printf("audits: %s\n", resp.metadata["audits"].dump().c_str());
  }
  return 0;
}

int cmd_entities(const GlobalFlags& g, const std::vector<std::string>& words, bool as_json, bool drugs_only) {
  auto cfg = resolve_config(g);
  std::string text;
  for (const auto& w : words) text += (text.empty() ? "" : " ") + w;
  auto t0 = std::chrono::steady_clock::now();
  std::string report;
  // With a store, its drug labels' brand names count too ("Humira" is adalimumab).
  std::unique_ptr<eagle::app::Engine> engine;
  std::unique_ptr<eagle::biomed::EntityKnowledge> vocabulary;
  const eagle::biomed::EntityKnowledge* kb = nullptr;
  if (fs::is_directory(cfg.data_dir)) {
    engine = std::make_unique<eagle::app::Engine>(cfg, eagle::app::StoreAccess::read_only);
    kb = &engine->knowledge();
    report = "vocabulary and the brand names of the labels in " + cfg.data_dir;
  } else {
    vocabulary = eagle::app::load_knowledge(cfg, &report);
    kb = vocabulary.get();
  }
  const double load_s = seconds_since(t0);
  auto matches = drugs_only ? kb->match_drug_entities(text) : kb->match_entities(text);
  json out = eagle::app::entities_json(*kb, matches);
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

std::vector<eagle::Document> load_beir_corpus(const fs::path& dir) {
  eagle::app::Progress progress("reading corpus");
  eagle::ingest::ReadOptions ro;
  ro.format = eagle::ingest::InputFormat::beir;
  ro.progress = [&](uint64_t, uint64_t bytes, uint64_t total) { progress.update(bytes, total, "bytes"); };
  auto r = eagle::ingest::read_corpus(dir, ro);
  progress.finish();
  return std::move(r.documents);
}


// A BEIR corpus as the core text collection: title + text indexed by BM25, the
// encoder's document vectors in a flat (exact) index, document_id = the corpus id.
std::unique_ptr<eagle::store::Collection> beir_collection(const std::vector<eagle::Document>& docs,
                                                          eagle::encode::Encoder& encoder,
                                                          const eagle::app::Config& cfg,
                                                          const std::string& name = "eagle_text",
                                                          const eagle::search::HookBus* bus = nullptr,
                                                          const std::string& ns = "core") {
  // The schema `eagle ingest` gives the collection (HNSW, not an exact scan), so this
  // shortcut returns what a store built by `eagle ingest` returns (a test compares).
  auto schema = eagle::chunk_schema(name, encoder.info().dim, encoder.info().metric);
  eagle::store::CollectionOptions opts;
  opts.bm25 = cfg.bm25;
  opts.analyzer = cfg.analyzer;
  auto coll = eagle::store::Collection::in_memory(schema, opts);
  const size_t doc_field = *schema.field_index("document_id");
  eagle::app::Progress progress("ingesting");
  const size_t batch = 256;
  for (size_t start = 0; start < docs.size(); start += batch) {
    std::vector<std::string> texts;
    const size_t end = std::min(docs.size(), start + batch);
    for (size_t i = start; i < end; ++i) texts.push_back(docs[i].indexed_text());
    auto vecs = encoder.encode(texts, eagle::encode::EncodeMode::document);
    std::vector<eagle::store::Record> recs;
    if (bus && bus->has_subscribers(eagle::search::HookPoint::CHUNK, ns)) {
      // Ingest-time plugin stamps (biomed: primary_drugs, biomed_section) via CHUNK.
      json rows = json::array();
      for (size_t i = start; i < end; ++i) {
        json row = {{"id", docs[i].id}, {"text", texts[i - start]}, {"document_id", docs[i].id}};
        auto meta = json::parse(docs[i].metadata_json, nullptr, false);
        if (meta.is_object() && meta.contains("section")) row["section"] = meta["section"];
        rows.push_back(std::move(row));
      }
      eagle::search::HookContext ctx;
      ctx.plugin_namespace = ns;
      rows = bus->transform<eagle::search::HookPoint::CHUNK>(ctx, std::move(rows));
      for (size_t i = start; i < end; ++i) {
        auto& row = rows[i - start];
        row.erase("section");
        row["vector"] = std::move(vecs[i - start]);
        recs.push_back(eagle::store::record_from_json(row, schema));
      }
    } else {
      for (size_t i = start; i < end; ++i) {
        eagle::store::Record r;
        r.id = docs[i].id;
        r.text = texts[i - start];
        r.vector = std::move(vecs[i - start]);
        r.values.assign(schema.fields.size(), std::monostate{});
        r.values[doc_field] = docs[i].id;
        recs.push_back(std::move(r));
      }
    }
    coll->insert(std::move(recs));
    progress.update(end, docs.size(), "docs");
  }
  progress.finish();
  return coll;
}

void write_eval_outputs(const eagle::eval::Run& run, const eagle::eval::Qrels& qrels, const std::string& run_file,
                        const std::string& per_query, const std::string& tag,
                        const std::map<std::string, std::string>* failure_classes = nullptr) {
  if (!run_file.empty()) {
    std::ofstream out(run_file);
    if (!out) eagle::fail(ErrorCode::unavailable, "cannot write run file " + run_file);
    eagle::eval::write_trec_run(out, run, tag);
  }
  auto report = eagle::eval::evaluate(qrels, run);
  if (!per_query.empty()) {
    std::ofstream out(per_query);
    if (!out) eagle::fail(ErrorCode::unavailable, "cannot write " + per_query);
    eagle::eval::write_per_query_csv(out, report, failure_classes, "failure_class");
  }
  std::ostringstream s;
  eagle::eval::write_summary(s, report);
  std::fputs(s.str().c_str(), stdout);
  if (failure_classes) {
    std::map<std::string, size_t> counts;
    for (const auto& [q, c] : *failure_classes) ++counts[c];
    std::string line;
    for (const auto& [c, n] : counts) line += (line.empty() ? "" : ", ") + c + " " + std::to_string(n);
    std::printf("failure classes: %s\n", line.c_str());
  }
}

// Every query through `search` (the orchestrator or the Engine), `depth` hits each,
// as a TREC run.
template <typename Search>
eagle::eval::Run run_queries(const std::vector<eagle::eval::Query>& queries, size_t depth, const std::string& ns,
                             Search&& search) {
  eagle::eval::Run run;
  eagle::app::Progress progress("queries");
  size_t done = 0;
  for (const auto& q : queries) {
    eagle::search::RetrievalRequest req;
    req.query = q.text;
    req.top_k = depth;
    req.plugin_namespace = ns;
    auto& entries = run[q.id];
    // A hit's near duplicates are shown with it (its `duplicates` list), so they count
    // as retrieved at its rank; qrels often judge each copy (BioASQ snippets).
    for (const auto& h : search(req).hits) {
      const double score = eagle::eval::round_score_for_run(h.score);
      entries.push_back({h.id, score});
      if (h.duplicates.is_array())
        for (const auto& d : h.duplicates) entries.push_back({d.value("id", ""), score});
    }
    if (entries.size() > depth) entries.resize(depth);
    progress.update(++done, queries.size(), "queries");
  }
  progress.finish();
  return run;
}

// dense / alpha-hybrid / hybrid / pipeline: the orchestrated query path over the
// corpus as the core text collection.
int cmd_eval_pipeline(const eagle::app::Config& cfg, const std::string& beir, const std::string& split,
                      const std::string& retriever, const std::string& run_file, const std::string& per_query,
                      const std::string& tag, size_t depth, const std::string& ns) {
  auto set = eagle::eval::load_beir(beir, split);
  auto docs = load_beir_corpus(beir);
  auto registry = eagle::app::build_encoder_registry(cfg);
  auto t0 = std::chrono::steady_clock::now();
  // In the biomed namespace the corpus is the biomedical text collection (the
  // route's text_biomed slot, embedded with the core text encoder), recorded in an
  // in-memory registry so the entity-anchored supplement can find documents by name.
  const bool biomed_ns = ns == "biomed";
  auto bopts = cfg.biomed.options;
  const std::string coll_name = biomed_ns ? bopts.text_biomed.collection : "eagle_text";
  std::unique_ptr<eagle::store::Collection> coll;
  auto provider = [&](const std::string& n) { return n == coll_name ? coll.get() : nullptr; };
  eagle::search::HookBus bus;
  std::unique_ptr<eagle::biomed::EntityKnowledge> knowledge;
  std::unique_ptr<eagle::registry::DocumentRegistry> docs_registry;
  std::unique_ptr<eagle::biomed::BiomedPlugin> plugin;
  if (biomed_ns) {
    knowledge = eagle::app::load_knowledge(cfg);
    docs_registry = eagle::registry::open_registry("sqlite::memory:");
    for (const auto& d : docs) {
      eagle::registry::DocumentRecord r;
      r.document_id = d.id;
      r.name = d.title.empty() ? d.id : d.title;
      r.document_name = d.title;
      r.plugin_namespace = "biomed";
      r.collections_used = {coll_name};
      docs_registry->upsert(r);
    }
    bopts.text_biomed.encoder = cfg.pipeline.text_encoder;
    bopts.core_text.encoder = cfg.pipeline.text_encoder;
    // Plans recall at least 100 (Recall@100 needs it) but not the run depth: Tier-1
    // re-encodes every recalled text, which at 1000 per plan would dominate the run.
    bopts.collection_recall_top_k = std::max(bopts.collection_recall_top_k, std::min<size_t>(depth, 100));
    plugin = std::make_unique<eagle::biomed::BiomedPlugin>(*knowledge, provider, registry, docs_registry.get(), bopts);
    plugin->register_hooks(bus);
  }
  coll = beir_collection(docs, registry.encoder(cfg.pipeline.text_encoder), cfg, coll_name, &bus, ns);
  const double build_s = seconds_since(t0);
  auto pc = eagle::app::pipeline_config(cfg);
  pc.recall_top_k = depth;
  if (retriever == "dense") pc.hybrid_text_collections.clear();
  if (retriever == "alpha-hybrid") pc.hybrid_mode = eagle::search::HybridMode::alpha;
  std::shared_ptr<eagle::search::TelemetrySink> sink;
  if (!cfg.pipeline.telemetry_file.empty()) sink = std::make_shared<eagle::search::JsonlFileSink>(cfg.pipeline.telemetry_file);
  eagle::search::Orchestrator orch(provider, registry, bus, pc, sink);
  t0 = std::chrono::steady_clock::now();
  auto run = run_queries(set.queries, depth, ns,
                         [&](const eagle::search::RetrievalRequest& req) { return orch.retrieve(req); });
  std::printf("dataset %s  split %s  retriever %s  encoder %s  docs %zu  queries %zu  index %.2f s  search %.2f s\n",
              beir.c_str(), split.c_str(), retriever.c_str(), cfg.pipeline.text_encoder.c_str(), docs.size(),
              set.queries.size(), build_s, seconds_since(t0));
  write_eval_outputs(run, set.qrels, run_file, per_query, tag);
  return 0;
}

// `eagle eval --queries FILE --qrels FILE`: the store at --data-dir, built by `eagle
// ingest`, through the same Engine and pipeline as `eagle search` (what users get).
// Recall reaches the run depth, as in the BEIR path, so the figures compare.
int cmd_eval_store(const GlobalFlags& g, const std::string& queries_file, const std::string& qrels_file,
                   const std::string& run_file, const std::string& per_query, const std::string& tag, size_t depth,
                   const std::string& ns, const std::string& evidence_rows) {
  auto cfg = resolve_config(g);
  // The test splits are kept apart: the evidence model is fitted and reported on the
  // train and dev splits only.
  if (!evidence_rows.empty() && fs::path(qrels_file).stem() == "test")
    eagle::fail(ErrorCode::invalid_argument, "--evidence-report: " + qrels_file +
                                                 " is a test split; calibrate on train or dev qrels");
  if (depth == 0) depth = cfg.run_depth;
  if (depth > eagle::search::kMaxFinalTopK)
    eagle::fail(ErrorCode::invalid_argument, "--depth must be at most " + std::to_string(eagle::search::kMaxFinalTopK));
  cfg.pipeline.recall_top_k = depth;
  cfg.biomed.options.collection_recall_top_k =
      std::max(cfg.biomed.options.collection_recall_top_k, std::min<size_t>(depth, 100));
  const auto qrels = eagle::eval::load_qrels(qrels_file);
  std::vector<eagle::eval::Query> queries;
  for (auto& q : eagle::eval::load_queries(queries_file))
    if (qrels.count(q.id)) queries.push_back(std::move(q));  // only judged queries, in file order
  if (queries.empty())
    eagle::fail(ErrorCode::invalid_argument, "no query of " + queries_file + " is judged in " + qrels_file);
  eagle::app::Engine engine(cfg, eagle::app::StoreAccess::read_only);
  if (engine.catalog().list().empty())
    eagle::fail(ErrorCode::not_found, "the store at " + cfg.data_dir +
                                          " has no collections yet: add documents with `eagle ingest` first");
  const std::string plugin_namespace = engine.resolve_namespace(ns.empty() ? cfg.pipeline.plugin_namespace : ns);
  if (!evidence_rows.empty())
    return eagle::app::evidence_report(engine, queries, qrels, plugin_namespace, evidence_rows,
                                       fs::path(queries_file).parent_path().filename().string() + "/" +
                                           fs::path(qrels_file).stem().string() + "/" + plugin_namespace);
  auto t0 = std::chrono::steady_clock::now();
  std::map<std::string, std::set<std::string>> routed;  // query text -> collections searched
  auto run = run_queries(queries, depth, plugin_namespace, [&](const eagle::search::RetrievalRequest& req) {
    auto resp = engine.search(req);
    auto& r = routed[req.query];
    for (const auto& p : resp.route.plans) r.insert(p.collection);
    return resp;
  });
  std::printf("store %s  namespace %s  queries %zu  depth %zu  search %.2f s\n", cfg.data_dir.c_str(),
              plugin_namespace.c_str(), queries.size(), depth, seconds_since(t0));
  // The seed's failure class of each query (eval/failure_class.h).
  std::map<std::string, std::string> failure_classes;
  auto collections = engine.catalog().list();
  for (const auto& q : queries) {
    eagle::eval::FailureEvidence e;
    for (const auto& [doc, rel] : qrels.at(q.id))
      if (rel > 0) e.relevant.push_back(doc);
    for (const auto& entry : run[q.id]) e.ranked.push_back(entry.doc);
    e.routed = routed[q.text];
    e.holders = [&](const std::string& id) {
      std::vector<std::string> out;
      for (const auto& c : collections)
        if (engine.catalog().get(c).get(id)) out.push_back(c);
      return out;
    };
    failure_classes[q.id] = std::string(eagle::eval::failure_class_name(eagle::eval::classify_failure(e)));
  }
  write_eval_outputs(run, qrels, run_file, per_query, tag, &failure_classes);
  return 0;
}

int cmd_eval(const GlobalFlags& g, const std::string& beir, const std::string& split,
             const std::string& retriever, const std::string& run_file, const std::string& per_query,
             const std::string& tag, size_t depth, const std::string& algorithm,
             const std::string& score_run, const std::string& ns) {
  auto cfg = resolve_config(g);
  if (!score_run.empty()) {
    // Score an existing run file (any system's) with the same metrics.
    auto set = eagle::eval::load_beir(beir, split);
    auto report = eagle::eval::evaluate(set.qrels, eagle::eval::read_trec_run(score_run));
    if (!per_query.empty()) {
      std::ofstream out(per_query);
      if (!out) eagle::fail(ErrorCode::unavailable, "cannot write " + per_query);
      eagle::eval::write_per_query_csv(out, report);
    }
    std::printf("dataset %s  split %s  run %s\n", beir.c_str(), split.c_str(), score_run.c_str());
    std::ostringstream s;
    eagle::eval::write_summary(s, report);
    std::fputs(s.str().c_str(), stdout);
    return 0;
  }
  static const std::set<std::string> kRetrievers = {"bm25", "dense", "alpha-hybrid", "hybrid", "pipeline"};
  if (!kRetrievers.count(retriever))
    eagle::fail(ErrorCode::invalid_argument,
                "unknown retriever '" + retriever + "': expected bm25, dense, alpha-hybrid, hybrid or pipeline");
  if (depth == 0) depth = cfg.run_depth;
  if (retriever != "bm25") return cmd_eval_pipeline(cfg, beir, split, retriever, run_file, per_query, tag, depth, ns);
  auto algo = algorithm.empty() ? cfg.topk_algorithm : eagle::index::parse_topk_algorithm(algorithm);
  auto set = eagle::eval::load_beir(beir, split);
  auto docs = load_beir_corpus(beir);
  auto t0 = std::chrono::steady_clock::now();
  eagle::app::Progress progress("indexing");
  auto idx = eagle::eval::build_bm25(docs, cfg.bm25, cfg.analyzer,
                                     [&](size_t d) { progress.update(d, docs.size(), "docs"); });
  progress.finish();
  double build_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  auto run = eagle::eval::run_bm25(idx, docs, set.queries, depth, algo);
  double search_s = seconds_since(t0);
  if (!run_file.empty()) {
    std::ofstream out(run_file);
    if (!out) eagle::fail(ErrorCode::unavailable, "cannot write run file " + run_file);
    eagle::eval::write_trec_run(out, run, tag);
  }
  auto report = eagle::eval::evaluate(set.qrels, std::move(run));
  if (!per_query.empty()) {
    std::ofstream out(per_query);
    if (!out) eagle::fail(ErrorCode::unavailable, "cannot write " + per_query);
    eagle::eval::write_per_query_csv(out, report);
  }
  std::printf("dataset %s  split %s  retriever %s  docs %zu  queries %zu  index %.2f s  search %.2f s\n",
              beir.c_str(), split.c_str(), retriever.c_str(), docs.size(), set.queries.size(), build_s,
              search_s);
  std::ostringstream s;
  eagle::eval::write_summary(s, report);
  std::fputs(s.str().c_str(), stdout);
  return 0;
}

// `eagle bench`: the fast top-k against its oracle (the exhaustive scorer) in one
// run; bench_lexical adds Xapian.
int cmd_bench(const GlobalFlags& g, const std::string& beir, const std::string& split, int repeat) {
  auto cfg = resolve_config(g);
  auto set = eagle::eval::load_beir(beir, split);
  auto docs = load_beir_corpus(beir);
  auto t0 = std::chrono::steady_clock::now();
  auto idx = eagle::eval::build_bm25(docs, cfg.bm25, cfg.analyzer);
  double build_s = seconds_since(t0);
  std::vector<std::vector<std::string>> analysed;
  for (const auto& q : set.queries) analysed.push_back(idx.analyzer().terms(q.text));
  for (size_t k : {size_t{10}, size_t{100}}) {
    for (auto algo : {eagle::index::TopKAlgorithm::maxscore, eagle::index::TopKAlgorithm::exhaustive}) {
      idx.search("warm up", k, algo);
      size_t n = 0;
      auto t = std::chrono::steady_clock::now();
      for (int r = 0; r < repeat; ++r)
        for (const auto& q : set.queries) n += idx.search(q.text, k, algo).size();
      double secs = seconds_since(t);
      json line = {{"bench", "lexical-topk"},
                   {"engine", algo == eagle::index::TopKAlgorithm::maxscore ? "eagle-maxscore" : "eagle-exhaustive"},
                   {"k", k}, {"queries", set.queries.size() * repeat},
                   {"qps", static_cast<double>(set.queries.size() * repeat) / secs},
                   {"build_s", build_s}, {"docs", docs.size()}, {"hits", n}};
      std::cout << line.dump() << std::endl;
    }
  }
  return 0;
}

int cmd_compounds(const std::string& csv, const std::string& name, const std::string& smiles,
                  const std::string& smarts, size_t k) {
  namespace chem = eagle::encode::chem;
  if (k == 0 || k > eagle::app::kMaxTopK)
    eagle::fail(ErrorCode::invalid_argument, "--k must be in [1, " + std::to_string(eagle::app::kMaxTopK) + "]");
  auto t0 = std::chrono::steady_clock::now();
  chem::CompoundIndex idx;
  auto rep = idx.load_csv(csv);
  std::fprintf(stderr, "loaded %zu of %zu compounds from %s in %.2f s (%zu failed to parse)\n", rep.parsed,
               rep.rows, csv.c_str(), seconds_since(t0), rep.failed.size());
  for (const auto& f : rep.failed) std::fprintf(stderr, "  unparsed: %s\n", f.c_str());
  if (!smarts.empty()) {
    auto pattern = chem::Molecule::from_smarts(smarts);
    auto found = idx.substructure(pattern, k);
    std::printf("substructure %s: %zu matches (limit %zu)\n", smarts.c_str(), found.size(), k);
    for (auto i : found) std::printf("  %-10s %-30s %s\n", idx.at(i).id.c_str(), idx.at(i).name.c_str(), idx.at(i).smiles.c_str());
    return 0;
  }
  chem::Fingerprint query;
  std::string label;
  if (!name.empty()) {
    const auto* c = idx.find_by_name(name);
    if (!c) eagle::fail(ErrorCode::not_found, "no compound named '" + name + "' in " + csv);
    query = c->fingerprint;
    label = c->name;
  } else if (!smiles.empty()) {
    query = chem::Molecule::from_smiles(smiles).morgan(idx.params());
    label = smiles;
  } else {
    eagle::fail(ErrorCode::invalid_argument, "give --name, --smiles or --smarts");
  }
  std::printf("compounds similar to %s (Morgan r=2, 2048 bits, Tanimoto)\n", label.c_str());
  int rank = 1;
  for (const auto& h : idx.similar(query, k))
    std::printf("%3d. %.4f  %-10s %s\n", rank++, h.similarity, idx.at(h.index).id.c_str(), idx.at(h.index).name.c_str());
  return 0;
}

int cmd_encoders(const GlobalFlags& g, const std::string& label, const std::vector<std::string>& texts,
                 bool query_mode) {
  auto cfg = resolve_config(g);
  auto t0 = std::chrono::steady_clock::now();
  auto reg = eagle::app::build_encoder_registry(cfg);
  std::printf("encoders loaded in %.3f s\n", seconds_since(t0));
  if (texts.empty()) {
    for (const auto& l : reg.labels()) {
      if (reg.has_encoder(l)) {
        const auto& i = reg.encoder(l).info();
        std::printf("  %-20s encoder  %-10s dim %-5u %s%s%s\n", l.c_str(), i.implementation.c_str(), i.dim,
                    std::string(eagle::metric_name(i.metric)).c_str(), i.asymmetric ? " asymmetric" : "",
                    eagle::app::stand_in_of(cfg, l).empty()
                        ? ""
                        : ("  stand-in (" + eagle::app::stand_in_of(cfg, l) + "): set encoders." + l +
                           " to the real model").c_str());
        // What a collection records of it, and refuses once it changes.
        std::printf("  %-20s          %s\n", "", i.identity.c_str());
      } else {
        std::printf("  %-20s reranker\n", l.c_str());
      }
    }
    return 0;
  }
  auto& enc = reg.encoder(label);
  t0 = std::chrono::steady_clock::now();
  auto vecs = enc.encode(texts, query_mode ? eagle::encode::EncodeMode::query : eagle::encode::EncodeMode::document);
  double ms = seconds_since(t0) * 1000;
  for (size_t i = 0; i < texts.size(); ++i) {
    json j = {{"text", texts[i]}, {"encoder", label}, {"dim", vecs[i].size()}};
    std::vector<float> head(vecs[i].begin(), vecs[i].begin() + std::min<size_t>(8, vecs[i].size()));
    j["head"] = head;
    std::cout << j.dump() << "\n";
  }
  std::printf("encoded %zu texts in %.2f ms\n", texts.size(), ms);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"eagle: biomedical retrieval engine (BM25 with a biomedical analyzer, BEIR evaluation)"};
  app.require_subcommand(1);
  app.footer(key_list());
  GlobalFlags g;
  app.add_option("--config", g.config_file,
                 "YAML configuration file (default: $EAGLE_CONFIG, else ./eagle.yaml when present)");
  app.add_option("--set", g.sets, "override a configuration key, KEY=VALUE (repeatable)");
  app.add_option("--data-dir", g.data_dir, "store folder (configuration key data_dir)");

  auto* config_cmd = app.add_subcommand("config", "print the effective configuration as documented YAML");

  auto* ingest = app.add_subcommand("ingest", "add documents to the store (BEIR folder, JSONL, Markdown/text, SPL labels, JATS/PubMed XML, PDF, HTML, compound CSV)");
  std::vector<std::string> inputs;
  IngestFlags ingest_flags;
  ingest->add_option("inputs", inputs,
                     "files or folders: BEIR folder (with corpus.jsonl), JSONL, .txt, Markdown, SPL label .xml, JATS .nxml/.xml, "
                     "PubMed .xml, .pdf, .html (a folder's files each by their kind), or a compound SMILES CSV")
      ->required();
  ingest->add_option("--format", ingest_flags.format, "auto (by extension and XML root element, file by file), beir, jsonl, folder, spl, jats, pubmed, pdf, html, markdown or compounds")->capture_default_str();
  ingest->add_flag("--reindex", ingest_flags.reindex,
                   "read structured files (SPL, JATS, PubMed, PDF, HTML, Markdown) again even when their bytes were ingested "
                   "into this KB and namespace before (by default such a file is reported unchanged and skipped)");
  ingest->add_flag("--skip-bad", ingest_flags.skip_bad,
                   "skip malformed records (each reported with file and line) instead of stopping; "
                   "without it a bad record stops the ingest and the store is left unchanged");
  ingest->add_flag("--repair-utf8", ingest_flags.repair_utf8,
                   "replace invalid UTF-8 in the input with U+FFFD (ingest.repair_utf8); without it invalid UTF-8 "
                   "is an error naming the file and byte offset");
  ingest->add_option("--collection", ingest_flags.collection,
                     "target collection (default: eagle_text; spl: biomed.text_biomed_collection; compounds: "
                     "biomed.chemical_collection); created on first use");
  ingest->add_option("--encoder", ingest_flags.encoder,
                     "encoder label (default: the collection's recorded encoder, else its slot's default)");
  ingest->add_option("--kb", ingest_flags.kb_name, "knowledge-base name stamped on every row (kb_name)");
  ingest->add_option("--namespace", ingest_flags.plugin_namespace,
                     "plugin namespace of the documents in the registry (core or biomed)")
      ->capture_default_str();

  auto* search = app.add_subcommand("search", "run a query through the retrieval pipeline and print the top hits");
  std::vector<std::string> words;
  SearchFlags sf;
  search->add_option("query", words, "query text (optional with --image)");
  search->add_option("--image", sf.image_file,
                     "a PNG or JPEG: search the visual collection with it (image -> image; with words, both)");
  search->add_option("-k,--top-k", sf.k, "number of hits (default: search.top_k)");
  search->add_flag("--json", sf.as_json, "print one JSON object instead of a table");
  search->add_option("--min-score", sf.min_score,
                     "drop hits scoring below this (the final stage's scale: docs/biomed.md, Scores)");
  search->add_flag("--explain", sf.explain, "show each hit's rank and score in every leg, and the route decision");
  search->add_option("--namespace", sf.plugin_namespace,
                     "plugin namespace: core, biomed or auto (default: pipeline.namespace, auto: biomed when the store "
                     "holds biomed documents)");
  search->add_option("--kb", sf.kb_name, "only rows of this knowledge base (kb_name)");
  search->add_option("--scope-kb", sf.scope_kbs, "scope_filter.kb_names (repeatable)");
  search->add_option("--scope-doc", sf.scope_docs, "scope_filter.document_ids (repeatable)");
  search->add_option("--tag", sf.tags, "scope_filter.tags, resolved through the registry (repeatable)");
  search->add_option("--doc", sf.legacy_scope, "legacy scope: keep only these document ids (post-filter, repeatable)");
  search->add_option("--facet", sf.facets,
                     "FIELD=VALUE[,VALUE] on source_type, year, chunk_type, parent_section or type (repeatable)");
  search->add_option("--route-mode", sf.route_mode, "text, visual or hybrid")->capture_default_str();
  search->add_option("--filter", sf.filter,
                     "Milvus filter expression AND-ed with the scope, e.g. 'year >= 2020 and source_type == \"label\"'");
  // One value per occurrence (repeat the option for more): the query words after a
  // repeatable option are the query, not more values of it.
  for (const char* name : {"--scope-kb", "--scope-doc", "--tag", "--doc", "--facet"})
    search->get_option(name)->allow_extra_args(false);

  auto* entities = app.add_subcommand("entities", "match biomedical entities in a text with the configured vocabularies");
  std::vector<std::string> entity_words;
  bool entities_json = false, entities_drugs = false;
  entities->add_option("text", entity_words, "text to match")->required();
  entities->add_flag("--json", entities_json, "print [{text, start, end, type, name, id}] as JSON");
  entities->add_flag("--drugs", entities_drugs, "drug entities only (match_drug_entities)");

  auto* eval = app.add_subcommand("eval", "evaluate a retriever on a BEIR folder; writes a TREC run");
  std::string beir, split = "test", retriever = "bm25", run_file, per_query, tag = "eagle", algorithm, score_run,
      eval_ns = "core";
  size_t depth = 0;
  std::string eval_queries, eval_qrels;
  auto* beir_opt = eval->add_option("--beir", beir, "BEIR folder: corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv (indexed "
                                                    "in memory; or evaluate the store with --queries and --qrels)");
  auto* queries_opt = eval->add_option(
      "--queries", eval_queries,
      "queries JSONL ({\"_id\", \"text\"}): evaluate the store at --data-dir, built by `eagle ingest`, through the "
      "same Engine and pipeline as `eagle search`");
  auto* qrels_opt = eval->add_option("--qrels", eval_qrels, "qrels TSV for --queries (query-id corpus-id score)");
  eval->add_option("--data-dir", g.data_dir, "the store --queries evaluates (as the global --data-dir)");
  queries_opt->needs(qrels_opt);
  qrels_opt->needs(queries_opt);
  beir_opt->excludes(queries_opt);
  eval->add_option("--split", split, "qrels split name")->capture_default_str();
  eval->add_option("--retriever", retriever,
                   "bm25 (lexical index), dense (encoder only), alpha-hybrid (the seed's alpha * dense + (1 - alpha) * "
                   "overlap over dense candidates), hybrid (dense + BM25 fused) or pipeline (the full orchestrated path)")
      ->capture_default_str();
  eval->add_option("--namespace", eval_ns, "plugin namespace of pipeline requests")->capture_default_str();
  bool eval_pipeline = false;
  eval->add_flag("--pipeline", eval_pipeline, "same as --retriever pipeline (the full orchestrated query path)");
  eval->add_option("--run", run_file, "write the TREC run (qid Q0 docid rank score tag) here");
  eval->add_option("--per-query", per_query, "write per-query metrics as CSV here");
  eval->add_option("--tag", tag, "run tag (last column of the run file)")->capture_default_str();
  eval->add_option("--depth", depth, "documents per query in the run (default: eval.run_depth = 1000)");
  eval->add_option("--algorithm", algorithm, "maxscore or exhaustive (default: search.algorithm)");
  std::string evidence_rows;
  std::vector<std::string> evidence_fit_files;
  eval->add_option("--evidence-report", evidence_rows,
                   "with --queries/--qrels (train or dev): measure and fit the evidence model (every 5th query made "
                   "unanswerable); writes one JSON row per query here and prints the report");
  eval->add_option("--evidence-fit", evidence_fit_files,
                   "fit the evidence model on the fit halves of these --evidence-report row files together and report "
                   "each (the evidence.* defaults)");
  eval->add_option("--score-run", score_run,
                   "evaluate this existing TREC run file instead of retrieving (any system's run)");

  auto* bench = app.add_subcommand("bench", "time MaxScore against the exhaustive oracle (JSON lines)");
  std::string bbeir, bsplit = "test";
  int repeat = 1;
  bench->add_option("--beir", bbeir, "BEIR folder")->required();
  bench->add_option("--split", bsplit, "qrels split whose queries are timed")->capture_default_str();
  bench->add_option("--repeat", repeat, "passes over the queries")->capture_default_str()->check(CLI::Range(1, 1000));

  auto* compounds = app.add_subcommand(
      "similar-compounds", "nearest compounds by Tanimoto on Morgan fingerprints, or a SMARTS substructure search");
  std::string smiles_csv, cname, csmiles, csmarts;
  size_t ck = 10;
  compounds->add_option("--smiles-csv", smiles_csv, "CSV with a header naming id, name and SMILES columns")->required();
  compounds->add_option("--name", cname, "query compound by name (case-insensitive)");
  compounds->add_option("--smiles", csmiles, "query compound by SMILES");
  compounds->add_option("--smarts", csmarts, "list compounds containing this SMARTS pattern instead");
  compounds->add_option("--k", ck, "hits to print (limit for --smarts)")->capture_default_str();

  auto* encoders_cmd = app.add_subcommand("encoders", "list the configured encoders, or embed texts with one");
  std::string enc_label = "glove";
  std::vector<std::string> enc_texts;
  bool enc_query = false;
  encoders_cmd->add_option("texts", enc_texts, "texts to embed (none: list the encoders)");
  encoders_cmd->add_option("--label", enc_label, "encoder label")->capture_default_str();
  encoders_cmd->add_flag("--query", enc_query, "encode as queries (asymmetric encoders)");

  std::vector<eagle::app::Command> commands;
  eagle::app::add_store_commands(app, g, commands);
  eagle::app::add_serve_command(app, g, commands);
  eagle::app::add_mcp_command(app, g, commands);
  eagle::app::add_query_command(app, g, commands);

  // An unknown command gets a message that names it and the commands there are
  // (CLI11 would only say an argument was not expected).
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const auto* sub : app.get_subcommands({})) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "eagle: unknown command '%s'\ncommands: %s\n(eagle --help for more)\n", argv[1], names.c_str());
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    for (const auto& c : commands)
      if (*c.app) return c.run();
    if (*config_cmd) {
      std::fputs(eagle::app::describe_config(resolve_config(g)).c_str(), stdout);
      return 0;
    }
    if (*ingest) return cmd_ingest(g, inputs, ingest_flags);
    if (*search) return cmd_search(g, words, sf);
    if (*entities) return cmd_entities(g, entity_words, entities_json, entities_drugs);
    if (*eval && eval_pipeline) retriever = "pipeline";
    if (*eval) {
      if (!evidence_fit_files.empty()) return eagle::app::evidence_fit(resolve_config(g), evidence_fit_files);
      if (!eval_queries.empty())
        return cmd_eval_store(g, eval_queries, eval_qrels, run_file, per_query, tag, depth,
                              eval->count("--namespace") ? eval_ns : std::string(), evidence_rows);
      if (!evidence_rows.empty()) eagle::fail(ErrorCode::invalid_argument, "--evidence-report needs --queries and --qrels");
      if (beir.empty()) eagle::fail(ErrorCode::invalid_argument, "eval needs --beir FOLDER, or --queries and --qrels");
      return cmd_eval(g, beir, split, retriever, run_file, per_query, tag, depth, algorithm, score_run, eval_ns);
    }
    if (*bench) return cmd_bench(g, bbeir, bsplit, repeat);
    if (*compounds) return cmd_compounds(smiles_csv, cname, csmiles, csmarts, ck);
    if (*encoders_cmd) return cmd_encoders(g, enc_label, enc_texts, enc_query);
  } catch (const Error& e) {
    std::fprintf(stderr, "eagle: error (%s): %s\n", std::string(eagle::error_code_name(e.code())).c_str(),
                 e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "eagle: internal error: %s\n", e.what());
    return 3;
  }
  return 0;
}
