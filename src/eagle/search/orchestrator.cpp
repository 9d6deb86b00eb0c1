#include "eagle/search/orchestrator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <unordered_set>

#include "eagle/core/error.h"
#include "eagle/filter/parser.h"
#include "eagle/ingest/image/image.h"
#include "eagle/text/analyzer.h"

namespace eagle::search {
using nlohmann::json;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string next_query_id() {
  static std::atomic<uint64_t> n{0};
  return "q" + std::to_string(++n);
}

// Indexed chunk fields a request may facet on (the plugins' indexed fields too).
const std::set<std::string> kFacetFields = {"source_type", "year", "chunk_type", "parent_section", "type", "kb_name"};

// Accumulates time spent in the encoder and in index searches, so the pipeline's own
// overhead (total minus these) can be reported.
void stage_ms(double& total, std::chrono::steady_clock::time_point t0) { total += ms_since(t0); }

// The request's bounds and sense: a bounded, decodable query image; 1..kMaxQueryBytes
// of query holding a searchable word (unless the image is the whole query); a finite
// min_score; top_k in [1, kMaxFinalTopK].
void validate_request(const RetrievalRequest& req, bool image_only) {
  if (req.image.size() > kMaxQueryImageBytes)
    fail(ErrorCode::too_large, "the query image is " + std::to_string(req.image.size()) + " bytes, more than " +
                                   std::to_string(kMaxQueryImageBytes));
  // A file that is not an image is the caller's mistake, said as such, not a visual
  // plan that fails quietly into zero hits (bounded by kMaxQueryImagePixels).
  if (!req.image.empty()) {
    ingest::ImageLimits query_limits;
    query_limits.max_pixels = kMaxQueryImagePixels;
    ingest::decode_image(req.image, "the query image", query_limits);
  }
  if (!image_only && (req.query.empty() || req.query.size() > kMaxQueryBytes))
    fail(ErrorCode::invalid_argument, "query must be 1.." + std::to_string(kMaxQueryBytes) + " bytes");
  // A query of blanks asks nothing: every hit would score 0.
  if (!image_only && req.query.find_first_not_of(" \t\r\n\f\v") == std::string::npos)
    fail(ErrorCode::invalid_argument, "the query is empty (only white space)");
  // A query of stop words only ("the of and") asks nothing either: the lexical leg
  // finds no term and the dense leg returns whatever lies nearest to "the", at
  // confident-looking scores.
  {
    static const text::Analyzer kQueryWords{text::AnalyzerOptions{text::Stemmer::none, true, false}};
    bool any_word = false;
    kQueryWords.analyze(req.query, [&](std::string_view) { any_word = true; });
    if (!any_word && !image_only)
      fail(ErrorCode::invalid_argument, "the query has no searchable words (only stop words or punctuation)");
  }
  if (req.min_score && !std::isfinite(*req.min_score)) fail(ErrorCode::invalid_argument, "min_score must be a finite number");
  if (req.top_k == 0 || req.top_k > kMaxFinalTopK)
    fail(ErrorCode::invalid_argument, "top_k must be in [1, " + std::to_string(kMaxFinalTopK) + "]");
}

std::string and_join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    if (p.empty()) continue;
    out += (out.empty() ? "(" : " and (") + p + ")";
  }
  return out;
}

}  // namespace

ScoredHit hit_from_record(const store::Record& r, const CollectionSchema& schema, const std::string& collection,
                          double score) {
  return hit_from_row(r.id, r.text, r.values, schema, collection, score);
}

ScoredHit hit_from_row(const std::string& id, const std::string& text, ValuesView values,
                       const CollectionSchema& schema, const std::string& collection, double score) {
  ScoredHit h;
  h.id = id;
  h.collection = collection;
  h.score = score;
  h.text = text;
  h.metadata = nlohmann::json::object();
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    if (is_null(values[i])) continue;
    const auto& name = schema.fields[i].name;
    // Image rows are recognised from the typed value, not by re-reading the JSON.
    if (name == "type")
      if (const auto* t = std::get_if<std::string>(&values[i]))
        h.is_image = *t == "tile" || *t == "image";  // an image tile's row has type "image"
    h.metadata[name] = value_to_json(values[i]);
  }
  return h;
}

json RouteDecision::to_json() const {
  json p = json::array();
  for (const auto& x : plans)
    p.push_back({{"collection", x.collection}, {"encoder", x.encoder}, {"top_k", x.top_k}, {"hybrid", x.hybrid},
                 {"filter", x.filter}});
  return {{"plans", p}, {"hints", hints}, {"source", source}};
}

RouteMode parse_route_mode(const std::string& s) {
  if (s == "text") return RouteMode::text;
  if (s == "visual") return RouteMode::visual;
  if (s == "hybrid") return RouteMode::hybrid;
  fail(ErrorCode::invalid_argument, "route_mode must be text, visual or hybrid, got '" + s + "'");
}

