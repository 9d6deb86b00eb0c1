// Issue 13, formats through the path a user takes: `eagle ingest ../shared/data/docs`
// with --format auto reads every JATS, PubMed and PDF file, keeps their metadata
// (MeSH headings become the registry's keywords), and questions about a table's
// content find the table, or a paragraph that cites it with the table pulled in by
// graph expansion; a section summary drills down to its chunks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "eagle/app/engine.h"
#include "eagle/core/error.h"
#include "shared_data.h"
#include "support/temp_engine.h"

namespace fs = std::filesystem;
using namespace eagle;
using namespace eagle::app;
using nlohmann::json;

namespace {

struct Store : eagle::test_support::TempEngine {
  Store() : TempEngine("documents") {}
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
  Store s;
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

  // Ingested again: the same documents replace themselves, nothing doubles.
  const auto again = s.engine->ingest({docs().string()}, {});
  EXPECT_EQ(again.documents, 17u);
  EXPECT_EQ(s.engine->document("jats/pone.0046493.nxml")->chunks.size(), jats->chunks.size());
  size_t live = 0;
  for (const auto& c : s.engine->collection_infos()) live += c.rows;
  EXPECT_EQ(live, rows);
}

TEST(DocumentsIngest, FormatErrorsNameTheFileAndSkipBadSkipsThem) {
  Store s;
  const fs::path folder = s.dir / "in";
  fs::create_directories(folder);
  fs::copy_file(docs() / "pubmed" / "pubmed-29768149.xml", folder / "a.xml");
  std::ofstream(folder / "b.xml") << "<catalog><item/></catalog>";
  try {
    s.engine->ingest({folder.string()}, {});
    FAIL() << "an XML of no known vocabulary was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("b.xml: not an SPL label, JATS article or PubMed XML (root <catalog>)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(s.engine->document("29768149"));  // nothing written
  IngestOptions skip;
  skip.skip_bad = true;
  const auto rep = s.engine->ingest({folder.string()}, skip);
  EXPECT_EQ(rep.documents, 1u);
  ASSERT_EQ(rep.skipped.size(), 1u);
  EXPECT_NE(rep.skipped[0].find("b.xml"), std::string::npos);
  // A forced format that does not fit the file says what the file is.
  IngestOptions as_jats;
  as_jats.format = "jats";
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
}
