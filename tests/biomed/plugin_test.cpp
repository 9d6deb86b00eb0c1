// The biomed plugin's seed rules (biomed-retrieval.txt), each test named after the
// rule it checks: the intent table, the route decision tree, expansion caps, entity
// scores, supplement limit and formula, RRF post-merge injection, the five Tier-2
// weight profiles, the cross-drug penalty, the chemical max-merge and the fallbacks.
#include "eagle/biomed/plugin.h"
#include "eagle/biomed/brand_knowledge.h"

#include <gtest/gtest.h>

#include <cctype>
#include <map>

#include "eagle/core/error.h"
#include "eagle/encode/chem/chem_encoder.h"
#include "support/hash_encoder.h"

using namespace eagle;
using namespace eagle::biomed;
using eagle::test_support::HashEncoder;
using nlohmann::json;
using search::HitList;
using search::ScoredHit;

namespace {

// A small in-memory vocabulary: case-insensitive matching at letter boundaries.
class FakeKnowledge : public EntityKnowledge {
 public:
  EntityId add(Entity e) {
    entities_.push_back(std::move(e));
    return static_cast<EntityId>(entities_.size() - 1);
  }
  std::vector<EntityMatch> match_entities(std::string_view text) const override {
    const std::string t = ascii_lower(text);
    std::vector<EntityMatch> out;
    for (EntityId id = 0; id < entities_.size(); ++id) {
      std::vector<std::string> names = {entities_[id].name};
      names.insert(names.end(), entities_[id].aliases.begin(), entities_[id].aliases.end());
      for (const auto& n : names) {
        const std::string ln = ascii_lower(n);
        size_t pos = t.find(ln);
        while (pos != std::string::npos) {
          const bool left = pos == 0 || !std::isalpha(static_cast<unsigned char>(t[pos - 1]));
          const bool right = pos + ln.size() >= t.size() || !std::isalpha(static_cast<unsigned char>(t[pos + ln.size()]));
          if (left && right) {
            out.push_back({pos, pos + ln.size(), std::string(text.substr(pos, ln.size())), id, entities_[id].type});
            break;
          }
          pos = t.find(ln, pos + 1);
        }
      }
    }
    std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.start < b.start; });
    return out;
  }
  std::vector<EntityMatch> match_drug_entities(std::string_view text) const override {
    auto all = match_entities(text);
    std::erase_if(all, [](const EntityMatch& m) { return m.type != EntityType::drug; });
    return all;
  }
  const Entity& entity(EntityId id) const override { return entities_.at(id); }

 private:
  std::vector<Entity> entities_;
};

constexpr const char* kImatinib = "CC1=C(C=C(C=C1)NC(=O)C2=CC=C(C=C2)CN3CCN(CC3)C)NC4=NC=CC(=N4)C5=CN=CC=C5";
constexpr const char* kNilotinib =
    "CC1=CN(C=N1)C2=CC(=CC(=C2)C(F)(F)F)NC(=O)C3=CC(=C(C=C3)C)NC4=NC=CC(=N4)C5=CN=CC=C5";

FakeKnowledge make_kb() {
  FakeKnowledge kb;
  kb.add({"DRUGBANK:DB00051", "adalimumab", {"Humira"}, EntityType::drug, {}, {}, ""});
  kb.add({"DRUGBANK:DB01076", "atorvastatin", {"Lipitor"}, EntityType::drug, {}, {}, ""});
  kb.add({"DRUGBANK:DB00619", "imatinib", {"Gleevec", "STI-571", "CGP-57148"}, EntityType::drug, {}, {}, kImatinib});
  kb.add({"DRUGBANK:DB04868", "nilotinib", {"Tasigna"}, EntityType::drug, {}, {}, kNilotinib});
  kb.add({"DRUGBANK:DB11791", "capmatinib", {}, EntityType::drug, {}, {}, ""});
  kb.add({"DRUGBANK:DB12010", "osimertinib", {"Tagrisso"}, EntityType::drug, {}, {}, ""});
  kb.add({"DRUGBANK:DB15685", "savolitinib", {"volitinib"}, EntityType::drug, {}, {}, ""});
  kb.add({"NCBIGENE:1956", "EGFR", {"ERBB1", "HER1", "mENA"}, EntityType::gene, {"osimertinib", "gefitinib"},
          {"ErbB signaling pathway"}, ""});
  kb.add({"NCBIGENE:4233", "MET", {"HGFR", "c-Met"}, EntityType::gene, {"capmatinib"}, {"HGF/MET signaling"}, ""});
  kb.add({"DOID:3908", "non-small cell lung carcinoma", {"NSCLC"}, EntityType::disease, {}, {}, ""});
  return kb;
}

struct Fixture {
  FakeKnowledge kb = make_kb();
  std::map<std::string, std::unique_ptr<store::Collection>> colls;
  encode::EncoderRegistry reg;
  std::unique_ptr<registry::DocumentRegistry> docs = registry::open_registry("sqlite::memory:");
  search::HookBus bus;
  std::shared_ptr<search::MemorySink> sink = std::make_shared<search::MemorySink>();
  HashEncoder* enc = nullptr;

  explicit Fixture(std::vector<std::string> text_collections = {"eagle_text_biomed", "eagle_text"}) {
    auto e = std::make_unique<HashEncoder>("pubmedbert");
    enc = e.get();
    reg.add(std::move(e));
    reg.add(std::make_unique<HashEncoder>("text-embedding-v4"));
    reg.add(encode::make_chem_encoder("molformer"));
    for (const auto& c : text_collections) {
      auto s = chunk_schema(c, 32, Metric::cosine, chunk_fields());
      s.vector.index = VectorIndexKind::flat;
      colls[c] = store::Collection::in_memory(s);
    }
  }
  search::CollectionProvider provider() {
    return [this](const std::string& n) -> store::Collection* {
      auto it = colls.find(n);
      return it == colls.end() ? nullptr : it->second.get();
    };
  }
  void add_chemical() {
    auto s = encode::compound_schema("eagle_chemical", {}, {{"primary_drugs", FieldType::string_list, true}});
    colls["eagle_chemical"] = store::Collection::in_memory(s);
  }
  void add_chunk(const std::string& coll, json fields) {
    auto& c = *colls.at(coll);
    fields["vector"] = enc->encode({fields.value("text", std::string())}, encode::EncodeMode::document)[0];
    c.insert({store::record_from_json(fields, c.schema())});
  }
  void add_compound(const std::string& id, const std::string& name, const std::string& smiles) {
    auto& c = *colls.at("eagle_chemical");
    auto v = reg.encoder("molformer").encode({smiles}, encode::EncodeMode::document)[0];
    json j = {{"id", id}, {"text", name + " SMILES: " + smiles}, {"name", name}, {"smiles", smiles},
              {"document_id", id}, {"primary_drugs", json::array({name})}, {"vector", v}};
    c.insert({store::record_from_json(j, c.schema())});
    registry::DocumentRecord r;
    r.document_id = id;
    r.name = name;
    r.plugin_namespace = "biomed";
    r.collections_used = {"eagle_chemical"};
    docs->upsert(r);
  }
  BiomedPlugin plugin(BiomedOptions o = {}) { return BiomedPlugin(kb, provider(), reg, docs.get(), std::move(o)); }
};

