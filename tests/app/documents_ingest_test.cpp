// Document formats through the path a user takes: `eagle ingest ../shared/data/docs`
// with --format auto reads every JATS, PubMed and PDF file, keeps their metadata
// (MeSH headings become the registry's keywords), and questions about a table's
// content find the table, or a paragraph that cites it with the table pulled in by
// graph expansion; a section summary drills down to its chunks.
#include <gtest/gtest.h>
#include "support/build_paths.h"
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "eagle/app/engine.h"
#include "eagle/core/error.h"
#include "shared_data.h"
#include "support/temp_engine.h"

namespace fs = std::filesystem;
using namespace eagle;
using namespace eagle::app;
using nlohmann::json;

namespace {

struct DocsStore : eagle::test_support::TempEngine {
  DocsStore() : TempEngine("documents") {}
  search::RetrievalResponse search(const std::string& query, size_t k = 5) { return TempEngine::search(query, k, true); }
};

fs::path docs() { return eagle::testing::shared_data() / "docs"; }

// The hit whose id starts with `prefix` and has chunk `type`, or null.
const search::ScoredHit* find_hit(const search::RetrievalResponse& resp, const std::string& prefix,
                                  const std::string& type) {
  for (const auto& h : resp.hits)
    if (h.id.rfind(prefix, 0) == 0 && h.field("type") == type) return &h;
  return nullptr;
}

std::string explain_of(const search::ScoredHit& h) { return h.explain.legs.dump(); }

}  // namespace

TEST(DocumentsIngest, TheDocsFolderWithFormatAutoAnswersQuestionsFromTablesAndSections) {
  ASSERT_TRUE(fs::is_directory(docs())) << docs();
  DocsStore s;
  const auto rep = s.engine->ingest({docs().string()}, {});
  EXPECT_EQ(rep.documents, 17u);  // 8 JATS, 8 PDF, 1 PubMed article
  EXPECT_TRUE(rep.skipped.empty());
  const size_t rows = rep.rows;

  // The PubMed article: its PMID is its id, its MeSH headings its tags.
  auto pubmed = s.engine->document("29768149");
  ASSERT_TRUE(pubmed);
  EXPECT_EQ(pubmed->record.document_name, "Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma.");
  EXPECT_EQ(pubmed->record.source_type, "abstract");
  EXPECT_EQ(pubmed->record.year, 2018);
  EXPECT_NE(std::find(pubmed->tags.begin(), pubmed->tags.end(), "Asthma"), pubmed->tags.end());
  // A JATS article: one record, its chunks share its id and carry their structure.
  auto jats = s.engine->document("jats/pone.0046493.nxml");
  ASSERT_TRUE(jats);
  EXPECT_EQ(jats->record.year, 2012);
  size_t tables = 0, summaries = 0;
  for (const auto& c : jats->chunks) {
    EXPECT_EQ(c.metadata.value("document_id", ""), "jats/pone.0046493.nxml");
    tables += c.metadata.value("type", "") == "table";
    summaries += c.metadata.value("type", "") == "section_summary";
  }
  EXPECT_EQ(tables, 3u);
  EXPECT_GT(summaries, 5u);
  // A PDF: every chunk has its page.
  auto pdf = s.engine->document("pdf/vespa-peerj.pdf");
  ASSERT_TRUE(pdf);
  for (const auto& c : pdf->chunks) EXPECT_TRUE(c.metadata.contains("page")) << c.id;

  // A question about a table's content (JATS): the table itself.
  auto seroprevalence = s.search("RVF seroprevalence in sheep and goats in 2010 by IgG ELISA");
  EXPECT_TRUE(find_hit(seroprevalence, "jats/pntd.0002065.nxml#", "table"));
  // About a PDF table's content: VESPA's Table 1 first.
  auto phases = s.search("which file formats does each phase of VESPA support");
  ASSERT_FALSE(phases.hits.empty());
  EXPECT_EQ(phases.hits[0].field("type"), "table");
  EXPECT_NE(phases.hits[0].text.find("Table 1. Overview of the 5 Phases"), std::string::npos);
  // A paragraph that cites a table brings the table along by graph expansion.
  auto inhibition = s.search("Inhibition constants of MmPPOX and THL apparent Ki", 10);
  bool expanded_table_or_figure = false;
  for (const auto& h : inhibition.hits)
    if (explain_of(h).find("graph_expansion") != std::string::npos)
      expanded_table_or_figure = expanded_table_or_figure || h.field("type") == "table" || h.field("type") == "figure";
  EXPECT_TRUE(expanded_table_or_figure);
  // A section summary drills down to its section's chunks.
  auto section = s.search("Results / In vitro inhibition studies", 20);
  bool drilled = false;
  for (const auto& h : section.hits) drilled = drilled || explain_of(h).find("parent_doc_drilldown") != std::string::npos;
  EXPECT_TRUE(drilled);

  // Ingested again: every file has the bytes already ingested into this KB and
  // namespace, so each is reported unchanged and nothing is read (dedup by SHA-256).
  const auto again = s.engine->ingest({docs().string()}, {});
  EXPECT_EQ(again.documents, 0u);
  EXPECT_EQ(again.rows, 0u);
  ASSERT_EQ(again.unchanged.size(), 17u);
  EXPECT_NE(again.unchanged[0].find(": same bytes as document "), std::string::npos) << again.unchanged[0];
  // --reindex reads them again: the same documents replace themselves, nothing doubles.
  IngestOptions reindex;
  reindex.reindex = true;
  const auto reread = s.engine->ingest({docs().string()}, reindex);
  EXPECT_EQ(reread.documents, 17u);
  EXPECT_TRUE(reread.unchanged.empty());
  EXPECT_EQ(s.engine->document("jats/pone.0046493.nxml")->chunks.size(), jats->chunks.size());
  size_t live = 0;
  for (const auto& c : s.engine->collection_infos()) live += c.rows;
  EXPECT_EQ(live, rows);
  // Another KB is another set of documents: the same bytes are read for it... under the
  // same ids, which belong to the first KB's documents: they move (replace) there.
  IngestOptions other_kb;
  other_kb.kb_name = "kb2";
  const auto moved = s.engine->ingest({(docs() / "pubmed").string()}, other_kb);
  EXPECT_EQ(moved.documents, 1u);
  EXPECT_TRUE(moved.unchanged.empty());
}

