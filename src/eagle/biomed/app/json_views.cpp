// The biomed plugin's JSON shapes: entity matches (MCP biomed_query_entities, eagle
// entities --json) and compound retrievals (MCP biomed_retrieve_compounds).
#include "eagle/biomed/app/biomed_app.h"
#include "eagle/biomed/vocab/entity.h"

namespace eagle::biomed {
using nlohmann::json;

json entities_json(const EntityKnowledge& kb, const std::vector<EntityMatch>& matches) {
  json out = json::array();
  for (const auto& m : matches) {
    const auto& e = kb.entity(m.entity);
    out.push_back({{"text", m.text}, {"start", m.start}, {"end", m.end}, {"type", entity_type_name(e.type)},
                   {"name", e.name}, {"id", e.key}});
  }
  return out;
}

namespace {
json compound_json(const CompoundHit& h) {
  return {{"id", h.id},
          {"name", h.name},
          {"smiles", h.smiles},
          {"score", h.score},
          {"document_id", h.document_id},
          {"kb_name", h.kb_name}};
}
}  // namespace

json compounds_json(const CompoundResult& r) {
  json hits = json::array();
  int rank = 0;
  for (const auto& h : r.hits) {
    auto j = compound_json(h);
    j["rank"] = ++rank;
    hits.push_back(std::move(j));
  }
  return {{"collection", r.collection},
          {"query_kind", r.query_kind},
          {"query_smiles", r.query_smiles.empty() ? json(nullptr) : json(r.query_smiles)},
          {"query", r.query ? compound_json(*r.query) : json(nullptr)},
          {"compounds", hits}};
}

}  // namespace eagle::biomed
