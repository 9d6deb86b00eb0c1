#include "eagle/app/json_views.h"

namespace eagle::app {
using nlohmann::json;

json document_json(const registry::DocumentRecord& d, const std::vector<std::string>& tags) {
  return {{"document_id", d.document_id},
          {"name", d.name},
          {"file_name", d.file_name},
          {"document_name", d.document_name},
          {"kb_name", d.kb_name},
          {"plugin_namespace", d.plugin_namespace},
          {"source_type", d.source_type},
          {"year", d.year ? json(*d.year) : json(nullptr)},
          {"source_uri", d.source_uri},
          {"collections_used", d.collections_used},
          {"created_at", d.created_at},
          {"tags", tags}};
}

json document_list_json(Engine& engine, const std::vector<registry::DocumentRecord>& docs, size_t total,
                        const registry::DocumentQuery& q) {
  json arr = json::array();
  for (const auto& d : docs) arr.push_back(document_json(d, engine.registry().keywords(d.document_id, d.plugin_namespace)));
  return {{"documents", arr}, {"total", total}, {"limit", q.limit}, {"offset", q.offset}};
}

json document_view_json(const DocumentView& v) {
  json chunks = json::array();
  for (const auto& c : v.chunks)
    chunks.push_back({{"id", c.id}, {"collection", c.collection}, {"text", c.text}, {"metadata", c.metadata}});
  return {{"document", document_json(v.record, v.tags)}, {"chunks", chunks}};
}

json collection_json(const CollectionInfo& i) {
  return {{"name", i.name},
          {"rows", i.rows},
          {"deleted", i.deleted},
          {"dimension", i.dimension},
          {"metric", i.metric},
          {"encoder", i.encoder},
          {"encoder_identity", i.encoder_identity},
          {"stand_in", i.stand_in.empty() ? json(nullptr) : json(i.stand_in)},
          {"index", i.index},
          {"log_bytes", i.log_bytes},
          {"last_lsn", i.last_lsn}};
}

json collection_list_json(const std::vector<CollectionInfo>& infos) {
  json arr = json::array();
  for (const auto& i : infos) arr.push_back(collection_json(i));
  return {{"collections", arr}};
}

json route_step_json(const search::RetrievalResponse& resp) {
  json colls = json::array();
  for (const auto& p : resp.route.plans) colls.push_back(p.collection);
  return {{"name", "route"}, {"source", resp.route.source}, {"collections", colls}};
}

json recall_step_json(const search::RetrievalResponse& resp) {
  return {{"name", "recall"},
          {"text_count", resp.metadata.value("text_count", size_t{0})},
          {"visual_count", resp.metadata.value("visual_count", size_t{0})}};
}

json evidence_json(const search::RetrievalResponse& resp) {
  auto it = resp.metadata.find("evidence");
  if (it == resp.metadata.end()) return {{"level", "none"}, {"score", 0.0}};
  return {{"level", it->value("level", "none")}, {"score", it->value("score", 0.0)}};
}

json sources_json(const search::RetrievalResponse& resp, bool explain) {
  json arr = json::array();
  int rank = 0;
  const json* per_hit = nullptr;
  if (auto it = resp.metadata.find("evidence"); it != resp.metadata.end() && it->contains("hits")) per_hit = &(*it)["hits"];
  for (const auto& h : resp.hits) {
    const std::string doc = h.document_id();
    json s = {{"rank", ++rank},
              {"id", h.id},
              {"text", h.text},
              {"score", h.score},
              {"collection", h.collection},
              {"document_id", doc.empty() ? json(nullptr) : json(doc)},
              {"metadata", h.metadata.is_object() ? h.metadata : json::object()}};
    if (explain) s["explain"] = h.explain.legs.is_object() ? h.explain.legs : json::object();
    if (per_hit && static_cast<size_t>(rank - 1) < per_hit->size()) s["evidence"] = (*per_hit)[rank - 1];
    if (h.duplicates.is_array()) s["duplicates"] = h.duplicates;
    if (h.is_image) {
      // Where the tile lies, and the name of its kept image.
      s["image"] = image_node_json(h);
      s["image"]["stored"] = h.field("image").empty() ? json(nullptr) : json(h.field("image"));
    }
    arr.push_back(std::move(s));
  }
  return arr;
}

json image_node_json(const search::ScoredHit& h) {
  // The seed's ImageNode (retrieval.txt §5.2).
  const auto& m = h.metadata;
  return {{"image_id", h.id},
          {"page", m.is_object() && m.contains("page") ? m["page"] : json(nullptr)},
          {"position", h.field("position")},
          {"chunk_type", h.field("chunk_type")}};
}

json search_response_json(const search::RetrievalResponse& resp, bool explain) {
  json route = resp.route.to_json();
  // A plan whose encoder slot runs a stand-in says so (its vectors are not that model's).
  if (auto st = resp.metadata.find("stand_ins"); st != resp.metadata.end() && route.contains("plans"))
    for (auto& plan : route["plans"])
      if (auto by = st->find(plan.value("encoder", std::string())); by != st->end()) plan["stand_in"] = *by;
  json out = {{"sources", sources_json(resp, explain)},
              {"route", route},
              {"steps", json::array({route_step_json(resp), recall_step_json(resp)})},
              {"took_ms", resp.metadata.value("took_ms", 0.0)},
              {"scope_capped", resp.metadata.value("scope_capped", false)}};
  if (auto ns = resp.metadata.find("namespace_step"); ns != resp.metadata.end()) out["steps"].insert(out["steps"].begin(), *ns);
  out["evidence"] = evidence_json(resp);
  if (explain) out["audits"] = resp.metadata.value("audits", json::array());
  return out;
}

json citation_json(const Citation& c) {
  return {{"n", c.n},
          {"id", c.id},
          {"document_id", c.document_id.empty() ? json(nullptr) : json(c.document_id)},
          {"collection", c.collection},
          {"document_name", c.document_name},
          {"path", c.path},
          {"quote", c.quote}};
}

json query_response_json(const QueryResult& r, bool explain) {
  json sources = sources_json(r.search, explain);
  for (size_t i = 0; i < sources.size(); ++i) sources[i]["n"] = i + 1;
  json citations = json::array();
  for (const auto& c : r.citations) citations.push_back(citation_json(c));
  json out = {{"answer", r.answer},
              {"citations", citations},
              {"sources", sources},
              {"steps", r.steps},
              {"mode", r.mode},
              {"model", r.model.empty() ? json(nullptr) : json(r.model)},
              {"warnings", r.warnings},
              {"evidence", evidence_json(r.search)},  // of the passages the answer is written from
              {"took_ms", r.search.metadata.value("took_ms", 0.0)},
              {"session_id", r.session_id.empty() ? json(nullptr) : json(r.session_id)},
              {"turn", r.session_id.empty() ? json(nullptr) : json(r.turn)}};
  if (explain) out["audits"] = r.search.metadata.value("audits", json::array());
  return out;
}

json session_json(const registry::SessionRecord& s) {
  return {{"session_id", s.session_id}, {"title", s.title},         {"turns", s.turns},
          {"plugin_namespace", s.plugin_namespace}, {"kb_scope", s.kb_scope}, {"created_at", s.created_at},
          {"updated_at", s.updated_at}};
}

json session_turn_json(const registry::SessionTurn& t) {
  json citations = json::parse(t.citations, nullptr, /*allow_exceptions=*/false);
  if (!citations.is_array()) citations = json::array();
  return {{"turn", t.turn},   {"question", t.question}, {"answer", t.answer},       {"mode", t.mode},
          {"model", t.model.empty() ? json(nullptr) : json(t.model)}, {"evidence", t.evidence},
          {"citations", citations}, {"created_at", t.created_at}};
}

}  // namespace eagle::app
