#pragma once
// The biomedical plugin (seed: biomed-retrieval.txt). It enters the engine only
// through HookBus subscriptions of namespace "biomed":
//   CLASSIFY_QUERY      BiomedQueryRouteClassifier (decision tree steps 1-13)
//   QUERY_DENSE_EXPAND  biomed_dense_expand: entity suffix (pubmedbert only), SMILES
//                       for the molecule encoder, sparse terms, intent stash
//   RERANK              Tier-1 biomed_rerank: entity filter + cosine rerank
//   RETRIEVE_SUPPLEMENT supplement_entity_anchored_hits (registry name lookup + scoped ANN)
//   RRF_POST_MERGE      biomed_rrf_post_merge: inject_supplement_candidates(min_new=2, +100)
//   RERANK_MERGED       post_rrf_rerank: Tier-2 fusion, profiles, chemical max-merge
//   CHUNK               biomed_chunk_transform: primary_drugs and biomed_section stamps
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "eagle/biomed/intent.h"
#include "eagle/biomed/knowledge.h"
#include "eagle/biomed/scoring.h"
#include "eagle/encode/encoder.h"
#include "eagle/registry/registry.h"
#include "eagle/search/hookbus.h"
#include "eagle/search/orchestrator.h"

namespace eagle::biomed {

struct CollectionEncoder {
  std::string collection;
  std::string encoder;
};

struct BiomedOptions {
  // The seed's collection / encoder pairs (configurable defaults).
  CollectionEncoder text_biomed{"eagle_text_biomed", "pubmedbert"};
  CollectionEncoder text_medcpt{"eagle_text_medcpt", "medcpt-query"};
  CollectionEncoder core_text{"eagle_text", "text-embedding-v4"};
  CollectionEncoder chemical{"eagle_chemical", "molformer"};
  CollectionEncoder radiology{"eagle_medical_radiology", "medimageinsight"};
  CollectionEncoder pathology{"eagle_medical_pathology", "uni2"};
  CollectionEncoder visual{"eagle_visual", "qwen3-vl"};
  bool default_dual_text_search = true;
  bool medcpt_dual_search = false;
  std::vector<CollectionEncoder> exploratory_search_collections;
  size_t collection_recall_top_k = 20;
  // Collections that run the lexical leg (settings.router.hybrid_text_collections,
  // biomed profile).
  std::set<std::string> hybrid_text_collections = {"eagle_text_biomed", "eagle_text_medcpt", "eagle_text"};
  // Plans for collections that do not exist are dropped at routing (audited as
  // route_absent) instead of failing at recall: a deployment need not have all seven.
  bool skip_absent_collections = true;
  std::vector<std::string> radiology_keywords = {"x-ray", "xray", "radiograph", "ct scan", "computed tomography",
                                                 "mri", "magnetic resonance", "ultrasound", "mammogra",
                                                 "chest film", "radiolog", "pet scan"};
  std::vector<std::string> pathology_keywords = {"histolog", "histopatholog", "pathology slide", "whole slide",
                                                 "h&e", "biopsy slide", "tissue section", "immunohistochem"};
  IntentOptions intent;
  // Expansion (expand_query_for_dense_retrieval).
  std::string expansion_encoder = "pubmedbert";
  size_t aliases_per_entity = 2;
  size_t pathways_per_entity = 1;
  size_t expansion_cap = 12;
  // Stage switches (ablations; docs/biomed-ablation.md).
  // QUERY_DENSE_EXPAND's sparse terms for the BM25 leg: the seed's, off by default
  // (SciFact train +0.007, BioASQ dev +0.002 nDCG@10 without them): the query already
  // names its drugs, so adding their names again only weighs them twice.
  bool sparse_terms_enabled = false;
  bool chunk_stamps_enabled = true;   // CHUNK: primary_drugs / biomed_section stamps
  bool supplement_enabled = true;
  bool injection_enabled = true;
  bool tier2_enabled = true;
  // Tier-1. The entity filter is the seed's, but off by default: it lowered nDCG@10 on
  // both dev splits (SciFact train 0.6640 -> 0.6703, BioASQ dev 0.7516 -> 0.7564 without
  // it; docs/biomed-ablation.md): a relevant abstract often names the drug past its
  // first 512 characters or by another name ("macrolides" for erythromycin).
  bool tier1_entity_filter = false;
  bool tier1_cosine_rerank = true;
  // The cosine rerank replaces a plan's fused dense+BM25 order by the encoder's
  // cosine alone. With a static word-vector encoder standing in for pubmedbert that
  // throws BM25 away (BioASQ dev nDCG@10 0.75 -> 0.41, docs/biomed-ablation.md), so
  // by default it runs only for contextual encoders (BERT, remote models).
  bool tier1_skip_static_encoders = true;
  // The entity suffix (QUERY_ASSEMBLE) is meant for a contextual pubmedbert. A static
  // word-vector encoder standing in for it averages the alias and pathway words into
  // the query vector: SciFact train nDCG@10 0.6809 -> 0.6827 without it, BioASQ dev
  // unchanged (docs/biomed-ablation.md). So by default such an encoder embeds the raw
  // query.
  bool suffix_skip_static_encoders = true;
  // The entity filter keeps only hits that name the query's drugs. On a molecule
  // collection searched by the query drug's structure that would drop every similar
  // compound (the seed's open compound_match failures), so there it is skipped by
  // default; set false for the seed's literal behaviour.
  bool tier1_structure_search_skips_entity_filter = true;
  size_t rerank_text_chars = 2048;  // texts truncated before encoding / cross-encoding
  size_t entity_text_chars = 512;   // text[:512] for entity / penalty checks
  // Tier-2's entity evidence counts when the query's drug mentions carry at least this
  // share of the query's lexical weight (BM25 idf over the hits' collections). "What
  // is the mechanism of action of toripalimab?" is about its drug; in "There is a
  // relation between Erythromycin use and hypertrophic pyloric stenosis" the drug is
  // one word of seven, and boosting every abstract that names it buried the answer
  // (which says "macrolides"). 0: always (the seed). 0.25 is the smallest threshold
  // with which the pipeline matches BM25 on SciFact train, learned on the dev splits
  // with BioASQ dev (docs/biomed-ablation.md). It gates the entity term only: the
  // cross-drug penalty (labels and compound cards) and the supplement's injection
  // still use the query's drugs.
  double entity_min_query_share = 0.25;
  // The cross-drug penalty applies to hits of these source types: a drug label or a
  // compound card is about its drugs, so one naming only other drugs answers another
  // question; a paper or snippet naming other drugs may still be about the query's
  // (vitamin E for alpha-tocopherol acetate). Empty: every hit (the seed).
  std::vector<std::string> xdrug_source_types = {"label", "compound"};
  // Supplement.
  double supplement_entity_weight = 2.0;
  double supplement_dense_weight = 0.1;
  size_t supplement_min_docs_limit = 8;  // limit = min(recall_top_k, max(4 * docs, 8))
  size_t supplement_docs_per_hit = 4;
  size_t max_supplement_documents = 500;
  size_t related_drugs_for_supplement = 4;
  // Injection.
  size_t injection_min_new = 2;
  double injection_boost = 100.0;
  // Tier-2.
  std::string domain_rerank_encoder = "medcpt-rerank";
  size_t related_drugs_for_boost = 6;
  // Ingest (CHUNK).
  size_t chunk_primary_drugs = 3;
  // TDR: text ingested in the biomed namespace without an explicit collection is
  // routed by its document profile (biomedical -> text_biomed, general -> core text).
  bool document_profile_routing = true;
  double profile_min_density = 2.0;  // biomedical cue words or entities per 100 tokens
  // What one profile decision covers. "input" (the default): each input (a file, a
  // folder, a BEIR corpus) goes whole to one collection, biomedical when at least half
  // of its first profile_sample_documents documents are; a corpus of biomedical
  // snippets is not split across two collections, where a core search would see only
  // the few "general" ones. "document": the seed's per-document
  // doc_profile.py decision.
  std::string document_profile_unit = "input";
  size_t profile_sample_documents = 200;
  std::map<std::string, ProfileWeights> profiles = default_profile_weights();
};

// The chunk fields biomed_chunk_transform stamps (CHUNK) and the query-time entity
// boost reads: primary_drugs (string list) and biomed_section, both indexed (facets).
std::vector<FieldSchema> chunk_fields();

// Every collection / encoder pair of the options (the seed's slots and the
// exploratory collections): where a collection's recorded label replaces a slot's.
std::vector<CollectionEncoder*> collection_slots(BiomedOptions& options);

class BiomedPlugin {
 public:
  // `registry` may be null: the supplement and the file-name backfill then abstain.
  BiomedPlugin(const EntityKnowledge& knowledge, search::CollectionProvider collections,
               encode::EncoderRegistry& encoders, registry::DocumentRegistry* registry, BiomedOptions options = {});