Orchestrator::Orchestrator(CollectionProvider collections, encode::EncoderRegistry& encoders, HookBus& bus,
                           PipelineConfig config, std::shared_ptr<TelemetrySink> sink, DocumentCatalog* documents)
    : collections_(std::move(collections)),
      encoders_(encoders),
      bus_(bus),
      config_(std::move(config)),
      filter_schema_(chunk_schema("filter_check", 1, Metric::cosine, config_.plugin_fields)),
      facet_fields_(kFacetFields),
      sink_(std::move(sink)),
      documents_(documents) {
  for (const auto& f : config_.plugin_fields)
    if (f.indexed) {
      facet_fields_.insert(f.name);
      if (f.type == FieldType::string_list) list_facet_fields_.insert(f.name);
    }
}

// G4 (seed retrieval.txt §3): the core text collection only, plus the core visual
// collection when the route mode is hybrid/visual or an image is given; never a
// specialised collection. A plan recalls at least the hits asked for, so a top_k above
// the recall depth still gets that many hits; a plan a CLASSIFY_QUERY subscriber builds
// carries the depth its builder chose.
RouteDecision Orchestrator::default_route(const RetrievalRequest& req) const {
  RouteDecision d;
  d.source = "core_default";
  if (req.route_mode != RouteMode::visual) {
    CollectionQueryPlan p;
    p.collection = config_.core_text_collection;
    p.encoder = config_.core_text_encoder;
    p.top_k = recall_depth(req);
    p.hybrid = config_.hybrid_text_collections.count(p.collection) > 0;
    d.plans.push_back(p);
  }
  if (req.route_mode != RouteMode::text || req.has_image) {
    CollectionQueryPlan p;
    p.collection = config_.core_visual_collection;
    p.encoder = config_.core_visual_encoder;
    p.top_k = recall_depth(req);
    // Tiles are found by their text too (page text, captions): the lexical leg joins
    // the dense one.
    p.hybrid = true;
    d.plans.push_back(p);
  }
  return d;
}

// Rerank policy resolution: configured policy for the namespace; else DOMAIN when a
// RERANK_MERGED subscriber serves the namespace; else GENERAL when a general
// reranker is configured; else NONE.
RerankPolicy Orchestrator::resolve_rerank_policy(const std::string& ns) const {
  if (auto it = config_.rerank_policy.find(ns); it != config_.rerank_policy.end()) return it->second;
  if (bus_.has_subscribers(HookPoint::RERANK_MERGED, ns)) return RerankPolicy::domain;
  if (!config_.general_reranker.empty()) return RerankPolicy::general;
  return RerankPolicy::none;
}

std::string Orchestrator::statistics_filter(const RetrievalRequest& req) const {
  // build_scope binds allowed_kbs as a parameter of the scope expression.
  return config_.isolate_statistics && !req.allowed_kbs.empty() ? "kb_name in {allowed_kbs}" : "";
}

Orchestrator::Scope Orchestrator::build_scope(const RetrievalRequest& req, HookContext& ctx, Telemetry& tel) const {
  Scope s;
  std::vector<std::string> parts;
  // Values are always bound as template parameters, never spliced into the text.
  if (!req.kb_name.empty()) {
    parts.push_back("kb_name == {kb}");
    s.params["kb"] = req.kb_name;
  }
  const auto& sf = req.scope_filter;
  if (!sf.empty()) {
    std::vector<std::string> ids = sf.document_ids;
    if (!sf.tags.empty()) {
      if (!documents_) fail(ErrorCode::invalid_argument, "scope_filter.tags needs a document registry");
      auto tagged =
          documents_->ids_for_tags(sf.tags, ctx.plugin_namespace, config_.max_scope_documents + 1, req.allowed_kbs);
      ids.insert(ids.end(), tagged.begin(), tagged.end());
    }
    std::unordered_set<std::string> seen;
    std::vector<std::string> uniq;
    for (auto& id : ids)
      if (seen.insert(id).second) uniq.push_back(id);
    if (uniq.size() > config_.max_scope_documents) {
      // The cap is reported, not silent (the seed's tail documents were dropped unseen).
      tel.audit("scope_capped", {{"resolved", uniq.size()}, {"cap", config_.max_scope_documents}});
      uniq.resize(config_.max_scope_documents);
      s.capped = true;
    }
    s.document_ids = uniq;
    std::vector<std::string> ors;
    if (!sf.kb_names.empty()) {
      ors.push_back("kb_name in {scope_kbs}");
      s.params["scope_kbs"] = sf.kb_names;
    }
    if (!uniq.empty()) {
      ors.push_back("document_id in {scope_docs}");
      s.params["scope_docs"] = uniq;
    }
    if (ors.empty()) {
      // Tags that resolve to no document match nothing (ids are never empty).
      ors.push_back("id == {scope_none}");
      s.params["scope_none"] = "";
    }
    std::string un;
    for (const auto& o : ors) un += (un.empty() ? "" : " or ") + o;
    parts.push_back(un);
  }
  if (!req.allowed_kbs.empty()) {
    parts.push_back("kb_name in {allowed_kbs}");
    s.params["allowed_kbs"] = req.allowed_kbs;
  }
  if (!req.filter.empty()) {
    // Parsed on its own first: a well-formed expression has balanced parentheses, so
    // AND-ing it below cannot escape into the scope's terms.
    filter::parse(req.filter, filter_schema_, {});
    parts.push_back(req.filter);
  }
  const auto& facets = facet_fields_;
  const auto& list_facets = list_facet_fields_;
  for (const auto& [field, value] : req.facets) {
    if (!facets.count(field)) {
      std::string known;
      for (const auto& f : facets) known += (known.empty() ? "" : ", ") + f;
      fail(ErrorCode::invalid_argument, "unknown facet '" + field + "' (facets: " + known + ")");
    }
    const std::string param = "facet_" + field;
    if (list_facets.count(field)) {
      parts.push_back("array_contains_any(" + field + ", {" + param + "})");
      s.params[param] = value.is_array() ? value : json::array({value});
    } else {
      parts.push_back(field + (value.is_array() ? " in {" : " == {") + param + "}");
      s.params[param] = value;
    }
  }
  s.expr = and_join(parts);
  return s;
}

