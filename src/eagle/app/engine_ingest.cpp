// Engine::ingest: every input format through one streamed, all-or-nothing write. The
// stages are in app/ingest/ (run.h); the plugins add their readers, formats and
// routing rule (extension.h).
#include "eagle/app/engine.h"
#include "eagle/app/ingest/run.h"
#include "eagle/ingest/formats.h"

namespace eagle::app {

IngestReport Engine::ingest(const std::vector<std::string>& inputs, const IngestOptions& opts,
                            const ProgressFn& progress) {
  require_writer("ingest");
  // Ingests run one at a time (what exists and the recorded encoders stay as read
  // here). Deletes and tag changes interleave: each slice's staging takes the writer
  // lock, so a DELETE waits for one slice, not for the whole ingest.
  std::lock_guard ingesting(ingest_mu_);
  IngestRun run(*this, opts, ingest_extensions(opts.plugin_namespace), progress);
  return run.run(inputs);
}

IngestExtensions Engine::ingest_extensions(const std::string& ns) {
  IngestExtensions ext;
  for (const auto* p : plugin::builtin_plugins()) p->add_ingest_extensions(*this, ns, ext);
  return ext;
}

std::vector<std::string> Engine::ingest_formats() {
  const auto ext = ingest_extensions("core");
  std::vector<std::string> out = {"auto", "beir", "jsonl", "folder"};
  for (const auto& r : ext.readers) out.emplace_back(ingest::file_kind_name(r.kind));
  for (const char* k : {"jats", "pubmed", "pdf", "html", "markdown"}) out.emplace_back(k);
  for (const auto& f : ext.formats) out.push_back(f.name);
  return out;
}

encode::Modality Engine::ingest_modality(const std::string& format) {
  const auto ext = ingest_extensions("core");
  const auto* f = ext.format_named(format);
  return f ? f->modality : encode::Modality::text;
}

CollectionSchema Engine::text_schema(const std::string& collection, const encode::EncoderInfo& encoder) const {
  return chunk_schema(collection, encoder.dim, encoder.metric, plugin::plugin_chunk_fields());
}

IngestRoute Engine::core_text_route() const {
  return {base_pipeline_.core_text_collection, cfg_.pipeline.text_encoder};
}

IngestRoute Engine::visual_route() const { return {base_pipeline_.core_visual_collection, cfg_.visual.encoder}; }

}  // namespace eagle::app