// The seed's literal stages, where Eagle's measured defaults differ (plugin.h says
// why): Tier-1 entity filter on, sparse terms on, the cross-drug penalty on every hit.
BiomedOptions seed_literal() {
  BiomedOptions o;
  o.tier1_entity_filter = true;
  o.sparse_terms_enabled = true;
  o.xdrug_source_types.clear();
  o.entity_min_query_share = 0.0;
  return o;
}

search::HookContext context(const search::RetrievalRequest& req) {
  search::HookContext ctx;
  ctx.plugin_namespace = req.plugin_namespace;
  ctx.request = &req;
  return ctx;
}

search::RetrievalRequest request(std::string q, std::string ns = "biomed") {
  search::RetrievalRequest r;
  r.query = std::move(q);
  r.plugin_namespace = std::move(ns);
  return r;
}

std::vector<std::string> collections_of(const search::RouteDecision& d) {
  std::vector<std::string> out;
  for (const auto& p : d.plans) out.push_back(p.collection);
  return out;
}

ScoredHit hit(std::string id, double score, json meta = json::object(), std::string text = "") {
  ScoredHit h;
  h.id = std::move(id);
  h.collection = "eagle_text_biomed";
  h.score = score;
  h.metadata = std::move(meta);
  h.text = std::move(text);
  return h;
}

}  // namespace

// ---- detect_retrieval_intent: the first matching cue wins ------------------------------

TEST(QueryIntent, ChemicalCueWinsFirst) {
  auto kb = make_kb();
  auto i = detect_retrieval_intent("compounds similar to imatinib on the drug label", kb);
  EXPECT_EQ(i.workflow, "chemical");
  EXPECT_TRUE(i.suppress_collections.empty());
  EXPECT_EQ(i.section_cues, std::vector<std::string>{"compound"});
  EXPECT_TRUE(i.require_entity_match);
  EXPECT_EQ(detect_retrieval_intent("ligand binding of X", kb).workflow, "chemical");
  EXPECT_EQ(detect_retrieval_intent("what is its SMILES", kb).workflow, "chemical");
}

TEST(QueryIntent, RegulatorySuppressesChemicalAndTakesSectionCues) {
  auto kb = make_kb();
  auto i = detect_retrieval_intent("What are the warnings on the Humira label?", kb);
  EXPECT_EQ(i.workflow, "regulatory");
  EXPECT_EQ(i.suppress_collections, std::vector<std::string>{"eagle_chemical"});
  EXPECT_EQ(i.section_cues, std::vector<std::string>{"warnings"});
  EXPECT_TRUE(i.require_entity_match);
  auto d = detect_retrieval_intent("prescribing information dosage and indications", kb);
  EXPECT_EQ(d.workflow, "regulatory");
  EXPECT_EQ(d.section_cues, (std::vector<std::string>{"dosage", "indications_and_usage"}));
}

TEST(QueryIntent, CombinationNeedsTheCueAndTwoDrugs) {
  auto kb = make_kb();
  auto c = detect_retrieval_intent("savolitinib plus osimertinib in MET-amplified NSCLC", kb);
  EXPECT_EQ(c.workflow, "combination");
  EXPECT_TRUE(c.require_entity_match);
  EXPECT_EQ(c.drugs, (std::vector<std::string>{"savolitinib", "osimertinib"}));
  // One drug with a combination cue is a drug_entity query.
  EXPECT_EQ(detect_retrieval_intent("osimertinib in combination", kb).workflow, "drug_entity");
  // Two mentions of the same drug (brand + generic) are one drug.
  EXPECT_EQ(detect_retrieval_intent("Tagrisso plus osimertinib", kb).workflow, "drug_entity");
}

TEST(QueryIntent, DrugEntityThenGeneral) {
  auto kb = make_kb();
  auto d = detect_retrieval_intent("dosing of atorvastatin", kb);
  EXPECT_EQ(d.workflow, "drug_entity");
  EXPECT_EQ(d.section_cues, std::vector<std::string>{"dosage"});
  auto g = detect_retrieval_intent("EGFR signalling in lung cancer", kb);
  EXPECT_EQ(g.workflow, "general");
  EXPECT_FALSE(g.require_entity_match);
  EXPECT_TRUE(g.suppress_collections.empty());
}

TEST(QueryIntent, CuesMatchAtWordStartsOnly) {
  EXPECT_TRUE(has_cue("the compounds here", "compound"));
  EXPECT_FALSE(has_cue("surplus", "plus"));
  EXPECT_FALSE(has_cue("relabeled", "label"));
}

// ---- BiomedQueryRouteClassifier: decision tree steps 1-13 -------------------------------

TEST(BiomedRoute, Step1AbstainsOutsideTheBiomedNamespace) {
  Fixture f;
  auto p = f.plugin();
  auto req = request("imatinib", "core");
  auto ctx = context(req);
  EXPECT_FALSE(p.route(ctx, req).has_value());
}

TEST(BiomedRoute, Step6TextPlansWithDualSearchAndRecallTopK) {
  Fixture f;
  auto p = f.plugin();
  auto req = request("EGFR signalling in lung cancer");
  auto ctx = context(req);
  auto d = *p.route(ctx, req);
  EXPECT_EQ(collections_of(d), (std::vector<std::string>{"eagle_text_biomed", "eagle_text"}));
  EXPECT_EQ(d.plans[0].encoder, "pubmedbert");
  EXPECT_EQ(d.plans[1].encoder, "text-embedding-v4");
  EXPECT_EQ(d.plans[0].top_k, 20u);  // collection_recall_top_k default
  EXPECT_TRUE(d.plans[0].hybrid);
  EXPECT_EQ(d.source, "biomed_query_route");
  BiomedOptions o;
  o.default_dual_text_search = false;
  o.medcpt_dual_search = true;
  o.collection_recall_top_k = 7;
  f.colls["eagle_text_medcpt"] = store::Collection::in_memory(chunk_schema("eagle_text_medcpt", 32, Metric::cosine, chunk_fields()));
  auto p2 = f.plugin(o);
  auto ctx2 = context(req);
  auto d2 = *p2.route(ctx2, req);
  EXPECT_EQ(collections_of(d2), (std::vector<std::string>{"eagle_text_biomed", "eagle_text_medcpt"}));
  EXPECT_EQ(d2.plans[1].top_k, 7u);
}

