#pragma once
// The data an ingest passes between its stages: one slice of the input (whole
// documents, their rows and what each row is embedded from), and where a row should
// go when a reader or a plugin's routing rule already knows.
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "eagle/core/schema.h"
#include "eagle/ingest/tiles/tiles.h"
#include "eagle/registry/registry.h"

namespace eagle::app {

// A collection and the encoder label its vectors come from.
struct IngestRoute {
  std::string collection;
  std::string encoder;
  bool operator==(const IngestRoute&) const = default;
};

// What one slice of the input holds before it is embedded and staged.
struct Slice {
  std::vector<nlohmann::json> rows;  // collection rows, without the vector
  std::vector<std::string> embed;    // what the encoder sees for each row (text or SMILES)
  std::vector<size_t> document_of;   // row -> index in `documents`
  std::vector<registry::DocumentRecord> documents;
  std::unordered_set<std::string> ids;  // text record ids read into this slice
  // A document's brand / generic name pairs, by document id (written to the registry).
  std::unordered_map<std::string, std::vector<registry::BrandName>> brands;
  // A source record's tags, by document id (the registry's keywords).
  std::unordered_map<std::string, std::vector<std::string>> tags;
  // The SHA-256 of the file each structured document came from, by document id.
  std::unordered_map<std::string, std::string> source_sha256;
  // Where each row goes when its reader or the namespace's routing rule decided it
  // (a drug label's rows, a document profile); unset: the route stage decides.
  std::vector<std::optional<IngestRoute>> route;
  // Image tiles (rows of the visual collection): the encoded image and its extension;
  // empty for a text row.
  std::vector<std::string> image, image_ext;
  size_t image_bytes = 0;

  // A row of the document added last.
  void add(nlohmann::json row, std::string embed_text, std::optional<IngestRoute> to = std::nullopt);
  // An image tile of the document added last: its row, its image to embed and keep.
  void add_tile(nlohmann::json row, ingest::ImageTile&& tile);
  bool is_tile(size_t i) const { return !image[i].empty(); }
};

// Tenancy: a scoped ingest into knowledge base K keeps its documents as "K:<id>", so
// equal ids of two tenants never meet, and an id another tenant holds answers exactly
// as an absent one: both are ingested, under the tenant's own name (a refusal would
// tell that the id exists). An id already "K:..." stays; a document K itself holds
// under the plain id (ingested before this rule, or by an unscoped token into K)
// keeps it, so a re-ingest replaces it as before.
std::string kb_qualified(const std::string& kb, const std::string& id);

// Renames a slice's documents and their rows (ids, document ids, the chunk a tile
// came from, connect_to targets) for a scoped ingest into `kb`; `keep_plain` says a
// document keeps its id.
void qualify_slice(Slice& s, const std::string& kb, const std::function<bool(const std::string&)>& keep_plain);

// Scalar metadata of a source record that the chunk schema has a field for, with
// the field's type; the rest stays in the source (never an error).
void copy_known_fields(const nlohmann::json& meta, const CollectionSchema& schema, nlohmann::json& row);

// Adds `collection` to the record's collections_used once.
void add_collection(registry::DocumentRecord& r, const std::string& collection);

}  // namespace eagle::app
