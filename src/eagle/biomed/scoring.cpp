#include "eagle/biomed/scoring.h"

#include <algorithm>

#include "eagle/biomed/knowledge.h"

namespace eagle::biomed {
using nlohmann::json;

namespace {

bool contains_any(const std::string& blob, const std::vector<std::string>& terms) {
  return std::any_of(terms.begin(), terms.end(),
                     [&](const std::string& t) { return !t.empty() && blob.find(t) != std::string::npos; });
}

std::string meta_string(const json& m, const char* key) {
  auto it = m.find(key);
  return it != m.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string lower_prefix(const std::string& text, size_t n) { return ascii_lower(utf8_prefix(text, n)); }

std::vector<std::string> primary_drugs_of(const json& m) {
  auto it = m.find("primary_drugs");
  if (it == m.end() || it->is_null()) return {};
  json v = *it;
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (!s.empty() && s.front() == '[') {
      // A JSON array kept in a string field by an older ingest.
      v = json::parse(s, nullptr, false);
      if (v.is_discarded()) return {ascii_lower(s)};
    } else {
      return s.empty() ? std::vector<std::string>{} : std::vector<std::string>{ascii_lower(s)};
    }
  }
  std::vector<std::string> out;
  if (v.is_array())
    for (const auto& d : v)
      if (d.is_string() && !d.get<std::string>().empty()) out.push_back(ascii_lower(d.get<std::string>()));
  return out;
}

std::string path_blob(const json& m) {
  return ascii_lower(meta_string(m, "path") + " " + meta_string(m, "file_name") + " " + meta_string(m, "document_name") +
               " " + meta_string(m, "source_uri"));
}

double entity_boost_score(const json& m, const std::vector<std::string>& query_drugs) {
  if (query_drugs.empty()) return 0.0;
  for (const auto& d : primary_drugs_of(m))
    if (std::find(query_drugs.begin(), query_drugs.end(), d) != query_drugs.end()) return 1.0;
  if (contains_any(path_blob(m), query_drugs)) return 0.5;
  return 0.0;
}

double entity_match_score(const search::ScoredHit& h, const std::vector<std::string>& query_drugs,
                          size_t text_chars) {
  const double boost = entity_boost_score(h.metadata, query_drugs);
  if (boost >= 1.0) return 1.0;
  if (boost >= 0.5) return 0.75;
  if (!query_drugs.empty() && contains_any(lower_prefix(h.text, text_chars), query_drugs)) return 0.75;
  return 0.0;
}

double section_match_score(const search::ScoredHit& h, const std::vector<std::string>& cues) {
  if (cues.empty()) return 0.0;
  const std::string blob = ascii_lower(meta_string(h.metadata, "biomed_section") + " " + meta_string(h.metadata, "path") +
                                 " " + lower_prefix(meta_string(h.metadata, "content_summary"), 200));
  size_t hit = 0;
  for (const auto& c : cues) {
    std::string spaced = ascii_lower(c);
    std::replace(spaced.begin(), spaced.end(), '_', ' ');
    if (blob.find(ascii_lower(c)) != std::string::npos || blob.find(spaced) != std::string::npos) ++hit;
  }
  return static_cast<double>(hit) / static_cast<double>(cues.size());
}

double cross_drug_penalty(const search::ScoredHit& h, const std::vector<std::string>& query_drugs,
                          size_t text_chars, const std::vector<std::string>& source_types) {
  // No query drugs: nothing to be "cross" to (a general query penalises no one).
  if (query_drugs.empty()) return 0.0;
  if (!source_types.empty() &&
      std::find(source_types.begin(), source_types.end(), meta_string(h.metadata, "source_type")) == source_types.end())
    return 0.0;
  const auto meta_drugs = primary_drugs_of(h.metadata);
  if (meta_drugs.empty()) return 0.0;
  for (const auto& d : meta_drugs)
    if (std::find(query_drugs.begin(), query_drugs.end(), d) != query_drugs.end()) return 0.0;
  if (contains_any(lower_prefix(h.text, text_chars), query_drugs)) return 0.0;
  if (contains_any(path_blob(h.metadata), query_drugs)) return 0.0;
  return 1.0;
}

std::map<std::string, ProfileWeights> default_profile_weights() {
  return {
      {"default", {0.50, 0.25, 0.15, 2.0}},
      {"regulatory", {0.30, 0.20, 0.35, 2.5}},
      {"drug_entity", {0.35, 0.35, 0.10, 3.0}},
      {"chemical", {0.25, 0.40, 0.10, 3.0}},
      {"combination", {0.35, 0.35, 0.10, 2.5}},
  };
}

}  // namespace eagle::biomed