TEST(BiomedRoute, Step7DrugHitsAddTheChemicalCollectionStep13RegulatorySuppressesIt) {
  Fixture f;
  f.add_chemical();
  auto p = f.plugin();
  auto req = request("resistance to imatinib in CML");
  auto ctx = context(req);
  auto d = *p.route(ctx, req);
  EXPECT_EQ(collections_of(d), (std::vector<std::string>{"eagle_text_biomed", "eagle_text", "eagle_chemical"}));
  // Step 12: entity hits turn parent-document retrieval off.
  EXPECT_EQ(d.hints["parent_doc_retrieval"], false);
  auto reg = request("imatinib drug label warnings");
  auto ctx2 = context(reg);
  EXPECT_EQ(collections_of(*p.route(ctx2, reg)), (std::vector<std::string>{"eagle_text_biomed", "eagle_text"}));
  // Only with a structure to search by: a gene whose related drugs have no SMILES, or
  // a biologic, would give the molecule encoder nothing to embed.
  auto gene = request("EGFR exon 19");
  auto ctx3 = context(gene);
  EXPECT_EQ(collections_of(*p.route(ctx3, gene)), (std::vector<std::string>{"eagle_text_biomed", "eagle_text"}));
  // The related_drugs branch (route step 7): a gene whose related drug has a structure
  // adds the compounds, searched by that structure.
  f.kb.add({"NCBIGENE:25", "ABL1", {"BCR-ABL"}, EntityType::gene, {"imatinib"}, {}, ""});
  auto p2 = f.plugin();
  auto abl = request("ABL1 kinase domain mutations");
  auto ctx5 = context(abl);
  auto routed = *p2.route(ctx5, abl);
  EXPECT_EQ(collections_of(routed), (std::vector<std::string>{"eagle_text_biomed", "eagle_text", "eagle_chemical"}));
  EXPECT_EQ(routed.hints["why"]["eagle_chemical"], "related_drugs");
  EXPECT_EQ(p2.dense_expand(ctx5, abl.query, std::string("molformer"))->dense_query, kImatinib);
  auto bio = request("adalimumab in psoriasis");
  auto ctx4 = context(bio);
  EXPECT_EQ(collections_of(*p.route(ctx4, bio)), (std::vector<std::string>{"eagle_text_biomed", "eagle_text"}));
}

TEST(BiomedRoute, Step5ChemicalTaskAndSmilesRouteToTheChemicalCollectionOnly) {
  Fixture f;
  f.add_chemical();
  auto p = f.plugin();
  auto req = request("compounds similar to imatinib");
  auto ctx = context(req);
  EXPECT_EQ(collections_of(*p.route(ctx, req)), std::vector<std::string>{"eagle_chemical"});
  auto sm = request(std::string("nearest neighbours of ") + kImatinib);
  auto ctx2 = context(sm);
  EXPECT_EQ(collections_of(*p.route(ctx2, sm)), std::vector<std::string>{"eagle_chemical"});
  EXPECT_TRUE(looks_like_smiles(kImatinib));
  EXPECT_FALSE(looks_like_smiles("Cocaine"));
  EXPECT_FALSE(looks_like_smiles("HER2+"));
}

TEST(BiomedRoute, Steps8To11ImagingVisualAndExploratory) {
  Fixture f({"eagle_text_biomed", "eagle_text", "eagle_medical_radiology", "eagle_medical_pathology", "eagle_visual",
             "extra_kb"});
  BiomedOptions o;
  o.exploratory_search_collections = {{"extra_kb", "pubmedbert"}};
  auto p = f.plugin(o);
  auto req = request("chest x-ray and histopathology of NSCLC");
  // Without their models the medical-imaging slots abstain, audited (the seed's hard
  // rule: never the general visual encoder in their place).
  {
    search::Telemetry tel(f.sink, "q");
    auto ctx = context(req);
    ctx.telemetry = &tel;
    auto d = *p.route(ctx, req);
    EXPECT_EQ(collections_of(d), (std::vector<std::string>{"eagle_text_biomed", "eagle_text", "extra_kb"}));
    EXPECT_EQ(d.hints["abstained"], (json{{"eagle_medical_radiology", "medimageinsight"}, {"eagle_medical_pathology", "uni2"}}));
    ASSERT_EQ(tel.audits().size(), 2u);
    EXPECT_EQ(tel.audits()[0]["audit"], "medical_imaging_abstained");
  }
  f.reg.add(std::make_unique<HashEncoder>("medimageinsight"));
  f.reg.add(std::make_unique<HashEncoder>("uni2"));
  auto ctx = context(req);
  EXPECT_EQ(collections_of(*p.route(ctx, req)),
            (std::vector<std::string>{"eagle_text_biomed", "eagle_text", "eagle_medical_radiology",
                                      "eagle_medical_pathology", "extra_kb"}));
  auto vis = request("tumour images");
  vis.route_mode = search::RouteMode::visual;
  auto ctx2 = context(vis);
  EXPECT_EQ(collections_of(*p.route(ctx2, vis)), (std::vector<std::string>{"eagle_visual", "extra_kb"}));
  auto combo = request("savolitinib plus osimertinib");
  auto ctx3 = context(combo);
  auto c = collections_of(*p.route(ctx3, combo));
  EXPECT_NE(std::find(c.begin(), c.end(), "eagle_visual"), c.end());  // combination workflow + drugs
}

TEST(BiomedRoute, AbsentCollectionsAreDroppedAndAudited) {
  Fixture f({"eagle_text"});
  auto p = f.plugin();
  auto req = request("EGFR");
  search::Telemetry tel(f.sink, "q");
  auto ctx = context(req);
  ctx.telemetry = &tel;
  auto d = *p.route(ctx, req);
  EXPECT_EQ(collections_of(d), std::vector<std::string>{"eagle_text"});
  EXPECT_EQ(d.hints["absent"], json::array({"eagle_text_biomed"}));
  ASSERT_FALSE(tel.audits().empty());
  EXPECT_EQ(tel.audits()[0]["audit"], "route_absent");
}

// ---- brand names taught by labels ------------------------------------------------------------

