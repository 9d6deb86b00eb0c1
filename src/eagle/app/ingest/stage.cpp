// The stamp, embed and stage stages of a slice (run.h).
#include <algorithm>
#include <set>

#include "eagle/app/ingest/run.h"
#include "eagle/core/error.h"

namespace eagle::app {
using nlohmann::json;

namespace {

// A hook's vectors: one per input, each of the collection's dimension.
void check_given(const char* hook, const std::optional<std::vector<encode::Embedding>>& given, size_t inputs,
                 const char* what, const IngestTarget& t) {
  if (given && (given->size() != inputs || std::any_of(given->begin(), given->end(), [&](const auto& v) {
                  return v.size() != t.schema.vector.dim;
                })))
    fail(ErrorCode::internal, std::string("an ") + hook + " subscriber returned " + std::to_string(given->size()) +
                                  " vectors for " + std::to_string(inputs) + " " + what + ", or not of dimension " +
                                  std::to_string(t.schema.vector.dim) + " (" + t.collection + ")");
}

}  // namespace

void IngestRun::stage_slice(Slice& s) {
  if (s.rows.empty()) return;
  check_document_ids(s);
  stamp(s);
  auto routes = route(s);
  // A scoped caller may not replace a document that lives in another KB (its ids are
  // qualified above, so this holds unless an id of another KB was given K's prefix).
  if (scoped_)
    for (const auto& d : s.documents)
      if (auto old = engine_.registry().get(d.document_id); old && !opts_.scope.allows(old->kb_name))
        fail(ErrorCode::permission_denied,
             "document '" + d.document_id + "' belongs to a knowledge base this token may not write");
  for (auto& [ti, idx] : routes) {
    IngestTarget& t = targets_[ti];
    auto batch = embed(s, t, idx);
    if (idx.empty()) continue;
    for (size_t i : idx) add_collection(s.documents[s.document_of[i]], t.collection);
    t.rows += idx.size();
    stage_rows(t, std::move(batch));
  }
  for (const auto& d : s.documents) {
    auto b = s.brands.find(d.document_id);
    auto t = s.tags.find(d.document_id);
    auto h = s.source_sha256.find(d.document_id);
    spill_.write(d, b == s.brands.end() ? nullptr : &b->second, t == s.tags.end() ? nullptr : &t->second,
                 h == s.source_sha256.end() ? std::string() : h->second);
  }
  for (const auto& r : routes) rows_done_ += r.second.size();  // tiles left out above are not rows
  report_progress();
  s = Slice{};
}

// Tenancy: a scoped ingest qualifies its ids with its KB (kb_qualified); an unscoped
// one may not use the "K:" prefix of a scoped token's KB.
void IngestRun::check_document_ids(Slice& s) {
  if (scoped_) {
    qualify_slice(s, opts_.kb_name, [&](const std::string& id) {
      auto old = engine_.registry().get(id);
      return old && old->kb_name == opts_.kb_name;
    });
    return;
  }
  for (const auto& d : s.documents) {
    const auto colon = d.document_id.find(':');
    if (colon == std::string::npos) continue;
    const std::string prefix = d.document_id.substr(0, colon);
    if (prefix != opts_.kb_name && token_kbs_.count(prefix))
      fail(ErrorCode::invalid_argument, "document id '" + d.document_id + "': ids starting with '" + prefix +
                                            ":' are kept for knowledge base '" + prefix + "' (its scoped tokens' documents)");
  }
}

// Plugin stamps at ingest: CHUNK (TRANSFORM) over the slice's rows, then
// CLASSIFY_CHUNK (ALL): each subscriber returns fields for a chunk; they fill its
// gaps and never override a field the source or CHUNK set.
void IngestRun::stamp(Slice& s) {
  auto& bus = engine_.bus_;
  const std::string& ns = opts_.plugin_namespace;
  if (ns != "core") {
    engine_.ensure_plugin(ns);
    if (bus.has_subscribers(search::HookPoint::CHUNK, ns)) {
      json batch = json::array();
      for (auto& r : s.rows) batch.push_back(std::move(r));
      batch = bus.transform<search::HookPoint::CHUNK>(hctx_, std::move(batch));
      if (!batch.is_array() || batch.size() != s.rows.size())
        fail(ErrorCode::internal, "a CHUNK subscriber changed the number of chunks");
      for (size_t i = 0; i < s.rows.size(); ++i) s.rows[i] = std::move(batch[i]);
    }
  }
  if (!bus.has_subscribers(search::HookPoint::CLASSIFY_CHUNK, ns)) return;
  for (auto& r : s.rows)
    for (auto& fields : bus.all<search::HookPoint::CLASSIFY_CHUNK>(hctx_, r)) {
      if (!fields.is_object())
        fail(ErrorCode::internal, "a CLASSIFY_CHUNK subscriber returned " + fields.dump() + ", not an object");
      for (auto& [k, v] : fields.items())
        if (!r.contains(k) || r[k].is_null()) r[k] = std::move(v);
    }
}

// The rows `idx` of the slice embedded for target `t`, as records of its schema;
// only the schema's fields are kept (a source may carry more). Image tiles the
// encoder refused under --skip-bad are left out of `idx` and reported.
std::vector<store::Record> IngestRun::embed(Slice& s, IngestTarget& t, std::vector<size_t>& idx) {
  auto& bus = engine_.bus_;
  const std::string& ns = opts_.plugin_namespace;
  std::vector<store::Record> batch;
  batch.reserve(idx.size());
  std::set<size_t> dropped;  // image tiles the encoder refused (--skip-bad)
  const size_t per_call = std::max<size_t>(1, std::min<size_t>(t.enc->info().max_batch, 256));
  for (size_t start = 0; start < idx.size(); start += per_call) {
    const size_t end = std::min(idx.size(), start + per_call);
    std::optional<std::vector<encode::Embedding>> given;
    std::vector<std::string> texts;
    if (t.visual) {
      given = embed_tiles(s, t, idx, start, end, dropped);
    } else {
      for (size_t i = start; i < end; ++i) texts.push_back(std::move(s.embed[idx[i]]));
      if (bus.has_subscribers(search::HookPoint::EMBED_TEXT, ns)) {
        // EMBED_TEXT (FIRST): a subscriber may embed the texts itself; else the encoder.
        given = bus.first<search::HookPoint::EMBED_TEXT>(hctx_, texts, t.encoder);
        check_given("EMBED_TEXT", given, texts.size(), "texts", t);
      }
    }
    auto vecs = given ? std::move(*given) : t.enc->encode(texts, encode::EncodeMode::document);
    json rows = json::array();
    for (size_t i = start; i < end; ++i) {
      if (dropped.count(idx[i])) continue;
      json& src = s.rows[idx[i]];
      json row = json::object();
      for (auto& [k, v] : src.items())
        if (k == "id" || k == "text" || (t.schema.field_index(k) && !v.is_null())) row[k] = std::move(v);
      row["vector"] = std::move(vecs[i - start]);
      rows.push_back(std::move(row));
    }
    // UPSERT_VECTORS (TRANSFORM): the rows, vectors included, just before the write.
    if (bus.has_subscribers(search::HookPoint::UPSERT_VECTORS, ns)) {
      const size_t n = rows.size();
      rows = bus.transform<search::HookPoint::UPSERT_VECTORS>(hctx_, std::move(rows));
      if (!rows.is_array() || rows.size() != n)
        fail(ErrorCode::internal, "an UPSERT_VECTORS subscriber changed the number of rows");
    }
    // Validated here like any row: a subscriber's bad value is refused before the log.
    for (const auto& row : rows) batch.push_back(store::record_from_json(row, t.schema));
  }
  std::erase_if(idx, [&](size_t i) { return dropped.count(i) > 0; });
  return batch;
}

// Image tiles idx[start, end): the encoder sees the kept bytes, which the image store
// keeps (durable before the commit that names them) and the row names. EMBED_VISUAL
// (FIRST): a subscriber may embed the images itself.
std::vector<encode::Embedding> IngestRun::embed_tiles(Slice& s, IngestTarget& t, const std::vector<size_t>& idx,
                                                      size_t start, size_t end, std::set<size_t>& dropped) {
  auto& bus = engine_.bus_;
  std::vector<std::string_view> images;
  for (size_t i = start; i < end; ++i) images.push_back(s.image[idx[i]]);
  std::optional<std::vector<encode::Embedding>> given;
  if (bus.has_subscribers(search::HookPoint::EMBED_VISUAL, opts_.plugin_namespace))
    given = bus.first<search::HookPoint::EMBED_VISUAL>(hctx_, images, t.encoder);
  check_given("EMBED_VISUAL", given, images.size(), "images", t);
  if (!given) {
    try {
      given = t.enc->encode_images(images);
    } catch (const Error&) {
      if (!opts_.skip_bad) throw;
      // One by one: an image the encoder refuses (its own size limit, a remote 4xx)
      // is reported and left out; the others are kept.
      given.emplace();
      for (size_t k = 0; k < images.size(); ++k) {
        try {
          given->push_back(t.enc->encode_images({images[k]}).at(0));
        } catch (const Error& e) {
          given->emplace_back();
          dropped.insert(idx[start + k]);
          skip(s.rows[idx[start + k]].value("id", std::string()) + ": " + e.what());
        }
      }
    }
  }
  const auto store = engine_.image_store();
  for (size_t i = start; i < end; ++i) {
    s.rows[idx[i]]["image"] = store.put(s.image[idx[i]], s.image_ext[idx[i]]);
    std::string().swap(s.image[idx[i]]);
  }
  return std::move(*given);
}

// The target's rows staged in the ingest's transaction (hidden until the commit, so
// searches go on meanwhile); a document ingested again loses its current chunks
// everywhere (replaced ids in the target are overwritten by the staged rows).
void IngestRun::stage_rows(IngestTarget& t, std::vector<store::Record> batch) {
  const auto doc_field = t.schema.field_index("document_id");
  auto doc_of = [&](const store::Record& r) {
    if (doc_field)
      if (const auto* d = std::get_if<std::string>(&r.values[*doc_field])) return *d;
    return r.id;
  };
  std::vector<std::string> docs;
  std::set<std::string> new_ids, seen_docs;
  for (const auto& r : batch) {
    new_ids.insert(r.id);
    if (seen_docs.insert(doc_of(r)).second) docs.push_back(doc_of(r));
  }
  auto participant = [&](store::Collection* c) {
    if (std::find(written_.begin(), written_.end(), c) == written_.end()) written_.push_back(c);
  };
  std::unique_lock writer(engine_.write_mu_);
  if (!t.coll) {
    std::unique_lock state(engine_.state_mu_);
    t.coll = &engine_.catalog_->create(t.schema);
    created_.push_back(t.collection);
  }
  participant(t.coll);
  std::vector<std::pair<store::Collection*, std::vector<std::string>>> stale;
  if (doc_field) {
    for (auto* c : engine_.document_collections()) {
      std::vector<std::string> ids;
      for (auto& [id, doc] : c->ids_where_in("document_id", docs))
        if (c != t.coll || !new_ids.count(id)) ids.push_back(id);
      if (!ids.empty()) stale.emplace_back(c, std::move(ids));
    }
  }
  // A scoped caller may overwrite or delete only rows of its own KBs, whatever
  // their document: a row id or a stale chunk of another KB is refused.
  if (scoped_) {
    auto check = [&](store::Collection* c, const std::string& id) {
      auto row = c->get(id);
      if (!row) return;
      const auto kb = c->schema().field_index("kb_name");
      const auto* v = kb ? std::get_if<std::string>(&row->values[*kb]) : nullptr;
      if (!opts_.scope.allows(v ? *v : std::string()))
        fail(ErrorCode::permission_denied, "row '" + id + "' belongs to a knowledge base this token may not write");
    };
    for (const auto& r : batch) check(t.coll, r.id);
    for (auto& [c, ids] : stale)
      for (const auto& id : ids) check(c, id);
  }
  std::vector<std::string> own_stale;
  for (auto& [c, ids] : stale) {
    if (c == t.coll) {
      own_stale = std::move(ids);
    } else {
      participant(c);
      c->stage(txn_, ids, {});
    }
  }
  t.coll->stage(txn_, own_stale, std::move(batch));
}

}  // namespace eagle::app
