#pragma once
// What the biomed hooks need from the vocabularies: the seed's match_entities and
// match_drug_entities, and the entity records behind the matches. The production
// implementation wraps the Vocabulary and the Aho-Corasick EntityMatcher
// (vocab/); tests use small in-memory fakes.
#include <string>
#include <string_view>
#include <vector>

#include "eagle/ingest/text_util.h"  // ascii_lower: names and cues compare case-insensitively
#include "eagle/biomed/vocab/entity.h"

namespace eagle::biomed {

using ingest::ascii_lower;
using ingest::collapse_whitespace;
using ingest::truncate_at_word;
using ingest::utf8_prefix;

class EntityKnowledge {
 public:
  virtual ~EntityKnowledge() = default;
  // Every entity mention (UMLS-style: drugs, genes, diseases, pathways, chemicals).
  virtual std::vector<EntityMatch> match_entities(std::string_view text) const = 0;
  // Drug mentions only.
  virtual std::vector<EntityMatch> match_drug_entities(std::string_view text) const = 0;
  virtual const Entity& entity(EntityId id) const = 0;
};

// Lower-cased drug names of the drug mentions, in order of first occurrence,
// de-duplicated: the surface form, then the preferred name when it differs
// (a brand name in the query still finds documents that use the generic name).
std::vector<std::string> drug_names(const EntityKnowledge& kb, std::string_view text);

}  // namespace eagle::biomed
