// `eagle reembed`: a collection's vectors rebuilt with an encoder as configured now.
// The rows are read in pages from the live collection (which keeps serving), embedded
// and written to a hidden replacement (Catalog::begin_rebuild); Catalog::finish_rebuild
// swaps it in, atomically on disk and in memory.
#include <algorithm>
#include <memory>
#include <mutex>
#include <shared_mutex>

#include <spdlog/spdlog.h>

#include "eagle/app/engine.h"
#include "eagle/core/error.h"

namespace eagle::app {

namespace {
// Rows read, embedded and written per step (and per log record of the rebuild).
constexpr size_t kReembedPage = 256;
}  // namespace

ReembedReport Engine::reembed(const std::string& collection, const std::string& label, const ProgressFn& progress) {
  require_writer("re-embed a collection");
  // Ingests and compactions (which renumber rows) wait for the whole rebuild; searches
  // go on against the old vectors, and deletes go on too: the rows they removed
  // meanwhile are removed from the rebuilt collection before the swap, which runs
  // with the writer lock held.
  std::lock_guard ingesting(ingest_mu_);
  store::Collection* old = catalog_->find(collection);
  if (!old) {
    std::string names;
    for (const auto& n : catalog_->list()) names += (names.empty() ? "" : ", ") + n;
    fail(ErrorCode::not_found,
         "no collection named '" + collection + "' (the store has: " + (names.empty() ? "none" : names) + ")");
  }
  const CollectionSchema& schema = old->schema();
  ReembedReport rep;
  rep.collection = collection;
  rep.encoder_before = schema.vector.encoder;
  rep.identity_before = schema.vector.encoder_identity;
  rep.dim_before = schema.vector.dim;
  rep.encoder = !label.empty()                 ? label
                : !schema.vector.encoder.empty() ? schema.vector.encoder
                                                 : default_encoder(collection);
  encode::Encoder& enc = encoders_.encoder(rep.encoder);
  const auto& info = enc.info();
  rep.identity = info.identity;
  rep.dim = info.dim;

  // A compound collection embeds each compound's SMILES; a visual collection each
  // tile's kept image; a chunk collection its text.
  const auto smiles_field = schema.field_index("smiles");
  const auto image_field = schema.field_index("image");
  const auto want = smiles_field  ? encode::Modality::molecule
                    : image_field ? encode::Modality::image
                                  : encode::Modality::text;
  if (info.modality != want)
    fail(ErrorCode::invalid_argument,
         "encoder '" + rep.encoder + "' does not embed " +
             (smiles_field ? "molecules" : image_field ? "images" : "text") + "; collection '" + collection + "' holds " +
             (smiles_field ? "compounds (embedded from their SMILES)" : image_field ? "image tiles" : "text"));
  const auto images = image_store();
  if (rep.encoder == rep.encoder_before && !rep.identity_before.empty() &&
      encode::same_identity(rep.identity_before, rep.identity) && rep.dim == rep.dim_before) {
    rep.unchanged = true;
    return rep;
  }

  CollectionSchema rebuilt = schema;
  rebuilt.vector.dim = info.dim;
  rebuilt.vector.metric = info.metric;
  rebuilt.vector.encoder = rep.encoder;
  rebuilt.vector.encoder_identity = info.identity;
  if (info.metric == Metric::tanimoto) rebuilt.vector.index = VectorIndexKind::flat;  // exact only
  rebuilt.validate();

  const size_t total = old->count();
  const uint64_t deletes_at_start = deletes_.load();  // as Engine::ingest: did a delete come meanwhile?
  auto built = catalog_->begin_rebuild(rebuilt);
  try {
    size_t from = 0;
    for (;;) {
      auto page = old->scan(from, kReembedPage, &from);
      if (page.empty()) break;
      std::vector<std::string> inputs;
      inputs.reserve(page.size());
      for (const auto& r : page) {
        if (image_field) {
          const auto* name = std::get_if<std::string>(&r.values[*image_field]);
          if (!name || name->empty())
            fail(ErrorCode::invalid_argument, "tile '" + r.id + "' of collection '" + collection + "' keeps no image");
          inputs.push_back(images.get(*name));
          continue;
        }
        if (!smiles_field) {
          inputs.push_back(r.text);
          continue;
        }
        const auto* smiles = std::get_if<std::string>(&r.values[*smiles_field]);
        if (!smiles || smiles->empty())
          fail(ErrorCode::invalid_argument, "compound '" + r.id + "' of collection '" + collection +
                                                "' has no SMILES to embed");
        inputs.push_back(*smiles);
      }
      const size_t per_call = std::max<size_t>(1, std::min<size_t>(info.max_batch, kReembedPage));
      for (size_t start = 0; start < page.size(); start += per_call) {
        const size_t end = std::min(page.size(), start + per_call);
        std::vector<std::string> texts(std::make_move_iterator(inputs.begin() + static_cast<std::ptrdiff_t>(start)),
                                       std::make_move_iterator(inputs.begin() + static_cast<std::ptrdiff_t>(end)));
        std::vector<encode::Embedding> vecs;
        if (image_field) {
          const std::vector<std::string_view> views(texts.begin(), texts.end());
          vecs = enc.encode_images(views);
        } else {
          vecs = enc.encode(texts, encode::EncodeMode::document);
        }
        if (vecs.size() != texts.size())
          fail(ErrorCode::internal, "encoder '" + rep.encoder + "' returned " + std::to_string(vecs.size()) +
                                        " vectors for " + std::to_string(texts.size()) + " inputs");
        for (size_t i = start; i < end; ++i) page[i].vector = std::move(vecs[i - start]);
      }
      rep.rows += page.size();
      built->upsert(std::move(page));  // validated: a vector of the wrong dimension is refused
      if (progress) progress(rep.rows, std::max(total, rep.rows));
    }
  } catch (...) {
    catalog_->abort_rebuild(std::move(built));
    throw;
  }
  std::lock_guard writer(write_mu_);
  try {
    // Rows deleted since they were read (deletes do not wait for the embedding); the
    // walk over every row only when a delete came.
    std::vector<std::string> gone;
    size_t from = 0;
    if (deletes_.load() != deletes_at_start)
      for (auto page = built->scan(0, 4096, &from); !page.empty(); page = built->scan(from, 4096, &from))
        for (const auto& r : page)
          if (!old->get(r.id)) gone.push_back(r.id);
    if (!gone.empty()) {
      built->remove(gone, /*auto_checkpoint=*/false);
      rep.rows -= gone.size();
    }
  } catch (...) {
    catalog_->abort_rebuild(std::move(built));
    throw;
  }
  catalog_->finish_rebuild(std::move(built), [&](const std::function<bool()>& swap) {
    std::unique_lock state(state_mu_);
    if (!swap()) return;
    // Plans on this collection now use the label its vectors came from.
    if (orchestrator_ && collection == orchestrator_->config().core_text_collection)
      orchestrator_->set_core_text_encoder(rep.encoder);
    if (orchestrator_ && collection == orchestrator_->config().core_visual_collection)
      orchestrator_->set_core_visual_encoder(rep.encoder);
    for (auto& instance : instances_)
      if (instance) instance->set_collection_encoder(collection, rep.encoder);
  });
  spdlog::debug("re-embedded collection '{}': {} rows, encoder '{}' ({}) -> '{}' ({})", collection, rep.rows,
               rep.encoder_before, rep.identity_before, rep.encoder, rep.identity);
  return rep;
}

}  // namespace eagle::app
