// The biomedical plugin's ingest extensions: drug labels (SPL), compound tables and
// the document profile routing (TDR, docs/glossary.md).
#include "eagle/app/ingest/run.h"
#include "eagle/biomed/app/biomed_app.h"
#include "eagle/biomed/ingest/chunker.h"
#include "eagle/biomed/ingest/compound_cards.h"
#include "eagle/biomed/ingest/doc_profile.h"
#include "eagle/biomed/ingest/spl.h"
#include "eagle/core/error.h"
#include "eagle/core/utf8.h"
#include "eagle/encode/chem/chem.h"
#include "eagle/encode/chem/chem_encoder.h"

namespace eagle::biomed {
namespace fs = std::filesystem;
using app::IngestExtensions;
using app::IngestRoute;
using app::IngestRun;

namespace {

IngestRoute route_of(const CollectionEncoder& slot) { return {slot.collection, slot.encoder}; }

// One drug label (SPL): its sections, summaries and brand names. Its rows go to the
// biomedical text slot whatever the namespace's routing says.
void read_label(IngestRun& run, const fs::path& file, const IngestRoute& label_route) {
  const auto& opts = run.options();
  SplLabel label;
  try {
    label = parse_spl_file(file);
  } catch (const Error& e) {
    if (!opts.skip_bad) throw;
    run.skip(e.what());
    return;
  }
  label.file_name = repair_utf8(label.file_name);  // shown, not matched
  label.source_uri = repair_utf8(label.source_uri);
  ChunkOptions co;
  co.kb_name = opts.kb_name;
  auto chunks = chunk_label(label, co);
  if (chunks.empty()) {
    run.skip(file.string() + ": no section text (indexing document?)");
    return;
  }
  auto r = run.record_for(label.document_id);
  // The name carries every drug name of the label so the entity supplement's
  // registry lookup (name ILIKE %term%) finds it by brand or generic name.
  r.name = label.display_title();
  for (const auto& n : label.product_names) r.name += " | " + n;
  for (const auto& n : label.generic_names) r.name += " | " + n;
  // Every label records its pairs (an empty list clears a re-ingested label's).
  auto& brands = run.slice().brands[label.document_id];
  for (const auto& p : label.product_names)
    for (const auto& g : label.generic_names) brands.push_back({p, g});
  r.file_name = label.file_name;
  r.document_name = label.display_title();
  r.source_type = "label";
  if (label.year() > 0) r.year = label.year();
  r.source_uri = label.source_uri;
  run.add_document(std::move(r));
  for (auto& c : chunks) {
    std::string text = c.value("text", std::string());
    run.slice().add(std::move(c), std::move(text), label_route);
  }
  run.slice_full();
}

// A compound table (CSV): a card per compound with a structure RDKit reads.
void read_compounds(IngestRun& run, const std::string& in) {
  CompoundCardOptions co;
  co.kb_name = run.options().kb_name;
  for (auto& card : read_compound_cards_file(in, co)) {
    const std::string id = card.row.value("id", std::string());
    if (card.smiles.empty()) {
      run.skip(in + ": " + id + " has no SMILES");
      continue;
    }
    try {
      encode::chem::Molecule::from_smiles(card.smiles);
    } catch (const Error& e) {
      // Compound tables carry structures RDKit refuses; counted and reported, never fatal.
      run.skip(in + ": " + id + " " + card.row.value("document_name", std::string()) + ": " + e.what());
      continue;
    }
    auto r = run.record_for(id);
    r.name = card.row.value("document_name", id);
    r.document_name = r.name;
    r.file_name = card.row.value("file_name", std::string());
    r.source_type = "compound";
    run.add_document(std::move(r));
    card.row["name"] = card.row.value("document_name", id);
    card.row["smiles"] = card.smiles;
    run.slice().add(std::move(card.row), card.smiles);
    run.slice_full();
  }
}

}  // namespace

void add_biomed_ingest_extensions(app::Engine& engine, const std::string& plugin_namespace, IngestExtensions& ext) {
  const app::Config& cfg = engine.config();
  const auto& bo = biomed_settings(cfg).options;
  const IngestRoute text_biomed = route_of(bo.text_biomed);
  ext.readers.push_back({ingest::FileKind::spl, "an SPL label", text_biomed,
                         [text_biomed](IngestRun& run, const fs::path& file) { read_label(run, file, text_biomed); }});
  ext.formats.push_back({"compounds", ".csv", encode::Modality::molecule, route_of(bo.chemical),
                         [](const std::string& collection, const encode::EncoderInfo&) {
                           // The reranks read a card's primary_drugs as a chunk's (entity
                           // boost, cross-drug penalty).
                           return encode::compound_schema(collection, {},
                                                          {{"primary_drugs", FieldType::string_list, true}});
                         },
                         read_compounds});
  // TDR (doc_profile.py): with the biomed namespace and no explicit collection,
  // biomedical text goes to the biomedical collection and its encoder, general text
  // (corporate memos, licences) to the core collection, instead of through PubMedBERT.
  if (plugin_namespace != "biomed" || !bo.document_profile_routing) return;
  const IngestRoute core{bo.core_text.collection, cfg.pipeline.text_encoder};
  app::DocumentRouting routing;
  const EntityKnowledge& kb = biomed_instance(engine).knowledge();
  ProfileOptions po;
  po.min_density = bo.profile_min_density;
  routing.route = [&kb, po, text_biomed, core](std::string_view text) {
    const auto p = classify_document_profile(
        text, [&](std::string_view t) { return kb.match_entities(t).size(); }, po);
    return p.profile == DocumentProfile::biomedical ? text_biomed : core;
  };
  // Unit input: the input is biomedical when at least half of its first
  // profile_sample_documents readable documents are.
  routing.input_sample = bo.document_profile_unit == "input" ? bo.profile_sample_documents : 0;
  routing.route_input = [text_biomed, core](const std::vector<IngestRoute>& sample) {
    size_t biomedical = 0;
    for (const auto& r : sample) biomedical += r == text_biomed;
    return 2 * biomedical >= sample.size() && !sample.empty() ? text_biomed : core;
  };
  ext.routing = std::move(routing);
}

}  // namespace eagle::biomed
