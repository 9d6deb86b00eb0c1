// The RetrieverOrchestrator's rules (the G4 default route of core collections only,
// failure isolation, RRF over
// plans, scope union and cap, injection-safe values, graph expansion, parent-document
// drill-down, rerank policy resolution, explain, telemetry) over real in-memory
// collections and a deterministic test encoder.
#include "eagle/search/orchestrator.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "eagle/core/error.h"
#include "support/hash_encoder.h"

using namespace eagle;
using namespace eagle::search;
using nlohmann::json;

namespace {

using eagle::test_support::HashEncoder;

PipelineConfig no_collapse() {
  PipelineConfig cfg;
  cfg.collapse_duplicates = false;
  return cfg;
}

struct Fixture {
  std::map<std::string, std::unique_ptr<store::Collection>> colls;
  encode::EncoderRegistry reg;
  HashEncoder* enc = nullptr;
  HookBus bus;
  std::shared_ptr<MemorySink> sink = std::make_shared<MemorySink>();

  Fixture() {
    auto e = std::make_unique<HashEncoder>("glove");
    enc = e.get();
    reg.add(std::move(e));
    reg.add(std::make_unique<HashEncoder>("pubmedbert"));
    make("eagle_text");
    make("eagle_text_biomed");
  }
  store::Collection& make(const std::string& name) {
    auto s = chunk_schema(name, 32);
    s.vector.index = VectorIndexKind::flat;
    colls[name] = store::Collection::in_memory(s);
    return *colls[name];
  }
  void add(const std::string& coll, const json& fields) {
    auto& c = *colls.at(coll);
    json j = fields;
    j["vector"] = enc->encode({fields.value("text", std::string())}, encode::EncodeMode::document)[0];
    c.insert({store::record_from_json(j, c.schema())});
  }
  // The fixtures give many rows one text on purpose (scope and expansion tests), so the
  // near-duplicate collapse, tested in fusion_hookbus_test and on real labels in
  // ranking_test, is off here.
  Orchestrator orch(PipelineConfig cfg = no_collapse(), DocumentCatalog* docs = nullptr) {
    return Orchestrator([this](const std::string& n) -> store::Collection* {
      auto it = colls.find(n);
      return it == colls.end() ? nullptr : it->second.get();
    }, reg, bus, cfg, sink, docs);
  }
  std::vector<std::string> audits() const {
    std::vector<std::string> out;
    for (const auto& e : sink->events)
      if (e.contains("audit")) out.push_back(e["audit"]);
    return out;
  }
};

std::vector<std::string> hit_ids(const HitList& l) {
  std::vector<std::string> out;
  for (const auto& h : l) out.push_back(h.id);
  return out;
}

RetrievalRequest request(std::string q, size_t k = 5) {
  RetrievalRequest r;
  r.query = std::move(q);
  r.top_k = k;
  return r;
}

}  // namespace

TEST(Orchestrator, G4DefaultRouteIsTheCoreTextCollectionOnly) {
  Fixture f;
  auto o = f.orch();
  auto d = o.default_route(request("egfr"));
  ASSERT_EQ(d.plans.size(), 1u);
  EXPECT_EQ(d.plans[0].collection, "eagle_text");
  EXPECT_TRUE(d.plans[0].hybrid);
  auto hybrid = request("egfr");
  hybrid.route_mode = RouteMode::hybrid;
  auto dh = o.default_route(hybrid);
  ASSERT_EQ(dh.plans.size(), 2u);
  EXPECT_EQ(dh.plans[1].collection, "eagle_visual");
  auto img = request("egfr");
  img.has_image = true;
  EXPECT_EQ(o.default_route(img).plans.size(), 2u);
  // Never a specialised collection: eagle_text_biomed holds the only match, unused.
  f.add("eagle_text_biomed", {{"id", "b1"}, {"text", "osimertinib egfr"}});
  f.add("eagle_text", {{"id", "t1"}, {"text", "unrelated words"}});
  auto resp = o.retrieve(request("osimertinib egfr"));
  for (const auto& h : resp.hits) EXPECT_EQ(h.collection, "eagle_text");
  EXPECT_EQ(resp.route.source, "core_default");
}

