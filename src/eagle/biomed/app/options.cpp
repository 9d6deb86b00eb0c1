// The biomed.* configuration keys: the plugin's vocabularies and the seed's options
// (BiomedOptions), registered after the core's keys (plugin/plugin.h).
#include <cmath>
#include <filesystem>
#include <set>

#include "eagle/biomed/app/biomed_app.h"
#include "eagle/core/error.h"

namespace eagle::biomed {
namespace {

// A biomed option that is a comma-separated list of words.
void add_biomed_words(std::vector<app::ConfigOption>& o, const std::string& key, const std::string& doc,
                      std::vector<std::string> BiomedOptions::*field) {
  o.push_back({key, doc, [=](app::Config& c, const std::string& v) { biomed_settings(c).options.*field = app::split_list(v); },
               [=](const app::Config& c) { return app::join_list(biomed_settings(c).options.*field); }});
}

// biomed.*: the seed's numbers, the route keywords and the collections a biomed query also searches.
void add_biomed_seed_options(std::vector<app::ConfigOption>& o) {
  using B = BiomedOptions;
  // A count that may be 0 (0 turns the step off), bounded.
  auto count = [&](const std::string& key, const std::string& doc, size_t B::*field, size_t max) {
    o.push_back({key, doc,
                 [=](app::Config& c, const std::string& v) {
                   biomed_settings(c).options.*field = v == "0" ? 0 : app::to_count(key, v, max);
                 },
                 [=](const app::Config& c) { return std::to_string(biomed_settings(c).options.*field); }});
  };
  auto weight = [&](const std::string& key, const std::string& doc, double B::*field) {
    o.push_back({key, doc,
                 [=](app::Config& c, const std::string& v) {
                   const double d = app::to_double(key, v);
                   if (!(d >= 0) || !std::isfinite(d)) fail(ErrorCode::invalid_argument, key + " must be a number >= 0");
                   biomed_settings(c).options.*field = d;
                 },
                 [=](const app::Config& c) { return app::fmt(biomed_settings(c).options.*field); }});
  };
  // The seed's numbers (biomed-retrieval.txt), each a key with the seed's default.
  o.push_back({"biomed.expansion_encoder", "the encoder whose dense query gets the entity suffix (seed: pubmedbert only)",
               [](app::Config& c, const std::string& v) { biomed_settings(c).options.expansion_encoder = v; },
               [](const app::Config& c) { return biomed_settings(c).options.expansion_encoder; }});
  count("biomed.aliases_per_entity", "entity suffix: aliases per entity (seed 2)", &B::aliases_per_entity, 100);
  count("biomed.pathways_per_entity", "entity suffix: pathways per entity (seed 1)", &B::pathways_per_entity, 100);
  count("biomed.expansion_cap", "entity suffix: at most this many terms (seed 12; 0: no suffix)", &B::expansion_cap, 1000);
  count("biomed.rerank_text_chars", "characters of a hit's text given to an encoder or cross-encoder (seed 2048)",
        &B::rerank_text_chars, 1 << 20);
  count("biomed.entity_text_chars", "characters of a hit's text searched for the query's drugs (seed 512)",
        &B::entity_text_chars, 1 << 20);
  o.push_back({"biomed.entity_min_query_share",
               "Tier-2 entity evidence counts when the query's drug mentions carry at least this share of its "
               "BM25 idf (0: always, the seed)",
               [](app::Config& c, const std::string& v) {
                 const double d = app::to_double("biomed.entity_min_query_share", v);
                 if (!(d >= 0 && d <= 1)) fail(ErrorCode::invalid_argument, "biomed.entity_min_query_share must be in [0, 1]");
                 biomed_settings(c).options.entity_min_query_share = d;
               },
               [](const app::Config& c) { return app::fmt(biomed_settings(c).options.entity_min_query_share); }});
  weight("biomed.supplement_entity_weight", "supplement score: weight of the entity score (seed 2.0)",
         &B::supplement_entity_weight);
  weight("biomed.supplement_dense_weight", "supplement score: weight of the dense score (seed 0.1)",
         &B::supplement_dense_weight);
  count("biomed.supplement_min_docs_limit", "supplement recall: at least this many hits (seed 8)",
        &B::supplement_min_docs_limit, 100000);
  count("biomed.supplement_docs_per_hit", "supplement recall: hits per matched document (seed 4)",
        &B::supplement_docs_per_hit, 1000);
  count("biomed.max_supplement_documents", "supplement: documents the registry name lookup may return",
        &B::max_supplement_documents, 100000);
  count("biomed.related_drugs_for_supplement", "supplement: related drugs of the first entity when the query names none (seed 4)",
        &B::related_drugs_for_supplement, 100);
  count("biomed.related_drugs_for_boost", "Tier-2: related drugs used as boost terms when the query names none (seed 6)",
        &B::related_drugs_for_boost, 100);
  count("biomed.injection_min_new", "RRF_POST_MERGE: supplement hits injected at least (seed min_new 2)",
        &B::injection_min_new, 1000);
  weight("biomed.injection_boost", "RRF_POST_MERGE: score boost of an injected hit (seed +100)", &B::injection_boost);
  count("biomed.chunk_primary_drugs", "CHUNK: primary_drugs stamped per chunk (most mentioned first)",
        &B::chunk_primary_drugs, 100);
  add_biomed_words(o, "biomed.radiology_keywords",
                   "route: comma-separated words that send an image query to the radiology slot",
                   &B::radiology_keywords);
  add_biomed_words(o, "biomed.pathology_keywords",
                   "route: comma-separated words that send an image query to the pathology slot",
                   &B::pathology_keywords);
  o.push_back({"biomed.hybrid_text_collections",
               "comma-separated collections whose plans also run the BM25 leg (seed router.hybrid_text_collections)",
               [](app::Config& c, const std::string& v) {
                 auto l = app::split_list(v);
                 biomed_settings(c).options.hybrid_text_collections = std::set<std::string>(l.begin(), l.end());
               },
               [](const app::Config& c) {
                 return app::join_list({biomed_settings(c).options.hybrid_text_collections.begin(),
                                   biomed_settings(c).options.hybrid_text_collections.end()});
               }});
  o.push_back({"biomed.exploratory_search_collections",
               "comma-separated collection:encoder pairs every biomed query also searches (seed "
               "exploratory_search_collections; empty: none)",
               [](app::Config& c, const std::string& v) {
                 std::vector<CollectionEncoder> out;
                 for (const auto& item : app::split_list(v)) {
                   const auto colon = item.find(':');
                   if (colon == std::string::npos || colon == 0 || colon + 1 == item.size())
                     fail(ErrorCode::invalid_argument,
                          "biomed.exploratory_search_collections: expected collection:encoder, got '" + item + "'");
                   out.push_back({item.substr(0, colon), item.substr(colon + 1)});
                 }
                 biomed_settings(c).options.exploratory_search_collections = std::move(out);
               },
               [](const app::Config& c) {
                 std::vector<std::string> l;
                 for (const auto& e : biomed_settings(c).options.exploratory_search_collections)
                   l.push_back(e.collection + ":" + e.encoder);
                 return app::join_list(l);
               }});
}

// biomed.vocab_dir and biomed.vocab_cache: where the vocabularies are read and compiled to.
void add_biomed_vocab_options(std::vector<app::ConfigOption>& o) {
  o.push_back({"biomed.vocab_dir", "vocabulary folder (DrugBank, genes, MeSH, DOID, UMLS RRF); empty = ../shared/data/vocab",
               [](app::Config& c, const std::string& v) { biomed_settings(c).vocab_dir = v; },
               [](const app::Config& c) { return biomed_settings(c).vocab_dir; }});
  o.push_back({"biomed.vocab_cache",
               "compiled vocabulary + matcher cache (rebuilt when a source changes); empty: CACHE_DIR/biomed-vocab.bin",
               [](app::Config& c, const std::string& v) { biomed_settings(c).vocab_cache = v; },
               [](const app::Config& c) { return vocab_cache_of(c); }});
}

// biomed.*: the switches of the seed's steps, the document profile (TDR) and the recall depth.
void add_biomed_step_options(std::vector<app::ConfigOption>& o) {
  using B = BiomedOptions;
  auto flag = [&](const std::string& key, const std::string& doc, bool B::*field) {
    o.push_back({key, doc, [=](app::Config& c, const std::string& v) { biomed_settings(c).options.*field = app::to_bool(key, v); },
                 [=](const app::Config& c) { return std::string(biomed_settings(c).options.*field ? "true" : "false"); }});
  };
  flag("biomed.default_dual_text_search", "route step 6: also search the core text collection", &B::default_dual_text_search);
  flag("biomed.medcpt_dual_search", "route step 6: also search the MedCPT collection", &B::medcpt_dual_search);
  flag("biomed.sparse_terms_enabled", "QUERY_DENSE_EXPAND: drug names and section cues added to the BM25 leg",
       &B::sparse_terms_enabled);
  flag("biomed.chunk_stamps_enabled", "CHUNK: stamp primary_drugs and biomed_section at ingest", &B::chunk_stamps_enabled);
  flag("biomed.document_profile_routing",
       "ingest: biomedical text to the biomedical collection, general text to the core one (TDR)",
       &B::document_profile_routing);
  o.push_back({"biomed.profile_min_density", "TDR: biomedical cues or entities per 100 tokens for a biomedical profile",
               [](app::Config& c, const std::string& v) {
                 double d = app::to_double("biomed.profile_min_density", v);
                 if (d < 0) fail(ErrorCode::invalid_argument, "biomed.profile_min_density must be >= 0");
                 biomed_settings(c).options.profile_min_density = d;
               },
               [](const app::Config& c) { return app::fmt(biomed_settings(c).options.profile_min_density); }});
  o.push_back({"biomed.document_profile_unit",
               "TDR: input (each input file or folder goes whole to one collection, by the profile of its first "
               "documents) or document (the seed's per-document decision)",
               [](app::Config& c, const std::string& v) {
                 if (v != "input" && v != "document")
                   fail(ErrorCode::invalid_argument, "biomed.document_profile_unit must be input or document, got '" + v + "'");
                 biomed_settings(c).options.document_profile_unit = v;
               },
               [](const app::Config& c) { return biomed_settings(c).options.document_profile_unit; }});
  o.push_back({"biomed.profile_sample_documents", "TDR, unit input: documents of each input whose profiles decide it",
               [](app::Config& c, const std::string& v) {
                 biomed_settings(c).options.profile_sample_documents = app::to_count("biomed.profile_sample_documents", v, 1000000);
               },
               [](const app::Config& c) { return std::to_string(biomed_settings(c).options.profile_sample_documents); }});
  flag("biomed.supplement_enabled", "RETRIEVE_SUPPLEMENT: entity-anchored supplemental recall", &B::supplement_enabled);
  flag("biomed.injection_enabled", "RRF_POST_MERGE: inject supplement hits (min_new, +boost)", &B::injection_enabled);
  flag("biomed.tier2_enabled", "RERANK_MERGED: the Tier-2 fusion rerank", &B::tier2_enabled);
  flag("biomed.tier1_entity_filter", "Tier-1: keep only hits naming the query's drugs (when any remain)",
       &B::tier1_entity_filter);
  flag("biomed.suffix_skip_static_encoders",
       "a static word-vector encoder in the entity-suffix slot embeds the raw query (the suffix is for a "
       "contextual pubmedbert)",
       &B::suffix_skip_static_encoders);
  add_biomed_words(o, "biomed.xdrug_source_types",
                   "Tier-2: comma-separated source types whose hits the cross-drug penalty applies to (empty: every "
                   "hit, the seed)",
                   &B::xdrug_source_types);
  flag("biomed.tier1_cosine_rerank", "Tier-1: cosine rerank of the biomedical and chemical plans", &B::tier1_cosine_rerank);
  flag("biomed.tier1_skip_static_encoders", "Tier-1: no cosine rerank with a static word-vector encoder",
       &B::tier1_skip_static_encoders);
  flag("biomed.tier1_structure_search_skips_entity_filter",
       "Tier-1: no entity filter on a molecule collection searched by structure", &B::tier1_structure_search_skips_entity_filter);
  o.push_back({"biomed.collection_recall_top_k", "recall depth of each biomed plan (seed: 20)",
               [](app::Config& c, const std::string& v) {
                 biomed_settings(c).options.collection_recall_top_k = app::to_count("biomed.collection_recall_top_k", v, app::kMaxTopK);
               },
               [](const app::Config& c) { return std::to_string(biomed_settings(c).options.collection_recall_top_k); }});
}

// biomed.<slot>_collection and biomed.<slot>_encoder of each slot, and the Tier-2 cross-encoder.
void add_biomed_slot_options(std::vector<app::ConfigOption>& o) {
  using B = BiomedOptions;
  auto pair = [&](const std::string& name, CollectionEncoder B::*field) {
    o.push_back({"biomed." + name + "_collection", "collection of the " + name + " slot",
                 [=](app::Config& c, const std::string& v) { (biomed_settings(c).options.*field).collection = v; },
                 [=](const app::Config& c) { return (biomed_settings(c).options.*field).collection; }});
    o.push_back({"biomed." + name + "_encoder", "encoder label of the " + name + " slot",
                 [=](app::Config& c, const std::string& v) { (biomed_settings(c).options.*field).encoder = v; },
                 [=](const app::Config& c) { return (biomed_settings(c).options.*field).encoder; }});
  };
  pair("text_biomed", &B::text_biomed);
  pair("text_medcpt", &B::text_medcpt);
  pair("core_text", &B::core_text);
  pair("chemical", &B::chemical);
  pair("radiology", &B::radiology);
  pair("pathology", &B::pathology);
  pair("visual", &B::visual);
  o.push_back({"biomed.domain_rerank_encoder", "Tier-2 cross-encoder label (missing: the fused score is used)",
               [](app::Config& c, const std::string& v) { biomed_settings(c).options.domain_rerank_encoder = v; },
               [](const app::Config& c) { return biomed_settings(c).options.domain_rerank_encoder; }});
}

// biomed.weights.<profile>.<w>: the Tier-2 profile table (seed: _PROFILE_WEIGHTS).
void add_biomed_profile_weights(std::vector<app::ConfigOption>& o) {
  for (const auto& [profile, w] : default_profile_weights()) {
    const std::pair<const char*, double ProfileWeights::*> fields[] = {
        {"w_ce", &ProfileWeights::w_ce},
        {"w_entity", &ProfileWeights::w_entity},
        {"w_sec", &ProfileWeights::w_sec},
        {"w_xdrug_penalty", &ProfileWeights::w_xdrug_penalty}};
    for (const auto& entry : fields) {
      const auto& name = entry.first;
      const auto field = entry.second;  // named: the lambdas below capture it
      const std::string key = "biomed.weights." + profile + "." + name;
      const std::string prof = profile;
      o.push_back({key, "Tier-2 weight of the " + profile + " profile",
                   [=](app::Config& c, const std::string& v) {
                     double d = app::to_double(key, v);
                     if (d < 0) fail(ErrorCode::invalid_argument, key + " must be >= 0");
                     biomed_settings(c).options.profiles[prof].*field = d;
                   },
                   [=](const app::Config& c) { return app::fmt(biomed_settings(c).options.profiles.at(prof).*field); }});
    }
  }
}

}  // namespace

// biomed.*: the plugin's vocabularies and the seed's options (BiomedOptions).
void add_biomed_options(std::vector<app::ConfigOption>& o) {
  add_biomed_seed_options(o);
  add_biomed_vocab_options(o);
  add_biomed_step_options(o);
  add_biomed_slot_options(o);
  add_biomed_profile_weights(o);
}

BiomedSettings& biomed_settings(app::Config& cfg) { return app::settings_of<BiomedSettings>(cfg, kNamespace); }
const BiomedSettings& biomed_settings(const app::Config& cfg) {
  return app::settings_of<BiomedSettings>(cfg, kNamespace);
}

std::string vocab_cache_of(const app::Config& cfg) {
  const auto& s = biomed_settings(cfg);
  return s.vocab_cache.empty() ? (std::filesystem::path(app::cache_dir_of(cfg)) / "biomed-vocab.bin").string()
                               : s.vocab_cache;
}

}  // namespace eagle::biomed