void Orchestrator::materialize(HitList& hits) const {
  std::map<std::string, std::vector<size_t>> by_collection;
  for (size_t i = 0; i < hits.size(); ++i)
    if (!hits[i].materialized) by_collection[hits[i].collection].push_back(i);
  for (const auto& entry : by_collection) {
    // Named variables, not a structured binding: the lambda below captures them.
    const std::string& name = entry.first;
    const std::vector<size_t>& idx = entry.second;
    store::Collection* coll = collections_(name);
    if (!coll) continue;
    std::vector<store::CollectionHit> rows;
    rows.reserve(idx.size());
    for (size_t i : idx) rows.push_back({hits[i].row, hits[i].id, hits[i].score});
    const auto& schema = coll->schema();
    std::vector<size_t> moved;  // rows that changed under a concurrent compaction
    coll->visit(rows, [&](size_t j, const std::string& id, const std::string& text, const PackedValues& v) {
      auto& h = hits[idx[j]];
      if (id != h.id) {
        moved.push_back(idx[j]);
        return;
      }
      auto full = hit_from_row(id, text, v, schema, name, h.score);
      h.text = std::move(full.text);
      h.metadata = std::move(full.metadata);
      h.is_image = full.is_image;
      h.materialized = true;
    });
    for (size_t i : moved) {
      if (auto r = coll->get(hits[i].id)) {
        auto full = hit_from_record(*r, schema, name, hits[i].score);
        hits[i].text = std::move(full.text);
        hits[i].metadata = std::move(full.metadata);
        hits[i].is_image = full.is_image;
        hits[i].materialized = true;
      }
    }
  }
  // A row deleted (or a collection dropped) since the search: the hit is gone.
  std::erase_if(hits, [](const ScoredHit& h) { return !h.materialized; });
}