TEST(Orchestrator, HybridFindsExactTermsAndExplainCarriesEveryLeg) {
  Fixture f;
  f.add("eagle_text", {{"id", "t1"}, {"text", "savolitinib plus osimertinib in MET amplified NSCLC"}, {"kb_name", "onc"}});
  f.add("eagle_text", {{"id", "t2"}, {"text", "adalimumab label warnings"}, {"kb_name", "ra"}});
  f.add("eagle_text", {{"id", "t3"}, {"text", "metformin and diabetes"}, {"kb_name", "endo"}});
  auto o = f.orch();
  auto req = request("savolitinib osimertinib");
  req.explain = true;
  auto resp = o.retrieve(req);
  ASSERT_FALSE(resp.hits.empty());
  EXPECT_EQ(resp.hits[0].id, "t1");
  EXPECT_TRUE(resp.hits[0].explain.legs.contains("dense:eagle_text"));
  EXPECT_TRUE(resp.hits[0].explain.legs.contains("bm25:eagle_text"));
  // Explain off: no legs.
  EXPECT_TRUE(o.retrieve(request("savolitinib")).hits[0].explain.legs.empty());
  // Telemetry: route, recall, fusion, done events.
  std::set<std::string> events;
  for (const auto& e : f.sink->events) events.insert(e["event"]);
  for (const char* ev : {"route", "recall", "fusion", "done"}) EXPECT_TRUE(events.count(ev)) << ev;
}

TEST(Orchestrator, AFailingPlanIsSkippedAndAuditedAndTheQueryStillAnswers) {
  Fixture f;
  f.add("eagle_text", {{"id", "t1"}, {"text", "egfr mutation"}});
  f.bus.subscribe<HookPoint::CLASSIFY_QUERY>("biomed", 0, [](HookContext&, const RetrievalRequest&) {
    RouteDecision d;
    d.source = "test";
    d.plans.push_back({"eagle_text", "glove", 10, false, "", json::object()});
    d.plans.push_back({"no_such_collection", "glove", 10, false, "", json::object()});
    d.plans.push_back({"eagle_text_biomed", "missing-encoder", 10, false, "", json::object()});
    return std::optional<RouteDecision>(d);
  });
  auto o = f.orch();
  auto req = request("egfr");
  req.plugin_namespace = "biomed";
  auto resp = o.retrieve(req);
  EXPECT_EQ(hit_ids(resp.hits), (std::vector<std::string>{"t1"}));
  auto a = f.audits();
  EXPECT_EQ(std::count(a.begin(), a.end(), "plan_failed"), 2);
}

TEST(Orchestrator, RrfMergesPlansAndDedupesTheSameChunkAcrossCollections) {
  Fixture f;
  f.add("eagle_text", {{"id", "t1"}, {"text", "egfr inhibitor"}, {"source_chunk_id", "c1"}});
  f.add("eagle_text_biomed", {{"id", "b1"}, {"text", "egfr inhibitor"}, {"source_chunk_id", "c1"}});
  f.add("eagle_text_biomed", {{"id", "b2"}, {"text", "egfr resistance"}, {"source_chunk_id", "c2"}});
  f.bus.subscribe<HookPoint::CLASSIFY_QUERY>("biomed", 0, [](HookContext&, const RetrievalRequest&) {
    RouteDecision d;
    d.plans.push_back({"eagle_text", "glove", 10, false, "", json::object()});
    d.plans.push_back({"eagle_text_biomed", "pubmedbert", 10, false, "", json::object()});
    return std::optional<RouteDecision>(d);
  });
  auto req = request("egfr inhibitor");
  req.plugin_namespace = "biomed";
  auto resp = f.orch().retrieve(req);
  auto got = hit_ids(resp.hits);
  EXPECT_EQ(std::count(got.begin(), got.end(), "b1") + std::count(got.begin(), got.end(), "t1"), 1);
  auto a = f.audits();
  EXPECT_NE(std::find(a.begin(), a.end(), "rrf_dedupe"), a.end());
}

