// Engine::ingest: every input format through one streamed, all-or-nothing write. The
// stages are in app/ingest/ (run.h); the plugins add their readers, formats and
// routing rule (extension.h).
#include "eagle/app/engine.h"
#include "eagle/app/ingest/biomed_readers.h"
#include "eagle/app/ingest/run.h"

namespace eagle::app {

IngestReport Engine::ingest(const std::vector<std::string>& inputs, const IngestOptions& opts,
                            const ProgressFn& progress) {
  require_writer("ingest");
  // Ingests run one at a time (what exists and the recorded encoders stay as read
  // here). Deletes and tag changes interleave: each slice's staging takes the writer
  // lock, so a DELETE waits for one slice, not for the whole ingest.
  std::lock_guard ingesting(ingest_mu_);
  IngestExtensions ext;
  add_biomed_ingest_extensions(*this, opts.plugin_namespace, ext);
  IngestRun run(*this, opts, std::move(ext), progress);
  return run.run(inputs);
}

IngestRoute Engine::core_text_route() const {
  return {cfg_.biomed.options.core_text.collection, cfg_.pipeline.text_encoder};
}

IngestRoute Engine::visual_route() const { return {cfg_.biomed.options.visual.collection, cfg_.visual.encoder}; }

}  // namespace eagle::app
