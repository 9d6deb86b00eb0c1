#include "eagle/mcp/tools.h"
#include "eagle/mcp/schema.h"

#include <spdlog/spdlog.h>

#include <sstream>

#include "eagle/app/json_views.h"
#include "eagle/app/request_json.h"
#include "eagle/core/error.h"
#include "eagle/mcp/json_schema.h"
#include "eagle/plugin/plugin.h"

namespace eagle::mcp {
using nlohmann::json;

json string_schema(const std::string& description, size_t max_chars, size_t min_chars) {
  json s = {{"type", "string"}, {"description", description}, {"maxLength", max_chars}};
  if (min_chars) s["minLength"] = min_chars;
  return s;
}

json integer_schema(const std::string& description, int64_t lo, int64_t hi, int64_t fallback) {
  return {{"type", "integer"}, {"description", description}, {"minimum", lo}, {"maximum", hi}, {"default", fallback}};
}

json string_list_schema(const std::string& description, size_t max_items) {
  return {{"type", "array"},
          {"description", description},
          {"maxItems", max_items},
          {"items", {{"type", "string"}, {"maxLength", kKeyChars}}}};
}

json object_schema(json properties, std::vector<std::string> required) {
  json s = {{"type", "object"}, {"properties", std::move(properties)}, {"additionalProperties", false}};
  if (!required.empty()) s["required"] = required;
  return s;
}

namespace {

// The retrieval arguments both search tools share (the fields of POST /search).
json retrieval_properties(size_t default_top_k) {
  const json facet_string = {{"type", "string"}, {"maxLength", kKeyChars}};
  const json facet_integer = {{"type", "integer"}};
  json facet_list = {{"type", "array"}, {"minItems", 1}, {"maxItems", app::kMaxFacetValues}};
  facet_list["items"] = {{"anyOf", json::array({facet_string, facet_integer})}};
  json facet_value = {{"anyOf", json::array({facet_string, facet_integer, facet_list})}};
  // Mirrored into the Mcp-Param-Kb-Name header over HTTP, so a gateway can route or
  // authorise by knowledge base without reading the body.
  json kb_name = string_schema("search only this knowledge base", kKeyChars);
  kb_name["x-mcp-header"] = "Kb-Name";
  return {
      {"query", string_schema("the question or keywords", kQueryChars, 1)},
      {"top_k", integer_schema("how many hits to return (default: the server's pipeline.final_top_k)", 1,
                               static_cast<int64_t>(search::kMaxFinalTopK), static_cast<int64_t>(default_top_k))},
      {"kb_name", kb_name},
      {"min_score", {{"type", "number"},
                     {"description", "drop hits scoring below this (the final stage's scale; see the hit's explain)"}}},
      {"scope", string_list_schema("knowledge base names or document ids to search within (their union)",
                                   app::kMaxScopeItems)},
      {"scope_filter",
       object_schema({{"kb_names", string_list_schema("knowledge bases", app::kMaxScopeItems)},
                      {"document_ids", string_list_schema("document ids", app::kMaxScopeItems)},
                      {"tags", string_list_schema("document tags", app::kMaxScopeItems)}})},
      {"facets",
       {{"type", "object"},
        {"description", "field -> value or list of values, e.g. {\"source_type\": \"label\", \"year\": [2023, 2024]}"},
        {"maxProperties", app::kMaxFacetFields},
        {"additionalProperties", facet_value}}},
  };
}

json hit_schema() {
  return {{"type", "object"},
          {"required", {"rank", "id", "text", "score", "collection", "document_id", "metadata"}},
          {"properties",
           {{"rank", {{"type", "integer"}}},
            {"id", {{"type", "string"}}},
            {"text", {{"type", "string"}}},
            {"score", {{"type", "number"}}},
            {"collection", {{"type", "string"}}},
            {"document_id", {{"type", {"string", "null"}}}},
            {"metadata", {{"type", "object"}}},
            {"explain", {{"type", "object"}}},
            {"duplicates",
             {{"type", "array"},
              {"description", "near-duplicate hits folded into this one"},
              {"items", {{"type", "object"}}}}}}}};
}

// A hit's section path, from whichever field its collection carries.
std::string section_of(const json& metadata) {
  for (const char* k : {"path", "section_path", "parent_section", "title", "document_name"})
    if (auto it = metadata.find(k); it != metadata.end() && it->is_string() && !it->get<std::string>().empty())
      return it->get<std::string>();
  return {};
}

std::string excerpt(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // whole characters
  return text.substr(0, cut) + "…";
}

std::string hits_text(const json& sources, double took_ms) {
  std::ostringstream o;
  o << sources.size() << (sources.size() == 1 ? " hit" : " hits") << " (" << took_ms << " ms)";
  for (const auto& h : sources) {
    o << "\n\n" << h["rank"].get<int>() << ". score " << h["score"].get<double>() << " · "
      << h["collection"].get<std::string>();
    if (h["document_id"].is_string()) o << " · " << h["document_id"].get<std::string>();
    const std::string section = section_of(h["metadata"]);
    if (!section.empty()) o << " · " << section;
    o << " [" << h["id"].get<std::string>() << "]\n" << excerpt(h["text"].get<std::string>(), 600);
  }
  return o.str();
}

ToolOutput search_output(const search::RetrievalResponse& resp, bool explain, bool whole_pipeline) {
  json out = app::search_response_json(resp, explain);
  const json evidence = app::evidence_json(resp);
  if (!whole_pipeline) out = {{"sources", out["sources"]}, {"took_ms", out["took_ms"]}, {"evidence", evidence}};
  std::ostringstream ev;
  ev << "evidence: " << evidence["level"].get<std::string>() << " (" << evidence["score"].get<double>() << ")\n";
  std::string text = ev.str() + hits_text(out["sources"], out["took_ms"].get<double>());
  if (whole_pipeline) text = "route: " + resp.route.source + "\n" + text;
  return {std::move(out), std::move(text)};
}


}  // namespace

// An output schema: an object with these required members.
json result_schema(json properties, std::vector<std::string> required) {
  return {{"type", "object"}, {"required", std::move(required)}, {"properties", std::move(properties)}};
}

json array_of(json items) { return {{"type", "array"}, {"items", std::move(items)}}; }

json typed(const char* type) { return {{"type", type}}; }

namespace {

// How strong the evidence is (answer/evidence.h): none when no passage holds the question.
json evidence_schema() {
  return {{"type", "object"},
          {"required", {"level", "score"}},
          {"properties", {{"level", {{"type", "string"}, {"enum", {"strong", "weak", "none"}}}}, {"score", typed("number")}}}};
}

}  // namespace

Tool make_tool(std::string name, std::string title, std::string description, std::string ns, json input, json output) {
  Tool t;
  t.name = std::move(name);
  t.title = std::move(title);
  t.description = std::move(description);
  t.plugin_namespace = std::move(ns);
  t.input_schema = std::move(input);
  t.output_schema = std::move(output);
  return t;
}

namespace {

// core_retrieve_text: the text collections of the core namespace alone (route_mode text).
Tool make_retrieve_tool(app::Engine* e, size_t top_k_default) {
  Tool retrieve = make_tool(
      "core_retrieve_text", "Retrieve text passages",
      "Dense and lexical retrieval over the text collections, fused (RRF) and reranked; returns the passages with "
      "their scores. Filter by knowledge base, scope and facets.",
      "core", object_schema(retrieval_properties(top_k_default), {"query"}),
      result_schema({{"sources", array_of(hit_schema())}, {"took_ms", typed("number")}, {"evidence", evidence_schema()}},
                    {"sources", "took_ms", "evidence"}));
  retrieve.run = [e, top_k_default](const json& args, const ToolContext& ctx) {
    json body = args;
    body["plugin_namespace"] = "core";
    body["route_mode"] = "text";
    auto req = app::search_request_from_json(body, "core", ctx.scope, top_k_default);
    return search_output(e->search(req), false, false);
  };
  return retrieve;
}

// The input of core_search: the retrieval arguments plus filter, plugin_namespace, route_mode and explain (core_query
// reuses the first two).
json search_properties(size_t top_k_default) {
  json search_props = retrieval_properties(top_k_default);
  search_props["filter"] =
      string_schema("a filter expression on chunk fields, e.g. year >= 2020 and source_type == \"paper\"", kFilterChars);
  search_props["plugin_namespace"] = {{"type", "string"},
                                      {"enum", plugin::namespaces()},
                                      {"description", "the plugin namespace (default: the server's)"}};
  search_props["route_mode"] = {{"type", "string"}, {"enum", {"auto", "text", "visual", "hybrid"}}, {"default", "auto"}};
  search_props["explain"] = {{"type", "boolean"},
                             {"default", false},
                             {"description", "per-hit legs (rank and score of each retriever) and rerank terms"}};
  return search_props;
}

// core_search: the whole query pipeline of the given namespace.
Tool make_search_tool(app::Engine* e, const std::string& ns_default, size_t top_k_default, const json& search_props) {
  Tool whole = make_tool(
      "core_search", "Search (whole pipeline)",
      "The whole query pipeline: routing to collections, dense and lexical recall, fusion, the namespace's reranks; "
      "with explain, each hit's legs and rerank terms and the query's audit events.",
      "core", object_schema(search_props, {"query"}),
      result_schema({{"sources", array_of(hit_schema())},
                     {"route", typed("object")},
                     {"steps", array_of(typed("object"))},
                     {"took_ms", typed("number")},
                     {"scope_capped", typed("boolean")},
                     {"audits", typed("array")},
                     {"evidence", evidence_schema()}},
                    {"sources", "route", "steps", "took_ms", "evidence"}));
  whole.run = [e, ns_default, top_k_default](const json& args, const ToolContext& ctx) {
    auto req = app::search_request_from_json(args, ns_default, ctx.scope, top_k_default);
    return search_output(e->search(req), req.explain, true);
  };
  return whole;
}

// Eagle-RAG's core_query: the answer stage (app/query.h), as POST /query answers.
Tool make_query_tool(app::Engine* e, const std::string& ns_default, size_t top_k_default, const json& search_props,
                     bool with_sessions) {
  json query_props = retrieval_properties(top_k_default);
  query_props["query"] = string_schema("the question", kQueryChars, 1);
  query_props["filter"] = search_props["filter"];
  query_props["plugin_namespace"] = search_props["plugin_namespace"];
  query_props["top_n"] = integer_schema("passages the answer is written from (default: the server's generation.top_n)",
                                        1, 20, static_cast<int64_t>(e->config().generation.top_n));
  query_props["mode"] = {{"type", "string"},
                         {"enum", {"auto", "extractive"}},
                         {"default", "auto"},
                         {"description", "auto: the server's chat model when one is configured, else extractive"}};
  if (with_sessions)
    query_props["session_id"] = string_schema(
        "continue this session (its last turns go to the model with the question); omitted: a new session", 64, 1);
  json citation_item = result_schema({{"n", typed("integer")},
                                      {"id", typed("string")},
                                      {"document_id", {{"type", {"string", "null"}}}},
                                      {"collection", typed("string")},
                                      {"document_name", typed("string")},
                                      {"path", typed("string")},
                                      {"quote", typed("string")}},
                                     {"n", "id", "document_id", "collection", "quote"});
  Tool answer_tool = make_tool(
      "core_query", "Answer a question with citations",
      "Search, keep the best passages, and answer from them only: each claim is followed by [n], the number of its "
      "source (sources[n-1]). Written by the server's chat model when one is configured, else the passages' own "
      "sentences (extractive). When nothing answers, the answer says so.",
      "core", object_schema(query_props, {"query"}),
      result_schema({{"answer", typed("string")},
                     {"citations", array_of(citation_item)},
                     {"sources", array_of(hit_schema())},
                     {"steps", array_of(typed("object"))},
                     {"mode", typed("string")},
                     {"model", {{"type", {"string", "null"}}}},
                     {"warnings", array_of(typed("string"))},
                     {"took_ms", typed("number")},
                     {"evidence", evidence_schema()},
                     {"session_id", {{"type", {"string", "null"}}}},
                     {"turn", {{"type", {"integer", "null"}}}}},
                    {"answer", "citations", "sources", "steps", "mode", "evidence"}));
  answer_tool.run = [e, ns_default, top_k_default](const json& args, const ToolContext& ctx) {
    auto q = app::query_request_from_json(args, ns_default, ctx.scope, top_k_default);
    if (!q.session_id.empty() && !ctx.converse)
      fail(ErrorCode::invalid_argument, "session_id: sessions are kept by `eagle serve` (MCP over HTTP), not over stdio");
    const auto result = ctx.converse ? ctx.converse(q.request, q.session_id) : e->query(q.request);
    json out = app::query_response_json(result, false);
    std::ostringstream t;
    t << result.answer << "\n\nSources:";
    for (const auto& src : out["sources"]) {
      t << "\n[" << src["n"].get<size_t>() << "] ";
      if (src["document_id"].is_string()) t << src["document_id"].get<std::string>();
      const std::string section = section_of(src["metadata"]);
      if (!section.empty()) t << " \u00b7 " << section;
      t << " [" << src["id"].get<std::string>() << "]";
    }
    t << "\n(" << result.mode << (result.model.empty() ? "" : ", " + result.model) << "; evidence "
      << out["evidence"]["level"].get<std::string>() << ")";
    if (!result.session_id.empty()) t << "\nsession " << result.session_id << ", turn " << result.turn;
    for (const auto& w : result.warnings) t << "\nwarning: " << w;
    return ToolOutput{out, t.str()};
  };
  return answer_tool;

}

// Eagle-RAG's core_ingest: a file by its path under server.ingest_root, or its bytes
// (Base64) with its name; the same scope, limits and task queue as POST /ingest.
Tool make_ingest_tool(const std::vector<std::string>& formats) {
  json ingest_props = {
      {"path", string_schema("a file or folder under the server's ingest root (server.ingest_root)", 4096, 1)},
      {"content", {{"type", "string"},
                   {"description", "the file's bytes, Base64 (at most 32 MiB decoded); give file_name with it"},
                   {"maxLength", (size_t{32} << 20) / 3 * 4 + 8}}},
      {"file_name", string_schema("the file's name: its extension tells the format (with format auto)", 255, 1)},
      {"kb_name", string_schema("the knowledge base the documents go to", kKeyChars)},
      {"plugin_namespace", {{"type", "string"}, {"enum", plugin::namespaces()}, {"default", "core"}}},
      {"format", {{"type", "string"}, {"enum", formats}, {"default", "auto"}}},
      {"skip_bad", {{"type", "boolean"}, {"default", false}}},
      {"reindex", {{"type", "boolean"}, {"default", false}}}};
  Tool ingest_tool = make_tool(
      "core_ingest", "Ingest a document",
      "Adds documents to the store as an ingest task: a path under the server's ingest root, or a file's content "
      "(Base64) with its name. Returns the task; its progress is GET /tasks/{task_id}.",
      "core", object_schema(ingest_props),
      result_schema({{"task_id", typed("string")}, {"state", typed("string")}}, {"task_id", "state"}));
  ingest_tool.read_only = false;
  ingest_tool.run = [](const json& args, const ToolContext& ctx) {
    if (!ctx.ingest) app::bad_request("", "core_ingest needs the HTTP server (eagle serve) that owns the store");
    if (args.contains("path") == args.contains("content")) app::bad_request("path", "give either 'path' or 'content'");
    if (args.contains("content") && !args.contains("file_name"))
      app::bad_request("file_name", "'content' needs 'file_name'");
    json out = ctx.ingest(args);
    std::ostringstream t;
    t << "task " << out["task_id"].get<std::string>() << " " << out["state"].get<std::string>();
    return ToolOutput{out, t.str()};
  };
  return ingest_tool;

}

// seed retrieval.txt §12: core_retrieve_visual {query, scope, top_k, kb_name} ->
// {image_id, document_id, page, position, score} (PixelRAGVisualRetriever); an
// image (Base64) asks by pixels instead of, or beside, words.
Tool make_visual_tool(app::Engine* e, size_t top_k_default) {
  json visual_props = retrieval_properties(top_k_default);
  visual_props["query"] = string_schema("words to find tiles by (their page text and captions)", kQueryChars, 1);
  visual_props["image"] = {{"type", "string"},
                           {"description", "a PNG or JPEG, Base64 or a data: URI: tiles that look like it"},
                           {"maxLength", (search::kMaxQueryImageBytes + 2) / 3 * 4 + 64}};
  json image_item = result_schema({{"image_id", typed("string")},
                                   {"document_id", {{"type", {"string", "null"}}}},
                                   {"page", {{"type", {"integer", "null"}}}},
                                   {"position", typed("string")},
                                   {"chunk_type", typed("string")},
                                   {"score", typed("number")},
                                   {"text", typed("string")}},
                                  {"image_id", "document_id", "page", "position", "chunk_type", "score"});
  Tool visual = make_tool(
      "core_retrieve_visual", "Retrieve page and figure images",
      "Visual retrieval over the image tiles (PDF pages and figures, image files): by words (the tiles' page text and "
      "captions) and/or by an image (near-duplicate pages and figures). Give query, image or both. Each hit's image "
      "is GET /images/{image_id} on the HTTP server.",
      "core", object_schema(visual_props),
      result_schema({{"images", array_of(image_item)}, {"took_ms", typed("number")}}, {"images", "took_ms"}));
  visual.run = [e, top_k_default](const json& args, const ToolContext& ctx) {
    if (!args.contains("query") && !args.contains("image"))
      app::bad_request("query", "give 'query', 'image' or both");
    json body = args;
    body["plugin_namespace"] = "core";
    body["route_mode"] = "visual";
    auto req = app::search_request_from_json(body, "core", ctx.scope, top_k_default);
    auto resp = e->search(req);
    json images = json::array();
    std::ostringstream t;
    const auto shown = std::count_if(resp.hits.begin(), resp.hits.end(), [](const auto& h) { return h.is_image; });
    t << shown << (shown == 1 ? " image" : " images");
    for (const auto& h : resp.hits) {
      if (!h.is_image) continue;
      const std::string doc = h.document_id();
      json item = app::image_node_json(h);
      item["document_id"] = doc.empty() ? json(nullptr) : json(doc);
      item["score"] = h.score;
      item["text"] = excerpt(h.text, 300);
      const json page = item["page"];
      images.push_back(std::move(item));
      t << "\n- " << h.id << " · " << h.field("chunk_type") << (page.is_number() ? " p. " + page.dump() : "")
        << " · score " << h.score << "\n  " << excerpt(h.text, 200);
    }
    return ToolOutput{{{"images", images}, {"took_ms", resp.metadata.value("took_ms", 0.0)}}, t.str()};
  };
  return visual;
}

// core_list_documents: a page of the documents the caller may see.
Tool make_list_documents_tool(app::Engine* e) {
  Tool list = make_tool(
      "core_list_documents", "List documents",
      "The documents in the store, newest first, with their knowledge base, namespace, source type and tags.", "core",
      object_schema({{"kb_name", string_schema("only this knowledge base", kKeyChars)},
                     {"plugin_namespace", string_schema("only this namespace (core or a plugin's)", 64)},
                     {"limit", integer_schema("page size", 1, static_cast<int64_t>(app::kMaxListLimit), 20)},
                     {"offset", integer_schema("documents to skip", 0, 10'000'000, 0)}}),
      result_schema({{"documents", array_of(result_schema({{"document_id", typed("string")}}, {"document_id"}))},
                     {"total", typed("integer")},
                     {"limit", typed("integer")},
                     {"offset", typed("integer")}},
                    {"documents", "total", "limit", "offset"}));
  list.run = [e](const json& args, const ToolContext& ctx) {
    registry::DocumentQuery q;
    q.limit = static_cast<size_t>(app::int_field(args, "limit", 1, static_cast<int64_t>(app::kMaxListLimit), 20));
    q.offset = static_cast<size_t>(app::int_field(args, "offset", 0, 10'000'000, 0));
    const std::string kb = app::str_field(args, "kb_name", app::kMaxKeyBytes);
    if (!kb.empty()) {
      app::check_kbs(ctx.scope, {kb}, "kb_name");
      q.kb_names = {kb};
    } else {
      q.kb_names = ctx.scope.kb_names;
    }
    const std::string ns = app::str_field(args, "plugin_namespace", 64);
    if (!ns.empty()) q.plugin_namespace = ns;
    size_t total = 0;
    auto docs = e->list_documents(q, &total);
    json out = app::document_list_json(*e, docs, total, q);
    std::ostringstream t;
    t << total << " documents; showing " << docs.size() << " from offset " << q.offset;
    for (const auto& d : out["documents"])
      t << "\n- " << d["document_id"].get<std::string>() << " · " << d["name"].get<std::string>() << " (kb "
        << d["kb_name"].get<std::string>() << ", " << d["plugin_namespace"].get<std::string>() << ")";
    return ToolOutput{out, t.str()};
  };
  return list;
}

}  // namespace

ToolSet::ToolSet(app::Engine& engine, const std::string& default_namespace, bool with_ingest) {
  app::Engine* e = &engine;
  const std::string ns_default = engine.resolve_namespace(default_namespace);
  default_namespace_ = ns_default;
  const size_t top_k_default = engine.config().pipeline.final_top_k;

  tools_.push_back(make_retrieve_tool(e, top_k_default));
  const json search_props = search_properties(top_k_default);
  tools_.push_back(make_search_tool(e, ns_default, top_k_default, search_props));
  tools_.push_back(make_query_tool(e, ns_default, top_k_default, search_props, /*with_sessions=*/with_ingest));
  if (with_ingest) tools_.push_back(make_ingest_tool(engine.ingest_formats()));
  tools_.push_back(make_visual_tool(e, top_k_default));
  tools_.push_back(make_list_documents_tool(e));
  // The plugins' tools (plugin/plugin.h).
  for (const auto* p : plugin::builtin_plugins()) p->add_mcp_tools(engine, tools_);

  // G3: core_* plus the default namespace's own tools.
  std::erase_if(tools_, [&](const Tool& t) { return t.plugin_namespace != "core" && t.plugin_namespace != ns_default; });
  for (const auto& t : tools_) {
    check_supported(t.input_schema);
    check_supported(t.output_schema);
  }
}

const Tool* ToolSet::find(const std::string& name) const {
  for (const auto& t : tools_)
    if (t.name == name) return &t;
  return nullptr;
}

json ToolSet::list_json() const {
  json arr = json::array();
  for (const auto& t : tools_) {
    json input = t.input_schema;
    input["$schema"] = "https://json-schema.org/draft/2020-12/schema";
    arr.push_back({{"name", t.name},
                   {"title", t.title},
                   {"description", t.description},
                   {"inputSchema", input},
                   {"outputSchema", t.output_schema},
                   {"annotations", {{"title", t.title}, {"readOnlyHint", t.read_only}, {"destructiveHint", !t.read_only},
                                    {"idempotentHint", t.read_only}, {"openWorldHint", false}}}});
  }
  return arr;
}

namespace {
json error_result(const std::string& message) {
  return {{"content", json::array({{{"type", "text"}, {"text", message}}})}, {"isError", true}};
}
}  // namespace

json ToolSet::call(const Tool& tool, const json& arguments, const ToolContext& ctx) const {
  if (!arguments.is_object()) return error_result("invalid arguments: must be an object");
  if (auto err = validate(tool.input_schema, arguments)) return error_result("invalid arguments: " + *err);
  try {
    ToolOutput out = tool.run(arguments, ctx);
    return {{"content", json::array({{{"type", "text"}, {"text", out.text}}})},
            {"structuredContent", std::move(out.structured)},
            {"isError", false}};
  } catch (const app::RequestError& e) {
    return error_result(e.field.empty() ? e.message : e.message + " (" + e.field + ")");
  } catch (const Error& e) {
    return error_result(std::string(error_code_name(e.code())) + ": " + e.what());
  } catch (const std::exception& e) {
    // No internals reach the client; the log has them.
    spdlog::error("mcp tool {}: {}", tool.name, e.what());
    return error_result("internal error (see the server log)");
  }
}

}  // namespace eagle::mcp
