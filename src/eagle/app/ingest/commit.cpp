// The commit stage: every staged row appears at once in every collection, then the
// registry follows in batches (run.h).
#include <optional>

#include <spdlog/spdlog.h>

#include "eagle/app/ingest/run.h"

namespace eagle::app {

void IngestRun::commit() {
  // The commit records are durable before searches are held back for the swap.
  std::unique_lock writer(engine_.write_mu_);
  engine_.catalog_->commit(txn_, written_, [&](const std::function<bool()>& publish) {
    std::unique_lock state(engine_.state_mu_);
    publish();
  });
}

void IngestRun::abort() noexcept {
  for (auto* c : written_) c->abort(txn_);
  for (const auto& name : created_) {
    try {
      std::unique_lock state(engine_.state_mu_);
      if (engine_.catalog_->get(name).count() == 0) engine_.catalog_->drop(name);
    } catch (const std::exception& e) {
      spdlog::warn("could not drop collection '{}' made by a failed ingest: {}", name, e.what());
    }
  }
}

void IngestRun::finish_report() {
  rep_.collection.clear();
  for (const auto& t : targets_) {
    if (!t.rows) continue;
    rep_.collection += (rep_.collection.empty() ? "" : " + ") + t.collection;
    rep_.encoder += (rep_.encoder.empty() ? "" : " + ") + t.encoder;
    rep_.per_collection.push_back({t.collection, t.rows});
    rep_.encoders_used.push_back({t.collection, t.encoder});
  }
}

// The registry follows the collection writes. A document deleted while this ingest
// ran (a DELETE between its commit and here) gets no registry row back.
void IngestRun::write_registry() {
  auto& registry = engine_.registry();
  const bool deleted_meanwhile = engine_.deletes_.load() != deletes_at_start_;
  bool brands_written = false;
  auto write_row = [&](registry::DocumentRecord& d, const std::vector<registry::BrandName>* brands,
                       const std::vector<std::string>* tags, const std::string& source_sha256) {
    if (deleted_meanwhile) {
      bool has_rows = false;
      for (auto* c : engine_.document_collections())
        has_rows = has_rows || !c->ids_where_equals("document_id", d.document_id).empty();
      if (!has_rows) return;
    }
    if (auto old = registry.get(d.document_id))
      for (const auto& c : old->collections_used)
        if (engine_.catalog_->exists(c) && !engine_.catalog_->get(c).ids_where_equals("document_id", d.document_id).empty())
          add_collection(d, c);
    registry.upsert(d);
    ++engine_.writes_;
    if (!source_sha256.empty()) registry.set_source_hash(d.document_id, source_sha256);
    if (tags) registry.set_keywords(d.document_id, d.plugin_namespace, *tags);
    if (brands) {
      registry.set_brands(d.document_id, *brands);
      brands_written = true;
    }
  };
  // Documents go to the registry kRegistryBatch at a time, each group one database
  // commit (one commit a document cost a third of a large ingest's time); the writer
  // lock is let go between groups. An error unwinds through the batch, which keeps
  // the rows written before it (WriteBatch).
  std::unique_lock<std::mutex> registry_writer;
  std::optional<registry::DocumentRegistry::WriteBatch> registry_batch;
  auto end_batch = [&] {
    registry_batch->commit();
    registry_batch.reset();
    registry_writer.unlock();
  };
  size_t batched = 0;
  spill_.for_each([&](registry::DocumentRecord& d, const std::vector<registry::BrandName>* brands,
                      const std::vector<std::string>* tags, const std::string& source_sha256) {
    if (!registry_batch) {
      registry_writer = std::unique_lock(engine_.write_mu_);
      registry_batch.emplace(registry);
    }
    write_row(d, brands, tags, source_sha256);
    if (++batched % kRegistryBatch == 0) end_batch();
  });
  if (registry_batch) end_batch();
  // The labels' brand names are known to the next search at once.
  if (brands_written) engine_.plugins_after_ingest();
}

}  // namespace eagle::app