TEST(Orchestrator, ScopeUnionIsPushedDownAndInjectionShapedValuesAreLiterals) {
  Fixture f;
  f.add("eagle_text", {{"id", "a"}, {"text", "egfr"}, {"kb_name", "onc"}, {"document_id", "d1"}});
  f.add("eagle_text", {{"id", "b"}, {"text", "egfr"}, {"kb_name", "ra"}, {"document_id", "d2"}});
  f.add("eagle_text", {{"id", "c"}, {"text", "egfr"}, {"kb_name", "endo"}, {"document_id", "d3"}, {"year", 2020}});
  auto o = f.orch();
  auto req = request("egfr", 10);
  req.scope_filter.kb_names = {"onc"};
  req.scope_filter.document_ids = {"d3"};
  auto got = hit_ids(o.retrieve(req).hits);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"a", "c"}));  // (kb in [onc] or doc in [d3])
  req.facets["year"] = 2020;                                // AND facets
  EXPECT_EQ(hit_ids(o.retrieve(req).hits), (std::vector<std::string>{"c"}));
  auto evil = request("egfr", 10);
  evil.kb_name = "a\" or kb_name != \"";
  EXPECT_TRUE(o.retrieve(evil).hits.empty());
  auto bad = request("egfr");
  bad.facets["colour"] = "red";
  EXPECT_THROW(o.retrieve(bad), Error);
  auto legacy = request("egfr", 10);
  legacy.legacy_scope = {"d2"};
  EXPECT_EQ(hit_ids(o.retrieve(legacy).hits), (std::vector<std::string>{"b"}));
}

namespace {
class FakeCatalog : public DocumentCatalog {
 public:
  std::vector<std::string> ids_for_tags(const std::vector<std::string>&, const std::string& ns, size_t limit,
                                        const std::vector<std::string>&) override {
    std::vector<std::string> out;
    for (size_t i = 0; i < 600 && out.size() < limit; ++i) out.push_back("doc" + std::to_string(i));
    last_ns = ns;
    return out;
  }
  std::vector<std::string> collections_used(const std::vector<std::string>&, const std::vector<std::string>&,
                                            const std::string&, const std::vector<std::string>&) override {
    return {"eagle_text", "eagle_text_biomed"};
  }
  std::string last_ns;
};
}  // namespace

TEST(Orchestrator, TagsResolveThroughTheRegistryCappedAtMaxScopeDocumentsAndCatalogUnionAddsPlans) {
  Fixture f;
  // The biomedical collection recorded its encoder at ingest: the union plans it with
  // that encoder, not the core one (its plan would fail on the encoder check).
  auto schema = chunk_schema("eagle_text_biomed", 32);
  schema.vector.index = VectorIndexKind::flat;
  schema.vector.encoder = "pubmedbert";
  f.colls["eagle_text_biomed"] = store::Collection::in_memory(schema);
  f.add("eagle_text", {{"id", "a"}, {"text", "egfr"}, {"document_id", "doc3"}});
  f.add("eagle_text_biomed", {{"id", "b"}, {"text", "egfr"}, {"document_id", "doc4"}});
  f.add("eagle_text", {{"id", "z"}, {"text", "egfr"}, {"document_id", "doc599"}});  // beyond the cap
  FakeCatalog cat;
  auto o = f.orch(no_collapse(), &cat);
  auto req = request("egfr", 10);
  req.scope_filter.tags = {"oncology"};
  req.plugin_namespace = "biomed";
  auto resp = o.retrieve(req);
  EXPECT_EQ(cat.last_ns, "biomed");
  EXPECT_TRUE(resp.metadata["scope_capped"].get<bool>());
  auto got = hit_ids(resp.hits);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"a", "b"}));  // b via the catalog union plan
  ASSERT_EQ(resp.route.plans.size(), 2u);
  EXPECT_EQ(resp.route.plans[1].collection, "eagle_text_biomed");
  EXPECT_EQ(resp.route.plans[1].encoder, "pubmedbert");
  auto a = f.audits();
  EXPECT_NE(std::find(a.begin(), a.end(), "scope_capped"), a.end());
}

// A route of one plan that recalls one hit (the default route recalls at least the
// hits asked for), so what else comes back can only come by expansion.
void recall_one(Fixture& f, const std::string& ns) {
  f.bus.subscribe<HookPoint::CLASSIFY_QUERY>(ns, 0, [](HookContext&, const RetrievalRequest&) {
    RouteDecision d;
    d.plans.push_back({"eagle_text", "glove", 1, false, "", json::object()});
    return std::optional<RouteDecision>(d);
  });
}

