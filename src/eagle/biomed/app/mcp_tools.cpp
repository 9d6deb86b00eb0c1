// The biomed plugin's MCP tools (listed when biomed is the default namespace, exposure
// rule G3): biomed_query_entities and biomed_retrieve_compounds.
#include <sstream>

#include "eagle/biomed/app/biomed_app.h"
#include "eagle/mcp/schema.h"

namespace eagle::biomed {
namespace {
using mcp::array_of;
using mcp::integer_schema;
using mcp::kKeyChars;
using mcp::kQueryChars;
using mcp::make_tool;
using mcp::object_schema;
using mcp::result_schema;
using mcp::string_schema;
using mcp::Tool;
using mcp::ToolContext;
using mcp::ToolOutput;
using mcp::typed;
using nlohmann::json;

constexpr int64_t kMaxCompounds = 100;
constexpr size_t kMaxStructureChars = 2048;

// biomed_query_entities: the vocabularies' entities named in a text.
Tool make_entities_tool(app::Engine* e) {
  json entity_item = result_schema({{"text", typed("string")},
                                    {"start", typed("integer")},
                                    {"end", typed("integer")},
                                    {"type", typed("string")},
                                    {"name", typed("string")},
                                    {"id", typed("string")}},
                                   {"text", "start", "end", "type", "name", "id"});
  Tool entities = make_tool(
      "biomed_query_entities", "Find biomedical entities",
      "Drugs, genes, diseases and other biomedical entities named in a text, matched against the configured "
      "vocabularies: each with its type, vocabulary id, preferred name and byte span.",
      "biomed", object_schema({{"text", string_schema("the text to read", kQueryChars, 1)}}, {"text"}),
      result_schema({{"entities", array_of(entity_item)}}, {"entities"}));
  entities.run = [e](const json& args, const ToolContext&) {
    const std::string text = app::str_field(args, "text", search::kMaxQueryBytes, true);
    const auto& kb = biomed_instance(*e).knowledge();
    json found = entities_json(kb, kb.match_entities(text));
    std::ostringstream t;
    t << found.size() << (found.size() == 1 ? " entity" : " entities");
    for (const auto& m : found)
      t << "\n- " << m["text"].get<std::string>() << " [" << m["start"].get<size_t>() << ", " << m["end"].get<size_t>()
        << "): " << m["type"].get<std::string>() << " " << m["name"].get<std::string>() << " ("
        << m["id"].get<std::string>() << ")";
    return ToolOutput{{{"entities", found}}, t.str()};
  };
  return entities;
}

// biomed_retrieve_compounds: compounds by name, structure or substructure.
Tool make_compounds_tool(app::Engine* e) {
  json compound_item = result_schema({{"id", typed("string")},
                                      {"name", typed("string")},
                                      {"smiles", typed("string")},
                                      {"score", typed("number")},
                                      {"rank", typed("integer")},
                                      {"document_id", typed("string")},
                                      {"kb_name", typed("string")}},
                                     {"id", "name", "smiles", "score"});
  json compound_in = object_schema(
      {{"name", string_schema("a compound or drug name (brand names and synonyms resolve through the vocabulary)",
                              kKeyChars, 1)},
       {"smiles", string_schema("a structure as SMILES", kMaxStructureChars, 1)},
       {"smarts", string_schema("a substructure pattern as SMARTS", kMaxStructureChars, 1)},
       {"k", integer_schema("how many compounds to return", 1, kMaxCompounds, 10)},
       {"kb_name", string_schema("only this knowledge base", kKeyChars)}});
  compound_in["oneOf"] = json::array({{{"required", {"name"}}}, {{"required", {"smiles"}}}, {{"required", {"smarts"}}}});
  json query_item = {{"anyOf", json::array({compound_item, typed("null")})}};
  Tool compounds = make_tool(
      "biomed_retrieve_compounds", "Retrieve compounds",
      "Compounds structurally similar to a named drug or a SMILES (Tanimoto on Morgan fingerprints, radius 2, 2048 "
      "bits), or the compounds containing a SMARTS substructure. Give exactly one of name, smiles or smarts.",
      "biomed", compound_in,
      result_schema({{"collection", typed("string")},
                     {"query_kind", {{"type", "string"}, {"enum", {"name", "smiles", "smarts"}}}},
                     {"query_smiles", {{"type", {"string", "null"}}}},
                     {"query", query_item},
                     {"compounds", array_of(compound_item)}},
                    {"collection", "query_kind", "compounds"}));
  compounds.run = [e](const json& args, const ToolContext& ctx) {
    CompoundQuery q;
    q.name = app::str_field(args, "name", app::kMaxKeyBytes);
    q.smiles = app::str_field(args, "smiles", kMaxStructureChars * 4);
    q.smarts = app::str_field(args, "smarts", kMaxStructureChars * 4);
    q.k = static_cast<size_t>(app::int_field(args, "k", 1, kMaxCompounds, 10));
    q.kb_name = app::str_field(args, "kb_name", app::kMaxKeyBytes);
    auto r = retrieve_compounds(*e, q, ctx.scope);
    json out = compounds_json(r);
    std::ostringstream t;
    if (r.query_kind == "smarts") {
      t << r.hits.size() << (r.hits.size() == 1 ? " compound contains " : " compounds contain ") << q.smarts;
    } else {
      t << r.hits.size() << (r.hits.size() == 1 ? " compound" : " compounds") << " nearest to " << (r.query ? r.query->name + " " : std::string())
        << r.query_smiles << " (Tanimoto)";
    }
    for (const auto& h : out["compounds"])
      t << "\n" << h["rank"].get<int>() << ". " << h["name"].get<std::string>() << " (" << h["id"].get<std::string>()
        << ") " << h["score"].get<double>() << " " << h["smiles"].get<std::string>();
    return ToolOutput{out, t.str()};
  };
  return compounds;
}

}  // namespace

void add_biomed_mcp_tools(app::Engine& engine, std::vector<mcp::Tool>& tools) {
  tools.push_back(make_entities_tool(&engine));
  tools.push_back(make_compounds_tool(&engine));
}

}  // namespace eagle::biomed
