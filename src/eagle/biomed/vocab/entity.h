#pragma once
// The biomedical entity model: one record per concept whatever the
// source vocabulary (UMLS, DrugBank, NCBI genes, MeSH, OBO), and the matches the
// entity matcher reports. The biomed plugin's hooks read only these types.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace eagle::biomed {

// The seed's entity kinds: UMLS semantic types map onto drug / gene / disease / pathway.
enum class EntityType : uint8_t { drug, gene, disease, pathway, chemical, other };
const char* entity_type_name(EntityType t);
EntityType parse_entity_type(std::string_view s);  // invalid_argument on unknown

using EntityId = uint32_t;

struct Entity {
  std::string key;                  // source-qualified id: "DRUGBANK:DB00619", "NCBIGENE:1956", "MESH:C04.588.180" (first tree number), "DOID:1612", "UMLS:C0000005"
  std::string name;                 // preferred name
  std::vector<std::string> aliases; // synonyms, symbols, brand names (not including `name`)
  EntityType type = EntityType::other;
  std::vector<std::string> related_drugs;  // preferred drug names (seed: related_drugs)
  std::vector<std::string> pathways;       // pathway names (seed: 1 pathway per entity in the dense suffix)
  std::string smiles;                      // drugs with a structure (DrugBank structures CSV)
};

// One match in a text: byte offsets [start, end) into the text as given (not the
// normalised copy), the surface text, and the entity it resolved to.
struct EntityMatch {
  size_t start = 0;
  size_t end = 0;
  std::string text;
  EntityId entity = 0;
  EntityType type = EntityType::other;
};

}  // namespace eagle::biomed