TEST(BrandAwareKnowledge, LabelBrandsMatchAsTheirGenericsEntityWithoutOverridingTheVocabulary) {
  auto vocab = std::make_unique<FakeKnowledge>();
  const EntityId ada = vocab->add({"DRUGBANK:DB00051", "adalimumab", {}, EntityType::drug, {}, {}, ""});
  const EntityId ator = vocab->add({"DRUGBANK:DB01076", "atorvastatin", {}, EntityType::drug, {}, {}, ""});
  vocab->add({"DRUGBANK:DB00619", "imatinib", {"Gleevec"}, EntityType::drug, {}, {}, ""});
  BrandAwareKnowledge kb(std::move(vocab));
  EXPECT_TRUE(kb.match_drug_entities("Humira and Lipitor").empty());  // what the vocabulary knows
  // Gleevec is known already; "Nope" has no known generic; a repeated pair counts once.
  EXPECT_EQ(kb.set_brands({{"HUMIRA", "adalimumab"}, {"LIPITOR", "atorvastatin calcium"}, {"Gleevec", "imatinib"},
                           {"Nope", "unknownumab"}, {"HUMIRA", "adalimumab"}}),
            2u);
  auto m = kb.match_drug_entities("Does Humira interact with lipitor? (HUMIRA-pen, Humiras)");
  ASSERT_EQ(m.size(), 3u);  // word-bounded: "Humiras" is not "Humira"; the "HUMIRA" of "HUMIRA-pen" is
  EXPECT_EQ(m[2].text, "HUMIRA");
  EXPECT_EQ(m[0].text, "Humira");
  EXPECT_EQ(m[0].entity, ada);
  EXPECT_EQ(m[1].text, "lipitor");
  EXPECT_EQ(m[1].entity, ator);
  EXPECT_EQ(kb.match_entities("HUMIRA-pen").size(), 1u);
  EXPECT_EQ(drug_names(kb, "Humira"), (std::vector<std::string>{"humira", "adalimumab"}));
  // The vocabulary's own matches stand and come first in text order.
  auto g = kb.match_drug_entities("Gleevec or Humira");
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].text, "Gleevec");
  kb.set_brands({});
  EXPECT_TRUE(kb.match_drug_entities("Humira").empty());
}

// ---- biomed_dense_expand ------------------------------------------------------------------

TEST(DenseExpand, EntitySuffixOnlyForPubmedbertRankedByFirstOccurrence) {
  Fixture f;
  auto p = f.plugin();
  auto req = request("MET amplification and EGFR in NSCLC");
  auto ctx = context(req);
  // The suffix is biomed's QUERY_ASSEMBLE contribution (ALL: appended, not replacing).
  p.register_hooks(f.bus);
  for (auto& s : f.bus.all<search::HookPoint::QUERY_ASSEMBLE>(ctx, req.query)) ctx.query_suffixes.push_back(s);
  ASSERT_EQ(ctx.query_suffixes.size(), 1u);
  auto e = *p.dense_expand(ctx, req.query, std::string("pubmedbert"));
  // 2 aliases + 1 pathway per entity, in order of first occurrence in the query.
  EXPECT_EQ(e.dense_query,
            "MET amplification and EGFR in NSCLC [biomed entities: HGFR, c-Met, HGF/MET signaling, ERBB1, HER1, "
            "ErbB signaling pathway, non-small cell lung carcinoma]");
  auto other = *p.dense_expand(ctx, req.query, std::string("text-embedding-v4"));
  EXPECT_EQ(other.dense_query, req.query);
  // A static word-vector encoder standing in for pubmedbert embeds the raw query
  // (suffix_skip_static_encoders), unless configured otherwise.
  Fixture st;
  st.reg.add(std::make_unique<HashEncoder>("glove-pubmedbert", "static"));
  BiomedOptions so;
  so.expansion_encoder = "glove-pubmedbert";
  auto sp = st.plugin(so);
  EXPECT_EQ(sp.dense_expand(ctx, req.query, std::string("glove-pubmedbert"))->dense_query, req.query);
  so.suffix_skip_static_encoders = false;
  auto sp2 = st.plugin(so);
  EXPECT_EQ(sp2.dense_expand(ctx, req.query, std::string("glove-pubmedbert"))->dense_query, e.dense_query);
  auto none = *p.dense_expand(ctx, req.query, std::nullopt);
  EXPECT_EQ(none.dense_query, req.query);
  // The intent is stashed for the later hooks.
  ASSERT_NE(ctx.get<QueryRetrievalIntent>("retrieval_intent"), nullptr);
}

TEST(DenseExpand, SuffixIsDeduplicatedAndCappedAt12) {
  Fixture f;
  for (int i = 0; i < 10; ++i)
    f.kb.add({"X:" + std::to_string(i), "gene" + std::to_string(i), {"alias" + std::to_string(i), "shared"},
              EntityType::gene, {}, {"pathway" + std::to_string(i)}, ""});
  auto p = f.plugin();
  std::string q;
  for (int i = 0; i < 10; ++i) q += "gene" + std::to_string(i) + " ";
  auto s = p.expand_query_for_dense_retrieval(q);
  const std::string list = s.substr(s.find('[') + 17, s.size() - s.find('[') - 18);
  size_t n = 1;
  for (char c : list) n += c == ',';
  EXPECT_EQ(n, 12u);
  EXPECT_EQ(s.find("shared"), s.rfind("shared"));  // de-duplicated
}

TEST(DenseExpand, SparseTermsAreDrugsPlusSectionCuesWithSpaces) {
  Fixture f;
  auto p = f.plugin(seed_literal());
  auto req = request("Humira drug label indications");
  auto ctx = context(req);
  auto e = *p.dense_expand(ctx, req.query, std::nullopt);
  EXPECT_EQ(e.sparse_terms, (std::vector<std::string>{"humira", "adalimumab", "indications and usage"}));
  // Off by default (measured on both dev splits): the BM25 leg keeps the raw query.
  auto d = f.plugin();
  auto dctx = context(req);
  EXPECT_TRUE(d.dense_expand(dctx, req.query, std::nullopt)->sparse_terms.empty());
}

TEST(DenseExpand, MoleculeEncoderGetsTheDrugsStructure) {
  Fixture f;
  auto p = f.plugin();
  auto req = request("compounds similar to imatinib");
  auto ctx = context(req);
  EXPECT_EQ(p.dense_expand(ctx, req.query, std::string("molformer"))->dense_query, kImatinib);
  auto none = request("compounds similar to aspirin-like things");
  auto ctx2 = context(none);
  // No structure: the plan runs its lexical leg alone, it does not fail.
  auto lexical = *p.dense_expand(ctx2, none.query, std::string("molformer"));
  EXPECT_TRUE(lexical.lexical_only);
  EXPECT_TRUE(lexical.dense_query.empty());
  EXPECT_FALSE(p.dense_expand(ctx, req.query, std::string("molformer"))->lexical_only);
}

