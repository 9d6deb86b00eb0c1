#pragma once
// Brand names the vocabularies lack, taught by the drug labels a store holds.
// DrugBank's open vocabulary has generic names only, so "Humira" and "Lipitor" would
// match nothing although the store's labels say HUMIRA is adalimumab.
// This EntityKnowledge answers as the vocabulary does and adds each brand as a
// mention of its generic's entity; a brand the vocabulary already knows, or whose
// generic it does not, is left out.
#include <memory>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "eagle/biomed/knowledge.h"

namespace eagle::biomed {

class BrandAwareKnowledge : public EntityKnowledge {
 public:
  explicit BrandAwareKnowledge(std::unique_ptr<EntityKnowledge> vocabulary);

  // Replaces the taught brands with (brand, generic) pairs. Returns how many brands
  // were kept (resolved through the vocabulary and not already known to it).
  size_t set_brands(const std::vector<std::pair<std::string, std::string>>& brand_generic);

  std::vector<EntityMatch> match_entities(std::string_view text) const override;
  std::vector<EntityMatch> match_drug_entities(std::string_view text) const override;
  const Entity& entity(EntityId id) const override { return vocabulary_->entity(id); }

 private:
  struct Brand {
    std::string folded;  // ASCII lower case
    EntityId entity = 0;
    EntityType type = EntityType::drug;
  };
  // The vocabulary's matches plus every word-bounded brand occurrence that overlaps
  // none of them, in text order.
  std::vector<EntityMatch> with_brands(std::string_view text, std::vector<EntityMatch> matches) const;

  std::unique_ptr<EntityKnowledge> vocabulary_;
  mutable std::shared_mutex mu_;  // set_brands runs beside searches (a server's ingest)
  std::vector<Brand> brands_;
};

}  // namespace eagle::biomed