HitList Orchestrator::run_plan(const CollectionQueryPlan& plan, const std::string& query, const Scope& scope,
                               const RetrievalRequest& req, HookContext& ctx, bool lazy) const {
  store::Collection* coll = collections_(plan.collection);
  if (!coll) fail(ErrorCode::not_found, "collection '" + plan.collection + "' does not exist");
  auto expanded = bus_.first<HookPoint::QUERY_DENSE_EXPAND>(ctx, query, std::optional<std::string>(plan.encoder));
  ExpandedQuery exp = expanded ? *expanded : ExpandedQuery{ctx.assembled_query(query), {}, nullptr};
  store::TemplateParams params = scope.params;
  for (const auto& [k, v] : plan.filter_params.items()) params[k] = v;
  const std::string filter = and_join({scope.expr, plan.filter});
  if (const auto& recorded = coll->schema().vector.encoder; !recorded.empty() && recorded != plan.encoder)
    fail(ErrorCode::invalid_argument, "collection '" + plan.collection + "' holds '" + recorded +
                                          "' vectors; the plan asks for encoder '" + plan.encoder + "'");
  const auto& schema = coll->schema();
  HitList dense;
  int rank = 0;
  std::vector<store::CollectionHit> vector_hits;
  // Which legs run. The lexical leg needs words; the dense leg a query its encoder
  // embeds: the query's image for an image encoder (else its text when the encoder
  // maps text into the image space, CLIP-style; else the lexical leg alone finds the
  // tiles by their page text and captions), the text for any other.
  const bool has_text = !query.empty();
  bool dense_on = !exp.lexical_only;
  bool image_query = false;
  encode::Encoder* encoder = nullptr;
  if (dense_on) {
    encoder = &encoders_.encoder(plan.encoder);
    if (encoder->info().modality == encode::Modality::image) {
      image_query = !req.image.empty();
      dense_on = image_query || (has_text && encoder->info().embeds_text);
    } else if (!has_text) {
      fail(ErrorCode::invalid_argument, "an image query without text reaches image collections only; '" +
                                            plan.collection + "' holds " +
                                            (encoder->info().modality == encode::Modality::molecule ? "molecules" : "text"));
    }
  }
  if (dense_on) {
    encode::check_encoder_identity(schema, *encoder);  // a changed model: refused, not 0 hits
    auto t_enc = std::chrono::steady_clock::now();
    std::vector<float> vec;
    if (image_query) {
      // EMBED_VISUAL (FIRST): a subscriber may embed the query image itself.
      const std::vector<std::string_view> images = {std::string_view(req.image)};
      auto given = bus_.first<HookPoint::EMBED_VISUAL>(ctx, images, plan.encoder);
      if (given && (given->size() != 1 || given->front().size() != schema.vector.dim))
        fail(ErrorCode::internal, "an EMBED_VISUAL subscriber returned no vector of dimension " +
                                      std::to_string(schema.vector.dim) + " for the query image");
      vec = given ? std::move(given->front()) : encoder->encode_images(images).at(0);
    } else {
      vec = encoder->encode({exp.dense_query}, encode::EncodeMode::query).at(0);
    }
    stage_ms(ctx.encode_ms, t_enc);
    auto t_search = std::chrono::steady_clock::now();
    vector_hits = coll->search_vector(vec, plan.top_k, filter, params);
    stage_ms(ctx.search_ms, t_search);
  }
  dense.reserve(vector_hits.size());
  // A lazy leg keeps the row; text and metadata come later, for the hits that survive.
  auto leg = [&](const std::vector<store::CollectionHit>& found, HitList& out, const std::string& name) {
    if (lazy) {
      for (const auto& f : found) {
        ScoredHit h;
        h.id = f.id;
        h.collection = plan.collection;
        h.score = f.score;
        h.row = f.row;
        h.materialized = false;
        if (req.explain) h.explain.leg(name, ++rank, f.score);
        out.push_back(std::move(h));
      }
      return;
    }
    coll->visit(found, [&](size_t i, const std::string& id, const std::string& text, const PackedValues& v) {
      // A compaction since the search renumbered the rows: the row is not the hit any
      // more (it could even lie outside the scope), so the hit is dropped.
      if (id != found[i].id) return;
      out.push_back(hit_from_row(id, text, v, schema, plan.collection, found[i].score));
      out.back().row = found[i].row;
      if (req.explain) out.back().explain.leg(name, ++rank, found[i].score);
    });
  };
  leg(vector_hits, dense, "dense:" + plan.collection);
  // The lexical leg sees the raw query plus the plan's sparse terms, never the
  // dense-only entity suffix.
  auto lexical_leg = [&] {
    std::string lexical_query = query;
    for (const auto& t : exp.sparse_terms) lexical_query += " " + t;
    HitList lexical;
    rank = 0;
    auto t_lex = std::chrono::steady_clock::now();
    auto text_hits = coll->search_text(lexical_query, plan.top_k, filter, params, statistics_filter(req));
    stage_ms(ctx.search_ms, t_lex);
    lexical.reserve(text_hits.size());
    leg(text_hits, lexical, "bm25:" + plan.collection);
    return lexical;
  };
  const bool hybrid = plan.hybrid || config_.hybrid_text_collections.count(plan.collection);
  HitList hits;
  if (!dense_on) {
    // No dense query for this encoder: the lexical leg alone (a compound named without
    // a structure; an image collection asked in words by an encoder that embeds images only).
    if (exp.lexical_only && ctx.telemetry)
      ctx.telemetry->audit("lexical_only", {{"collection", plan.collection}, {"encoder", plan.encoder}});
    if (has_text) hits = lexical_leg();
  } else if (!hybrid || !has_text) {
    hits = std::move(dense);
  } else if (image_query) {
    // An image and words: two different questions, neither a refinement of the other,
    // so both count alike (RRF), not the text-tuned weights below.
    HybridOptions rrf = config_.hybrid;
    rrf.fusion = HybridFusion::rrf;
    rrf.adaptive = false;
    hits = fuse_hybrid(std::move(dense), lexical_leg(), rrf, req.explain);
  } else if (config_.hybrid_mode == HybridMode::alpha) {
    materialize(dense);  // the overlap score reads the text
    hits = alpha_hybrid(std::move(dense), query, exp.sparse_terms, config_.hybrid_alpha);
  } else {
    hits = fuse_hybrid(std::move(dense), lexical_leg(), config_.hybrid, req.explain);
  }
  if (auto reranked = bus_.first<HookPoint::RERANK>(ctx, query, plan, hits)) hits = std::move(*reranked);
  return hits;
}

