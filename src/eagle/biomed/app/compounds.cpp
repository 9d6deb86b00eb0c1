// retrieve_compounds: the compound collection (biomed.chemical) asked by
// name, SMILES or SMARTS, for the MCP tool biomed_retrieve_compounds. A name or a
// SMILES is a structure query: its Morgan fingerprint against the collection's
// vectors (the flat index's Tanimoto, exact); a SMARTS is a substructure filter over
// every compound in scope. Scores are Tanimoto in [0, 1] (a substructure match has
// no score: 1.0, the seed's default where a retriever gives none).
#include <algorithm>
#include <mutex>
#include <shared_mutex>

#include "eagle/biomed/app/biomed_app.h"
#include "eagle/core/error.h"
#include "eagle/encode/chem/chem.h"

namespace eagle::biomed {

namespace {

CompoundHit compound_hit(const store::Record& r, const CollectionSchema& schema, double score) {
  auto value = [&](const char* name) -> std::string {
    auto idx = schema.field_index(name);
    if (!idx || *idx >= r.values.size()) return {};
    const auto* s = std::get_if<std::string>(&r.values[*idx]);
    return s ? *s : std::string();
  };
  return {r.id, value("name"), value("smiles"), value("document_id"), value("kb_name"), score};
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

CompoundResult retrieve_compounds(app::Engine& engine, const CompoundQuery& q, const app::AccessScope& scope) {
  const int given = !q.name.empty() + !q.smiles.empty() + !q.smarts.empty();
  if (given != 1) fail(ErrorCode::invalid_argument, "give exactly one of name, smiles or smarts");
  if (q.k == 0 || q.k > store::kMaxSearchK)
    fail(ErrorCode::invalid_argument, "k must be in [1, " + std::to_string(store::kMaxSearchK) + "]");
  if (!q.kb_name.empty() && !scope.allows(q.kb_name))
    fail(ErrorCode::permission_denied, "this token may not read knowledge base '" + q.kb_name + "'");
  CompoundResult out;
  out.collection = biomed_settings(engine.config()).options.chemical.collection;
  // The collection, looked up again under each hold of the state lock: a reembed may
  // swap it for another object between them.
  auto chemical = [&]() -> store::Collection& {
    store::Collection* c = engine.catalog().find(out.collection);
    if (!c)
      fail(ErrorCode::not_found, "no compound collection '" + out.collection +
                                     "' in this store (ingest a SMILES CSV: eagle ingest --namespace biomed FILE.csv)");
    return *c;
  };
  chemical();
  // The caller's KBs (a token's scope, narrowed by kb_name) as one filter.
  std::string filter;
  store::TemplateParams params;
  std::vector<std::string> kbs = q.kb_name.empty() ? scope.kb_names : std::vector<std::string>{q.kb_name};
  if (!kbs.empty()) {
    filter = "kb_name in {kbs}";
    params["kbs"] = kbs;
  }

  if (!q.smarts.empty()) {
    out.query_kind = "smarts";
    const auto pattern = encode::chem::Molecule::from_smarts(q.smarts);
    auto state = engine.hold_state();
    auto& coll = chemical();
    for (auto& r : coll.fetch(filter, params, store::kMaxSearchK)) {
      auto hit = compound_hit(r, coll.schema(), 1.0);
      try {
        if (!encode::chem::Molecule::from_smiles(hit.smiles).has_substructure(pattern)) continue;
      } catch (const Error&) {
        continue;  // ingest refuses unparsable SMILES; a row written otherwise is skipped
      }
      out.hits.push_back(std::move(hit));
      if (out.hits.size() == q.k) break;
    }
    return out;
  }

  auto row_named = [&](const std::string& n) -> std::optional<CompoundHit> {
    auto p = params;
    p["n"] = n;
    auto& coll = chemical();  // the caller holds the state lock
    auto rows = coll.fetch("name == {n}" + (filter.empty() ? std::string() : " and " + filter), p, 1);
    if (rows.empty()) return std::nullopt;
    return compound_hit(rows.front(), coll.schema(), 1.0);
  };
  std::string exclude_id;
  if (!q.name.empty()) {
    out.query_kind = "name";
    // The compound's own row (exact name, then case-insensitive over the names the
    // vocabulary knows: brand names and synonyms resolve to the ingredient).
    auto state = engine.hold_state();
    out.query = row_named(q.name);
    if (!out.query) {
      state.unlock();
      const EntityKnowledge* kb = nullptr;
      try {
        kb = &biomed_instance(engine).knowledge();
      } catch (const Error&) {
        // No vocabulary configured: names resolve only against the collection.
      }
      for (const auto& m : kb ? kb->match_drug_entities(q.name) : std::vector<EntityMatch>{}) {
        const auto& e = kb->entity(m.entity);
        if (lower(m.text) != lower(q.name)) continue;  // the whole name, not a word inside it
        auto again = engine.hold_state();
        out.query = row_named(e.name);
        if (!out.query && !e.smiles.empty()) out.query = CompoundHit{"", e.name, e.smiles, "", "", 1.0};
        if (out.query) break;
      }
    }
    if (!out.query || out.query->smiles.empty())
      fail(ErrorCode::not_found, "no compound named '" + q.name + "' with a structure in " + out.collection +
                                     " or the vocabulary");
    out.query_smiles = out.query->smiles;
    exclude_id = out.query->id;
  } else {
    out.query_kind = "smiles";
    out.query_smiles = q.smiles;
  }
  encode::chem::Molecule::from_smiles(out.query_smiles);  // invalid_argument naming it
  std::string label;
  {
    auto state = engine.hold_state();
    label = chemical().schema().vector.encoder;
  }
  if (label.empty() || !engine.encoders().has_encoder(label))
    fail(ErrorCode::conflict, "collection '" + out.collection + "' records encoder '" + label +
                                             "', which is not configured");
  auto vec = engine.encoders().encoder(label).encode({out.query_smiles}, encode::EncodeMode::query).front();
  auto state = engine.hold_state();
  auto& coll = chemical();
  if (coll.schema().vector.encoder != label)
    fail(ErrorCode::unavailable, "collection '" + out.collection + "' was re-embedded during this request: retry");
  auto hits = coll.search_vector(vec, q.k + (exclude_id.empty() ? 0 : 1), filter, params);
  auto rows = coll.records(hits);
  for (size_t i = 0; i < rows.size() && out.hits.size() < q.k; ++i) {
    if (rows[i].id == exclude_id) continue;  // the compound asked about is not its own neighbour
    out.hits.push_back(compound_hit(rows[i], coll.schema(), hits[i].score));
  }
  return out;
}

}  // namespace eagle::biomed
