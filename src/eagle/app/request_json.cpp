#include "eagle/app/request_json.h"

#include <algorithm>

#include "eagle/plugin/plugin.h"

#include "eagle/core/base64.h"

namespace eagle::app {
using nlohmann::json;

void bad_request(const std::string& field, const std::string& message) {
  throw RequestError{400, "invalid_argument", message, field};
}

const json* json_field(const json& obj, const std::string& name) {
  auto it = obj.find(name);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

void only_fields(const json& obj, const std::set<std::string>& allowed) {
  for (const auto& [k, v] : obj.items())
    if (!allowed.count(k)) bad_request(k, "unknown field '" + k + "'");
}

std::string str_field(const json& obj, const std::string& name, size_t max_bytes, bool required,
                      const std::string& fallback) {
  const json* v = json_field(obj, name);
  if (!v) {
    if (required) bad_request(name, "'" + name + "' is required");
    return fallback;
  }
  if (!v->is_string()) bad_request(name, "'" + name + "' must be a string");
  auto s = v->get<std::string>();
  if (s.size() > max_bytes) bad_request(name, "'" + name + "' is longer than " + std::to_string(max_bytes) + " bytes");
  return s;
}

int64_t int_field(const json& obj, const std::string& name, int64_t lo, int64_t hi, int64_t fallback) {
  const json* v = json_field(obj, name);
  if (!v) return fallback;
  if (!v->is_number_integer()) bad_request(name, "'" + name + "' must be an integer");
  auto n = v->get<int64_t>();
  if (n < lo || n > hi)
    bad_request(name, "'" + name + "' must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return n;
}

bool bool_field(const json& obj, const std::string& name, bool fallback) {
  const json* v = json_field(obj, name);
  if (!v) return fallback;
  if (!v->is_boolean()) bad_request(name, "'" + name + "' must be true or false");
  return v->get<bool>();
}

std::vector<std::string> list_field(const json& obj, const std::string& name, size_t max_items, const std::string& path) {
  const std::string where = path.empty() ? name : path;
  const json* v = json_field(obj, name);
  if (!v) return {};
  if (!v->is_array()) bad_request(where, "'" + where + "' must be a list of strings");
  if (v->size() > max_items)
    bad_request(where, "'" + where + "' may hold at most " + std::to_string(max_items) + " items");
  std::vector<std::string> out;
  for (const auto& e : *v) {
    if (!e.is_string()) bad_request(where, "'" + where + "' must be a list of strings");
    auto s = e.get<std::string>();
    if (s.size() > kMaxKeyBytes)
      bad_request(where, "an item of '" + where + "' is longer than " + std::to_string(kMaxKeyBytes) + " bytes");
    out.push_back(std::move(s));
  }
  return out;
}

void check_kbs(const AccessScope& scope, const std::vector<std::string>& kbs, const std::string& field_name) {
  for (const auto& kb : kbs)
    if (!scope.allows(kb))
      throw RequestError{403, "permission_denied", "this token may not read knowledge base '" + kb + "'", field_name};
}

search::RetrievalRequest search_request_from_json(const json& body, const std::string& default_namespace,
                                                  const AccessScope& scope, size_t default_top_k) {
  only_fields(body, {"query", "top_k", "kb_name", "scope", "scope_filter", "facets", "filter", "route_mode",
                     "plugin_namespace", "explain", "min_score", "image"});
  search::RetrievalRequest r;
  // "image": a PNG or JPEG, Base64 or a data: URI. With it the query may be
  // empty (image -> image); the orchestrator decodes it and says so when it is not an image.
  if (const json* img = json_field(body, "image")) {
    if (!img->is_string()) bad_request("image", "'image' must be a Base64 string or a data: URI");
    std::string_view text = img->get_ref<const std::string&>();
    if (text.rfind("data:", 0) == 0) {
      const auto comma = text.find(',');
      if (comma == std::string_view::npos || text.substr(0, comma).find(";base64") == std::string_view::npos)
        bad_request("image", "'image' as a data: URI must be data:<type>;base64,<data>");
      text.remove_prefix(comma + 1);
    }
    if (text.size() > (search::kMaxQueryImageBytes + 2) / 3 * 4)
      throw RequestError{413, "too_large", "'image' is larger than " + std::to_string(search::kMaxQueryImageBytes) + " bytes", "image"};
    auto bytes = base64_decode(text);
    if (!bytes || bytes->empty()) bad_request("image", "'image' is not valid Base64 (RFC 4648, padded)");
    r.image = std::move(*bytes);
    r.has_image = true;
  }
  r.query = str_field(body, "query", search::kMaxQueryBytes, !r.has_image);
  if (r.query.empty() && !r.has_image) bad_request("query", "'query' must not be empty");
  r.top_k = static_cast<size_t>(int_field(body, "top_k", 1, static_cast<int64_t>(search::kMaxFinalTopK),
                                          static_cast<int64_t>(default_top_k)));
  if (const json* m = json_field(body, "min_score")) {
    if (!m->is_number()) bad_request("min_score", "'min_score' must be a number");
    r.min_score = m->get<double>();
  }
  r.kb_name = str_field(body, "kb_name", kMaxKeyBytes);
  r.legacy_scope = list_field(body, "scope", kMaxScopeItems);
  if (const json* sf = json_field(body, "scope_filter")) {
    if (!sf->is_object()) bad_request("scope_filter", "'scope_filter' must be an object");
    for (const auto& [k, v] : sf->items())
      if (k != "kb_names" && k != "document_ids" && k != "tags")
        bad_request("scope_filter." + k, "unknown field 'scope_filter." + k + "' (kb_names, document_ids, tags)");
    r.scope_filter.kb_names = list_field(*sf, "kb_names", kMaxScopeItems, "scope_filter.kb_names");
    r.scope_filter.document_ids = list_field(*sf, "document_ids", kMaxScopeItems, "scope_filter.document_ids");
    r.scope_filter.tags = list_field(*sf, "tags", kMaxScopeItems, "scope_filter.tags");
  }
  if (const json* f = json_field(body, "facets")) {
    if (!f->is_object()) bad_request("facets", "'facets' must be an object of field -> value or list");
    if (f->size() > kMaxFacetFields) bad_request("facets", "at most " + std::to_string(kMaxFacetFields) + " facet fields");
    for (const auto& [k, v] : f->items()) {
      const std::string where = "facets." + k;
      auto scalar_ok = [](const json& x) { return x.is_string() || x.is_number_integer(); };
      if (v.is_array()) {
        if (v.empty() || v.size() > kMaxFacetValues)
          bad_request(where, "'" + where + "' must hold 1.." + std::to_string(kMaxFacetValues) + " values");
        for (const auto& x : v)
          if (!scalar_ok(x)) bad_request(where, "'" + where + "' values must be strings or integers");
      } else if (!scalar_ok(v)) {
        bad_request(where, "'" + where + "' must be a string, an integer or a list of them");
      }
      r.facets[k] = v;
    }
  }
  r.filter = str_field(body, "filter", kMaxFilterBytes);
  const std::string mode = str_field(body, "route_mode", 16, false, "auto");
  // auto: text, plus the visual collection when an image comes (G4).
  if (mode == "auto") r.route_mode = search::RouteMode::text;
  else if (mode == "text" || mode == "visual" || mode == "hybrid") r.route_mode = search::parse_route_mode(mode);
  else bad_request("route_mode", "'route_mode' must be auto, text, visual or hybrid");
  r.plugin_namespace = str_field(body, "plugin_namespace", 64, false, default_namespace);
  if (const auto known = plugin::namespaces();
      r.plugin_namespace != "auto" && std::find(known.begin(), known.end(), r.plugin_namespace) == known.end())
    bad_request("plugin_namespace", "'plugin_namespace' must be " + join_words(known) + " or auto");
  r.explain = bool_field(body, "explain", false);
  // A token limited to KBs: those it names must be its own, and its KBs are forced
  // onto every part of the search.
  if (!scope.kb_names.empty()) {
    if (!r.kb_name.empty()) check_kbs(scope, {r.kb_name}, "kb_name");
    check_kbs(scope, r.scope_filter.kb_names, "scope_filter.kb_names");
    r.allowed_kbs = scope.kb_names;
  }
  return r;
}

QueryRequestFields query_request_from_json(const json& body, const std::string& default_namespace,
                                           const AccessScope& scope, size_t default_top_k) {
  if (!body.is_object()) bad_request("", "the body must be a JSON object");
  json search_body = body;
  for (const char* k : {"top_n", "mode", "session_id"}) search_body.erase(k);
  QueryRequestFields out;
  out.request.retrieval = search_request_from_json(search_body, default_namespace, scope, default_top_k);
  out.request.top_n = static_cast<size_t>(int_field(body, "top_n", 1, 20, 0));
  out.request.mode = str_field(body, "mode", 16, false, "auto");
  if (out.request.mode != "auto" && out.request.mode != "extractive")
    bad_request("mode", "'mode' must be auto or extractive");
  out.session_id = str_field(body, "session_id", 64, false, "");
  return out;
}

}  // namespace eagle::app