HitList Orchestrator::resolve_captions(HitList hits, const Scope& scope, bool explain, Telemetry& tel) const {
  auto is_caption = [](const ScoredHit& h) { return h.field("type") == "caption"; };
  if (std::none_of(hits.begin(), hits.end(), is_caption)) return hits;  // the common case
  std::unordered_set<std::string> present;
  HitList out;
  size_t replaced = 0;
  for (auto& h : hits) {
    if (is_caption(h)) {
      std::string target;
      if (h.metadata.contains("connect_to") && h.metadata.at("connect_to").is_array())
        for (const auto& edge : h.metadata.at("connect_to"))
          if (edge.is_object() && edge.value("relation", std::string()) == "caption_of")
            target = edge.value("target", std::string());
      store::Collection* coll = collections_(h.collection);
      std::optional<store::Record> r;
      if (!target.empty() && coll) r = coll->get(target, scope.expr, scope.params);
      if (!r) continue;  // its table is gone, or outside the request's scope
      auto table = hit_from_record(*r, coll->schema(), h.collection, h.score);
      if (explain) {
        table.explain = std::move(h.explain);
        table.explain.note("caption", {{"caption_row", h.id}});
      }
      h = std::move(table);
      ++replaced;
    }
    if (present.insert(h.collection + "\x1f" + h.id).second) out.push_back(std::move(h));
  }
  if (replaced) tel.event("captions", {{"replaced", replaced}});
  return out;
}

HitList Orchestrator::expand(HitList hits, const RouteDecision& route, const RetrievalRequest& req,
                             const Scope& scope, Telemetry& tel) const {
  size_t added = 0;
  HitList out;
  const bool parent_doc = config_.parent_doc_retrieval && route.hints.value("parent_doc_retrieval", true);
  // A section summary's edges lead to its own chunks: following them is the
  // parent-document drill-down by another name, so they are followed only when the
  // drill-down is on (route step 12's hint turns both off).
  auto follows_edges = [&](const ScoredHit& h) {
    return config_.graph_expansion && h.metadata.contains("connect_to") &&
           (parent_doc || h.field("type") != "section_summary");
  };
  auto needs_expansion = [&](const ScoredHit& h) {
    return follows_edges(h) || (parent_doc && h.field("type") == "section_summary");
  };
  if (std::none_of(hits.begin(), hits.end(), needs_expansion)) return hits;  // the common case
  // Hits already in `out`: a child recalled further down is pulled up behind its
  // parent (a paragraph brings the table it cites), and not listed again where it was
  // recalled.
  std::unordered_set<std::string> present;
  for (auto& h : hits) {
    if (!present.insert(h.collection + "\x1f" + h.id).second) continue;  // already listed as a child
    const bool has_edges = follows_edges(h);
    const bool is_summary = parent_doc && h.field("type") == "section_summary";
    out.push_back(std::move(h));
    if (!has_edges && !is_summary) continue;  // the common case: nothing to expand
    // A copy: `out` grows below, which would invalidate a reference into it.
    const ScoredHit parent = out.back();
    store::Collection* coll = collections_(parent.collection);
    if (!coll) continue;
    auto add = [&](const store::Record& r, const char* why) {
      if (added >= config_.max_expansion) return;
      if (!present.insert(parent.collection + "\x1f" + r.id).second) return;
      auto child = hit_from_record(r, coll->schema(), parent.collection, parent.score);  // inherits the parent's score
      child.expanded_from = parent.expanded_from.empty() ? parent.collection + "\x1f" + parent.id : parent.expanded_from;
      if (req.explain) child.explain.note(why, {{"parent", parent.id}});
      out.push_back(std::move(child));
      ++added;
    };
    // Graph expansion: one hop along connect_to (plain ids or {target, ...}).
    if (has_edges && parent.metadata.at("connect_to").is_array()) {
      for (const auto& edge : parent.metadata.at("connect_to")) {
        std::string target = edge.is_string() ? edge.get<std::string>()
                                              : (edge.is_object() ? edge.value("target", std::string()) : "");
        if (target.empty()) continue;
        if (edge.is_object() && edge.contains("relation") && edge["relation"].is_string() &&
            std::find(config_.expansion_relations.begin(), config_.expansion_relations.end(),
                      edge["relation"].get<std::string>()) == config_.expansion_relations.end())
          continue;
        // Absent targets, and targets outside the request's scope, are skipped.
        if (auto r = coll->get(target, scope.expr, scope.params)) add(*r, "graph_expansion");
      }
    }
    // Parent-document retrieval: a section summary drills down to its chunks.
    if (is_summary && !parent.path().empty()) {
      store::TemplateParams p = scope.params;
      std::string prefix;
      for (char c : parent.path()) {  // the path is a literal prefix: escape like metacharacters
        if (c == '%' || c == '_' || c == '\\') prefix.push_back('\\');
        prefix.push_back(c);
      }
      p["drill_prefix"] = prefix + "%";
      p["drill_doc"] = parent.document_id();
      const std::string f = and_join({scope.expr, "path like {drill_prefix} and type != \"section_summary\" and "
                                                  "type != \"caption\" and document_id == {drill_doc}"});
      for (const auto& r : coll->fetch(f, p, config_.max_expansion)) add(r, "parent_doc_drilldown");
    }
  }
  if (added) tel.event("expansion", {{"added", added}});
  return out;
}