  // Subscribes every hook under namespace "biomed" (priority 100).
  void register_hooks(search::HookBus& bus, const std::string& ns = "biomed", int priority = 100);

  // The hooks, public for tests.
  std::optional<search::RouteDecision> route(search::HookContext& ctx, const search::RetrievalRequest& req) const;
  std::optional<search::ExpandedQuery> dense_expand(search::HookContext& ctx, const std::string& query,
                                                    const std::optional<std::string>& encoder) const;
  std::optional<search::HitList> tier1_rerank(search::HookContext& ctx, const std::string& query,
                                              const search::CollectionQueryPlan& plan,
                                              const search::HitList& hits) const;
  std::optional<search::HitList> supplement(search::HookContext& ctx, const std::string& query) const;
  std::optional<search::HitList> post_merge(search::HookContext& ctx, const std::string& query,
                                            const search::HitList& merged, const search::HitList& supplement) const;
  std::optional<search::HitList> tier2_rerank(search::HookContext& ctx, const std::string& query,
                                              const search::HitList& merged) const;
  // CHUNK (TRANSFORM), biomed_chunk_transform: stamps primary_drugs (drugs of the
  // title, else the most frequent in the text, at most 3) and biomed_section (the
  // source's section field or the text's IMRaD heading) on chunks that lack them,
  // so the query-time entity boost needs no rescan.
  std::optional<nlohmann::json> chunk_transform(search::HookContext& ctx, const nlohmann::json& chunks) const;
  // CLASSIFY_VISUAL (FIRST), biomed_image_classifier: a figure or image file whose
  // caption or name carries a pathology or radiology keyword goes to that slot
  // ({"collection", "encoder", "modality"}); pages and other images abstain (the core
  // visual collection). The ingest leaves a medical image out when the slot's encoder
  // is not configured: never the general visual encoder in its place.
  std::optional<nlohmann::json> classify_image(search::HookContext& ctx, const nlohmann::json& tile) const;

