#pragma once
// Query intent detection (seed: query_intent.py, detect_retrieval_intent): infers a
// QueryRetrievalIntent purely from the query text; the first matching cue wins:
//   chemical > regulatory > combination (cue AND >= 2 drugs) > drug_entity > general.
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eagle/biomed/knowledge.h"

namespace eagle::biomed {

struct QueryRetrievalIntent {
  std::string workflow = "general";  // chemical | regulatory | combination | drug_entity | general
  std::vector<std::string> suppress_collections;
  std::vector<std::string> section_cues;  // e.g. warnings, dosage, indications_and_usage
  bool require_entity_match = false;
  std::vector<std::string> drugs;  // match_drug_entities(query), lower-cased names

  nlohmann::json to_json() const;
  static QueryRetrievalIntent from_json(const nlohmann::json& j);
};

// The cue phrases (matched case-insensitively at a word start, so "compounds"
// matches "compound"); every list is configurable.
struct IntentOptions {
  // _COMPOUND_CUE_RE
  std::vector<std::string> compound_cues = {"smiles", "inchi", "compound", "ligand", "molecular formula"};
  // _LABEL_CUE_RE. "label" alone is included: "the Humira label" is a drug label query.
  // "boxed warning" too: only a label has one.
  std::vector<std::string> label_cues = {"drug label", "prescribing information", "indications and usage",
                                         "dosage and administration", "label", "labeling", "package insert",
                                         "boxed warning"};
  // _COMBINATION_CUE_RE
  std::vector<std::string> combination_cues = {"combination", "combined with", "co-administered",
                                               "coadministered", "plus"};
  // Section cue keywords -> the section name they add.
  // The seed's five plus "boxed warning" (a label's boxed warning is its own section;
  // a keyword inside a longer one found first does not count again).
  std::vector<std::pair<std::string, std::string>> section_keywords = {
      {"boxed warning", "boxed_warning"},
      {"warning", "warnings"},           {"dosage", "dosage"}, {"dosing", "dosage"},
      {"indications", "indications_and_usage"}, {"usage", "indications_and_usage"}};
  std::string chemical_collection = "eagle_chemical";  // what regulatory queries suppress
};

QueryRetrievalIntent detect_retrieval_intent(const std::string& query, const EntityKnowledge& kb,
                                             const IntentOptions& opts = {});

// True when `cue` occurs in `lowered_text` at a word start (not preceded by a letter
// or digit). Both are lower-case.
bool has_cue(const std::string& lowered_text, const std::string& cue);

}  // namespace eagle::biomed