// ---- scoring.py ------------------------------------------------------------------------------

TEST(EntityScores, EntityBoostScoreTable) {
  const std::vector<std::string> q = {"adalimumab"};
  EXPECT_EQ(entity_boost_score({{"primary_drugs", {"Adalimumab"}}}, q), 1.0);
  EXPECT_EQ(entity_boost_score({{"primary_drugs", "[\"adalimumab\"]"}}, q), 1.0);  // JSON array in a string
  EXPECT_EQ(entity_boost_score({{"file_name", "adalimumab-label.xml"}}, q), 0.5);
  EXPECT_EQ(entity_boost_score({{"source_uri", "https://x/ADALIMUMAB"}}, q), 0.5);
  EXPECT_EQ(entity_boost_score({{"primary_drugs", {"insulin"}}}, q), 0.0);
}

TEST(EntityScores, EntityMatchScoreTable) {
  const std::vector<std::string> q = {"adalimumab"};
  EXPECT_EQ(entity_match_score(hit("a", 0, {{"primary_drugs", {"adalimumab"}}}), q), 1.0);
  EXPECT_EQ(entity_match_score(hit("b", 0, {{"document_name", "Adalimumab injection"}}), q), 0.75);
  EXPECT_EQ(entity_match_score(hit("c", 0, json::object(), "Adalimumab is a TNF blocker"), q), 0.75);
  // Only text[:512] counts.
  EXPECT_EQ(entity_match_score(hit("d", 0, json::object(), std::string(600, 'x') + " adalimumab"), q), 0.0);
}

TEST(EntityScores, SectionMatchScoreIsTheFractionOfCuesRawOrSpaced) {
  const std::vector<std::string> cues = {"warnings", "indications_and_usage"};
  EXPECT_EQ(section_match_score(hit("a", 0, {{"biomed_section", "warnings_and_precautions"}}), cues), 0.5);
  EXPECT_EQ(section_match_score(hit("b", 0, {{"path", "1 INDICATIONS AND USAGE"}, {"biomed_section", "warnings"}}), cues),
            1.0);
  EXPECT_EQ(section_match_score(hit("c", 0, {{"biomed_section", "adverse_reactions"}}), cues), 0.0);
  EXPECT_EQ(section_match_score(hit("d", 0, {{"biomed_section", "warnings"}}), {}), 0.0);
}

TEST(EntityScores, CrossDrugPenalty) {
  const std::vector<std::string> q = {"imatinib"};
  EXPECT_EQ(cross_drug_penalty(hit("a", 0, {{"primary_drugs", {"nilotinib"}}}, "nilotinib in CML"), q), 1.0);
  EXPECT_EQ(cross_drug_penalty(hit("b", 0, {{"primary_drugs", {"nilotinib"}}}, "nilotinib versus imatinib"), q), 0.0);
  EXPECT_EQ(cross_drug_penalty(hit("c", 0, {{"primary_drugs", {"imatinib", "x"}}}), q), 0.0);
  EXPECT_EQ(cross_drug_penalty(hit("d", 0, json::object(), "no drugs stamped"), q), 0.0);
  EXPECT_EQ(cross_drug_penalty(hit("e", 0, {{"primary_drugs", {"nilotinib"}}, {"path", "imatinib/vs"}}), q), 0.0);
  EXPECT_EQ(cross_drug_penalty(hit("f", 0, {{"primary_drugs", {"nilotinib"}}}), {}), 0.0);
  // Restricted to source types (Eagle's default: label, compound): a paper is not penalised.
  const std::vector<std::string> labels = {"label", "compound"};
  EXPECT_EQ(cross_drug_penalty(hit("g", 0, {{"primary_drugs", {"nilotinib"}}, {"source_type", "label"}}), q, 512, labels), 1.0);
  EXPECT_EQ(cross_drug_penalty(hit("h", 0, {{"primary_drugs", {"nilotinib"}}, {"source_type", "paper"}}), q, 512, labels), 0.0);
  EXPECT_EQ(cross_drug_penalty(hit("i", 0, {{"primary_drugs", {"nilotinib"}}}), q, 512, labels), 0.0);
}

TEST(EntityScores, FiveProfileWeightTable) {
  auto w = default_profile_weights();
  ASSERT_EQ(w.size(), 5u);
  auto eq = [](ProfileWeights a, double ce, double e, double s, double x) {
    return a.w_ce == ce && a.w_entity == e && a.w_sec == s && a.w_xdrug_penalty == x;
  };
  EXPECT_TRUE(eq(w["default"], 0.50, 0.25, 0.15, 2.0));
  EXPECT_TRUE(eq(w["regulatory"], 0.30, 0.20, 0.35, 2.5));
  EXPECT_TRUE(eq(w["drug_entity"], 0.35, 0.35, 0.10, 3.0));
  EXPECT_TRUE(eq(w["chemical"], 0.25, 0.40, 0.10, 3.0));
  EXPECT_TRUE(eq(w["combination"], 0.35, 0.35, 0.10, 2.5));
}

// ---- Tier-1 biomed_rerank -----------------------------------------------------------------------

TEST(Tier1Rerank, AbstainsOutsideTheBiomedAndChemicalCollections) {
  Fixture f;
  auto p = f.plugin();
  auto req = request("imatinib");
  auto ctx = context(req);
  search::CollectionQueryPlan plan;
  plan.collection = "eagle_text";
  plan.encoder = "text-embedding-v4";
  EXPECT_FALSE(p.tier1_rerank(ctx, req.query, plan, {hit("a", 1)}).has_value());
}

TEST(Tier1Rerank, EntityFilterKeepsEntityHitsOnlyWhenSomethingRemainsThenCosine) {
  Fixture f;
  auto p = f.plugin(seed_literal());
  auto req = request("imatinib resistance");
  auto ctx = context(req);
  search::CollectionQueryPlan plan;
  plan.collection = "eagle_text_biomed";
  plan.encoder = "pubmedbert";
  HitList hits = {hit("off", 0.9, json::object(), "unrelated text about statins"),
                  hit("on", 0.1, {{"primary_drugs", {"imatinib"}}}, "resistance mechanisms"),
                  hit("text", 0.2, json::object(), "imatinib resistance in CML")};
  auto out = *p.tier1_rerank(ctx, req.query, plan, hits);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].id, "text");  // cosine: shares both query words
  // Nothing matches: the original nodes pass through.
  auto none = *p.tier1_rerank(ctx, req.query, plan, {hits[0]});
  EXPECT_EQ(none.size(), 1u);
}

