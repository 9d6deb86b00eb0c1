// `eagle eval`: a retriever measured on a BEIR folder indexed in memory (bm25, dense,
// hybrid or the whole pipeline), on a store built by `eagle ingest` (--queries and
// --qrels, through the same Engine as `eagle search`), or an existing TREC run scored;
// the evidence model's calibration rides on the store path (eval_evidence.h).
// `eagle bench`: MaxScore timed against its exhaustive oracle.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "eagle/app/cli.h"
#include "eagle/app/engine.h"
#include "eagle/app/eval_evidence.h"
#include "eagle/app/progress.h"
#include "eagle/plugin/plugin.h"
#include "eagle/core/error.h"
#include "eagle/eval/beir.h"
#include "eagle/eval/failure_class.h"
#include "eagle/eval/lexical_run.h"
#include "eagle/eval/metrics.h"
#include "eagle/ingest/corpus_reader.h"
#include "eagle/registry/registry.h"
#include "eagle/search/orchestrator.h"
#include "eagle/store/text_store.h"

namespace fs = std::filesystem;

namespace eagle::app {
namespace {
using nlohmann::json;

struct EvalFlags {
  std::string beir, split = "test", retriever = "bm25", run_file, per_query, tag = "eagle", algorithm, score_run,
      ns = "core";
  size_t depth = 0;
  std::string queries, qrels;  // the store path: --queries and --qrels
  bool pipeline = false;
  std::string evidence_rows;
  std::vector<std::string> evidence_fit_files;
};

struct BenchFlags {
  std::string beir, split = "test";
  int repeat = 1;
};

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
  auto schema = eagle::chunk_schema(name, encoder.info().dim, encoder.info().metric, eagle::plugin::plugin_chunk_fields());
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
  // In a plugin's namespace the corpus is the plugin's text collection (embedded
  // with the core text encoder), recorded in an in-memory registry so steps that look
  // documents up by name (the biomed entity supplement) find them.
  auto ecfg = cfg;
  const auto* plugin = eagle::plugin::find_plugin(ns);
  std::string coll_name = "eagle_text";
  if (plugin) {
    if (auto c = plugin->eval_text_collection(ecfg); !c.empty()) coll_name = c;
    // Plans recall at least 100 (Recall@100 needs it) but not the run depth: a
    // rerank that re-encodes every recalled text would dominate the run at 1000 a plan.
    plugin->set_recall_floor(ecfg, std::min<size_t>(depth, 100));
  }
  std::unique_ptr<eagle::store::Collection> coll;
  auto provider = [&](const std::string& n) { return n == coll_name ? coll.get() : nullptr; };
  eagle::search::HookBus bus;
  std::unique_ptr<eagle::registry::DocumentRegistry> docs_registry;
  std::unique_ptr<eagle::plugin::Instance> instance;
  if (plugin) {
    docs_registry = eagle::registry::open_registry("sqlite::memory:");
    for (const auto& d : docs) {
      eagle::registry::DocumentRecord r;
      r.document_id = d.id;
      r.name = d.title.empty() ? d.id : d.title;
      r.document_name = d.title;
      r.plugin_namespace = ns;
      r.collections_used = {coll_name};
      docs_registry->upsert(r);
    }
    instance = plugin->attach(eagle::plugin::Host{ecfg, provider, registry, docs_registry.get(), bus});
    instance->subscribe();
  }
  coll = beir_collection(docs, registry.encoder(ecfg.pipeline.text_encoder), ecfg, coll_name, &bus, ns);
  const double build_s = seconds_since(t0);
  auto pc = eagle::app::pipeline_config(ecfg);
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
  for (const auto* p : eagle::plugin::builtin_plugins()) p->set_recall_floor(cfg, std::min<size_t>(depth, 100));
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

// The path eval takes: a fit of evidence rows, the store, or a BEIR folder. The
// namespace reaches the store path only when given, so pipeline.namespace applies
// there by default.
int run_eval(const GlobalFlags& g, const EvalFlags& f, bool namespace_given) {
  if (!f.evidence_fit_files.empty()) return evidence_fit(resolve_config(g), f.evidence_fit_files);
  if (!f.queries.empty())
    return cmd_eval_store(g, f.queries, f.qrels, f.run_file, f.per_query, f.tag, f.depth,
                          namespace_given ? f.ns : std::string(), f.evidence_rows);
  if (!f.evidence_rows.empty()) fail(ErrorCode::invalid_argument, "--evidence-report needs --queries and --qrels");
  if (f.beir.empty()) fail(ErrorCode::invalid_argument, "eval needs --beir FOLDER, or --queries and --qrels");
  const std::string retriever = f.pipeline ? "pipeline" : f.retriever;
  return cmd_eval(g, f.beir, f.split, retriever, f.run_file, f.per_query, f.tag, f.depth, f.algorithm, f.score_run,
                  f.ns);
}

}  // namespace

void add_eval_commands(CLI::App& app, GlobalFlags& g, std::vector<Command>& out) {
  auto f = std::make_shared<EvalFlags>();
  auto* eval = app.add_subcommand("eval", "evaluate a retriever on a BEIR folder; writes a TREC run");
  auto* beir_opt = eval->add_option("--beir", f->beir, "BEIR folder: corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv (indexed "
                                                       "in memory; or evaluate the store with --queries and --qrels)");
  auto* queries_opt = eval->add_option(
      "--queries", f->queries,
      "queries JSONL ({\"_id\", \"text\"}): evaluate the store at --data-dir, built by `eagle ingest`, through the "
      "same Engine and pipeline as `eagle search`");
  auto* qrels_opt = eval->add_option("--qrels", f->qrels, "qrels TSV for --queries (query-id corpus-id score)");
  eval->add_option("--data-dir", g.data_dir, "the store --queries evaluates (as the global --data-dir)");
  queries_opt->needs(qrels_opt);
  qrels_opt->needs(queries_opt);
  beir_opt->excludes(queries_opt);
  eval->add_option("--split", f->split, "qrels split name")->capture_default_str();
  eval->add_option("--retriever", f->retriever,
                   "bm25 (lexical index), dense (encoder only), alpha-hybrid (the seed's alpha * dense + (1 - alpha) * "
                   "overlap over dense candidates), hybrid (dense + BM25 fused) or pipeline (the full orchestrated path)")
      ->capture_default_str();
  eval->add_option("--namespace", f->ns, "plugin namespace of pipeline requests")->capture_default_str();
  eval->add_flag("--pipeline", f->pipeline, "same as --retriever pipeline (the full orchestrated query path)");
  eval->add_option("--run", f->run_file, "write the TREC run (qid Q0 docid rank score tag) here");
  eval->add_option("--per-query", f->per_query, "write per-query metrics as CSV here");
  eval->add_option("--tag", f->tag, "run tag (last column of the run file)")->capture_default_str();
  eval->add_option("--depth", f->depth, "documents per query in the run (default: eval.run_depth = 1000)");
  eval->add_option("--algorithm", f->algorithm, "maxscore or exhaustive (default: search.algorithm)");
  eval->add_option("--evidence-report", f->evidence_rows,
                   "with --queries/--qrels (train or dev): measure and fit the evidence model (every 5th query made "
                   "unanswerable); writes one JSON row per query here and prints the report");
  eval->add_option("--evidence-fit", f->evidence_fit_files,
                   "fit the evidence model on the fit halves of these --evidence-report row files together and report "
                   "each (the evidence.* defaults)");
  eval->add_option("--score-run", f->score_run,
                   "evaluate this existing TREC run file instead of retrieving (any system's run)");
  out.push_back({eval, [&g, f, eval] { return run_eval(g, *f, eval->count("--namespace") > 0); }});

  auto b = std::make_shared<BenchFlags>();
  auto* bench = app.add_subcommand("bench", "time MaxScore against the exhaustive oracle (JSON lines)");
  bench->add_option("--beir", b->beir, "BEIR folder")->required();
  bench->add_option("--split", b->split, "qrels split whose queries are timed")->capture_default_str();
  bench->add_option("--repeat", b->repeat, "passes over the queries")->capture_default_str()->check(CLI::Range(1, 1000));
  out.push_back({bench, [&g, b] { return cmd_bench(g, b->beir, b->split, b->repeat); }});
}

}  // namespace eagle::app