// G4 fallback: a classifier's route none of whose plans can run
// answers from the core default route, audited, instead of returning nothing.
TEST(Orchestrator, ARouteWhosePlansAllFailFallsBackToTheCoreDefaultRoute) {
  Fixture f;
  f.add("eagle_text", {{"id", "t1"}, {"text", "ligand binding of ccl19"}});
  f.bus.subscribe<HookPoint::CLASSIFY_QUERY>("biomed", 0, [](HookContext&, const RetrievalRequest&) {
    RouteDecision d;
    d.source = "test";
    d.plans.push_back({"eagle_chemical", "molformer", 10, false, "", json::object()});
    return std::optional<RouteDecision>(d);
  });
  auto req = request("ccl19 ligand");
  req.plugin_namespace = "biomed";
  auto resp = f.orch().retrieve(req);
  EXPECT_EQ(hit_ids(resp.hits), (std::vector<std::string>{"t1"}));
  auto a = f.audits();
  EXPECT_EQ(std::count(a.begin(), a.end(), "plan_failed"), 1);
  EXPECT_EQ(std::count(a.begin(), a.end(), "route_fallback"), 1);
  EXPECT_EQ(resp.route.hints.value("fallback", ""), "core_default");
  // A route with one working plan does not fall back.
  f.sink->events.clear();
  EXPECT_EQ(hit_ids(f.orch().retrieve(request("ccl19 ligand")).hits), hit_ids(resp.hits));
  auto after = f.audits();
  EXPECT_EQ(std::count(after.begin(), after.end(), "route_fallback"), 0);
}

TEST(Orchestrator, GraphExpansionFollowsConnectToOneHopInheritingTheScore) {
  Fixture f;
  f.add("eagle_text", {{"id", "p"},
                       {"text", "egfr results"},
                       {"connect_to", json::array({"tbl", {{"target", "fig"}, {"relation", "cites"}},
                                                   {{"target", "nb"}, {"relation", "next"}}, "gone"})}});
  f.add("eagle_text", {{"id", "tbl"}, {"text", "table of numbers"}, {"connect_to", json::array({"deep"})}});
  f.add("eagle_text", {{"id", "fig"}, {"text", "figure caption"}});
  f.add("eagle_text", {{"id", "nb"}, {"text", "the next paragraph"}});
  f.add("eagle_text", {{"id", "deep"}, {"text", "two hops away"}});
  PipelineConfig cfg = no_collapse();
  cfg.hybrid_text_collections.clear();
  recall_one(f, "core");  // one recalled hit: the others can only come by expansion
  auto resp = f.orch(cfg).retrieve(request("egfr results", 10));
  auto got = hit_ids(resp.hits);
  EXPECT_EQ(got[0], "p");
  EXPECT_NE(std::find(got.begin(), got.end(), "tbl"), got.end());    // an edge without a relation
  EXPECT_NE(std::find(got.begin(), got.end(), "fig"), got.end());    // "cites" is followed by default
  EXPECT_EQ(std::find(got.begin(), got.end(), "nb"), got.end());     // "next" is not
  EXPECT_EQ(std::find(got.begin(), got.end(), "deep"), got.end());   // one hop only
  for (const auto& h : resp.hits) EXPECT_DOUBLE_EQ(h.score, resp.hits[0].score);  // inherited
  // pipeline.expansion_relations picks the relations followed.
  cfg.expansion_relations = {"next"};
  got = hit_ids(f.orch(cfg).retrieve(request("egfr results", 10)).hits);
  EXPECT_NE(std::find(got.begin(), got.end(), "nb"), got.end());
  EXPECT_EQ(std::find(got.begin(), got.end(), "fig"), got.end());
}