TEST(Tier1Rerank, StaticEncodersKeepTheFusedOrderUnlessConfigured) {
  Fixture f;
  encode::EncoderRegistry reg;
  reg.add(std::make_unique<HashEncoder>("pubmedbert", "static"));
  search::CollectionQueryPlan plan;
  plan.collection = "eagle_text_biomed";
  plan.encoder = "pubmedbert";
  HitList hits = {hit("fused-first", 0.9, json::object(), "unrelated words"),
                  hit("cosine-first", 0.1, json::object(), "lung cancer screening")};
  auto req = request("lung cancer screening");
  auto ctx = context(req);
  BiomedPlugin p(f.kb, f.provider(), reg, nullptr);
  EXPECT_EQ(p.tier1_rerank(ctx, req.query, plan, hits)->at(0).id, "fused-first");
  BiomedOptions o;
  o.tier1_skip_static_encoders = false;  // the seed's literal behaviour
  BiomedPlugin seed(f.kb, f.provider(), reg, nullptr, o);
  auto ctx2 = context(req);
  EXPECT_EQ(seed.tier1_rerank(ctx2, req.query, plan, hits)->at(0).id, "cosine-first");
}

// ---- Supplement, injection ------------------------------------------------------------------------

TEST(Supplement, RegistryLookupScopedAnnLimitAndFormula) {
  Fixture f;
  // 12 chunks of one Humira document, 5 of another drug's.
  registry::DocumentRecord r;
  r.document_id = "humira-label";
  r.name = "HUMIRA (adalimumab) injection";
  r.plugin_namespace = "biomed";
  f.docs->upsert(r);
  for (int i = 0; i < 12; ++i)
    f.add_chunk("eagle_text_biomed", {{"id", "h" + std::to_string(i)},
                                      {"text", "adalimumab section " + std::to_string(i)},
                                      {"document_id", "humira-label"},
                                      {"primary_drugs", i == 0 ? json::array({"adalimumab"}) : json::array()}});
  for (int i = 0; i < 5; ++i)
    f.add_chunk("eagle_text_biomed", {{"id", "o" + std::to_string(i)}, {"text", "adalimumab mentioned elsewhere"},
                                      {"document_id", "other"}});
  auto p = f.plugin();
  auto req = request("adalimumab safety");
  req.explain = true;
  auto ctx = context(req);
  auto s = *p.supplement(ctx, req.query);
  // limit = min(recall_top_k 20, max(4 * 1 document, 8)) = 8, all from the found document.
  ASSERT_EQ(s.size(), 8u);
  for (const auto& h : s) EXPECT_EQ(h.document_id(), "humira-label");
  // combined = 2.0 * entity + lexical + 0.1 * dense; h0 has the primary_drugs stamp.
  EXPECT_EQ(s[0].id, "h0");
  const auto& n = s[0].explain.legs["supplement"];
  EXPECT_NEAR(n["score"].get<double>(),
              2.0 * n["entity"].get<double>() + n["lexical"].get<double>() + 0.1 * n["dense"].get<double>(), 1e-9);
  EXPECT_EQ(n["entity"], 1.0);
  EXPECT_EQ(n["lexical"], 0.5);  // adalimumab found, safety not (terms: adalimumab, safety)
  // Without a drug term or a registry document there is nothing to supplement.
  auto g = request("safety of biologics");
  auto ctx2 = context(g);
  EXPECT_FALSE(p.supplement(ctx2, g.query).has_value());
}

TEST(Supplement, FallsBackToTheFirstEntitysRelatedDrugs) {
  Fixture f;
  registry::DocumentRecord r;
  r.document_id = "cap";
  r.name = "Capmatinib tablets";
  r.plugin_namespace = "biomed";
  f.docs->upsert(r);
  f.add_chunk("eagle_text_biomed", {{"id", "c1"}, {"text", "capmatinib for MET exon 14"}, {"document_id", "cap"}});
  auto p = f.plugin();
  auto req = request("MET exon 14 skipping");
  auto ctx = context(req);
  auto s = *p.supplement(ctx, req.query);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].id, "c1");
}

TEST(RrfPostMerge, InjectsTwoUnseenSupplementHitsWithPlus100OnlyWhenEntityMatchIsRequired) {
  Fixture f;
  auto p = f.plugin();
  HitList merged = {hit("m1", 0.03), hit("m2", 0.02)};
  HitList supp = {hit("m1", 5), hit("s1", 3), hit("s2", 2), hit("s3", 1)};
  auto req = request("imatinib resistance");
  auto ctx = context(req);
  auto out = *p.post_merge(ctx, req.query, merged, supp);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].id, "s1");
  EXPECT_DOUBLE_EQ(out[0].score, 103.0);
  EXPECT_EQ(out[1].id, "s2");
  EXPECT_EQ(out[2].id, "m1");
  auto gen = request("lung cancer");
  auto ctx2 = context(gen);
  EXPECT_FALSE(p.post_merge(ctx2, gen.query, merged, supp).has_value());
  auto ctx3 = context(req);
  EXPECT_FALSE(p.post_merge(ctx3, req.query, merged, {}).has_value());
}

// ---- Tier-2 post_rrf_rerank --------------------------------------------------------------------

namespace {
class FixedReranker : public encode::Reranker {
 public:
  FixedReranker(std::vector<float> s, bool fail = false) : scores_(std::move(s)), fail_(fail) {}
  const std::string& label() const override { return label_; }
  std::vector<float> score(const std::string&, const std::vector<std::string>&) override {
    if (fail_) throw Error(ErrorCode::unavailable, "cross-encoder down");
    return scores_;
  }

 private:
  std::string label_ = "medcpt-rerank";
  std::vector<float> scores_;
  bool fail_;
};
}  // namespace

