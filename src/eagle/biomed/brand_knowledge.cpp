#include "eagle/biomed/brand_knowledge.h"

#include <algorithm>
#include <cctype>
#include <mutex>

namespace eagle::biomed {

namespace {

bool word_byte(unsigned char c) { return std::isalnum(c) || c >= 0x80; }

}  // namespace

BrandAwareKnowledge::BrandAwareKnowledge(std::unique_ptr<EntityKnowledge> vocabulary)
    : vocabulary_(std::move(vocabulary)) {}

size_t BrandAwareKnowledge::set_brands(const std::vector<std::pair<std::string, std::string>>& brand_generic) {
  std::vector<Brand> brands;
  for (const auto& [brand, generic] : brand_generic) {
    const std::string folded = ascii_lower(brand);
    if (folded.find_first_not_of(" \t") == std::string::npos) continue;
    // Known already (a brand that is also a synonym): the vocabulary's match stands.
    auto known = vocabulary_->match_drug_entities(brand);
    if (!known.empty() && known.front().start == 0 && known.front().end == brand.size()) continue;
    // The generic must be one drug mention covering the whole name ("atorvastatin
    // calcium" resolves to atorvastatin through its salt-form alias or its first word).
    auto g = vocabulary_->match_drug_entities(generic);
    if (g.empty()) continue;
    Brand b{folded, g.front().entity, g.front().type};
    const bool repeat = std::any_of(brands.begin(), brands.end(), [&](const Brand& o) {
      return o.folded == b.folded && o.entity == b.entity;
    });
    if (!repeat) brands.push_back(std::move(b));
  }
  // Longest first: "Humira Pen" wins over "Humira" where both occur.
  std::stable_sort(brands.begin(), brands.end(),
                   [](const Brand& a, const Brand& b) { return a.folded.size() > b.folded.size(); });
  std::unique_lock lock(mu_);
  brands_ = std::move(brands);
  return brands_.size();
}

std::vector<EntityMatch> BrandAwareKnowledge::with_brands(std::string_view text, std::vector<EntityMatch> matches) const {
  std::shared_lock lock(mu_);
  if (brands_.empty()) return matches;
  const std::string folded = ascii_lower(text);
  const size_t vocabulary_matches = matches.size();
  auto overlaps = [&](size_t start, size_t end) {
    return std::any_of(matches.begin(), matches.end(),
                       [&](const EntityMatch& m) { return start < m.end && m.start < end; });
  };
  for (const auto& b : brands_) {
    for (size_t at = folded.find(b.folded); at != std::string::npos; at = folded.find(b.folded, at + 1)) {
      const size_t end = at + b.folded.size();
      if (at > 0 && word_byte(static_cast<unsigned char>(folded[at - 1]))) continue;
      if (end < folded.size() && word_byte(static_cast<unsigned char>(folded[end]))) continue;
      if (overlaps(at, end)) continue;
      matches.push_back({at, end, std::string(text.substr(at, end - at)), b.entity, b.type});
    }
  }
  if (matches.size() > vocabulary_matches)
    std::stable_sort(matches.begin(), matches.end(),
                     [](const EntityMatch& a, const EntityMatch& b) { return a.start < b.start; });
  return matches;
}

std::vector<EntityMatch> BrandAwareKnowledge::match_entities(std::string_view text) const {
  return with_brands(text, vocabulary_->match_entities(text));
}

std::vector<EntityMatch> BrandAwareKnowledge::match_drug_entities(std::string_view text) const {
  return with_brands(text, vocabulary_->match_drug_entities(text));
}

}  // namespace eagle::biomed
