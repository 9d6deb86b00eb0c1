#include "eagle/app/ingest/slice.h"

#include <algorithm>

namespace eagle::app {
using nlohmann::json;

void Slice::add(json row, std::string embed_text, std::optional<IngestRoute> to) {
  rows.push_back(std::move(row));
  embed.push_back(std::move(embed_text));
  document_of.push_back(documents.size() - 1);  // the document added last
  route.push_back(std::move(to));
  image.emplace_back();
  image_ext.emplace_back();
}

void Slice::add_tile(json row, ingest::ImageTile&& tile) {
  add(std::move(row), std::string());
  image_bytes += tile.encoded.size();
  image.back() = std::move(tile.encoded);
  image_ext.back() = std::move(tile.extension);
}

std::string kb_qualified(const std::string& kb, const std::string& id) {
  const std::string prefix = kb + ":";
  return id.starts_with(prefix) ? id : prefix + id;
}

void qualify_slice(Slice& s, const std::string& kb, const std::function<bool(const std::string&)>& keep_plain) {
  std::unordered_map<std::string, std::string> document_id, row_id;
  std::vector<bool> renamed(s.documents.size(), false);
  for (size_t j = 0; j < s.documents.size(); ++j) {
    auto& d = s.documents[j];
    if (keep_plain(d.document_id)) continue;
    const std::string qualified = kb_qualified(kb, d.document_id);
    if (qualified == d.document_id) continue;
    document_id.emplace(d.document_id, qualified);
    d.document_id = qualified;
    renamed[j] = true;
  }
  if (document_id.empty()) return;
  for (size_t i = 0; i < s.rows.size(); ++i) {
    if (!renamed[s.document_of[i]]) continue;
    const auto it = s.rows[i].find("id");
    if (it == s.rows[i].end() || !it->is_string()) continue;
    const std::string id = it->get<std::string>();
    row_id.emplace(id, kb_qualified(kb, id));
  }
  auto rename = [](const std::unordered_map<std::string, std::string>& names, json& field) {
    if (!field.is_string()) return;
    if (auto it = names.find(field.get<std::string>()); it != names.end()) field = it->second;
  };
  for (auto& row : s.rows) {
    if (row.contains("id")) rename(row_id, row["id"]);
    if (row.contains("document_id")) rename(document_id, row["document_id"]);
    if (row.contains("source_chunk_id")) rename(row_id, row["source_chunk_id"]);
    if (row.contains("connect_to") && row["connect_to"].is_array())
      for (auto& edge : row["connect_to"]) {
        if (edge.is_string()) rename(row_id, edge);
        else if (edge.is_object() && edge.contains("target")) rename(row_id, edge["target"]);
      }
  }
  auto rekey = [&](auto& by_document) {
    std::remove_reference_t<decltype(by_document)> out;
    for (auto& [k, v] : by_document) {
      auto it = document_id.find(k);
      out.emplace(it == document_id.end() ? k : it->second, std::move(v));
    }
    by_document = std::move(out);
  };
  rekey(s.brands);
  rekey(s.tags);
  rekey(s.source_sha256);
}

void copy_known_fields(const json& meta, const CollectionSchema& schema, json& row) {
  if (!meta.is_object()) return;
  for (const auto& f : schema.fields) {
    auto it = meta.find(f.name);
    if (it == meta.end() || it->is_null() || row.contains(f.name)) continue;
    const bool ok = (f.type == FieldType::string && it->is_string()) ||
                    (f.type == FieldType::int64 && it->is_number_integer()) ||
                    (f.type == FieldType::float64 && it->is_number()) ||
                    (f.type == FieldType::boolean && it->is_boolean()) ||
                    (f.type == FieldType::string_list && it->is_array() &&
                     std::all_of(it->begin(), it->end(), [](const json& e) { return e.is_string(); })) ||
                    f.type == FieldType::json;
    if (ok) row[f.name] = *it;
  }
}

void add_collection(registry::DocumentRecord& r, const std::string& collection) {
  if (std::find(r.collections_used.begin(), r.collections_used.end(), collection) == r.collections_used.end())
    r.collections_used.push_back(collection);
}

}  // namespace eagle::app