TEST(Orchestrator, ParentDocumentRetrievalDrillsDownByPathUnlessTheRouteDisablesIt) {
  Fixture f;
  // The summary also links its chunk by connect_to, as the SPL and paper chunkers do:
  // with the drill-down off, that edge must not bring the chunk in either.
  f.add("eagle_text", {{"id", "s"}, {"text", "summary of results section"}, {"type", "section_summary"},
                       {"path", "paper/Results"}, {"document_id", "d"}, {"connect_to", json::array({"c1"})}});
  f.add("eagle_text", {{"id", "c1"}, {"text", "first chunk"}, {"type", "text"}, {"path", "paper/Results/Efficacy"},
                       {"document_id", "d"}});
  f.add("eagle_text", {{"id", "c2"}, {"text", "other"}, {"type", "text"}, {"path", "paper/Methods"}, {"document_id", "d"}});
  f.add("eagle_text", {{"id", "c3"}, {"text", "other doc"}, {"type", "text"}, {"path", "paper/Results/X"},
                       {"document_id", "e"}});
  PipelineConfig cfg = no_collapse();
  cfg.hybrid_text_collections.clear();
  recall_one(f, "core");
  auto drilled = f.orch(cfg).retrieve(request("summary of results section", 10)).hits;
  EXPECT_EQ(hit_ids(drilled), (std::vector<std::string>{"s", "c1"}));
  EXPECT_EQ(drilled[1].expanded_from, "eagle_text\x1fs");  // a reranker can tell where its score came from
  f.bus.subscribe<HookPoint::CLASSIFY_QUERY>("biomed", 0, [](HookContext&, const RetrievalRequest&) {
    RouteDecision d;
    d.plans.push_back({"eagle_text", "glove", 1, false, "", json::object()});
    d.hints["parent_doc_retrieval"] = false;
    return std::optional<RouteDecision>(d);
  });
  auto req = request("summary of results section", 10);
  req.plugin_namespace = "biomed";
  EXPECT_EQ(hit_ids(f.orch(cfg).retrieve(req).hits), (std::vector<std::string>{"s"}));
}

TEST(Orchestrator, RerankPolicyResolutionAndSupplementInjectionThroughHooks) {
  Fixture f;
  f.add("eagle_text", {{"id", "t1"}, {"text", "egfr"}});
  f.add("eagle_text", {{"id", "t2"}, {"text", "egfr egfr"}});
  auto o = f.orch();
  EXPECT_EQ(o.resolve_rerank_policy("core"), RerankPolicy::none);
  f.bus.subscribe<HookPoint::RETRIEVE_SUPPLEMENT>("biomed", 0, [](HookContext&, const std::string&) {
    ScoredHit s;
    s.id = "supp";
    s.collection = "eagle_text";
    s.score = 1.0;
    return std::optional<HitList>(HitList{s});
  });
  f.bus.subscribe<HookPoint::RRF_POST_MERGE>("biomed", 0, [](HookContext&, const std::string&, const HitList& m,
                                                            const HitList& s) {
    return std::optional<HitList>(inject_supplement_candidates(m, s, 2));
  });
  f.bus.subscribe<HookPoint::RERANK_MERGED>("biomed", 0, [](HookContext&, const std::string&, const HitList& m) {
    HitList r(m.rbegin(), m.rend());  // a visible reordering
    return std::optional<HitList>(r);
  });
  EXPECT_EQ(o.resolve_rerank_policy("biomed"), RerankPolicy::domain);
  auto req = request("egfr", 10);
  req.plugin_namespace = "biomed";
  auto resp = o.retrieve(req);
  EXPECT_EQ(resp.hits.back().id, "supp");  // injected on top, then reversed by the domain rerank
  EXPECT_EQ(resp.metadata["rerank_policy"], "domain");
  auto a = f.audits();
  EXPECT_NE(std::find(a.begin(), a.end(), "rerank_t2_domain"), a.end());
  PipelineConfig cfg;
  cfg.rerank_policy["biomed"] = RerankPolicy::none;
  EXPECT_EQ(f.orch(cfg).resolve_rerank_policy("biomed"), RerankPolicy::none);
}

