#include "eagle/biomed/vocab/entity.h"

#include <string>

#include "eagle/core/error.h"

namespace eagle::biomed {

const char* entity_type_name(EntityType t) {
  switch (t) {
    case EntityType::drug: return "drug";
    case EntityType::gene: return "gene";
    case EntityType::disease: return "disease";
    case EntityType::pathway: return "pathway";
    case EntityType::chemical: return "chemical";
    case EntityType::other: return "other";
  }
  return "other";
}

EntityType parse_entity_type(std::string_view s) {
  for (auto t : {EntityType::drug, EntityType::gene, EntityType::disease, EntityType::pathway,
                 EntityType::chemical, EntityType::other})
    if (s == entity_type_name(t)) return t;
  fail(ErrorCode::invalid_argument, "unknown entity type '" + std::string(s) +
                                        "': expected drug, gene, disease, pathway, chemical or other");
}

}  // namespace eagle::biomed