TEST(Tier2Rerank, RegulatoryProfileFormulaWithCrossEncoderScores) {
  Fixture f;
  f.reg.add(std::make_unique<FixedReranker>(std::vector<float>{2.0f, 4.0f, 0.0f}));
  auto p = f.plugin(seed_literal());
  auto req = request("warnings on the Humira label");
  req.explain = true;
  auto ctx = context(req);
  HitList merged = {
      hit("warn", 0.03, {{"primary_drugs", {"humira", "adalimumab"}}, {"biomed_section", "warnings_and_precautions"}}),
      hit("dose", 0.02, {{"primary_drugs", {"adalimumab"}}, {"biomed_section", "dosage_and_administration"}}),
      hit("lipitor", 0.01, {{"primary_drugs", {"atorvastatin"}}, {"biomed_section", "warnings"}})};
  auto out = *p.tier2_rerank(ctx, req.query, merged);
  // final = 0.30 ce_norm + 0.20 entity + 0.35 section - 2.5 xdrug
  std::map<std::string, double> got;
  for (const auto& h : out) got[h.id] = h.score;
  EXPECT_NEAR(got["warn"], 0.30 * 0.5 + 0.20 * 1.0 + 0.35 * 1.0, 1e-9);
  EXPECT_NEAR(got["dose"], 0.30 * 1.0 + 0.20 * 1.0 + 0.0, 1e-9);
  EXPECT_NEAR(got["lipitor"], 0.30 * 0.0 + 0.0 + 0.35 * 1.0 - 2.5, 1e-9);
  EXPECT_EQ(out[0].id, "warn");
  EXPECT_EQ(out[0].explain.legs["tier2"]["ce_source"], "medcpt-rerank");
  // By default the penalty applies to labels and compound cards only: the same
  // Lipitor chunk is penalised as a label, not as a paper naming another drug.
  auto d = f.plugin();
  auto lipitor_score = [&](const std::string& source_type) {
    merged[2].metadata["source_type"] = source_type;
    auto c = context(req);
    const auto ranked = *d.tier2_rerank(c, req.query, merged);
    auto it = std::find_if(ranked.begin(), ranked.end(), [](const auto& h) { return h.id == "lipitor"; });
    EXPECT_NE(it, ranked.end());
    return it == ranked.end() ? 0.0 : it->score;
  };
  EXPECT_NEAR(lipitor_score("label"), 0.35 * 1.0 - 2.5, 1e-9);
  EXPECT_NEAR(lipitor_score("paper"), 0.35 * 1.0, 1e-9);
}

// Entity evidence counts when the query's drug mentions carry at least
// entity_min_query_share of its BM25 weight in the hits' collection: 1 - weight(query
// without the mentions) / weight(query).
TEST(Tier2Rerank, EntityEvidenceCountsWhenTheDrugIsWhatTheQueryIsAbout) {
  Fixture f;
  // A corpus where "imatinib" is rare and the generic words are common.
  for (int i = 0; i < 20; ++i)
    f.add_chunk("eagle_text_biomed", {{"id", "g" + std::to_string(i)},
                                      {"text", "mechanism of action trial outcomes in older patients"},
                                      {"document_id", "g" + std::to_string(i)}});
  f.add_chunk("eagle_text_biomed", {{"id", "i1"}, {"text", "imatinib mechanism"}, {"document_id", "i1"}});
  const auto& coll = *f.colls.at("eagle_text_biomed");
  auto oracle_share = [&](const std::string& q, const std::string& blanked) {
    return 1.0 - coll.query_weight(blanked) / coll.query_weight(q);
  };
  const std::string about_q = "imatinib mechanism of action";
  const std::string aside_q = "imatinib trial outcomes in older patients with zzrareworda zzrarewordb zzrarewordc";
  const double about_share = oracle_share(about_q, "         mechanism of action");
  const double aside_share = oracle_share(aside_q, "         trial outcomes in older patients with zzrareworda zzrarewordb zzrarewordc");
  ASSERT_GE(about_share, 0.25);
  ASSERT_LT(aside_share, 0.25);

  BiomedOptions o;
  o.entity_min_query_share = 0.25;
  auto p = f.plugin(o);
  HitList merged = {hit("plain", 0.03), hit("names_it", 0.02, {{"primary_drugs", {"imatinib"}}}), hit("low", 0.01)};
  auto score_of = [&](const std::string& query, const HitList& ranked, const std::string& id) {
    auto it = std::find_if(ranked.begin(), ranked.end(), [&](const auto& h) { return h.id == id; });
    EXPECT_NE(it, ranked.end()) << query;
    return it == ranked.end() ? 0.0 : it->score;
  };
  // The drug is the query's subject: drug_entity profile, entity 1.0.
  auto about = request(about_q);
  auto ctx = context(about);
  auto out = *p.tier2_rerank(ctx, about.query, merged);
  EXPECT_NEAR(score_of(about.query, out, "names_it"), 0.35 * 0.5 + 0.35 * 1.0, 1e-9);
  EXPECT_EQ(out[0].id, "names_it");
  // Mentioned in passing (a word the corpus lacks weighs the most): the evidence is
  // dropped and the note gives the share.
  auto aside = request(aside_q);
  aside.explain = true;
  auto ctx2 = context(aside);
  out = *p.tier2_rerank(ctx2, aside.query, merged);
  EXPECT_NEAR(score_of(aside.query, out, "names_it"), 0.35 * 0.5, 1e-9);
  EXPECT_EQ(out[0].id, "plain");
  EXPECT_NEAR(out[1].explain.legs["tier2_entity_share"]["share"].get<double>(), aside_share, 1e-12);
  // Threshold 0 (the seed): the evidence counts.
  auto ctx3 = context(aside);
  out = *f.plugin(seed_literal()).tier2_rerank(ctx3, aside.query, merged);
  EXPECT_NEAR(score_of(aside.query, out, "names_it"), 0.35 * 0.5 + 0.35, 1e-9);
  // No drug in the query: the related drugs of its gene stand in, and the gene's
  // mention is what is weighed ("ABL1" is a word the corpus lacks, so it weighs most).
  f.kb.add({"NCBIGENE:25", "ABL1", {}, EntityType::gene, {"imatinib"}, {}, ""});
  auto gene = request("ABL1 mechanism");
  auto ctx4 = context(gene);
  out = *f.plugin(o).tier2_rerank(ctx4, gene.query, merged);
  EXPECT_GT(score_of(gene.query, out, "names_it"), 0.35 * 0.5 + 0.1) << "entity evidence through related drugs";
}

TEST(Tier2Rerank, FallsBackToExistingScoresWhenTheCrossEncoderIsMissingFailsOrMiscounts) {
  for (int mode = 0; mode < 3; ++mode) {
    Fixture f;
    if (mode == 1) f.reg.add(std::make_unique<FixedReranker>(std::vector<float>{}, true));
    if (mode == 2) f.reg.add(std::make_unique<FixedReranker>(std::vector<float>{1.0f}));  // wrong count
    auto p = f.plugin();
    auto req = request("lung cancer screening");  // general profile, no drugs
    req.explain = true;
    auto ctx = context(req);
    auto out = *p.tier2_rerank(ctx, req.query, {hit("a", 0.2), hit("b", 0.6), hit("c", 0.4)});
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].id, "b");
    EXPECT_NEAR(out[0].score, 0.5 * 1.0, 1e-9);  // default profile w_ce 0.5, ce_norm 1
    EXPECT_NEAR(out[1].score, 0.5 * 0.5, 1e-9);
    EXPECT_EQ(out[0].explain.legs["tier2"]["ce_source"], "existing_score") << "mode " << mode;
  }
}