RouteDecision Orchestrator::decide_route(const RetrievalRequest& req, HookContext& ctx, bool image_only) const {
  // CLASSIFY_QUERY (FIRST), else the core default route (G4: no specialised
  // collection unless a classifier adds it). An image without words goes
  // to the visual collection only: there is nothing for a classifier to read.
  std::optional<RouteDecision> classified;
  if (!image_only) classified = bus_.first<HookPoint::CLASSIFY_QUERY>(ctx, req);
  RouteDecision route;
  if (classified) {
    route = *classified;
  } else if (image_only) {
    RetrievalRequest visual = req;
    visual.route_mode = RouteMode::visual;
    route = default_route(visual);
  } else {
    route = default_route(req);
  }
  return route;
}

// Scope-aware catalog union: the collections the scoped documents used at ingest,
// each a plan of its own (the visual route asks image collections only).
void Orchestrator::add_scope_union(const RetrievalRequest& req, const Scope& scope, const HookContext& ctx,
                                   RouteDecision& route) const {
  for (const auto& c : documents_->collections_used(req.scope_filter.kb_names, scope.document_ids,
                                                    ctx.plugin_namespace, req.allowed_kbs)) {
    bool have = std::any_of(route.plans.begin(), route.plans.end(), [&](auto& p) { return p.collection == c; });
    if (have) continue;
    // The visual route asks image collections only (their rows keep an image).
    if (req.route_mode == RouteMode::visual) {
      store::Collection* coll = collections_(c);
      if (!coll || !coll->schema().field_index("image")) continue;
    }
    CollectionQueryPlan p;
    p.collection = c;
    // The encoder the collection recorded at ingest (its vectors were made by it),
    // unless configured; the default text encoder for a collection that recorded none.
    auto enc = config_.collection_encoders.find(c);
    if (enc != config_.collection_encoders.end()) {
      p.encoder = enc->second;
    } else if (store::Collection* coll = collections_(c); coll && !coll->schema().vector.encoder.empty()) {
      p.encoder = coll->schema().vector.encoder;
    } else {
      p.encoder = config_.default_text_encoder;
    }
    p.top_k = recall_depth(req);
    p.hybrid = config_.hybrid_text_collections.count(c) > 0;
    route.plans.push_back(p);
    route.hints["scope_union"].push_back(c);
  }
}

// pipeline.exclude_chunk_types, unless the request asks for chunk types itself.
void Orchestrator::exclude_chunk_types(const RetrievalRequest& req, HitList& merged, Telemetry& tel) const {
  // After recall rather than in the scope: a store without such chunks pays nothing,
  // and its plans keep their unfiltered index path.
  if (!config_.exclude_chunk_types.empty() && !req.facets.count("type") && !req.facets.count("chunk_type") &&
      req.filter.find("chunk_type") == std::string::npos) {
    const size_t before = merged.size();
    std::erase_if(merged, [&](const ScoredHit& h) {
      const std::string t = h.field("chunk_type");
      return !t.empty() && std::find(config_.exclude_chunk_types.begin(), config_.exclude_chunk_types.end(), t) !=
                               config_.exclude_chunk_types.end();
    });
    if (merged.size() < before) tel.audit("chunk_types_excluded", {{"dropped", before - merged.size()}});
  }
}

