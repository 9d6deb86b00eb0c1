#include "eagle/biomed/intent.h"

#include <algorithm>
#include <cctype>

namespace eagle::biomed {
using nlohmann::json;

std::vector<std::string> drug_names(const EntityKnowledge& kb, std::string_view text) {
  std::vector<std::string> out;
  auto push = [&](std::string s) {
    if (!s.empty() && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
  };
  for (const auto& m : kb.match_drug_entities(text)) {
    push(ascii_lower(m.text));
    push(ascii_lower(kb.entity(m.entity).name));
  }
  return out;
}

bool has_cue(const std::string& t, const std::string& cue) {
  if (cue.empty()) return false;
  for (size_t pos = t.find(cue); pos != std::string::npos; pos = t.find(cue, pos + 1)) {
    if (pos == 0 || !std::isalnum(static_cast<unsigned char>(t[pos - 1]))) return true;
  }
  return false;
}

json QueryRetrievalIntent::to_json() const {
  return {{"workflow", workflow},
          {"suppress_collections", suppress_collections},
          {"section_cues", section_cues},
          {"require_entity_match", require_entity_match},
          {"drugs", drugs}};
}

QueryRetrievalIntent QueryRetrievalIntent::from_json(const json& j) {
  QueryRetrievalIntent i;
  i.workflow = j.value("workflow", std::string("general"));
  i.suppress_collections = j.value("suppress_collections", std::vector<std::string>{});
  i.section_cues = j.value("section_cues", std::vector<std::string>{});
  i.require_entity_match = j.value("require_entity_match", false);
  i.drugs = j.value("drugs", std::vector<std::string>{});
  return i;
}

QueryRetrievalIntent detect_retrieval_intent(const std::string& query, const EntityKnowledge& kb,
                                             const IntentOptions& opts) {
  const std::string q = ascii_lower(query);
  auto any_cue = [&](const std::vector<std::string>& cues) {
    return std::any_of(cues.begin(), cues.end(), [&](const std::string& c) { return has_cue(q, c); });
  };
  // "Section cues added when warning / dosage / dosing / indications / usage
  // keywords present in the query."
  // Longest keyword first, and a keyword found is blanked out of the text, so the
  // "warning" inside "boxed warning" does not also add the warnings section.
  // The cues keep the keywords' order.
  const auto& keywords = opts.section_keywords;
  std::vector<size_t> longest_first(keywords.size());
  for (size_t i = 0; i < keywords.size(); ++i) longest_first[i] = i;
  std::stable_sort(longest_first.begin(), longest_first.end(),
                   [&](size_t a, size_t b) { return keywords[a].first.size() > keywords[b].first.size(); });
  std::string rest = q;
  std::vector<bool> found(keywords.size(), false);
  for (size_t i : longest_first) {
    const std::string& kw = keywords[i].first;
    if (!has_cue(rest, kw)) continue;
    found[i] = true;
    for (size_t pos = rest.find(kw); pos != std::string::npos; pos = rest.find(kw, pos + kw.size()))
      if (pos == 0 || !std::isalnum(static_cast<unsigned char>(rest[pos - 1]))) rest.replace(pos, kw.size(), kw.size(), ' ');
  }
  std::vector<std::string> cues;
  for (size_t i = 0; i < keywords.size(); ++i)
    if (found[i] && std::find(cues.begin(), cues.end(), keywords[i].second) == cues.end()) cues.push_back(keywords[i].second);

  QueryRetrievalIntent in;
  // Distinct drug entities (a brand and its generic name count once).
  std::vector<EntityId> drug_ids;
  for (const auto& m : kb.match_drug_entities(query))
    if (std::find(drug_ids.begin(), drug_ids.end(), m.entity) == drug_ids.end()) drug_ids.push_back(m.entity);
  in.drugs = drug_names(kb, query);

  if (any_cue(opts.compound_cues)) {
    in.workflow = "chemical";
    in.section_cues = {"compound"};
    in.require_entity_match = true;
  } else if (any_cue(opts.label_cues)) {
    in.workflow = "regulatory";
    in.suppress_collections = {opts.chemical_collection};
    in.section_cues = cues;
    in.require_entity_match = true;
  } else if (any_cue(opts.combination_cues) && drug_ids.size() >= 2) {
    in.workflow = "combination";
    in.section_cues = cues;
    in.require_entity_match = true;
  } else if (!drug_ids.empty()) {
    in.workflow = "drug_entity";
    in.section_cues = cues;
    in.require_entity_match = true;
  } else {
    in.section_cues = cues;
  }
  return in;
}

}  // namespace eagle::biomed