// Seed (biomed-retrieval.txt): "QUERY_ASSEMBLE (all, biomed appends entity suffix)";
// "Sparse terms always keep the raw query; only the dense embedding sees the entity
// suffix."
TEST(Orchestrator, QueryAssembleAppendsEverySuffixForTheDenseLegOnly) {
  Fixture f;
  f.add("eagle_text", {{"id", "raw"}, {"text", "gamma"}});
  f.add("eagle_text", {{"id", "suffix"}, {"text", "alpha beta"}});
  std::vector<std::string> seen;
  f.bus.subscribe<HookPoint::QUERY_ASSEMBLE>("*", 0, [&](HookContext&, const std::string& q) {
    seen.push_back(q);
    return std::optional<std::string>("alpha");
  }, "first_suffix");
  f.bus.subscribe<HookPoint::QUERY_ASSEMBLE>("*", 1, [&](HookContext&, const std::string&) -> std::optional<std::string> {
    throw Error(ErrorCode::internal, "broken subscriber");
  }, "broken");
  f.bus.subscribe<HookPoint::QUERY_ASSEMBLE>("*", 2, [&](HookContext&, const std::string& q) {
    seen.push_back(q);
    return std::optional<std::string>("beta");
  }, "second_suffix");
  std::vector<std::string> expanded_with;
  f.bus.subscribe<HookPoint::RERANK>("*", 0, [&](HookContext& c, const std::string& q, const CollectionQueryPlan&,
                                                const HitList&) {
    expanded_with.push_back(q);
    expanded_with.push_back(c.assembled_query(q));
    return std::optional<HitList>();
  });
  auto req = request("gamma", 5);
  req.explain = true;
  auto resp = f.orch().retrieve(req);
  // Each subscriber saw the raw query, not the previous subscriber's result.
  EXPECT_EQ(seen, (std::vector<std::string>{"gamma", "gamma"}));
  // Later hooks see the raw query; the assembled one appends both suffixes in order.
  EXPECT_EQ(expanded_with, (std::vector<std::string>{"gamma", "gamma alpha beta"}));
  std::map<std::string, const ScoredHit*> by_id;
  for (const auto& h : resp.hits) by_id[h.id] = &h;
  ASSERT_TRUE(by_id.count("raw") && by_id.count("suffix"));
  // The lexical leg matched the raw query only; the dense leg embedded the suffixes.
  EXPECT_TRUE(by_id["raw"]->explain.legs.contains("bm25:eagle_text"));
  EXPECT_FALSE(by_id["suffix"]->explain.legs.contains("bm25:eagle_text"));
  EXPECT_TRUE(by_id["suffix"]->explain.legs.contains("dense:eagle_text"));
  auto a = f.audits();
  EXPECT_NE(std::find(a.begin(), a.end(), "hook_failed"), a.end());  // the broken one, skipped
}

// SPEC: RETRIEVE_VISUAL_FILTER (first) filters a plan's image hits; a FIRST
// subscriber that throws is skipped and audited, never fatal.
TEST(Orchestrator, VisualFilterSeesImageHitsAndAThrowingFirstSubscriberIsSkipped) {
  Fixture f;
  f.add("eagle_text", {{"id", "para"}, {"text", "egfr mutation"}, {"type", "text"}});
  f.add("eagle_text", {{"id", "fig"}, {"text", "egfr mutation figure"}, {"type", "image"}});
  size_t filtered = 0;
  f.bus.subscribe<HookPoint::RETRIEVE_VISUAL_FILTER>("*", 0, [&](HookContext&, const std::string&, const HitList& hits) {
    ++filtered;
    HitList kept;
    for (const auto& h : hits)
      if (!h.is_image) kept.push_back(h);
    return std::optional<HitList>(kept);
  });
  f.bus.subscribe<HookPoint::CLASSIFY_QUERY>("*", 0, [](HookContext&, const RetrievalRequest&) -> std::optional<RouteDecision> {
    throw Error(ErrorCode::internal, "broken classifier");
  }, "broken_route");
  auto resp = f.orch().retrieve(request("egfr mutation"));
  EXPECT_EQ(filtered, 1u);
  EXPECT_EQ(hit_ids(resp.hits), (std::vector<std::string>{"para"}));
  EXPECT_EQ(resp.route.source, "core_default");  // the broken classifier abstained
  auto a = f.audits();
  EXPECT_NE(std::find(a.begin(), a.end(), "hook_failed"), a.end());
}

TEST(Orchestrator, RequestBoundsAreEnforced) {
  Fixture f;
  auto o = f.orch();
  EXPECT_THROW(o.retrieve(request("")), Error);
  EXPECT_THROW(o.retrieve(request("x", 0)), Error);
  EXPECT_THROW(o.retrieve(request("x", kMaxFinalTopK + 1)), Error);
  EXPECT_THROW(o.retrieve(request(std::string(kMaxQueryBytes + 1, 'a'))), Error);
}

#include "eagle/registry/registry.h"
#include "eagle/search/registry_catalog.h"