// RERANK_MERGED per the rerank policy: the namespace's domain rerank, the general
// reranker, or the fused order as it is.
void Orchestrator::rerank_merged(RerankPolicy policy, HookContext& ctx, const std::string& query,
                                 const RetrievalRequest& req, HitList& merged, Telemetry& tel) const {
  if (policy == RerankPolicy::domain) {
    if (auto r = bus_.first<HookPoint::RERANK_MERGED>(ctx, query, merged)) merged = std::move(*r);
    tel.audit("rerank_t2_domain", {{"candidates", merged.size()}});
  } else if (policy == RerankPolicy::general && encoders_.has_reranker(config_.general_reranker)) {
    std::vector<std::string> texts;
    for (const auto& h : merged) texts.push_back(h.text);
    try {
      auto scores = encoders_.reranker(config_.general_reranker).score(query, texts);
      for (size_t i = 0; i < merged.size() && i < scores.size(); ++i) {
        if (req.explain) merged[i].explain.leg("rerank_general", static_cast<int>(i + 1), scores[i]);
        merged[i].score = scores[i];
      }
      sort_hits(merged);
      tel.audit("rerank_t2_general", {{"candidates", merged.size()}, {"reranker", config_.general_reranker}});
    } catch (const std::exception& e) {
      tel.audit("rerank_t2_passthrough", {{"reason", std::string("general reranker failed: ") + e.what()}});
    }
  } else {
    tel.audit("rerank_t2_passthrough", {{"candidates", merged.size()}});
  }
}

