// IngestRun: the set-up of an ingest and the order of its stages (run.h).
#include "eagle/app/ingest/run.h"

#include <algorithm>

#include "eagle/core/error.h"

namespace eagle::app {
namespace fs = std::filesystem;

const FileReader* IngestExtensions::reader_of(ingest::FileKind kind) const {
  for (const auto& r : readers)
    if (r.kind == kind) return &r;
  return nullptr;
}

const InputFormat* IngestExtensions::format_named(const std::string& name) const {
  for (const auto& f : formats)
    if (f.name == name) return &f;
  return nullptr;
}

IngestRun::IngestRun(Engine& engine, const IngestOptions& opts, IngestExtensions extensions, const ProgressFn& progress)
    : engine_(engine), opts_(opts), ext_(std::move(extensions)), progress_(progress), txn_(store::new_txn_id()) {
  hctx_.plugin_namespace = opts.plugin_namespace;
}

const Config& IngestRun::config() const { return engine_.config(); }

registry::DocumentRecord IngestRun::record_for(const std::string& id) const {
  registry::DocumentRecord r;
  r.document_id = id;
  r.kb_name = opts_.kb_name;
  r.plugin_namespace = opts_.plugin_namespace;
  return r;
}

void IngestRun::add_document(registry::DocumentRecord r) {
  const std::string id = r.document_id;
  slice_.documents.push_back(std::move(r));
  if (!current_sha256_.empty()) slice_.source_sha256[id] = current_sha256_;
  read_from_file_.push_back(id);
}

void IngestRun::slice_full() {
  if (slice_.rows.size() >= commit_rows_ || slice_.image_bytes >= kSliceImageBytes) stage_slice(slice_);
}

void IngestRun::report_progress() {
  if (!progress_) return;
  // The total is estimated from the bytes read so far (exact once the input is read).
  const size_t estimate =
      bytes_read_ && total_bytes_ > bytes_read_
          ? static_cast<size_t>(static_cast<double>(rows_done_) * static_cast<double>(total_bytes_) /
                                static_cast<double>(bytes_read_))
          : rows_done_;
  progress_(rows_done_, std::max(estimate, rows_done_));
}

IngestReport IngestRun::run(const std::vector<std::string>& inputs) {
  const Config& cfg = config();
  deletes_at_start_ = engine_.deletes_.load();
  // --format auto: an input with a plugin format's extension (a .csv compound table)
  // makes the ingest that format; anything else is read file by file, each by its
  // own kind (ingest/formats.h).
  format_ = opts_.format;
  if (format_ == "auto")
    for (const auto& in : inputs)
      for (const auto& f : ext_.formats)
        if (!f.extension.empty() && fs::path(in).extension() == f.extension) format_ = f.name;
  input_format_ = ext_.format_named(format_);
  const FileReader* forced_reader =
      input_format_ || format_ == "auto" ? nullptr : ext_.reader_of(ingest::file_kind_from_name(format_));
  // Plain text goes to the core text collection with the core pipeline's encoder
  // (the one its default route queries with).
  slot_ = input_format_                                    ? input_format_->default_route
          : forced_reader && forced_reader->default_route ? *forced_reader->default_route
                                                          : engine_.core_text_route();
  default_collection_ = opts_.collection.empty() ? slot_.collection : opts_.collection;
  rep_.collection = default_collection_;
  if (!valid_collection_name(default_collection_))
    fail(ErrorCode::invalid_argument, "invalid collection name '" + default_collection_ + "'");
  // A scoped caller (a token limited to KBs) may write only its KBs.
  if (!opts_.scope.kb_names.empty() && !opts_.scope.allows(opts_.kb_name))
    fail(ErrorCode::permission_denied, "this token may not write knowledge base '" + opts_.kb_name + "'");
  // The namespace's routing rule (TDR for biomed) decides text without an explicit
  // collection or encoder; a format with its own slot goes there.
  routing_ = ext_.routing && !input_format_ && !forced_reader && opts_.collection.empty() && opts_.encoder.empty();
  commit_rows_ = std::max<size_t>(1, cfg.ingest_commit_rows);
  for (const auto& t : cfg.auth_tokens)
    if (t.contains("kb_names"))
      for (const auto& k : t["kb_names"]) token_kbs_.insert(k.get<std::string>());
  scoped_ = !opts_.scope.kb_names.empty();
  tile_options_.page_dpi = cfg.visual.page_dpi;
  tile_options_.jpeg_quality = cfg.visual.jpeg_quality;
  tile_options_.max_text_chars = cfg.visual.tile_text_chars;
  article_options_.kb_name = opts_.kb_name;
  article_options_.max_chars = cfg.ingest_chunk_chars;
  article_options_.summary_chars = cfg.ingest_summary_chars;

  try {
    if (input_format_) read_format(*input_format_, inputs);
    else read_inputs(inputs);
    stage_slice(slice_);
    if (rows_done_ == 0) return rep_;  // nothing was staged, nothing created
    commit();
  } catch (...) {
    abort();
    throw;
  }
  finish_report();
  // A checkpoint that came due is written with searches running again.
  for (auto* c : written_) c->checkpoint_if_due();
  write_registry();
  // Fast opens: the next process loads a segment instead of replaying the log. The
  // segment is written while searches go on.
  if (cfg.checkpoint_after_ingest)
    for (auto* c : written_) c->checkpoint();
  rep_.documents = spill_.count();
  rep_.rows = rows_done_;
  if (progress_) progress_(rows_done_, rows_done_);
  return rep_;
}

}  // namespace eagle::app