TEST(Tier2Rerank, ImageHitsAreAppendedUnscoredAndNamesBackfilledFromTheRegistry) {
  Fixture f;
  registry::DocumentRecord r;
  r.document_id = "d1";
  r.name = "x";
  r.file_name = "atorvastatin.xml";
  r.document_name = "Lipitor";
  r.plugin_namespace = "biomed";
  f.docs->upsert(r);
  auto p = f.plugin();
  auto req = request("atorvastatin myopathy");
  auto ctx = context(req);
  auto img = hit("img", 9.0);
  img.is_image = true;
  auto out = *p.tier2_rerank(ctx, req.query, {img, hit("t", 0.1, json{{"document_id", "d1"}}), hit("u", 0.11)});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out.back().id, "img");
  EXPECT_EQ(out.back().score, 9.0);
  // enrich_file_names made the file name count as a 0.75 entity match (drug_entity
  // profile: 0.35 * ce_norm + 0.35 * entity); "u" names no drug.
  const auto& t = out[0].id == "t" ? out[0] : out[1];
  const auto& u = out[0].id == "t" ? out[1] : out[0];
  EXPECT_EQ(t.metadata.value("file_name", ""), "atorvastatin.xml");
  EXPECT_EQ(t.metadata.value("document_name", ""), "Lipitor");
  EXPECT_NEAR(t.score, 0.35 * 0.0 + 0.35 * 0.75, 1e-9);
  EXPECT_NEAR(u.score, 0.35 * 1.0, 1e-9);
}

TEST(Tier2Rerank, ChemicalWorkflowTakesTheMaxOfFusedAndStructureScores) {
  Fixture f;
  auto p = f.plugin();
  auto req = request("compounds like imatinib");
  req.explain = true;
  auto ctx = context(req);
  // Entity-matched card whose structure equals the query drug's: Tanimoto 1.0 beats
  // its fused score.
  auto card = hit("DB00619", 0.0, {{"primary_drugs", {"imatinib"}}, {"smiles", kImatinib}});
  auto other = hit("DB04868", 0.0, {{"primary_drugs", {"nilotinib"}}, {"smiles", kNilotinib}}, "nilotinib");
  auto out = *p.tier2_rerank(ctx, req.query, {other, card});
  EXPECT_EQ(out[0].id, "DB00619");
  EXPECT_NEAR(out[0].score, 1.0, 1e-9);
  EXPECT_TRUE(out[0].explain.legs.contains("chemical_max_merge"));
}

// ---- End to end through the orchestrator ---------------------------------------------------------

TEST(BiomedPipeline, HooksRunUnderTheBiomedNamespaceOnly) {
  Fixture f;
  f.add_chemical();
  for (const auto& [id, name, smiles] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"DB00619", "imatinib", kImatinib}, {"DB04868", "nilotinib", kNilotinib},
           {"DB00945", "aspirin", "CC(=O)OC1=CC=CC=C1C(O)=O"}})
    f.add_compound(id, name, smiles);
  f.add_chunk("eagle_text_biomed", {{"id", "t1"}, {"text", "imatinib in chronic myeloid leukemia"}, {"document_id", "p1"}});
  f.add_chunk("eagle_text", {{"id", "t2"}, {"text", "general notes"}, {"document_id", "p2"}});
  auto p = f.plugin();
  p.register_hooks(f.bus);
  search::PipelineConfig cfg;
  cfg.hybrid_text_collections = {"eagle_text_biomed", "eagle_text"};
  cfg.core_text_encoder = "text-embedding-v4";
  search::Orchestrator o(f.provider(), f.reg, f.bus, cfg, f.sink);
  auto req = request("compounds similar to imatinib");
  req.top_k = 3;
  req.explain = true;
  auto resp = o.retrieve(req);
  EXPECT_EQ(resp.route.source, "biomed_query_route");
  ASSERT_FALSE(resp.hits.empty());
  EXPECT_EQ(resp.hits[0].id, "DB00619");
  std::vector<std::string> got;
  for (const auto& h : resp.hits) got.push_back(h.id);
  EXPECT_NE(std::find(got.begin(), got.end(), "DB04868"), got.end());
  EXPECT_EQ(resp.metadata["rerank_policy"], "domain");
  // The same query in the core namespace takes the core default route (G4: core
  // collections only).
  auto core = request("compounds similar to imatinib", "core");
  EXPECT_EQ(o.retrieve(core).route.source, "core_default");
}

// The supplement reads rows by document id: the request's scope (here a token's KBs,
// a facet and a filter, as the orchestrator hands them over) must hold there too.
TEST(Supplement, HonoursTheRequestScopeFromItsContext) {
  Fixture f;
  registry::DocumentRecord r;
  r.document_id = "humira-label";
  r.name = "HUMIRA (adalimumab) injection";
  r.plugin_namespace = "biomed";
  f.docs->upsert(r);
  for (int i = 0; i < 6; ++i)
    f.add_chunk("eagle_text_biomed", {{"id", "in" + std::to_string(i)}, {"text", "adalimumab section"},
                                      {"document_id", "humira-label"}, {"kb_name", "tenant-a"}, {"year", 2020}});
  for (int i = 0; i < 6; ++i)
    f.add_chunk("eagle_text_biomed", {{"id", "out" + std::to_string(i)}, {"text", "adalimumab section"},
                                      {"document_id", "humira-label"}, {"kb_name", "tenant-b"}, {"year", 2019}});
  auto p = f.plugin();
  const std::vector<std::pair<std::string, std::map<std::string, json>>> scopes = {
      {"(kb_name in {allowed_kbs})", {{"allowed_kbs", json::array({"tenant-a"})}}},
      {"(year == {facet_year})", {{"facet_year", 2020}}},
      {"(kb_name == \"tenant-a\")", {}},
  };
  for (const auto& [expr, params] : scopes) {
    auto req = request("adalimumab safety");
    auto ctx = context(req);
    ctx.scope_filter = expr;
    ctx.scope_params = params;
    auto s = *p.supplement(ctx, req.query);
    ASSERT_FALSE(s.empty()) << expr;
    for (const auto& h : s) EXPECT_EQ(h.id.rfind("in", 0), 0u) << expr << " leaked " << h.id;
  }
  // No scope: both tenants' chunks are candidates (so the check above can fail).
  auto req = request("adalimumab safety");
  auto ctx = context(req);
  auto all = *p.supplement(ctx, req.query);
  EXPECT_TRUE(std::any_of(all.begin(), all.end(), [](const auto& h) { return h.id.rfind("out", 0) == 0; }));
}
