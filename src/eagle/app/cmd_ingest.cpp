// `eagle ingest`: documents into the store (it takes the store's write lock), with a
// progress line and a summary of what each collection now holds.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "eagle/app/cli.h"
#include "eagle/app/engine.h"
#include "eagle/app/progress.h"

namespace eagle::app {
namespace {

struct IngestFlags {
  std::vector<std::string> inputs;
  std::string format = "auto";
  bool skip_bad = false;
  bool repair_utf8 = false;
  bool reindex = false;
  std::string collection, encoder, kb_name, plugin_namespace = "core";
};

int cmd_ingest(const GlobalFlags& g, const std::vector<std::string>& inputs, const IngestFlags& f) {
  auto cfg = resolve_config(g);
  auto t0 = std::chrono::steady_clock::now();
  eagle::app::Engine engine(cfg, eagle::app::StoreAccess::write, "eagle ingest");
  eagle::app::IngestOptions o;
  o.format = f.format;
  o.skip_bad = f.skip_bad || cfg.skip_bad;
  o.repair_utf8 = f.repair_utf8 || cfg.repair_utf8;
  o.collection = f.collection;
  o.encoder = f.encoder;
  o.kb_name = f.kb_name;
  o.plugin_namespace = f.plugin_namespace;
  o.reindex = f.reindex;
  eagle::app::Progress progress("ingesting");
  auto rep = engine.ingest(inputs, o, [&](size_t done, size_t total) { progress.update(done, total, "records"); });
  progress.finish();
  for (const auto& s : rep.skipped) std::fprintf(stderr, "skipped %s\n", s.c_str());
  for (const auto& s : rep.unchanged) std::fprintf(stderr, "unchanged %s\n", s.c_str());
  const std::string unchanged =
      rep.unchanged.empty() ? "" : ", " + std::to_string(rep.unchanged.size()) + " files unchanged (--reindex reads them)";
  if (rep.rows == 0) {  // every input skipped, unchanged or empty: no collection was written
    std::printf("nothing ingested (%zu skipped%s) in %.2f s\n", rep.skipped.size(), unchanged.c_str(),
                seconds_since(t0));
    return 0;
  }
  std::printf("ingested %zu documents as %zu rows (%zu skipped%s) into collection %s (encoder %s) in %.2f s",
              rep.documents, rep.rows, rep.skipped.size(), unchanged.c_str(), rep.collection.c_str(),
              rep.encoder.c_str(), seconds_since(t0));
  // A slot left to a stand-in says so: its vectors are not the model the slot is named after.
  for (const auto& [collection, label] : rep.encoders_used)
    if (const auto by = eagle::app::stand_in_of(cfg, label); !by.empty())
      std::fprintf(stderr, "note: %s ran on %s (a stand-in: set encoders.%s to the real model)\n", label.c_str(),
                   by.c_str(), label.c_str());
  std::string holds;
  for (const auto& [name, n] : rep.per_collection)
    holds += (holds.empty() ? "" : ", ") + name + " +" + std::to_string(n) + " = " +
             std::to_string(engine.catalog().get(name).count()) + " rows";
  std::printf("%s%s\n", holds.empty() ? "" : "; ", holds.c_str());
  return 0;
}

}  // namespace

void add_ingest_command(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out) {
  auto f = std::make_shared<IngestFlags>();
  auto* ingest = app.add_subcommand("ingest", "add documents to the store (BEIR folder, JSONL, Markdown/text, SPL labels, JATS/PubMed XML, PDF, HTML, compound CSV)");
  ingest->add_option("inputs", f->inputs,
                     "files or folders: BEIR folder (with corpus.jsonl), JSONL, .txt, Markdown, SPL label .xml, JATS .nxml/.xml, "
                     "PubMed .xml, .pdf, .html (a folder's files each by their kind), or a compound SMILES CSV")
      ->required();
  ingest->add_option("--format", f->format, "auto (by extension and XML root element, file by file), beir, jsonl, folder, spl, jats, pubmed, pdf, html, markdown or compounds")->capture_default_str();
  ingest->add_flag("--reindex", f->reindex,
                   "read structured files (SPL, JATS, PubMed, PDF, HTML, Markdown) again even when their bytes were ingested "
                   "into this KB and namespace before (by default such a file is reported unchanged and skipped)");
  ingest->add_flag("--skip-bad", f->skip_bad,
                   "skip malformed records (each reported with file and line) instead of stopping; "
                   "without it a bad record stops the ingest and the store is left unchanged");
  ingest->add_flag("--repair-utf8", f->repair_utf8,
                   "replace invalid UTF-8 in the input with U+FFFD (ingest.repair_utf8); without it invalid UTF-8 "
                   "is an error naming the file and byte offset");
  ingest->add_option("--collection", f->collection,
                     "target collection (default: eagle_text; spl: biomed.text_biomed_collection; compounds: "
                     "biomed.chemical_collection); created on first use");
  ingest->add_option("--encoder", f->encoder,
                     "encoder label (default: the collection's recorded encoder, else its slot's default)");
  ingest->add_option("--kb", f->kb_name, "knowledge-base name stamped on every row (kb_name)");
  ingest->add_option("--namespace", f->plugin_namespace,
                     "plugin namespace of the documents in the registry (core or biomed)")
      ->capture_default_str();
  out.push_back({ingest, [&g, f] { return cmd_ingest(g, f->inputs, *f); }});
}

}  // namespace eagle::app