  // expand_query_for_dense_retrieval: "{query} [biomed entities: a, b, ...]", ranked by
  // first occurrence, aliases_per_entity aliases + pathways_per_entity pathways per
  // entity, de-duplicated, capped; the query unchanged when nothing matched.
  std::string expand_query_for_dense_retrieval(const std::string& query) const;
  // The suffix alone ("[biomed entities: a, b, ...]", empty without entities): the
  // biomed QUERY_ASSEMBLE subscriber's contribution.
  std::string entity_suffix(const std::string& query) const;
  // _boost_terms_for_query: the query's drugs, else related_drugs[:6] of its entities.
  std::vector<std::string> boost_terms_for_query(const std::string& query) const;
  // The query with the mentions the boost terms come from (its drugs, else the
  // entities whose related drugs stand in) blanked out.
  std::string blank_boost_term_mentions(const std::string& query) const;
  // The share of the query's BM25 weight those mentions carry: 1 - weight(query
  // without them) / weight(query), summed over the hits' collections, so every query
  // term is attributed where the analyser put it (hyphenated compounds included).
  // 1 when nothing can weigh it.
  double boost_mention_share(const search::HookContext& ctx, const std::string& query, const search::HitList& hits) const;
  // The intent stashed by dense_expand, or detected now.
  QueryRetrievalIntent intent_of(search::HookContext& ctx, const std::string& query) const;
  const BiomedOptions& options() const { return opts_; }
  // Every slot on `collection` plans with `label` from now on (its vectors were
  // re-embedded: `eagle reembed`). Not thread-safe: call with searches held back.
  void set_collection_encoder(const std::string& collection, const std::string& label);

 private:
  bool exists(const std::string& collection) const;
  // A static word-vector encoder (GloVe standing in for a contextual slot).
  bool is_static_encoder(const std::string& label) const;
  std::vector<std::string> query_smiles(const std::string& query) const;
  // The structure of the first related drug (of the query's entities) that has one.
  std::string related_smiles(const std::string& query) const;
  std::vector<float> structure_scores(const std::string& query, const search::HitList& hits) const;

  const EntityKnowledge& kb_;
  search::CollectionProvider collections_;
  encode::EncoderRegistry& encoders_;
  registry::DocumentRegistry* registry_;
  BiomedOptions opts_;
};

// A SMILES-looking token: only SMILES characters, at least one ring bond, branch or
// bond symbol, and at least 4 atoms' worth of letters (the route's "SMILES pattern
// in query"); the caller confirms with RDKit.
bool looks_like_smiles(std::string_view token);

}  // namespace eagle::biomed
