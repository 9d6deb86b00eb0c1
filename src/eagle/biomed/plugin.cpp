#include "eagle/biomed/plugin.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <unordered_set>

#include "eagle/biomed/ingest/chunker.h"
#include "eagle/biomed/ingest/sections.h"
#include "eagle/core/error.h"
#include "eagle/encode/chem/chem.h"
#include "eagle/search/fusion.h"

namespace eagle::biomed {
using nlohmann::json;
using search::HitList;
using search::HookContext;
using search::HookPoint;
using search::ScoredHit;

namespace {

constexpr const char* kIntentKey = "retrieval_intent";
constexpr const char* kInjectedKey = "biomed_injected";

void audit(HookContext& ctx, const std::string& category, json fields) {
  if (ctx.telemetry) ctx.telemetry->audit(category, std::move(fields));
}

std::vector<std::string> sparse_terms_for(const QueryRetrievalIntent& intent) {
  // "Sparse terms: match_drug_entities(query) + intent.section_cues (with _ normalized to space)."
  std::vector<std::string> out = intent.drugs;
  for (auto c : intent.section_cues) {
    std::replace(c.begin(), c.end(), '_', ' ');
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

void push_unique_ci(std::vector<std::string>& out, const std::string& term) {
  if (term.empty()) return;
  const std::string l = ascii_lower(term);
  for (const auto& o : out)
    if (ascii_lower(o) == l) return;
  out.push_back(term);
}

}  // namespace

bool looks_like_smiles(std::string_view t) {
  if (t.size() < 6) return false;
  static const std::string kChars = "BCNOPSFIKLHbcnopsilrae0123456789()[]=#@+-\\/%.";
  size_t letters = 0;
  bool structural = false;
  for (char c : t) {
    if (kChars.find(c) == std::string::npos) return false;
    if (std::isalpha(static_cast<unsigned char>(c))) ++letters;
    if (c == '(' || c == '=' || c == '#' || c == '[' || std::isdigit(static_cast<unsigned char>(c))) structural = true;
  }
  // A word like "Cocaine" has no bond, ring or branch symbol.
  return structural && letters >= 4;
}

BiomedPlugin::BiomedPlugin(const EntityKnowledge& knowledge, search::CollectionProvider collections,
                           encode::EncoderRegistry& encoders, registry::DocumentRegistry* registry,
                           BiomedOptions options)
    : kb_(knowledge),
      collections_(std::move(collections)),
      encoders_(encoders),
      registry_(registry),
      opts_(std::move(options)) {
  for (const char* p : {"default", "regulatory", "drug_entity", "chemical", "combination"})
    if (!opts_.profiles.count(p)) opts_.profiles[p] = default_profile_weights().at(p);
}

void BiomedPlugin::register_hooks(search::HookBus& bus, const std::string& ns, int priority) {
  // QUERY_ASSEMBLE (ALL): the entity suffix, appended for the dense legs.
  bus.subscribe<HookPoint::QUERY_ASSEMBLE>(
      ns, priority, [this](HookContext&, const std::string& q) { return std::optional(entity_suffix(q)); },
      "biomed_entity_suffix");
  bus.subscribe<HookPoint::CLASSIFY_QUERY>(
      ns, priority, [this](HookContext& c, const search::RetrievalRequest& r) { return route(c, r); },
      "biomed_query_route");
  bus.subscribe<HookPoint::QUERY_DENSE_EXPAND>(
      ns, priority,
      [this](HookContext& c, const std::string& q, const std::optional<std::string>& e) { return dense_expand(c, q, e); },
      "biomed_dense_expand");
  bus.subscribe<HookPoint::RERANK>(
      ns, priority,
      [this](HookContext& c, const std::string& q, const search::CollectionQueryPlan& p, const HitList& h) {
        return tier1_rerank(c, q, p, h);
      },
      "biomed_rerank");
  bus.subscribe<HookPoint::RETRIEVE_SUPPLEMENT>(
      ns, priority, [this](HookContext& c, const std::string& q) { return supplement(c, q); },
      "biomed_retrieve_supplement");
  bus.subscribe<HookPoint::RRF_POST_MERGE>(
      ns, priority,
      [this](HookContext& c, const std::string& q, const HitList& m, const HitList& s) { return post_merge(c, q, m, s); },
      "biomed_rrf_post_merge");
  bus.subscribe<HookPoint::RERANK_MERGED>(
      ns, priority, [this](HookContext& c, const std::string& q, const HitList& m) { return tier2_rerank(c, q, m); },
      "post_rrf_rerank");
  bus.subscribe<HookPoint::CHUNK>(
      ns, priority, [this](HookContext& c, const json& chunks) { return chunk_transform(c, chunks); },
      "biomed_chunk_transform");
  bus.subscribe<HookPoint::CLASSIFY_VISUAL>(
      ns, priority, [this](HookContext& c, const json& tile) { return classify_image(c, tile); },
      "biomed_image_classifier");
}

// ---- CLASSIFY_VISUAL: BiomedImageClassifier --------------------------------------

std::optional<json> BiomedPlugin::classify_image(HookContext&, const json& tile) const {
  // A figure or an image file by its caption or name (the imaging keywords of route
  // steps 8-9); a whole page is a page, whatever it shows, and stays in eagle_visual.
  const std::string kind = tile.value("chunk_type", std::string());
  if (kind != "figure" && kind != "image" && kind != "tile") return std::nullopt;
  const std::string text = ascii_lower(tile.value("text", std::string()));
  auto any_kw = [&](const std::vector<std::string>& kws) {
    return std::any_of(kws.begin(), kws.end(), [&](const std::string& k) { return has_cue(text, k); });
  };
  auto to = [](const CollectionEncoder& ce, const char* modality) {
    return json{{"collection", ce.collection}, {"encoder", ce.encoder}, {"modality", modality}};
  };
  if (any_kw(opts_.pathology_keywords)) return to(opts_.pathology, "pathology");
  if (any_kw(opts_.radiology_keywords)) return to(opts_.radiology, "radiology");
  return std::nullopt;  // not medical: the core visual collection (seed: confidence 0.5 fallback)
}

std::optional<json> BiomedPlugin::chunk_transform(HookContext&, const json& chunks) const {
  if (!chunks.is_array() || !opts_.chunk_stamps_enabled) return std::nullopt;
  json out = chunks;
  // Drug names as their preferred names, so a brand and its generic count as one.
  const FindDrugs find_drugs = [this](std::string_view text) {
    std::vector<std::string> names;
    for (const auto& m : kb_.match_drug_entities(text)) names.push_back(ascii_lower(kb_.entity(m.entity).name));
    return names;
  };
  for (auto& c : out) {
    if (!c.is_object()) continue;
    auto pd = c.find("primary_drugs");
    if (pd == c.end() || pd->is_null() || pd->empty()) {
      PaperInput paper;
      paper.title = c.value("document_name", std::string());
      paper.text = c.value("text", std::string());
      auto drugs = paper_primary_drugs(paper, find_drugs, opts_.chunk_primary_drugs);
      if (!drugs.empty()) c["primary_drugs"] = drugs;
    }
    auto bs = c.find("biomed_section");
    if (bs == c.end() || bs->is_null() || (bs->is_string() && bs->get<std::string>().empty())) {
      std::string section;
      if (auto src = c.find("section"); src != c.end() && src->is_string()) section = canonical_section(src->get<std::string>());
      if (section.empty()) {
        auto spans = split_paper_sections(c.value("text", std::string()));
        if (!spans.empty()) section = spans.front().section;
      }
      if (!section.empty()) c["biomed_section"] = section;
    }
  }
  return out;
}

std::vector<FieldSchema> chunk_fields() {
  return {{"primary_drugs", FieldType::string_list, true}, {"biomed_section", FieldType::string, true}};
}

std::vector<CollectionEncoder*> collection_slots(BiomedOptions& o) {
  std::vector<CollectionEncoder*> out = {&o.text_biomed, &o.text_medcpt, &o.core_text, &o.chemical,
                                         &o.radiology,   &o.pathology,   &o.visual};
  for (auto& slot : o.exploratory_search_collections) out.push_back(&slot);
  return out;
}

void BiomedPlugin::set_collection_encoder(const std::string& collection, const std::string& label) {
  for (auto* slot : collection_slots(opts_))
    if (slot->collection == collection) slot->encoder = label;
}

bool BiomedPlugin::exists(const std::string& collection) const {
  return collections_ && collections_(collection) != nullptr;
}

QueryRetrievalIntent BiomedPlugin::intent_of(HookContext& ctx, const std::string& query) const {
  if (const auto* i = ctx.get<QueryRetrievalIntent>(kIntentKey)) return *i;
  auto intent = detect_retrieval_intent(query, kb_, opts_.intent);
  ctx.extra[kIntentKey] = intent;
  return intent;
}

// ---- CLASSIFY_QUERY: BiomedQueryRouteClassifier -------------------------------------

std::optional<search::RouteDecision> BiomedPlugin::route(HookContext& ctx, const search::RetrievalRequest& req) const {
  // Step 1: abstain outside the biomed namespace (Core's default route fires, G4: never
  // a specialised collection).
  if (ctx.plugin_namespace != "biomed") return std::nullopt;
  // Steps 2-3: configuration, intent, entity and drug matches.
  const auto intent = intent_of(ctx, req.query);
  const auto entities = kb_.match_entities(req.query);
  const auto drugs = kb_.match_drug_entities(req.query);
  search::RouteDecision d;
  d.source = "biomed_query_route";
  auto add = [&](const CollectionEncoder& ce, const char* why) {
    if (ce.collection.empty()) return;
    for (const auto& p : d.plans)
      if (p.collection == ce.collection) return;
    search::CollectionQueryPlan p;
    p.collection = ce.collection;
    p.encoder = ce.encoder;
    p.top_k = std::max(opts_.collection_recall_top_k, req.top_k);  // at least the hits asked for
    p.hybrid = opts_.hybrid_text_collections.count(ce.collection) > 0;
    d.plans.push_back(std::move(p));
    d.hints["why"][ce.collection] = why;
  };
  const std::string q = ascii_lower(req.query);
  auto any_kw = [&](const std::vector<std::string>& kws) {
    return std::any_of(kws.begin(), kws.end(), [&](const std::string& k) { return has_cue(q, k); });
  };
  // Step 5: chemical task (intent, or a SMILES in the query).
  const bool smiles_in_query = !query_smiles(req.query).empty();
  const bool chemical_task = intent.workflow == "chemical" || smiles_in_query;
  auto suppressed = [&](const std::string& c) {
    return std::find(intent.suppress_collections.begin(), intent.suppress_collections.end(), c) !=
           intent.suppress_collections.end();
  };
  // Step 6: the biomedical text collection, plus the dual searches.
  auto add_text_plans = [&](const char* why) {
    add(opts_.text_biomed, why);
    if (opts_.medcpt_dual_search) add(opts_.text_medcpt, "medcpt_dual_search");
    if (opts_.default_dual_text_search) add(opts_.core_text, "default_dual_text_search");
  };
  // A structure to search with: the query's SMILES or a named drug's (a biologic such
  // as adalimumab has none).
  const bool has_structure = std::any_of(drugs.begin(), drugs.end(), [&](const EntityMatch& m) {
    return !kb_.entity(m.entity).smiles.empty();
  });
  if (chemical_task) {
    add(opts_.chemical, "chemical_task");
    // Without a structure the compound plan can only match names (its lexical leg):
    // the text collections answer too ("compounds similar to adalimumab" is answered
    // from the label).
    if (!has_structure && !smiles_in_query && req.route_mode != search::RouteMode::visual)
      add_text_plans("chemical_without_structure");
  } else if (req.route_mode != search::RouteMode::visual) {
    add_text_plans("text");
  }
  // Step 7: drug hits, or entities with related drugs, also search the compounds;
  // only with a structure to search with (the molecule encoder embeds SMILES, never
  // text): the query drug's, else a related drug's (EGFR -> osimertinib).
  if (!chemical_task && !suppressed(opts_.chemical.collection)) {
    if (!drugs.empty() && has_structure) add(opts_.chemical, "drug_hits");
    else if (!related_smiles(req.query).empty()) add(opts_.chemical, "related_drugs");
  }
  // Steps 8-9: imaging keywords. A medical-imaging slot whose model is not configured
  // abstains, audited; it is never asked through the general visual encoder (seed,
  // biomed-retrieval.txt "Hard rule").
  auto add_medical = [&](const CollectionEncoder& ce, const char* why) {
    if (!encoders_.has_encoder(ce.encoder)) {
      d.hints["abstained"][ce.collection] = ce.encoder;
      audit(ctx, "medical_imaging_abstained",
            {{"collection", ce.collection}, {"encoder", ce.encoder}, {"reason", "encoder not configured"}});
      return;
    }
    add(ce, why);
  };
  if (any_kw(opts_.radiology_keywords)) add_medical(opts_.radiology, "radiology_keywords");
  if (any_kw(opts_.pathology_keywords)) add_medical(opts_.pathology, "pathology_keywords");
  // Step 10: visual mode, an image, or a combination query with drugs.
  if (req.route_mode != search::RouteMode::text || req.has_image || (intent.workflow == "combination" && !drugs.empty()))
    add(opts_.visual, "visual");
  // Step 11: exploratory collections.
  for (const auto& ce : opts_.exploratory_search_collections) add(ce, "exploratory");
  // Step 12: entity-specific queries keep chunks entity-specific (no parent-doc drill-down).
  if (!entities.empty() || !drugs.empty()) d.hints["parent_doc_retrieval"] = false;
  // Step 13: the intent's suppressions.
  std::erase_if(d.plans, [&](const search::CollectionQueryPlan& p) { return suppressed(p.collection); });
  auto drop_absent = [&] {
    if (!opts_.skip_absent_collections) return;
    std::vector<std::string> absent;
    std::erase_if(d.plans, [&](const search::CollectionQueryPlan& p) {
      if (exists(p.collection)) return false;
      absent.push_back(p.collection);
      return true;
    });
    if (!absent.empty()) {
      for (const auto& a : absent) d.hints["absent"].push_back(a);
      audit(ctx, "route_absent", {{"collections", absent}});
    }
  };
  drop_absent();
  // A chemical question in a store without compounds ("CCL19 is a ligand for CCR7"
  // over papers) is still a biomedical question: the text plans answer it rather
  // than Core's default route, which may hold none of the papers.
  if (d.plans.empty() && chemical_task && req.route_mode != search::RouteMode::visual) {
    add_text_plans("chemical_fallback");
    std::erase_if(d.plans, [&](const search::CollectionQueryPlan& p) { return suppressed(p.collection); });
    drop_absent();
    if (!d.plans.empty()) audit(ctx, "route_fallback_text", {{"from", "chemical"}});
  }
  d.hints["intent"] = intent.workflow;
  if (d.plans.empty()) {
    audit(ctx, "route_empty", {{"intent", intent.workflow}});
    return std::nullopt;  // nothing routable here: Core's default route answers
  }
  return d;
}

// ---- QUERY_DENSE_EXPAND: biomed_dense_expand -----------------------------------------

std::string BiomedPlugin::entity_suffix(const std::string& query) const {
  auto matches = kb_.match_entities(query);
  std::sort(matches.begin(), matches.end(), [](const EntityMatch& a, const EntityMatch& b) { return a.start < b.start; });
  std::vector<std::string> terms;
  std::unordered_set<EntityId> seen;
  for (const auto& m : matches) {
    if (terms.size() >= opts_.expansion_cap) break;
    if (!seen.insert(m.entity).second) continue;  // ranked by first occurrence
    const Entity& e = kb_.entity(m.entity);
    const std::string surface = ascii_lower(m.text);
    size_t aliases = 0;
    std::vector<std::string> names = {e.name};
    names.insert(names.end(), e.aliases.begin(), e.aliases.end());
    for (const auto& a : names) {
      if (aliases >= opts_.aliases_per_entity) break;
      if (ascii_lower(a) == surface) continue;  // the query already says it
      const size_t before = terms.size();
      push_unique_ci(terms, a);
      if (terms.size() > before) ++aliases;
    }
    for (size_t i = 0; i < e.pathways.size() && i < opts_.pathways_per_entity; ++i) push_unique_ci(terms, e.pathways[i]);
  }
  if (terms.size() > opts_.expansion_cap) terms.resize(opts_.expansion_cap);
  if (terms.empty()) return {};
  std::string out = "[biomed entities: ";
  for (size_t i = 0; i < terms.size(); ++i) out += (i ? ", " : "") + terms[i];
  return out + "]";
}

std::string BiomedPlugin::expand_query_for_dense_retrieval(const std::string& query) const {
  const std::string suffix = entity_suffix(query);
  return suffix.empty() ? query : query + " " + suffix;
}

bool BiomedPlugin::is_static_encoder(const std::string& label) const {
  return encoders_.has_encoder(label) && encoders_.encoder(label).info().implementation == "static";
}

std::string BiomedPlugin::related_smiles(const std::string& query) const {
  for (const auto& m : kb_.match_entities(query))
    for (const auto& name : kb_.entity(m.entity).related_drugs)
      for (const auto& d : kb_.match_drug_entities(name))
        if (!kb_.entity(d.entity).smiles.empty()) return kb_.entity(d.entity).smiles;
  return {};
}

std::vector<std::string> BiomedPlugin::query_smiles(const std::string& query) const {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < query.size()) {
    while (i < query.size() && std::isspace(static_cast<unsigned char>(query[i]))) ++i;
    size_t j = i;
    while (j < query.size() && !std::isspace(static_cast<unsigned char>(query[j]))) ++j;
    std::string tok = query.substr(i, j - i);
    while (!tok.empty() && (tok.back() == ',' || tok.back() == '?' || tok.back() == ';')) tok.pop_back();
    if (looks_like_smiles(tok)) {
      try {
        encode::chem::Molecule::from_smiles(tok);  // RDKit confirms
        out.push_back(tok);
      } catch (const Error&) {
      }
    }
    i = j;
  }
  return out;
}

std::optional<search::ExpandedQuery> BiomedPlugin::dense_expand(HookContext& ctx, const std::string& query,
                                                                const std::optional<std::string>& encoder) const {
  // The intent pass (encoder = none) stashes the intent for every later hook.
  const auto intent = intent_of(ctx, query);
  search::ExpandedQuery out;
  out.dense_query = query;
  if (opts_.sparse_terms_enabled) out.sparse_terms = sparse_terms_for(intent);
  out.intent = intent.to_json();
  if (!encoder) return out;
  if (*encoder == opts_.expansion_encoder) {
    // Only the pubmedbert embedding sees the entity suffix (appended at QUERY_ASSEMBLE,
    // with any other subscriber's); sparse terms keep the raw query. A static stand-in
    // for pubmedbert embeds the raw query (suffix_skip_static_encoders).
    const bool static_stand_in = opts_.suffix_skip_static_encoders && is_static_encoder(*encoder);
    out.dense_query = static_stand_in ? query : ctx.assembled_query(query);
  } else if (encoders_.has_encoder(*encoder) && encoders_.encoder(*encoder).info().modality == encode::Modality::molecule) {
    // A molecule encoder embeds structures: the query's SMILES, else its drugs' SMILES
    // (compound SMILES backfill: "compounds like imatinib" searches imatinib's structure).
    auto smiles = query_smiles(query);
    if (smiles.empty())
      for (const auto& m : kb_.match_drug_entities(query))
        if (!kb_.entity(m.entity).smiles.empty()) {
          smiles.push_back(kb_.entity(m.entity).smiles);
          break;
        }
    if (smiles.empty()) {
      // Compound SMILES backfill from the entities' related drugs (route step 7).
      const std::string related = related_smiles(query);
      if (!related.empty()) smiles.push_back(related);
    }
    // No structure (a biologic, or a name the vocabulary lacks): the plan searches the
    // compound cards by name alone instead of failing.
    if (smiles.empty()) {
      out.dense_query.clear();
      out.lexical_only = true;  // audited by the plan that runs it (not by the supplement's look)
    } else {
      out.dense_query = smiles.front();
    }
  }
  return out;
}

// ---- RERANK: Tier-1 biomed_rerank ------------------------------------------------------

std::vector<float> BiomedPlugin::structure_scores(const std::string& query, const HitList& hits) const {
  std::vector<float> out(hits.size(), -1.0f);
  std::vector<std::string> qs = query_smiles(query);
  for (const auto& m : kb_.match_drug_entities(query))
    if (!kb_.entity(m.entity).smiles.empty()) qs.push_back(kb_.entity(m.entity).smiles);
  std::vector<encode::chem::Fingerprint> qfps;
  for (const auto& s : qs) {
    try {
      qfps.push_back(encode::chem::Molecule::from_smiles(s).morgan());
    } catch (const Error&) {
    }
  }
  if (qfps.empty()) return out;
  for (size_t i = 0; i < hits.size(); ++i) {
    const std::string smiles = hits[i].field("smiles");
    if (smiles.empty()) continue;
    try {
      auto fp = encode::chem::Molecule::from_smiles(smiles).morgan();
      double best = 0;
      for (const auto& q : qfps) best = std::max(best, encode::chem::tanimoto(q, fp));
      out[i] = static_cast<float>(best);
    } catch (const Error&) {
    }
  }
  return out;
}

std::optional<HitList> BiomedPlugin::tier1_rerank(HookContext& ctx, const std::string& query,
                                                  const search::CollectionQueryPlan& plan, const HitList& hits) const {
  // Encoder resolution: pubmedbert for the biomedical text collection, molformer for
  // the chemical one; abstain elsewhere (Core or Tier-2 handles them).
  std::string encoder;
  if (plan.collection == opts_.text_biomed.collection) encoder = opts_.text_biomed.encoder;
  else if (plan.collection == opts_.chemical.collection) encoder = opts_.chemical.encoder;
  else return std::nullopt;
  const auto intent = intent_of(ctx, query);
  const auto terms = sparse_terms_for(intent);
  HitList nodes = hits;
  // Entity filter: only when the intent requires an entity match and there are
  // sparse terms; applied only if it leaves something.
  const bool structure_search = opts_.tier1_structure_search_skips_entity_filter && encoders_.has_encoder(encoder) &&
                                encoders_.encoder(encoder).info().modality == encode::Modality::molecule;
  if (opts_.tier1_entity_filter && intent.require_entity_match && !terms.empty() && !structure_search) {
    HitList kept;
    for (const auto& h : hits) {
      const std::string blob = lower_prefix(h.text, opts_.entity_text_chars) + " " + path_blob(h.metadata);
      const bool term_in_blob = std::any_of(terms.begin(), terms.end(),
                                            [&](const std::string& t) { return blob.find(t) != std::string::npos; });
      if (entity_boost_score(h.metadata, terms) > 0 || term_in_blob) kept.push_back(h);
    }
    if (!kept.empty()) nodes = std::move(kept);
  }
  if (!opts_.tier1_cosine_rerank || nodes.empty() || !encoders_.has_encoder(encoder)) return nodes;
  if (opts_.tier1_skip_static_encoders && is_static_encoder(encoder)) return nodes;
  try {
    auto& enc = encoders_.encoder(encoder);
    std::vector<double> scores(nodes.size());
    if (enc.info().modality == encode::Modality::molecule) {
      auto s = structure_scores(query, nodes);
      for (size_t i = 0; i < nodes.size(); ++i) scores[i] = s[i] < 0 ? nodes[i].score : s[i];
    } else {
      // cosine_rerank: encode the query and each node text (truncated), dot product.
      std::vector<std::string> texts;
      for (const auto& h : nodes) texts.push_back(std::string(utf8_prefix(h.text, opts_.rerank_text_chars)));
      auto qv = enc.encode({query}, encode::EncodeMode::query).at(0);
      auto dv = enc.encode(texts, encode::EncodeMode::document);
      for (size_t i = 0; i < nodes.size(); ++i) scores[i] = dot(qv, dv.at(i));
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (ctx.request && ctx.request->explain) nodes[i].explain.note("tier1_cosine", {{"score", scores[i]}});
      nodes[i].score = scores[i];
    }
    search::sort_hits(nodes);
  } catch (const std::exception& e) {
    audit(ctx, "tier1_rerank_failed", {{"collection", plan.collection}, {"error", e.what()}});
  }
  return nodes;
}

// ---- RETRIEVE_SUPPLEMENT: supplement_entity_anchored_hits -----------------------------

std::optional<HitList> BiomedPlugin::supplement(HookContext& ctx, const std::string& query) const {
  if (!registry_ || !opts_.supplement_enabled) return std::nullopt;
  const auto intent = intent_of(ctx, query);
  // _resolve_drug_terms: the query's drugs, else the first entity's related_drugs[:4].
  std::vector<std::string> terms = drug_names(kb_, query);
  if (terms.empty()) {
    for (const auto& m : kb_.match_entities(query)) {
      const auto& rel = kb_.entity(m.entity).related_drugs;
      if (rel.empty()) continue;
      for (size_t i = 0; i < rel.size() && i < opts_.related_drugs_for_supplement; ++i) push_unique_ci(terms, ascii_lower(rel[i]));
      break;
    }
  }
  if (terms.empty()) return std::nullopt;
  const auto* req = ctx.request;
  std::optional<std::string_view> kb;
  if (req && !req->kb_name.empty()) kb = req->kb_name;
  // Filename-agnostic registry lookup (name ILIKE %term%).
  // Within a scoped token's KBs: another tenant's documents neither fill the limit nor
  // show in the audit's count.
  auto doc_ids = registry_->find_by_name_terms(terms, ctx.plugin_namespace, opts_.max_supplement_documents, kb,
                                               req ? req->allowed_kbs : std::vector<std::string>{});
  if (doc_ids.empty()) return std::nullopt;
  // _collections_for_intent.
  std::vector<CollectionEncoder> targets;
  if (intent.workflow == "chemical") {
    targets = {opts_.chemical};
  } else {
    targets = {opts_.text_biomed};
    if (std::find(intent.suppress_collections.begin(), intent.suppress_collections.end(), opts_.chemical.collection) ==
        intent.suppress_collections.end())
      targets.push_back(opts_.chemical);
  }
  const size_t limit = std::min(opts_.collection_recall_top_k,
                                std::max(doc_ids.size() * opts_.supplement_docs_per_hit, opts_.supplement_min_docs_limit));
  HitList out;
  for (const auto& t : targets) {
    store::Collection* coll = collections_ ? collections_(t.collection) : nullptr;
    if (!coll || !encoders_.has_encoder(t.encoder)) continue;
    try {
      auto exp = dense_expand(ctx, query, t.encoder);
      if (exp->lexical_only) continue;  // nothing to embed: the routed plan's lexical leg covers it
      auto vec = encoders_.encoder(t.encoder).encode({exp->dense_query}, encode::EncodeMode::query).at(0);
      // The request's scope (kb, scope_filter, facets, filter, a token's KBs) holds here too.
      store::TemplateParams params(ctx.scope_params.begin(), ctx.scope_params.end());
      params["supp_docs"] = doc_ids;
      std::string filter = "document_id in {supp_docs}";
      if (!ctx.scope_filter.empty()) filter = "(" + ctx.scope_filter + ") and " + filter;
      if (kb) {
        filter += " and kb_name == {supp_kb}";
        params["supp_kb"] = std::string(*kb);
      }
      auto found = coll->search_vector(vec, limit, filter, params);
      const auto& schema = coll->schema();
      coll->visit(found, [&](size_t i, const std::string& id, const std::string& text, const PackedValues& v) {
        if (id != found[i].id) return;  // renumbered by a compaction since the search
        auto h = search::hit_from_row(id, text, v, schema, t.collection, found[i].score);
        // _rerank_entity_hits: combined = 2.0 * entity + lexical + 0.1 * dense.
        const double entity = entity_boost_score(h.metadata, terms);
        const double lexical = search::sparse_score(query, h.text, terms);
        const double dense = found[i].score;
        h.score = opts_.supplement_entity_weight * entity + lexical + opts_.supplement_dense_weight * dense;
        if (req && req->explain)
          h.explain.note("supplement", {{"entity", entity}, {"lexical", lexical}, {"dense", dense}, {"score", h.score}});
        out.push_back(std::move(h));
      });
    } catch (const std::exception& e) {
      audit(ctx, "supplement_failed", {{"collection", t.collection}, {"error", e.what()}});
    }
  }
  search::sort_hits(out);
  audit(ctx, "supplement", {{"terms", terms}, {"documents", doc_ids.size()}, {"hits", out.size()}});
  return out;
}

// ---- RRF_POST_MERGE: biomed_rrf_post_merge ---------------------------------------------

std::optional<HitList> BiomedPlugin::post_merge(HookContext& ctx, const std::string& query, const HitList& merged,
                                                const HitList& supplement) const {
  if (!opts_.injection_enabled) return std::nullopt;
  const auto intent = intent_of(ctx, query);
  if (!intent.require_entity_match || supplement.empty()) return std::nullopt;
  // Each injected hit carries its own "injected" explain note (inject_supplement_candidates).
  auto out = search::inject_supplement_candidates(merged, supplement, opts_.injection_min_new, opts_.injection_boost);
  audit(ctx, "rrf_inject", {{"injected", out.size() - merged.size()}});
  // Remembered for Tier-2: the boost keeps these in the candidate pool; it is not
  // evidence of relevance.
  std::vector<std::string> injected;
  for (size_t i = 0; i < out.size() - merged.size(); ++i) injected.push_back(out[i].collection + "\x1f" + out[i].id);
  ctx.extra[kInjectedKey] = injected;
  return out;
}

// ---- RERANK_MERGED: post_rrf_rerank (Tier-2) --------------------------------------------

std::vector<std::string> BiomedPlugin::boost_terms_for_query(const std::string& query) const {
  auto terms = drug_names(kb_, query);
  if (!terms.empty()) return terms;
  for (const auto& m : kb_.match_entities(query)) {
    const auto& rel = kb_.entity(m.entity).related_drugs;
    for (size_t i = 0; i < rel.size() && i < opts_.related_drugs_for_boost; ++i) push_unique_ci(terms, ascii_lower(rel[i]));
  }
  return terms;
}

std::string BiomedPlugin::blank_boost_term_mentions(const std::string& query) const {
  std::string out = query;
  auto blank = [&](const EntityMatch& m) {
    for (size_t i = m.start; i < m.end && i < out.size(); ++i) out[i] = ' ';
  };
  auto drugs = kb_.match_drug_entities(query);
  for (const auto& m : drugs) blank(m);
  if (!drugs.empty()) return out;
  for (const auto& m : kb_.match_entities(query))
    if (!kb_.entity(m.entity).related_drugs.empty()) blank(m);
  return out;
}

double BiomedPlugin::boost_mention_share(const HookContext& ctx, const std::string& query, const HitList& hits) const {
  std::set<std::string> names;
  for (const auto& h : hits) names.insert(h.collection);
  const std::string rest = blank_boost_term_mentions(query);
  double whole = 0, without = 0;
  for (const auto& name : names) {
    const store::Collection* c = collections_ ? collections_(name) : nullptr;
    if (!c) continue;
    // A scoped token's share from its own knowledge bases' statistics (the scores it
    // weighs must not depend on other tenants' documents).
    whole += c->query_weight(query, ctx.statistics_filter, ctx.scope_params);
    without += c->query_weight(rest, ctx.statistics_filter, ctx.scope_params);
  }
  return whole > 0 ? std::clamp(1.0 - without / whole, 0.0, 1.0) : 1.0;
}

std::optional<HitList> BiomedPlugin::tier2_rerank(HookContext& ctx, const std::string& query,
                                                  const HitList& merged) const {
  if (!opts_.tier2_enabled) return std::nullopt;
  const auto intent = intent_of(ctx, query);
  const bool explain = ctx.request && ctx.request->explain;
  HitList text_nodes, image_nodes;
  for (const auto& h : merged) (h.is_image ? image_nodes : text_nodes).push_back(h);
  // enrich_file_names: backfill file_name / document_name from the registry so the
  // entity boost works on rows ingested without them.
  if (registry_) {
    std::vector<std::string> ids;
    for (const auto& h : text_nodes)
      if (!h.document_id().empty() && (!h.metadata.contains("file_name") || !h.metadata.contains("document_name")))
        ids.push_back(h.document_id());
    if (!ids.empty()) {
      auto names = registry_->names_for_ids(ids);
      for (auto& h : text_nodes) {
        auto it = names.find(h.document_id());
        if (it == names.end()) continue;
        if (!h.metadata.contains("file_name")) h.metadata["file_name"] = it->second.file_name;
        if (!h.metadata.contains("document_name")) h.metadata["document_name"] = it->second.document_name;
      }
    }
  }
  if (text_nodes.empty()) return merged;
  // Cross-encoder scores from the domain rerank slot; the existing score when it is
  // missing, fails, or returns the wrong count.
  // Without a cross-encoder the existing (post-RRF) score stands in. An injected
  // hit's score is its supplement score + boost, on another scale: it enters as the
  // weakest fused candidate, so the boost keeps it in the pool without deciding the
  // ranking (min-max would otherwise squash every other candidate to ~0).
  std::vector<double> ce(text_nodes.size());
  const auto* injected = ctx.get<std::vector<std::string>>(kInjectedKey);
  std::vector<bool> is_injected(text_nodes.size(), false);
  double weakest = std::numeric_limits<double>::infinity();
  auto was_injected = [&](const std::string& key) {
    return injected && !key.empty() && std::find(injected->begin(), injected->end(), key) != injected->end();
  };
  for (size_t i = 0; i < text_nodes.size(); ++i) {
    ce[i] = text_nodes[i].score;
    // A hit expanded from an injected one inherited its boosted score: it is no more
    // evidence of relevance than its parent.
    is_injected[i] = was_injected(text_nodes[i].collection + "\x1f" + text_nodes[i].id) ||
                     was_injected(text_nodes[i].expanded_from);
    if (!is_injected[i]) weakest = std::min(weakest, ce[i]);
  }
  for (size_t i = 0; i < text_nodes.size(); ++i)
    if (is_injected[i]) ce[i] = std::isfinite(weakest) ? weakest : 0.0;
  std::string ce_source = "existing_score";
  if (encoders_.has_reranker(opts_.domain_rerank_encoder)) {
    try {
      std::vector<std::string> texts;
      for (const auto& h : text_nodes) texts.push_back(std::string(utf8_prefix(h.text, opts_.rerank_text_chars)));
      auto s = encoders_.reranker(opts_.domain_rerank_encoder).score(query, texts);
      if (s.size() == text_nodes.size()) {
        for (size_t i = 0; i < s.size(); ++i) ce[i] = s[i];
        ce_source = opts_.domain_rerank_encoder;
      } else {
        audit(ctx, "rerank_ce_fallback", {{"reason", "wrong count"}, {"expected", text_nodes.size()}, {"got", s.size()}});
      }
    } catch (const std::exception& e) {
      audit(ctx, "rerank_ce_fallback", {{"reason", e.what()}});
    }
  }
  // ce_norm = (ce - min) / (max - min) over the candidate pool.
  const auto [mn, mx] = std::minmax_element(ce.begin(), ce.end());
  const double lo = *mn, range = *mx - *mn;
  auto wit = opts_.profiles.find(intent.workflow);
  const ProfileWeights w = wit != opts_.profiles.end() ? wit->second : opts_.profiles.at("default");
  const auto drugs = boost_terms_for_query(query);
  // Entity evidence only when the query is about its drugs: their mentions' share of
  // the query's BM25 weight, over the collections of the hits (one share per query).
  std::optional<double> share;
  auto mention_share = [&] {
    if (!share) share = boost_mention_share(ctx, query, text_nodes);
    return *share;
  };
  for (size_t i = 0; i < text_nodes.size(); ++i) {
    auto& h = text_nodes[i];
    const double ce_norm = range > 0 ? (ce[i] - lo) / range : 1.0;
    double entity = entity_match_score(h, drugs, opts_.entity_text_chars);
    if (entity > 0 && opts_.entity_min_query_share > 0 && mention_share() < opts_.entity_min_query_share) {
      if (explain)
        h.explain.note("tier2_entity_share",
                       {{"share", mention_share()}, {"min", opts_.entity_min_query_share}, {"entity", entity}});
      entity = 0.0;
    }
    const double section = section_match_score(h, intent.section_cues);
    const double xdrug = cross_drug_penalty(h, drugs, opts_.entity_text_chars, opts_.xdrug_source_types);
    const double final_score = w.w_ce * ce_norm + (w.w_entity * entity + w.w_sec * section - w.w_xdrug_penalty * xdrug);
    if (explain)
      h.explain.note("tier2", {{"profile", intent.workflow}, {"ce_source", ce_source}, {"ce_raw", ce[i]},
                               {"ce_norm", ce_norm}, {"entity", entity}, {"section", section}, {"xdrug", xdrug},
                               {"final", final_score}});
    h.score = final_score;
  }
  search::sort_hits(text_nodes);
  // Chemical workflow: structure similarity; the higher of fused and structural
  // scores wins. Over every hit with a structure, not only those naming the query's
  // drug: a structural neighbour is what "compounds similar to imatinib" asks for, and
  // its fused score carries the cross-drug penalty for being another drug (the seed's
  // failure class q-exp-043). Hits without a structure score -1
  // and keep their fused score.
  if (intent.workflow == "chemical") {
    std::vector<size_t> idx;
    HitList chem;
    for (size_t i = 0; i < text_nodes.size(); ++i)
      if (!text_nodes[i].field("smiles").empty()) {
        idx.push_back(i);
        chem.push_back(text_nodes[i]);
      }
    if (!chem.empty()) {
      auto s = structure_scores(query, chem);
      bool changed = false;
      for (size_t j = 0; j < idx.size(); ++j) {
        if (s[j] > text_nodes[idx[j]].score) {
          if (explain) text_nodes[idx[j]].explain.note("chemical_max_merge", {{"structure", s[j]}, {"fused", text_nodes[idx[j]].score}});
          text_nodes[idx[j]].score = s[j];
          changed = true;
        }
      }
      if (changed) search::sort_hits(text_nodes);
    }
  }
  // Image nodes are appended unscored.
  for (auto& h : image_nodes) text_nodes.push_back(std::move(h));
  return text_nodes;
}

}  // namespace eagle::biomed
