#pragma once
// Entity and section scoring of the biomed reranks (seed: scoring.py and rerank.py).
// Every function reads a hit's metadata as stamped at ingest (primary_drugs,
// biomed_section, path, file_name, document_name, source_uri, content_summary).
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eagle/search/types.h"

namespace eagle::biomed {

// The metadata's primary_drugs, parsed as a list, a single string, or a JSON array
// held in a string; lower-cased.
std::vector<std::string> primary_drugs_of(const nlohmann::json& metadata);

// path / file_name / document_name / source_uri, lower-cased and joined.
std::string path_blob(const nlohmann::json& metadata);

// entity_boost_score: 1.0 when a primary_drugs entry matches a query drug; 0.5 when
// a query drug appears in the path / file / document name / source_uri blob; else 0.
double entity_boost_score(const nlohmann::json& metadata, const std::vector<std::string>& query_drugs);

// _entity_match_score: 1.0 (primary_drugs match), 0.75 (path blob), 0.75 (a query
// drug in text[:text_chars]), else 0.
double entity_match_score(const search::ScoredHit& hit, const std::vector<std::string>& query_drugs,
                          size_t text_chars = 512);

// _section_match_score: the fraction of section cues found in the biomed_section /
// path / content_summary[:200] blob, each cue tried raw and with '_' -> ' '.
double section_match_score(const search::ScoredHit& hit, const std::vector<std::string>& section_cues);

// _cross_drug_penalty: 1.0 when primary_drugs is non-empty, disjoint from the query
// drugs, and no query drug appears in text[:text_chars] or the path blob; else 0.
// With `source_types`, only hits of those source types are penalised (a label or a
// compound card is about its drugs; a paper naming others may still be about the
// query's); empty: every hit, the seed's rule.
double cross_drug_penalty(const search::ScoredHit& hit, const std::vector<std::string>& query_drugs,
                          size_t text_chars = 512, const std::vector<std::string>& source_types = {});

// The Tier-2 weights of one profile (seed: _PROFILE_WEIGHTS).
struct ProfileWeights {
  double w_ce = 0.5;
  double w_entity = 0.25;
  double w_sec = 0.15;
  double w_xdrug_penalty = 2.0;
};
// default (= general), regulatory, drug_entity, chemical, combination.
std::map<std::string, ProfileWeights> default_profile_weights();

// Lower-cased prefix of at most n bytes (cut at a UTF-8 boundary).
std::string lower_prefix(const std::string& text, size_t n);

}  // namespace eagle::biomed