RetrievalResponse Orchestrator::retrieve(const RetrievalRequest& req) const {
  // An image query may come without words.
  const bool image_only = !req.image.empty() && req.query.empty();
  validate_request(req, image_only);
  Telemetry tel(sink_, next_query_id());
  HookContext ctx;
  ctx.plugin_namespace = req.plugin_namespace;
  ctx.request = &req;
  ctx.telemetry = &tel;
  RetrievalResponse resp;

  // QUERY_ASSEMBLE (ALL): each subscriber appends a suffix (biomed: its entity
  // suffix); one that throws is audited and skipped. The lexical leg and the hooks
  // keep the raw query; only dense legs see the suffixes (seed: "sparse terms always
  // keep the raw query").
  const std::string query = req.query;
  for (auto& s : bus_.all<HookPoint::QUERY_ASSEMBLE>(ctx, query))
    if (!s.empty()) ctx.query_suffixes.push_back(std::move(s));

  RouteDecision route = decide_route(req, ctx, image_only);
  Scope scope = build_scope(req, ctx, tel);
  ctx.scope_filter = scope.expr;
  for (const auto& [k, v] : scope.params) ctx.scope_params[k] = v;
  ctx.statistics_filter = statistics_filter(req);
  // (An image without words asks the visual collection only.)
  if (documents_ && !req.scope_filter.empty() && !image_only) add_scope_union(req, scope, ctx, route);
  if (tel.enabled()) tel.event("route", route.to_json());

  // QUERY_DENSE_EXPAND once without an encoder: the global intent pass.
  if (auto global = bus_.first<HookPoint::QUERY_DENSE_EXPAND>(ctx, query, std::optional<std::string>()))
    ctx.extra["expanded_query"] = *global;

  // Lazy legs when nothing before the final trim reads text or metadata: one plan
  // (no cross-collection dedupe), no per-plan RERANK, no post-merge hook, no legacy
  // post-filter, no merged rerank. Only the final hits are then materialised.
  const auto policy = resolve_rerank_policy(ctx.plugin_namespace);
  const bool lazy = route.plans.size() == 1 && req.legacy_scope.empty() && policy == RerankPolicy::none &&
                    !bus_.has_subscribers(HookPoint::RERANK, ctx.plugin_namespace) &&
                    !bus_.has_subscribers(HookPoint::RRF_POST_MERGE, ctx.plugin_namespace) &&
                    !bus_.has_subscribers(HookPoint::RETRIEVE_SUPPLEMENT, ctx.plugin_namespace) &&
                    !bus_.has_subscribers(HookPoint::RETRIEVE_VISUAL_FILTER, ctx.plugin_namespace);
  std::vector<HitList> lists;
  int succeeded = 0;
  size_t text_count = 0, visual_count = 0;  // recalled per kind (the seed's recall step)
  auto run_plans = [&](const std::vector<CollectionQueryPlan>& plans) {
    for (const auto& plan : plans) {
      auto t0 = std::chrono::steady_clock::now();
      try {
        auto hits = run_plan(plan, query, scope, req, ctx, lazy);
        // RETRIEVE_VISUAL_FILTER (FIRST): a plan's image hits pass the plugin's filter
        // (e.g. a modality or section rule) before fusion.
        if (plan.collection == config_.core_visual_collection ||
            std::any_of(hits.begin(), hits.end(), [](const ScoredHit& h) { return h.is_image; }))
          if (auto filtered = bus_.first<HookPoint::RETRIEVE_VISUAL_FILTER>(ctx, query, hits)) hits = std::move(*filtered);
        ++succeeded;
        (plan.collection == config_.core_visual_collection ? visual_count : text_count) += hits.size();
        if (tel.enabled())
          tel.event("recall", {{"collection", plan.collection}, {"encoder", plan.encoder}, {"count", hits.size()},
                               {"ms", ms_since(t0)}});
        lists.push_back(std::move(hits));
      } catch (const Error& e) {
        // Stored data found corrupt is not a plan to skip: answering from the other
        // collections would hide it (0 hits, exit 0). The caller sees data_loss.
        if (e.code() == ErrorCode::data_loss) throw;
        spdlog::warn("plan {} / {} failed: {}", plan.collection, plan.encoder, e.what());
        tel.audit("plan_failed", {{"collection", plan.collection}, {"encoder", plan.encoder}, {"error", e.what()}});
        lists.emplace_back();
      } catch (const std::exception& e) {
        // Best effort: a failing plan is skipped and audited, never fatal.
        spdlog::warn("plan {} / {} failed: {}", plan.collection, plan.encoder, e.what());
        tel.audit("plan_failed", {{"collection", plan.collection}, {"encoder", plan.encoder}, {"error", e.what()}});
        lists.emplace_back();
      }
    }
  };
  run_plans(route.plans);
  // G4 fallback: a classifier's route of which no plan could run (every collection
  // absent, every plan failed) falls back to the core default route, audited, rather
  // than answering nothing.
  if (succeeded == 0 && route.source != "core_default") {
    RouteDecision fallback = default_route(req);
    tel.audit("route_fallback", {{"from", route.source}, {"plans", route.plans.size()}});
    route.hints["fallback"] = "core_default";
    run_plans(fallback.plans);
    for (auto& p : fallback.plans) route.plans.push_back(std::move(p));
  }

  HitList supplement;
  for (auto& s : bus_.all<HookPoint::RETRIEVE_SUPPLEMENT>(ctx, query))
    supplement.insert(supplement.end(), s.begin(), s.end());

  auto t_fuse = std::chrono::steady_clock::now();
  const size_t n_lists = lists.size();
  HitList merged = merge_rrf(std::move(lists), config_.rrf_k, req.explain);
  merged = dedupe_cross_collection(std::move(merged), succeeded, &tel);
  if (auto post = bus_.first<HookPoint::RRF_POST_MERGE>(ctx, query, merged, supplement)) merged = std::move(*post);
  // Legacy `scope: [document_id]`: a post-filter.
  if (!req.legacy_scope.empty()) {
    std::unordered_set<std::string> allowed(req.legacy_scope.begin(), req.legacy_scope.end());
    std::erase_if(merged, [&](const ScoredHit& h) { return !allowed.count(h.document_id()); });
  }
  // With no merged rerank, expansion only follows the hits that make the cut (children
  // come right after their parent, pulled up from wherever they were recalled), so
  // trimming first returns the same list.
  // The near-duplicate collapse may fold some of the first top_k, and a caption row
  // whose table is listed too is dropped: twice as many are kept to fill the list from.
  const size_t lazy_keep = std::min(2 * req.top_k, kMaxFinalTopK);
  if (lazy && merged.size() > lazy_keep) merged.resize(lazy_keep);
  materialize(merged);
  merged = resolve_captions(std::move(merged), scope, req.explain, tel);
  merged = expand(std::move(merged), route, req, scope, tel);
  exclude_chunk_types(req, merged, tel);
  if (tel.enabled())
    tel.event("fusion", {{"lists", n_lists}, {"succeeded", succeeded}, {"merged", merged.size()},
                         {"supplement", supplement.size()}, {"ms", ms_since(t_fuse)}});

  rerank_merged(policy, ctx, query, req, merged, tel);
  if (config_.collapse_duplicates)
    merged = collapse_near_duplicates(std::move(merged), req.top_k, config_.duplicate_similarity, &tel);
  if (merged.size() > req.top_k) merged.resize(req.top_k);
  if (req.min_score) {
    const size_t before = merged.size();
    std::erase_if(merged, [&](const ScoredHit& h) { return h.score < *req.min_score; });
    if (merged.size() < before) tel.audit("min_score", {{"min_score", *req.min_score}, {"dropped", before - merged.size()}});
  }
  if (!req.explain)
    for (auto& h : merged) h.explain = Explain{};
  resp.hits = std::move(merged);
  resp.route = std::move(route);
  resp.metadata["scope_capped"] = scope.capped;
  resp.metadata["text_count"] = text_count;
  resp.metadata["visual_count"] = visual_count;
  resp.metadata["rerank_policy"] = policy == RerankPolicy::domain ? "domain" : policy == RerankPolicy::general ? "general" : "none";
  resp.metadata["took_ms"] = tel.elapsed_ms();
  resp.metadata["encode_ms"] = ctx.encode_ms;
  resp.metadata["search_ms"] = ctx.search_ms;
  resp.metadata["audits"] = tel.audits();
  if (tel.enabled()) tel.event("done", {{"hits", resp.hits.size()}, {"total_ms", tel.elapsed_ms()}});
  return resp;
}

}  // namespace eagle::search
