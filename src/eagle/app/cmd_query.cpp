// `eagle query QUESTION`: the answer stage from the command line (app/query.h), as
// POST /query answers it; a reader beside a server or an ingest (keeps no session).
#include <cstdio>
#include <iostream>
#include <memory>

#include "eagle/app/cli.h"
#include "eagle/app/engine.h"
#include "eagle/app/json_views.h"
#include "eagle/core/error.h"

namespace eagle::app {
namespace {

struct QueryFlags {
  std::vector<std::string> words;
  size_t top_k = 0;
  size_t top_n = 0;
  std::string plugin_namespace, kb_name, mode = "auto";
  bool as_json = false, explain = false;
};

int run_query(const GlobalFlags& g, const QueryFlags& f) {
  auto cfg = resolve_config(g);
  QueryRequest req;
  for (const auto& w : f.words) req.retrieval.query += (req.retrieval.query.empty() ? "" : " ") + w;
  if (req.retrieval.query.empty()) fail(ErrorCode::invalid_argument, "give a question");
  req.retrieval.top_k = f.top_k ? f.top_k : cfg.pipeline.final_top_k;
  req.retrieval.plugin_namespace = f.plugin_namespace.empty() ? cfg.pipeline.plugin_namespace : f.plugin_namespace;
  req.retrieval.kb_name = f.kb_name;
  req.retrieval.explain = f.explain;
  req.top_n = f.top_n;
  req.mode = f.mode;
  Engine engine(cfg, StoreAccess::read_only);
  if (engine.catalog().list().empty())
    fail(ErrorCode::not_found, "the store at " + cfg.data_dir + " has no collections yet: add documents with `eagle ingest` first");
  const auto r = engine.query(req);
  if (f.as_json) {
    std::cout << query_response_json(r, f.explain).dump() << "\n";
    return 0;
  }
  std::printf("%s\n", r.answer.c_str());
  std::printf("\n(%s%s)\n", r.mode.c_str(), r.model.empty() ? "" : (", " + r.model).c_str());
  if (!r.search.hits.empty()) std::printf("Sources:\n");
  for (size_t i = 0; i < r.search.hits.size(); ++i) {
    const auto& h = r.search.hits[i];
    std::string name = h.field("document_name");
    if (name.empty()) name = h.document_id().empty() ? h.id : h.document_id();
    const std::string path = h.field("path");
    std::printf("  [%zu] %s%s%s  (%s)\n", i + 1, name.substr(0, 100).c_str(), path.empty() ? "" : " \xC2\xB7 ",
                path.c_str(), h.id.c_str());
  }
  for (const auto& w : r.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  return 0;
}

}  // namespace

void add_query_command(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out) {
  auto f = std::make_shared<QueryFlags>();
  auto* cmd = app.add_subcommand("query", "answer a question with citations: search, keep the top_n passages, then the "
                                          "configured chat model (generation.*) or the extractive answer");
  cmd->add_option("question", f->words, "the question")->required();
  cmd->add_option("-k,--top-k", f->top_k, "passages searched (default: pipeline.final_top_k; at least --top-n)");
  cmd->add_option("--top-n", f->top_n, "passages the answer is written from (default: generation.top_n, 3)");
  cmd->add_option("--namespace", f->plugin_namespace, "core, biomed or auto (default: pipeline.namespace)");
  cmd->add_option("--kb", f->kb_name, "only this knowledge base");
  cmd->add_option("--mode", f->mode, "auto (the model when generation.base_url is set) or extractive");
  cmd->add_flag("--json", f->as_json, "print the POST /query body");
  cmd->add_flag("--explain", f->explain, "with --json: each source's legs and the audits");
  out.push_back({cmd, [&g, f] { return run_query(g, *f); }});
}

}  // namespace eagle::app
