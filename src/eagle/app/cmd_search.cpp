// `eagle search`: one request through the retrieval pipeline, as POST /search runs it,
// printed as a table of hits (or the JSON of the hits, the route and the metadata). A
// reader: it opens the store read-only, beside a server or an ingest.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "eagle/app/cli.h"
#include "eagle/app/engine.h"
#include "eagle/app/json_views.h"
#include "eagle/core/error.h"
#include "eagle/search/orchestrator.h"

namespace fs = std::filesystem;

namespace eagle::app {
namespace {
using nlohmann::json;

std::string snippet(const std::string& text, size_t max_chars) {
  std::string s;
  for (char c : text) s += (c == '\n' || c == '\t' || c == '\r') ? ' ' : c;
  if (s.size() <= max_chars) return s;
  size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // UTF-8 boundary
  return s.substr(0, cut) + "...";
}

struct SearchFlags {
  std::vector<std::string> words;
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
      std::printf("namespace: %s (auto: %s)\n", ns.value("used", "").c_str(),
                  auto_reason(ns.value("used", "")).c_str());
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

}  // namespace

void add_search_command(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out) {
  auto f = std::make_shared<SearchFlags>();
  auto* search = app.add_subcommand("search", "run a query through the retrieval pipeline and print the top hits");
  search->add_option("query", f->words, "query text (optional with --image)");
  search->add_option("--image", f->image_file,
                     "a PNG or JPEG: search the visual collection with it (image -> image; with words, both)");
  search->add_option("-k,--top-k", f->k, "number of hits (default: search.top_k)");
  search->add_flag("--json", f->as_json, "print one JSON object instead of a table");
  search->add_option("--min-score", f->min_score,
                     "drop hits scoring below this (the final stage's scale: docs/biomed.md, Scores)");
  search->add_flag("--explain", f->explain, "show each hit's rank and score in every leg, and the route decision");
  search->add_option("--namespace", f->plugin_namespace,
                     "plugin namespace: core, biomed or auto (default: pipeline.namespace, auto: biomed when the store "
                     "holds biomed documents)");
  search->add_option("--kb", f->kb_name, "only rows of this knowledge base (kb_name)");
  search->add_option("--scope-kb", f->scope_kbs, "scope_filter.kb_names (repeatable)");
  search->add_option("--scope-doc", f->scope_docs, "scope_filter.document_ids (repeatable)");
  search->add_option("--tag", f->tags, "scope_filter.tags, resolved through the registry (repeatable)");
  search->add_option("--doc", f->legacy_scope, "legacy scope: keep only these document ids (post-filter, repeatable)");
  search->add_option("--facet", f->facets,
                     "FIELD=VALUE[,VALUE] on source_type, year, chunk_type, parent_section or type (repeatable)");
  search->add_option("--route-mode", f->route_mode, "text, visual or hybrid")->capture_default_str();
  search->add_option("--filter", f->filter,
                     "Milvus filter expression AND-ed with the scope, e.g. 'year >= 2020 and source_type == \"label\"'");
  // One value per occurrence (repeat the option for more): the query words after a
  // repeatable option are the query, not more values of it.
  for (const char* name : {"--scope-kb", "--scope-doc", "--tag", "--doc", "--facet"})
    search->get_option(name)->allow_extra_args(false);
  out.push_back({search, [&g, f] { return cmd_search(g, f->words, *f); }});
}

}  // namespace eagle::app
