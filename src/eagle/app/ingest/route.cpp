// The route stage: the target collection (and encoder) of each row of a slice (run.h).
#include <map>

#include "eagle/app/ingest/run.h"
#include "eagle/core/error.h"

namespace eagle::app {
using nlohmann::json;

// Each target's collection and encoder (the recorded one wins; a different one is
// refused), checked at its first rows, before anything of them is written.
size_t IngestRun::target_index(const std::string& collection, const std::string& fallback, bool visual) {
  for (size_t i = 0; i < targets_.size(); ++i)
    if (targets_[i].collection == collection) {
      if (targets_[i].visual != visual)
        fail(ErrorCode::invalid_argument, "collection '" + collection + "' cannot hold both text and image tiles");
      return i;
    }
  const Config& cfg = config();
  auto& catalog = *engine_.catalog_;
  IngestTarget t;
  t.collection = collection;
  t.visual = visual;
  // An explicit --encoder (for text); else the recorded one, else the slot's.
  t.encoder = visual ? std::string() : opts_.encoder;
  if (catalog.exists(collection)) {
    const auto& recorded = catalog.get(collection).schema().vector.encoder;
    if (t.encoder.empty()) t.encoder = recorded.empty() ? fallback : recorded;
    if (!recorded.empty() && recorded != t.encoder)
      fail(ErrorCode::invalid_argument, "collection '" + collection + "' holds '" + recorded +
                                            "' vectors; cannot add '" + t.encoder + "' vectors");
  } else if (t.encoder.empty()) {
    t.encoder = fallback;
  }
  t.enc = &engine_.encoders_.encoder(t.encoder);
  if (catalog.exists(collection)) check_encoder_identity(catalog.get(collection).schema(), *t.enc);
  const auto want = visual          ? encode::Modality::image
                    : input_format_ ? input_format_->modality
                                    : encode::Modality::text;
  if (t.enc->info().modality != want)
    fail(ErrorCode::invalid_argument, "encoder '" + t.encoder + "' does not embed " +
                                          (want == encode::Modality::image      ? "images"
                                           : want == encode::Modality::molecule ? "molecules"
                                                                                : "text") +
                                          " (collection '" + collection + "')");
  if (catalog.exists(collection)) {
    t.coll = &catalog.get(collection);
    t.schema = t.coll->schema();
    if (visual && !t.schema.field_index("image"))
      fail(ErrorCode::invalid_argument, "collection '" + collection + "' is not a visual collection (no image field)");
  } else if (visual) {
    // seed retrieval.txt §6.2: IP, HNSW M=16, efConstruction=256, ef=64, its own settings.
    t.schema = visual_schema(collection, t.enc->info().dim, t.enc->info().metric, plugin::plugin_chunk_fields());
    t.schema.vector.encoder = t.encoder;
    t.schema.vector.encoder_identity = t.enc->info().identity;
    t.schema.vector.hnsw = cfg.visual.hnsw;
    t.schema.vector.index = cfg.visual.index_type == "flat" ? VectorIndexKind::flat : VectorIndexKind::hnsw;
    t.schema.text_length_norm = cfg.visual.bm25_b;
  } else {
    t.schema = input_format_ ? input_format_->schema(collection, t.enc->info())
                             : engine_.text_schema(collection, t.enc->info());
    t.schema.vector.encoder = t.encoder;
    t.schema.vector.encoder_identity = t.enc->info().identity;
    t.schema.vector.hnsw = cfg.hnsw;
  }
  targets_.push_back(std::move(t));
  return targets_.size() - 1;
}

IngestRun::Routes IngestRun::route(Slice& s) {
  Routes routes;
  std::vector<bool> selected(s.rows.size(), false);
  route_tiles(s, selected, routes);
  route_selectors(s, selected, routes);
  route_rest(s, selected, routes);
  return routes;
}

// Image tiles go to the visual collection with the visual encoder (eagle_visual, the
// core visual collection of the G4 default route), whatever --collection names for the text.
// CLASSIFY_VISUAL (FIRST) may send a tile elsewhere (a plugin's medical slot). A
// medical slot without its model never falls back to the general visual encoder
// (seed, biomed-retrieval.txt "Hard rule"): the tile is left out and the report says why.
void IngestRun::route_tiles(Slice& s, std::vector<bool>& selected, Routes& routes) {
  auto& bus = engine_.bus_;
  std::vector<size_t> tiles;
  std::map<size_t, std::vector<size_t>> classified;
  const bool classify = bus.has_subscribers(search::HookPoint::CLASSIFY_VISUAL, opts_.plugin_namespace);
  for (size_t i = 0; i < s.rows.size(); ++i) {
    if (!s.is_tile(i)) continue;
    selected[i] = true;
    std::optional<json> sel;
    if (classify) sel = bus.first<search::HookPoint::CLASSIFY_VISUAL>(hctx_, s.rows[i]);
    if (!sel) {
      tiles.push_back(i);
      continue;
    }
    if (!sel->is_object() || !sel->contains("collection") || !(*sel)["collection"].is_string() ||
        !sel->contains("encoder") || !(*sel)["encoder"].is_string())
      fail(ErrorCode::internal, "a CLASSIFY_VISUAL subscriber returned " + sel->dump() +
                                    "; expected {\"collection\": name, \"encoder\": label}");
    const std::string label = (*sel)["encoder"].get<std::string>();
    if (!engine_.encoders_.has_encoder(label)) {
      skip(s.rows[i].value("id", std::string()) + ": a " + sel->value("modality", std::string("medical")) +
           " image needs encoder '" + label + "', which is not configured; it is not embedded by the "
           "general visual encoder instead (set encoders." + label + ")");
      continue;
    }
    classified[target_index((*sel)["collection"].get<std::string>(), label, true)].push_back(i);
  }
  if (!tiles.empty()) {
    const auto visual = engine_.visual_route();
    routes.emplace_back(target_index(visual.collection, visual.encoder, true), std::move(tiles));
  }
  for (auto& [ti, idx] : classified) routes.emplace_back(ti, std::move(idx));
}

// INGEST_ROUTE_SELECTORS (FIRST): a subscriber may send a chunk to a collection
// ({"collection": name, "encoder": label (optional)}); the others are routed below.
void IngestRun::route_selectors(Slice& s, std::vector<bool>& selected, Routes& routes) {
  auto& bus = engine_.bus_;
  if (!bus.has_subscribers(search::HookPoint::INGEST_ROUTE_SELECTORS, opts_.plugin_namespace)) return;
  std::map<size_t, std::vector<size_t>> by_target;
  for (size_t i = 0; i < s.rows.size(); ++i) {
    if (selected[i]) continue;
    auto sel = bus.first<search::HookPoint::INGEST_ROUTE_SELECTORS>(hctx_, s.rows[i]);
    if (!sel) continue;
    if (!sel->is_object() || !sel->contains("collection") || !(*sel)["collection"].is_string() ||
        (*sel)["collection"].get<std::string>().empty() || (sel->contains("encoder") && !(*sel)["encoder"].is_string()))
      fail(ErrorCode::internal, "an INGEST_ROUTE_SELECTORS subscriber returned " + sel->dump() +
                                    "; expected {\"collection\": name, \"encoder\": label (optional)}");
    const std::string collection = (*sel)["collection"].get<std::string>();
    const std::string encoder = sel->value("encoder", std::string());
    by_target[target_index(collection, encoder.empty() ? engine_.default_encoder(collection) : encoder)].push_back(i);
    selected[i] = true;
  }
  for (auto& [ti, idx] : by_target) routes.emplace_back(ti, std::move(idx));
}

// Each other row: where its reader or the namespace's routing rule sends it (unless
// --collection names one), else the ingest's default collection.
void IngestRun::route_rest(Slice& s, std::vector<bool>& selected, Routes& routes) {
  std::vector<std::pair<IngestRoute, std::vector<size_t>>> routed;  // in order of first row
  std::vector<size_t> rest;
  for (size_t i = 0; i < s.rows.size(); ++i) {
    if (selected[i]) continue;
    std::optional<IngestRoute> to;
    if (opts_.collection.empty()) to = s.route[i];
    if (!to && routing_) to = ext_.routing->route(s.embed[i]);
    if (!to) {
      rest.push_back(i);
      continue;
    }
    auto it = std::find_if(routed.begin(), routed.end(), [&](const auto& r) { return r.first == *to; });
    if (it == routed.end()) it = routed.insert(routed.end(), {*to, {}});
    it->second.push_back(i);
  }
  for (auto& [to, idx] : routed) routes.emplace_back(target_index(to.collection, to.encoder), std::move(idx));
  const std::string fallback = opts_.collection.empty() ? slot_.encoder : engine_.default_encoder(default_collection_);
  if (!rest.empty()) routes.emplace_back(target_index(default_collection_, fallback), std::move(rest));
}

}  // namespace eagle::app