TEST(DocumentsIngest, TheSameBytesTwiceInOneIngestAreReadOnceAndADeletedDocumentIsReadAgain) {
  DocsStore s;
  const fs::path a = s.dir / "a", b = s.dir / "b";
  fs::create_directories(a);
  fs::create_directories(b);
  fs::copy_file(docs() / "jats" / "pone.0000217.nxml", a / "paper.nxml");
  fs::copy_file(docs() / "jats" / "pone.0000217.nxml", b / "copy.nxml");
  const auto rep = s.engine->ingest({a.string(), b.string()}, {});
  EXPECT_EQ(rep.documents, 1u);
  ASSERT_EQ(rep.unchanged.size(), 1u);
  EXPECT_NE(rep.unchanged[0].find("copy.nxml: same bytes as document paper.nxml"), std::string::npos)
      << rep.unchanged[0];
  // A deleted document takes its source hash with it: its file is read again.
  EXPECT_GT(s.engine->delete_document("paper.nxml"), 0u);
  const auto again = s.engine->ingest({a.string()}, {});
  EXPECT_EQ(again.documents, 1u);
  EXPECT_TRUE(again.unchanged.empty());
}

TEST(DocumentsIngest, FormatErrorsNameTheFileAndSkipBadSkipsThem) {
  DocsStore s;
  const fs::path folder = s.dir / "in";
  fs::create_directories(folder);
  fs::copy_file(docs() / "pubmed" / "pubmed-29768149.xml", folder / "a.xml");
  std::ofstream(folder / "b.xml") << "<catalog><item/></catalog>";
  // Named on its own, an XML of no known vocabulary is an error naming it; found in a
  // folder (barcode lists beside labels), it is skipped and reported.
  try {
    s.engine->ingest({(folder / "b.xml").string()}, {});
    FAIL() << "an XML of no known vocabulary was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("JATS article or PubMed XML (root <catalog>)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(s.engine->document("29768149"));  // nothing written
  const auto rep = s.engine->ingest({folder.string()}, {});
  EXPECT_EQ(rep.documents, 1u);
  ASSERT_EQ(rep.skipped.size(), 1u);
  EXPECT_NE(rep.skipped[0].find("JATS article or PubMed XML (root <catalog>)"),
            std::string::npos);
  // A forced format that does not fit the file says what the file is.
  IngestOptions as_jats;
  as_jats.format = "jats";
  as_jats.reindex = true;  // its bytes are in the store already
  try {
    s.engine->ingest({(folder / "a.xml").string()}, as_jats);
    FAIL() << "PubMed XML read as JATS";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a.xml: not a JATS article (root <PubmedArticleSet>"), std::string::npos)
        << e.what();
  }
  IngestOptions unknown;
  unknown.format = "docx";
  EXPECT_THROW(s.engine->ingest({folder.string()}, unknown), Error);

  // A file name that is not UTF-8 (Latin-1 "café") names no document: an error naming
  // the file, skipped with --skip-bad, repaired to U+FFFD with --repair-utf8.
  const fs::path latin = s.dir / "latin";
  fs::create_directories(latin);
  std::ofstream(latin / "caf\xE9.md") << "# Caf\xC3\xA9\nzqlatin text\n";
  try {
    s.engine->ingest({latin.string()}, {});
    FAIL() << "a Latin-1 file name was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the file name is not valid UTF-8"), std::string::npos) << e.what();
  }
  IngestOptions skip;
  skip.skip_bad = true;
  EXPECT_EQ(s.engine->ingest({latin.string()}, skip).skipped.size(), 1u);
  IngestOptions repair;
  repair.repair_utf8 = true;
  EXPECT_EQ(s.engine->ingest({latin.string()}, repair).documents, 1u);
  EXPECT_TRUE(s.engine->document("caf\xEF\xBF\xBD.md"));
}

