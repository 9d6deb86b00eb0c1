#pragma once
// The JSON shapes of docs/http-api.md (and src/eagle/server/openapi.json), shared by
// the HTTP server and the CLI's --json output so both say the same thing.
#include <nlohmann/json.hpp>
#include <vector>

#include "eagle/app/engine.h"
#include "eagle/app/query.h"
#include "eagle/search/types.h"

namespace eagle::app {

nlohmann::json document_json(const registry::DocumentRecord& d, const std::vector<std::string>& tags);
nlohmann::json document_list_json(Engine& engine, const std::vector<registry::DocumentRecord>& docs, size_t total,
                                  const registry::DocumentQuery& q);
nlohmann::json document_view_json(const DocumentView& v);
nlohmann::json collection_json(const CollectionInfo& i);
nlohmann::json collection_list_json(const std::vector<CollectionInfo>& infos);
// SearchResponse: sources, route, steps (route, recall), took_ms, scope_capped (+ audits with explain).
nlohmann::json search_response_json(const search::RetrievalResponse& resp, bool explain);
nlohmann::json route_step_json(const search::RetrievalResponse& resp);
nlohmann::json recall_step_json(const search::RetrievalResponse& resp);
nlohmann::json sources_json(const search::RetrievalResponse& resp, bool explain);
// {level: strong | weak | none, score}: how strong the response's evidence is.
nlohmann::json evidence_json(const search::RetrievalResponse& resp);
// The body of POST /query (and MCP core_query): {answer, citations, sources (each with
// its number n), steps, mode, model, warnings, took_ms}.
nlohmann::json query_response_json(const QueryResult& r, bool explain);
nlohmann::json citation_json(const Citation& c);
// GET /sessions rows and GET /sessions/{id}: {session_id, title, turns, plugin_namespace,
// kb_scope, created_at, updated_at}; a turn: {turn, question, answer, mode, model,
// evidence, citations, created_at}.
nlohmann::json session_json(const registry::SessionRecord& s);
nlohmann::json session_turn_json(const registry::SessionTurn& t);
// A visual hit as the seed's ImageNode: {image_id, page (null without pages), position,
// chunk_type} (the source's "image" object; MCP core_retrieve_visual's items).
nlohmann::json image_node_json(const search::ScoredHit& hit);

}  // namespace eagle::app
