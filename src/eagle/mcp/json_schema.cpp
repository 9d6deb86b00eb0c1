#include "eagle/mcp/json_schema.h"

#include <set>

#include "eagle/core/error.h"

namespace eagle::mcp {
using nlohmann::json;

namespace {

// Annotations (no effect on validity) and the keywords validate() enforces.
const std::set<std::string>& known_keywords() {
  static const std::set<std::string> k = {
      "$schema", "$id", "title", "description", "default", "examples", "type", "properties", "required",
      "additionalProperties", "items", "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum",
      "enum", "const", "anyOf", "oneOf", "minProperties", "maxProperties", "uniqueItems",
      // MCP (SEP-2243): the argument is mirrored into an Mcp-Param-* HTTP header.
      "x-mcp-header"};
  return k;
}

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

bool has_type(const json& instance, const std::string& type) {
  if (type == "object") return instance.is_object();
  if (type == "array") return instance.is_array();
  if (type == "string") return instance.is_string();
  if (type == "boolean") return instance.is_boolean();
  if (type == "null") return instance.is_null();
  if (type == "number") return instance.is_number();
  if (type == "integer") {
    if (instance.is_number_integer()) return true;
    // 2020-12: a number with a zero fractional part is an integer (5.0).
    if (instance.is_number_float()) {
      double d = instance.get<double>();
      return d == static_cast<double>(static_cast<int64_t>(d));
    }
    return false;
  }
  return false;
}

std::string where(const std::string& ptr) { return ptr.empty() ? "/" : ptr; }

// "1 character", "3 characters".
std::string count_of(const json& n, const std::string& one, const std::string& many) {
  return n.dump() + " " + (n == 1 ? one : many);
}

std::optional<std::string> check(const json& s, const json& v, const std::string& ptr) {
  if (s.is_boolean()) {
    if (s.get<bool>()) return std::nullopt;
    return where(ptr) + ": not allowed";
  }
  if (auto t = s.find("type"); t != s.end()) {
    bool ok = false;
    std::string names;
    for (const auto& one : t->is_array() ? *t : json::array({*t})) {
      ok = ok || has_type(v, one.get<std::string>());
      names += (names.empty() ? "" : " or ") + one.get<std::string>();
    }
    if (!ok) return where(ptr) + ": must be " + names;
  }
  if (auto e = s.find("enum"); e != s.end()) {
    bool ok = false;
    for (const auto& x : *e) ok = ok || x == v;
    if (!ok) return where(ptr) + ": must be one of " + e->dump();
  }
  if (auto c = s.find("const"); c != s.end() && *c != v) return where(ptr) + ": must be " + c->dump();
  if (v.is_string()) {
    const size_t n = code_points(v.get<std::string>());
    if (s.contains("minLength") && n < s["minLength"].get<size_t>())
      return where(ptr) + ": must hold at least " + count_of(s["minLength"], "character", "characters");
    if (s.contains("maxLength") && n > s["maxLength"].get<size_t>())
      return where(ptr) + ": must hold at most " + count_of(s["maxLength"], "character", "characters");
  }
  if (v.is_number()) {
    const double d = v.get<double>();
    if (s.contains("minimum") && d < s["minimum"].get<double>()) return where(ptr) + ": must be >= " + s["minimum"].dump();
    if (s.contains("maximum") && d > s["maximum"].get<double>()) return where(ptr) + ": must be <= " + s["maximum"].dump();
  }
  if (v.is_array()) {
    if (s.contains("minItems") && v.size() < s["minItems"].get<size_t>())
      return where(ptr) + ": must hold at least " + count_of(s["minItems"], "item", "items");
    if (s.contains("maxItems") && v.size() > s["maxItems"].get<size_t>())
      return where(ptr) + ": must hold at most " + count_of(s["maxItems"], "item", "items");
    if (s.value("uniqueItems", false))
      for (size_t i = 0; i < v.size(); ++i)
        for (size_t j = i + 1; j < v.size(); ++j)
          if (v[i] == v[j]) return where(ptr) + ": items must be unique";
    if (auto items = s.find("items"); items != s.end())
      for (size_t i = 0; i < v.size(); ++i)
        if (auto err = check(*items, v[i], ptr + "/" + std::to_string(i))) return err;
  }
  if (v.is_object()) {
    if (s.contains("minProperties") && v.size() < s["minProperties"].get<size_t>())
      return where(ptr) + ": must have at least " + count_of(s["minProperties"], "property", "properties");
    if (s.contains("maxProperties") && v.size() > s["maxProperties"].get<size_t>())
      return where(ptr) + ": must have at most " + count_of(s["maxProperties"], "property", "properties");
    if (auto req = s.find("required"); req != s.end())
      for (const auto& name : *req)
        if (!v.contains(name.get<std::string>()))
          return where(ptr) + ": '" + name.get<std::string>() + "' is required";
    const json props = s.value("properties", json::object());
    for (const auto& [k, x] : v.items()) {
      const std::string child = ptr + "/" + k;
      if (auto p = props.find(k); p != props.end()) {
        if (auto err = check(*p, x, child)) return err;
      } else if (auto ap = s.find("additionalProperties"); ap != s.end()) {
        if (ap->is_boolean() && !ap->get<bool>()) return where(child) + ": unknown property";
        if (auto err = check(*ap, x, child)) return err;
      }
    }
  }
  if (auto any = s.find("anyOf"); any != s.end()) {
    std::optional<std::string> first;
    bool ok = false;
    for (const auto& sub : *any) {
      auto err = check(sub, v, ptr);
      if (!err) ok = true;
      else if (!first) first = err;
    }
    if (!ok) return first;
  }
  if (auto one = s.find("oneOf"); one != s.end()) {
    size_t matched = 0;
    std::optional<std::string> first;
    for (const auto& sub : *one) {
      auto err = check(sub, v, ptr);
      if (!err) ++matched;
      else if (!first) first = err;
    }
    if (matched == 0) return first;
    if (matched > 1) return where(ptr) + ": matches more than one alternative";
  }
  return std::nullopt;
}

void supported(const json& s, const std::string& ptr) {
  if (s.is_boolean()) return;
  if (!s.is_object()) fail(ErrorCode::invalid_argument, "schema at " + where(ptr) + " is not an object");
  for (const auto& [k, v] : s.items()) {
    if (!known_keywords().count(k))
      fail(ErrorCode::invalid_argument, "schema keyword '" + k + "' at " + where(ptr) + " is not enforced by eagle::mcp::validate");
    if (k == "properties")
      for (const auto& [name, sub] : v.items()) supported(sub, ptr + "/properties/" + name);
    if (k == "items" || k == "additionalProperties") supported(v, ptr + "/" + k);
    if (k == "anyOf" || k == "oneOf")
      for (size_t i = 0; i < v.size(); ++i) supported(v[i], ptr + "/" + k + "/" + std::to_string(i));
  }
}

}  // namespace

std::optional<std::string> validate(const json& schema, const json& instance) { return check(schema, instance, ""); }

void check_supported(const json& schema) { supported(schema, ""); }

}  // namespace eagle::mcp