// A collection records what made its vectors; a label configured later as something
// else is refused at ingest and at query, naming what changed (not 0 hits with exit 0
// and a dimension warning).
TEST(EncoderRecords, AChangedEncoderIsRefusedNamingWhatChanged) {
  const fs::path dir = fs::temp_directory_path() / ("eagle_encoder_records_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path input = dir / "notes.md";
  std::ofstream(input) << "# Notes\nzqx insulin dosing in renal impairment\n";
  auto cfg = eagle::test_support::engine_test_config(dir / "store");
  std::string recorded;
  {
    Engine e(cfg, StoreAccess::write, "test");
    e.ingest({input.string()}, {});
    recorded = e.catalog().get("eagle_text").schema().vector.encoder_identity;
  }
  // The default text encoder's identity: its type, file, fingerprint and dimension.
  EXPECT_EQ(recorded.rfind("type=static path=", 0), 0u) << recorded;
  EXPECT_NE(recorded.find(" fingerprint="), std::string::npos);
  EXPECT_NE(recorded.find(" dim=100 metric=COSINE"), std::string::npos);

  // The label "glove" now names the same file with another SIF weight: other vectors.
  cfg.encoders = {{"glove", {{"type", "static"}, {"path", cfg.glove_file}, {"sif_a", 0.001}}}};
  Engine changed(cfg, StoreAccess::write, "test");
  IngestOptions again;
  again.reindex = true;  // the same bytes: read them anyway
  try {
    changed.ingest({input.string()}, again);
    FAIL() << "an ingest through a changed encoder was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::conflict);
    EXPECT_NE(std::string(e.what()).find("'glove' is now configured differently (sif_a: 1e-05 -> 0.001)"),
              std::string::npos)
        << e.what();
  }
  // A search's dense plan on that collection is refused the same way (audited), not
  // answered with vectors that do not compare.
  search::RetrievalRequest r;
  r.query = "zqx insulin";
  const auto resp = changed.search(r);
  const std::string audits = resp.metadata.value("audits", json::array()).dump();
  EXPECT_NE(audits.find("plan_failed"), std::string::npos) << audits;
  EXPECT_NE(audits.find("configured differently (sif_a: 1e-05 -> 0.001)"), std::string::npos) << audits;
  fs::remove_all(dir);
}

namespace {

fs::path tiny_bert() { return fs::path(EAGLE_SOURCE_DIR) / "tests/fixtures/bert/tiny-a"; }

json bert_entry() { return {{"type", "bert"}, {"path", tiny_bert().string()}, {"pooling", "cls"}}; }

// A few Markdown notes in `dir`; returns the files.
std::vector<std::string> write_notes(const fs::path& dir) {
  std::vector<std::string> files;
  for (int i = 0; i < 3; ++i) {
    const fs::path f = dir / ("note" + std::to_string(i) + ".md");
    std::ofstream(f) << "# Note " << i << "\n\n## Dosing\nzqx insulin dosing in renal impairment, note " << i
                     << ".\n\n## Safety\nHypoglycaemia was reported in " << i * 3 + 2 << " patients.\n";
    files.push_back(f.string());
  }
  return files;
}

// Every live row's (text, fields), by id.
std::map<std::string, std::pair<std::string, std::vector<Value>>> rows_of(store::Collection& c) {
  std::map<std::string, std::pair<std::string, std::vector<Value>>> out;
  size_t next = 0;
  for (auto page = c.scan(0, 1000, &next); !page.empty(); page = c.scan(next, 1000, &next))
    for (auto& r : page) out[r.id] = {r.text, r.values};
  return out;
}

bool has_audit(const search::RetrievalResponse& r, const std::string& what) {
  return r.metadata.value("audits", json::array()).dump().find(what) != std::string::npos;
}

bool has_dense_leg(const search::RetrievalResponse& r, const std::string& collection) {
  for (const auto& h : r.hits)
    if (h.explain.legs.is_object() && h.explain.legs.contains("dense:" + collection)) return true;
  return false;
}

}  // namespace

// `eagle reembed` rebuilds a collection's vectors with the label as
// configured now; the rows keep their ids, text and fields, and each vector is exactly
// what the encoder makes of the row's text.
TEST(EncoderRecords, ReembedRebuildsTheVectorsWithTheEncoderAsConfiguredNow) {
  const fs::path dir = fs::temp_directory_path() / ("eagle_reembed_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto files = write_notes(dir);
  auto cfg = eagle::test_support::engine_test_config(dir / "store");
  std::map<std::string, std::pair<std::string, std::vector<Value>>> before;
  {
    Engine e(cfg, StoreAccess::write, "test");
    e.ingest(files, {});
    before = rows_of(e.catalog().get("eagle_text"));
  }
  ASSERT_GE(before.size(), 6u);

  // The label `glove` is now a BERT model: searches are refused, pointing at reembed.
  cfg.encoders = {{"glove", bert_entry()}};
  search::RetrievalRequest q;
  q.query = "insulin dosing renal";
  q.explain = true;
  {
    Engine e(cfg, StoreAccess::write, "test");
    auto refused = e.search(q);
    EXPECT_TRUE(has_audit(refused, "eagle reembed --collection eagle_text --encoder glove")) << refused.metadata.dump();

    const auto rep = e.reembed("eagle_text");
    EXPECT_FALSE(rep.unchanged);
    EXPECT_EQ(rep.rows, before.size());
    EXPECT_EQ(rep.encoder_before, "glove");
    EXPECT_EQ(rep.encoder, "glove");
    EXPECT_EQ(rep.dim_before, 100u);
    EXPECT_EQ(rep.dim, 32u);
    auto& enc = e.encoders().encoder("glove");
    EXPECT_EQ(rep.identity, enc.info().identity);
    EXPECT_NE(rep.identity_before, rep.identity);

    auto& c = e.catalog().get("eagle_text");
    EXPECT_EQ(c.schema().vector.dim, 32u);
    EXPECT_EQ(c.schema().vector.encoder_identity, enc.info().identity);
    EXPECT_EQ(rows_of(c), before);  // ids, text and every field kept
    // Each vector is the encoder's for the row's text (the oracle: the encoder itself),
    // up to the store's half-precision copy (a relative error of 2^-11).
    for (const auto& [id, row] : before) {
      auto got = c.get_with_vector(id);
      ASSERT_TRUE(got) << id;
      auto want = enc.encode({row.first}, encode::EncodeMode::document).at(0);
      double norm = 0;
      for (float x : want) norm += static_cast<double>(x) * x;
      ASSERT_EQ(got->vector.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i)
        EXPECT_NEAR(got->vector[i], want[i] / std::sqrt(norm), 1e-3) << id << " [" << i << "]";
    }
    // Searches run their dense leg again, in this engine.
    auto answered = e.search(q);
    EXPECT_FALSE(has_audit(answered, "plan_failed")) << answered.metadata.dump();
    EXPECT_TRUE(has_dense_leg(answered, "eagle_text"));
    // Nothing of the rebuild is left beside the collections.
    for (const auto& entry : fs::directory_iterator(dir / "store" / "collections"))
      EXPECT_FALSE(entry.path().filename().string().starts_with(".")) << entry.path();
    // Asked again: nothing to do.
    const auto again = e.reembed("eagle_text");
    EXPECT_TRUE(again.unchanged);
    EXPECT_EQ(again.rows, 0u);
  }
  // And after a restart.
  Engine reopened(cfg, StoreAccess::write, "test");
  auto answered = reopened.search(q);
  EXPECT_FALSE(has_audit(answered, "plan_failed")) << answered.metadata.dump();
  EXPECT_TRUE(has_dense_leg(answered, "eagle_text"));
  EXPECT_EQ(rows_of(reopened.catalog().get("eagle_text")), before);
  fs::remove_all(dir);
}

// Re-embedding under another label moves the collection's plans to that label (in the
// running engine and after a restart); wrong requests are refused with a reason.
TEST(EncoderRecords, ReembedUnderAnotherLabelMovesTheCollectionsPlansToIt) {
  const fs::path dir = fs::temp_directory_path() / ("eagle_reembed_label_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto files = write_notes(dir);
  auto cfg = eagle::test_support::engine_test_config(dir / "store");
  cfg.encoders = {{"tiny", bert_entry()}};
  search::RetrievalRequest q;
  q.query = "hypoglycaemia patients";
  q.explain = true;
  auto plan_encoder = [](const search::RetrievalResponse& r) {
    return r.route.plans.empty() ? std::string() : r.route.plans.front().encoder;
  };
  {
    Engine e(cfg, StoreAccess::write, "test");
    e.ingest(files, {});
    EXPECT_EQ(plan_encoder(e.search(q)), "glove");
    EXPECT_THROW(e.reembed("no_such_collection", "tiny"), Error);
    try {
      e.reembed("eagle_text", "molformer");
      FAIL() << "a molecule encoder re-embedded text";
    } catch (const Error& err) {
      EXPECT_EQ(err.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(err.what()).find("does not embed text"), std::string::npos) << err.what();
    }
    EXPECT_EQ(e.catalog().get("eagle_text").schema().vector.encoder, "glove");  // refused: untouched

    const auto rep = e.reembed("eagle_text", "tiny");
    EXPECT_EQ(rep.encoder, "tiny");
    EXPECT_EQ(e.catalog().get("eagle_text").schema().vector.encoder, "tiny");
    auto r = e.search(q);
    EXPECT_EQ(plan_encoder(r), "tiny");
    EXPECT_FALSE(has_audit(r, "plan_failed")) << r.metadata.dump();
    EXPECT_TRUE(has_dense_leg(r, "eagle_text"));
  }
  {
    Engine reopened(cfg, StoreAccess::write, "test");
    auto r = reopened.search(q);
    EXPECT_EQ(plan_encoder(r), "tiny");
    EXPECT_TRUE(has_dense_leg(r, "eagle_text"));
    // An ingest without --encoder adds to it with its recorded label.
    IngestOptions more;
    more.reindex = true;
    EXPECT_EQ(reopened.ingest(files, more).encoder, "tiny");
  }
  Engine reader(cfg, StoreAccess::read_only, "test");
  EXPECT_THROW(reader.reembed("eagle_text", "glove"), Error);
  fs::remove_all(dir);
}