TEST(Orchestrator, ScopeTagsResolveThroughTheSqliteRegistry) {
  Fixture f;
  f.add("eagle_text", {{"id", "a"}, {"text", "egfr"}, {"document_id", "doc-a"}});
  f.add("eagle_text", {{"id", "b"}, {"text", "egfr"}, {"document_id", "doc-b"}});
  f.add("eagle_text_biomed", {{"id", "c"}, {"text", "egfr"}, {"document_id", "doc-a"}});
  auto reg = registry::open_registry("sqlite::memory:");
  registry::DocumentRecord d;
  d.document_id = "doc-a";
  d.name = "Tagrisso label";
  d.plugin_namespace = "biomed";
  d.collections_used = {"eagle_text", "eagle_text_biomed"};
  reg->upsert(d);
  reg->set_keywords("doc-a", "biomed", {"oncology"});
  RegistryCatalog cat(*reg);
  auto o = f.orch(no_collapse(), &cat);
  auto req = request("egfr", 10);
  req.plugin_namespace = "biomed";
  req.scope_filter.tags = {"oncology"};
  auto got = hit_ids(o.retrieve(req).hits);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"a", "c"}));  // doc-b is out of scope; c via the catalog union
  req.plugin_namespace = "core";  // tags are namespace-scoped: nothing resolves
  EXPECT_TRUE(o.retrieve(req).hits.empty());
}

// Lazy legs (only the final hits are read from the rows) must return exactly what
// eager legs return: a pass-through RERANK subscriber forces the eager path.
TEST(Orchestrator, LazyHitMaterialisationEqualsTheEagerPath) {
  Fixture f;
  // connect_to edges between recalled hits: a child that is itself a (trimmed) hit
  // must be handled the same way on both paths.
  for (int i = 0; i < 40; ++i)
    f.add("eagle_text", {{"id", "d" + std::to_string(i)},
                         {"text", "doc " + std::to_string(i) + (i % 3 ? " egfr mutation" : " met amplification")},
                         {"kb_name", i % 2 ? "a" : "b"},
                         {"year", 2000 + i},
                         {"connect_to", json::array({"d" + std::to_string((i * 7 + 3) % 40)})}});
  auto req = request("egfr met amplification", 7);
  req.explain = true;
  auto lazy = f.orch().retrieve(req);
  HookBus eager_bus;
  eager_bus.subscribe<HookPoint::RERANK>("core", 1, [](HookContext&, const std::string&, const CollectionQueryPlan&,
                                                        const HitList&) { return std::optional<HitList>(); });
  Orchestrator eager([&](const std::string& n) -> store::Collection* {
    auto it = f.colls.find(n);
    return it == f.colls.end() ? nullptr : it->second.get();
  }, f.reg, eager_bus, PipelineConfig{}, f.sink);
  auto full = eager.retrieve(req);
  ASSERT_EQ(lazy.hits.size(), 7u);
  ASSERT_EQ(lazy.hits.size(), full.hits.size());
  for (size_t i = 0; i < lazy.hits.size(); ++i) {
    EXPECT_EQ(lazy.hits[i].id, full.hits[i].id);
    EXPECT_DOUBLE_EQ(lazy.hits[i].score, full.hits[i].score);
    EXPECT_EQ(lazy.hits[i].text, full.hits[i].text);
    EXPECT_EQ(lazy.hits[i].metadata, full.hits[i].metadata);
    EXPECT_EQ(lazy.hits[i].explain.legs, full.hits[i].explain.legs);
    EXPECT_TRUE(lazy.hits[i].materialized);
    EXPECT_FALSE(lazy.hits[i].text.empty());
  }
}

// Every way a request narrows its scope (kb_name, scope_filter kb/doc, a facet, a
// filter expression, a token's allowed_kbs) holds on graph expansion and on the
// parent-document drill-down: no expanded row outside the scope. A subscriber that
// reads rows (the biomed supplement) receives the scope in its context.
TEST(Orchestrator, NoScopeLeaksThroughExpansionDrillDownOrTheSupplementContext) {
  Fixture f;
  // In scope (kb "in", year 2020, document "din"): a hit with edges into kb "out",
  // and a section summary whose children live partly in kb "out".
  f.add("eagle_text", {{"id", "p"}, {"text", "egfr results"}, {"kb_name", "in"}, {"year", 2020},
                       {"document_id", "din"}, {"connect_to", json::array({"ok", "leak"})}});
  f.add("eagle_text", {{"id", "ok"}, {"text", "linked table"}, {"kb_name", "in"}, {"year", 2020},
                       {"document_id", "din"}});
  f.add("eagle_text", {{"id", "leak"}, {"text", "secret table"}, {"kb_name", "out"}, {"year", 2019},
                       {"document_id", "dout"}});
  f.add("eagle_text", {{"id", "s"}, {"text", "summary egfr results"}, {"type", "section_summary"},
                       {"path", "paper/Results"}, {"document_id", "din"}, {"kb_name", "in"}, {"year", 2020}});
  f.add("eagle_text", {{"id", "c_in"}, {"text", "child"}, {"type", "text"}, {"path", "paper/Results/A"},
                       {"document_id", "din"}, {"kb_name", "in"}, {"year", 2020}});
  f.add("eagle_text", {{"id", "c_out"}, {"text", "child"}, {"type", "text"}, {"path", "paper/Results/B"},
                       {"document_id", "din"}, {"kb_name", "out"}, {"year", 2019}});
  std::string seen_scope;
  std::map<std::string, json> seen_params;
  f.bus.subscribe<HookPoint::RETRIEVE_SUPPLEMENT>("core", 0, [&](HookContext& ctx, const std::string&) {
    seen_scope = ctx.scope_filter;
    seen_params = ctx.scope_params;
    return std::optional<HitList>();
  });
  PipelineConfig cfg = no_collapse();
  cfg.hybrid_text_collections.clear();
  cfg.recall_top_k = 2;
  std::vector<std::pair<std::string, std::function<void(RetrievalRequest&)>>> scopes = {
      {"kb_name", [](RetrievalRequest& r) { r.kb_name = "in"; }},
      {"scope_filter.kb_names", [](RetrievalRequest& r) { r.scope_filter.kb_names = {"in"}; }},
      {"facet year", [](RetrievalRequest& r) { r.facets["year"] = 2020; }},
      {"filter", [](RetrievalRequest& r) { r.filter = "kb_name == \"in\""; }},
      {"allowed_kbs", [](RetrievalRequest& r) { r.allowed_kbs = {"in"}; }},
  };
  for (const auto& [name, narrow] : scopes) {
    auto req = request("egfr results", 10);
    narrow(req);
    auto got = hit_ids(f.orch(cfg).retrieve(req).hits);
    EXPECT_NE(std::find(got.begin(), got.end(), "ok"), got.end()) << name;     // in-scope edge followed
    EXPECT_NE(std::find(got.begin(), got.end(), "c_in"), got.end()) << name;   // in-scope child
    EXPECT_EQ(std::find(got.begin(), got.end(), "leak"), got.end()) << name;   // graph expansion held
    EXPECT_EQ(std::find(got.begin(), got.end(), "c_out"), got.end()) << name;  // drill-down held
    EXPECT_FALSE(seen_scope.empty()) << name;
    // The supplement's context filter selects exactly the in-scope rows.
    auto& coll = *f.colls.at("eagle_text");
    auto allowed = coll.filter(seen_scope, store::TemplateParams(seen_params.begin(), seen_params.end()));
    EXPECT_FALSE(coll.get("leak", seen_scope, store::TemplateParams(seen_params.begin(), seen_params.end())).has_value())
        << name;
    EXPECT_GT(allowed.count(), 0u) << name;
  }
  // Without a scope everything is reachable (the test would catch nothing otherwise).
  auto open = hit_ids(f.orch(cfg).retrieve(request("egfr results", 10)).hits);
  EXPECT_NE(std::find(open.begin(), open.end(), "leak"), open.end());
  EXPECT_NE(std::find(open.begin(), open.end(), "c_out"), open.end());
}

TEST(Orchestrator, AFilterExpressionIsParsedAloneSoItCannotEscapeItsParentheses) {
  Fixture f;
  f.add("eagle_text", {{"id", "a"}, {"text", "egfr"}, {"kb_name", "in"}});
  f.add("eagle_text", {{"id", "b"}, {"text", "egfr"}, {"kb_name", "out"}});
  auto req = request("egfr", 10);
  req.allowed_kbs = {"in"};
  // Unbalanced on its own: would turn "(kb in ...) and (1 == 1) or (kb != x)" into a leak.
  req.filter = "kb_name == \"in\") or (kb_name != \"nothing\"";
  EXPECT_THROW(f.orch().retrieve(req), Error);
  req.filter = "kb_name == {kb}";  // template parameters are not the caller's to bind
  EXPECT_THROW(f.orch().retrieve(req), Error);
  req.filter = "kb_name != \"nothing\"";
  EXPECT_EQ(hit_ids(f.orch().retrieve(req).hits), (std::vector<std::string>{"a"}));
}
