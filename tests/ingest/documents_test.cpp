// The structured-document readers (JATS, PubMed, HTML, PDF) and the article chunker:
// synthetic documents for the chunker's rules, and every file of ../shared/data/docs
// checked against facts read from the files (titles, headings, tables and their
// captions, figures, citations).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "eagle/core/error.h"
#include "eagle/ingest/article/article_chunker.h"
#include "eagle/ingest/formats.h"
#include "eagle/ingest/markdown/markdown.h"
#include "eagle/ingest/pdf/pdf_reader.h"
#include "eagle/ingest/text_util.h"
#include "eagle/ingest/xml/html.h"
#include "eagle/ingest/xml/jats.h"
#include "eagle/ingest/xml/pubmed.h"
#include "eagle/ingest/xml/xml_tree.h"
#include "shared_data.h"

namespace fs = std::filesystem;
using namespace eagle::ingest;
using nlohmann::json;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path docs() {
  const fs::path d = eagle::testing::shared_data() / "docs";
  EXPECT_TRUE(fs::is_directory(d)) << "missing " << d;
  return d;
}

Block paragraph(std::vector<std::string> headings, std::string text, std::vector<std::string> cites = {}) {
  Block b;
  b.headings = std::move(headings);
  b.text = std::move(text);
  b.cites = std::move(cites);
  return b;
}

Block table(std::vector<std::string> headings, std::string label, std::string caption, std::string rows,
            std::string anchor = "") {
  Block b;
  b.kind = BlockKind::table;
  b.headings = std::move(headings);
  b.label = std::move(label);
  b.caption = std::move(caption);
  b.text = std::move(rows);
  b.anchor = std::move(anchor);
  return b;
}

const json* row_with_id(const std::vector<json>& rows, const std::string& id) {
  for (const auto& r : rows)
    if (r["id"] == id) return &r;
  return nullptr;
}

// The targets of a row's edges with one relation.
std::vector<std::string> edges(const json& row, const std::string& relation) {
  std::vector<std::string> out;
  if (!row.contains("connect_to")) return out;
  for (const auto& e : row["connect_to"])
    if (e.value("relation", "") == relation) out.push_back(e["target"].get<std::string>());
  return out;
}

std::vector<json> rows_of_type(const std::vector<json>& rows, const std::string& type) {
  std::vector<json> out;
  for (const auto& r : rows)
    if (r["type"] == type) out.push_back(r);
  return out;
}

std::set<std::string> top_level_headings(const std::vector<json>& rows) {
  std::set<std::string> out;
  for (const auto& r : rows)
    if ((r["type"] == "section_summary" || r["type"] == "references") && r["level"] == 1) {
      // A top-level summary's text starts with its heading line; a reference list (no
      // summary: its entries are not prose) with its heading path.
      std::istringstream lines(r["text"].get<std::string>());
      std::string first;
      std::getline(lines, first);
      out.insert(first);
    }
  return out;
}

}  // namespace

TEST(TextUtil, SplitTextRespectsBoundariesAndLimit) {
  EXPECT_TRUE(split_text("", 100).empty());
  EXPECT_EQ(split_text("a\nb", 100), std::vector<std::string>{"a\nb"});
  // Paragraphs pack up to the limit, then a new piece starts at a paragraph.
  EXPECT_EQ(split_text("aaaa\nbbbb\ncccc", 9), (std::vector<std::string>{"aaaa\nbbbb", "cccc"}));
  // An overlong paragraph splits at sentences, an overlong sentence at words.
  EXPECT_EQ(split_text("One two. Three four. Five six.", 12),
            (std::vector<std::string>{"One two.", "Three four.", "Five six."}));
  EXPECT_EQ(split_text("alpha beta gamma delta", 11),
            (std::vector<std::string>{"alpha beta", "gamma delta"}));
  // An overlong word is cut, never inside a UTF-8 sequence ("é" is 2 bytes).
  const auto cut = split_text("\xC3\xA9\xC3\xA9\xC3\xA9", 3);
  EXPECT_EQ(cut, (std::vector<std::string>{"\xC3\xA9", "\xC3\xA9", "\xC3\xA9"}));
  EXPECT_THROW(split_text("x", 0), eagle::Error);
}

TEST(XmlRoot, TheRootElementPastThePrologDoctypeAndComments) {
  EXPECT_EQ(xml::root_element("<?xml version=\"1.0\"?>\n<!DOCTYPE PubmedArticleSet PUBLIC \"x\" \"y\">\n"
                              "<PubmedArticleSet><PubmedArticle/>"),
            "PubmedArticleSet");
  EXPECT_EQ(xml::root_element("<!-- a comment <article> -->\n<document xmlns=\"urn:hl7-org:v3\">"), "document");
  EXPECT_EQ(xml::root_element("<!DOCTYPE article [ <!ENTITY x \"<b>\"> ]><art:article xmlns:art=\"u\">"), "article");
  EXPECT_EQ(xml::root_element("no markup at all"), "");
  EXPECT_EQ(xml::root_element("<?xml version=\"1.0\"?>"), "");
}

TEST(Citations, WrittenOutFormsListsAndRanges) {
  EXPECT_EQ(written_citations("as shown in Table 2 and Fig. 1B"), (std::vector<std::string>{"table:2", "figure:1"}));
  EXPECT_EQ(written_citations("(Tables 1 and 3; Figures 2\xE2\x80\x93" "4)"),
            (std::vector<std::string>{"table:1", "table:3", "figure:2", "figure:3", "figure:4"}));
  EXPECT_EQ(written_citations("see table S1, figs. 5, 6 and Figure 7a"),
            (std::vector<std::string>{"table:S1", "figure:5", "figure:6", "figure:7"}));
  // A range whose numbers no label has is no range (and must not overflow).
  EXPECT_EQ(written_citations("Table 99999999999999999999-1"),
            (std::vector<std::string>{"table:99999999999999999999", "table:1"}));
  // Words that only start like a citation, and a citation word without a number.
  EXPECT_TRUE(written_citations("one tablet daily; the figures were configured; Table of contents").empty());
  EXPECT_EQ(label_key("Table 3", BlockKind::table), "table:3");
  EXPECT_EQ(label_key("Fig. 2C", BlockKind::figure), "figure:2");
  EXPECT_EQ(label_key("Supplementary Table S2", BlockKind::table), "table:S2");
  EXPECT_EQ(label_key("Table", BlockKind::table), "");
}

TEST(ArticleChunker, HeadingPathsSummariesWholeTablesAndEdges) {
  Article a;
  a.id = "papers/trial.pdf";
  a.title = "A trial";
  a.year = 2020;
  a.blocks.push_back(paragraph({"Abstract"}, "We tested drug A."));
  a.blocks.push_back(paragraph({"Results", "Efficacy"}, "Response rates are in Table 2 (see also xref).", {"tab1"}));
  const std::string long_rows(3000, 'x');  // longer than max_chars: still one chunk
  a.blocks.push_back(table({"Results", "Efficacy"}, "Table 1", "Baseline", "a | b\n" + long_rows, "tab1"));
  a.blocks.push_back(table({"Results", "Efficacy"}, "Table 2", "Response by arm", "arm | rate\nA | 40%"));
  a.blocks.push_back(paragraph({"Results", "Efficacy"}, "A second paragraph after the tables."));
  a.blocks.push_back(paragraph({"Results", "Safety"}, "No deaths."));
  ArticleChunkOptions opt;
  opt.max_chars = 200;
  opt.kb_name = "trials";
  const auto rows = chunk_article(a, opt);

  // Text chunks: the abstract, two paragraphs of Efficacy, Safety; two tables; summaries
  // of Abstract, Results, Results/Efficacy, Results/Safety.
  ASSERT_EQ(rows_of_type(rows, "text").size(), 4u);
  ASSERT_EQ(rows_of_type(rows, "table").size(), 2u);
  const auto summaries = rows_of_type(rows, "section_summary");
  ASSERT_EQ(summaries.size(), 4u);
  for (const auto& r : rows) {
    EXPECT_EQ(r["document_id"], "papers/trial.pdf");
    EXPECT_EQ(r["kb_name"], "trials");
    EXPECT_EQ(r["year"], 2020);
    EXPECT_EQ(r["source_chunk_id"], r["id"]);
  }
  const auto tables = rows_of_type(rows, "table");
  EXPECT_EQ(tables[0]["text"].get<std::string>().substr(0, 18), "Table 1. Baseline\n");
  EXPECT_GT(tables[0]["text"].get<std::string>().size(), 3000u);  // whole
  EXPECT_EQ(tables[0]["path"], "trial/Results/Efficacy");
  EXPECT_EQ(tables[0]["level"], 2);
  EXPECT_EQ(tables[0]["metadata"]["anchor"], "tab1");

  // The citing paragraph: cites Table 1 by its anchor and Table 2 by its written label.
  const auto texts = rows_of_type(rows, "text");
  const json& citing = texts[1];
  EXPECT_EQ(citing["path"], "trial/Results/Efficacy");
  EXPECT_EQ(citing["text"].get<std::string>().rfind("Results / Efficacy\n", 0), 0u);
  EXPECT_EQ(edges(citing, "cites"), (std::vector<std::string>{tables[0]["id"], tables[1]["id"]}));
  // Consecutive chunks of the section and the section's summary.
  const std::string efficacy_summary = "papers/trial.pdf#results/efficacy:summary";
  EXPECT_EQ(edges(citing, "parent"), std::vector<std::string>{efficacy_summary});
  EXPECT_EQ(edges(citing, "next"), std::vector<std::string>{tables[0]["id"]});
  EXPECT_EQ(edges(tables[0], "previous"), std::vector<std::string>{citing["id"]});
  const json* summary = row_with_id(rows, efficacy_summary);
  ASSERT_NE(summary, nullptr);
  EXPECT_EQ(edges(*summary, "child").size(), 4u);  // two paragraphs, two tables
  EXPECT_EQ(edges(*summary, "parent"), std::vector<std::string>{"papers/trial.pdf#results:summary"});
  EXPECT_EQ((*summary)["content_summary"], "Response rates are in Table 2 (see also xref).");
  const json* results = row_with_id(rows, "papers/trial.pdf#results:summary");
  ASSERT_NE(results, nullptr);
  EXPECT_TRUE(edges(*results, "child").empty());  // no text of its own
  EXPECT_EQ(edges(*results, "subsection"),
            (std::vector<std::string>{efficacy_summary, "papers/trial.pdf#results/safety:summary"}));
  EXPECT_NE((*results)["text"].get<std::string>().find("Subsections: Efficacy; Safety"), std::string::npos);
  EXPECT_EQ((*results)["level"], 1);
}

TEST(ArticleChunker, ChunkIdsSurviveEditsElsewhereAndRepeatsAreNumbered) {
  Article a;
  a.id = "doc";
  a.blocks.push_back(paragraph({"Methods"}, "We measured."));
  a.blocks.push_back(paragraph({"Results"}, "It worked."));
  a.blocks.push_back(paragraph({"RESULTS"}, "Again."));  // same slug, another section
  const auto before = chunk_article(a);
  a.blocks[0].text = "We measured twice, and then more.";  // an edit in Methods
  const auto after = chunk_article(a);
  std::set<std::string> ids_before, ids_after;
  for (const auto& r : before) ids_before.insert(r["id"].get<std::string>());
  for (const auto& r : after) ids_after.insert(r["id"].get<std::string>());
  ASSERT_EQ(ids_before.size(), before.size());  // unique
  // Only the edited chunk's id changed.
  std::vector<std::string> gone;
  std::set_difference(ids_before.begin(), ids_before.end(), ids_after.begin(), ids_after.end(),
                      std::back_inserter(gone));
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].rfind("doc#methods:p", 0), 0u);
  EXPECT_TRUE(ids_after.count("doc#results~2:summary"));
  // Two identical paragraphs in one section (split into separate chunks) get ~2.
  Article b;
  b.id = "dup";
  b.blocks.push_back(paragraph({"S"}, std::string(100, 'a')));
  b.blocks.push_back(paragraph({"S"}, std::string(100, 'a')));
  ArticleChunkOptions small;
  small.max_chars = 110;
  const auto rows = chunk_article(b, small);
  ASSERT_EQ(rows_of_type(rows, "text").size(), 2u);
  EXPECT_EQ(rows_of_type(rows, "text")[1]["id"], rows_of_type(rows, "text")[0]["id"].get<std::string>() + "~2");
  EXPECT_THROW(chunk_article(Article{}), eagle::Error);
}

TEST(Formats, DetectionByExtensionAndRootElement) {
  const fs::path d = docs();
  EXPECT_EQ(detect_file_kind(d / "jats" / "pone.0046493.nxml"), FileKind::jats);
  EXPECT_EQ(detect_file_kind(d / "pubmed" / "pubmed-29768149.xml"), FileKind::pubmed);
  EXPECT_EQ(detect_file_kind(d / "pdf" / "vespa-peerj.pdf"), FileKind::pdf);
  const fs::path spl = eagle::testing::shared_data() / "spl";
  ASSERT_TRUE(fs::is_directory(spl));
  EXPECT_EQ(detect_file_kind(spl / "humira.xml"), FileKind::spl);
  // The barcode lists beside the labels are XML of another vocabulary.
  EXPECT_EQ(detect_file_kind(spl / "1_otc-bars.xml"), FileKind::unknown);
  const auto in_spl = scan_folder(spl).structured;
  EXPECT_TRUE(std::any_of(in_spl.begin(), in_spl.end(), [](const auto& f) { return f.second == FileKind::unknown; }))
      << "an unknown .xml is listed, so the ingest can report it";
  const auto files = scan_folder(d).structured;
  EXPECT_FALSE(scan_folder(d).has_text_files);
  EXPECT_EQ(files.size(), 17u);  // 8 JATS, 8 PDF, 1 PubMed
  EXPECT_EQ(file_kind_from_name("pubmed"), FileKind::pubmed);
  EXPECT_EQ(file_kind_from_name("nonsense"), FileKind::unknown);
}

TEST(Jats, EveryFileOfDocsJatsAgainstItsFacts) {
  struct Facts {
    std::string title_start;
    std::set<std::string> headings;  // top-level sections (some of them)
    std::map<std::string, std::string> tables;  // label -> caption start
    size_t figures;
  };
  // Read from the files (article-title, body/sec/title, table-wrap label and caption, fig).
  const std::map<std::string, Facts> facts = {
      {"1471-2180-11-174.nxml",
       {"Factors influencing lysis time stochasticity in bacteriophage",
        {"Background", "Results", "Discussion", "Conclusions", "Methods", "Appendix A"},
        {{"Table 1", "Effects of holin allelic sequences"}, {"Table 2", "Effect of late promoter activity"},
         {"Table 3", "Bacterial strains used in this study."}},
        4}},
      {"1472-6831-8-11.nxml",
       {"The Dutch version of the Oral Health Impact Profile (OHIP-NL)",
        {"Background", "Methods", "Results", "Discussion", "Conclusion"},
        {{"Table 1", "Mean total scores and mean item scores"}, {"Table 2", "Internal consistency measured"},
         {"Table 3", "Test-retest reliability measured"}, {"Table 4", "Construct validity"}},
        0}},
      {"6605965a.nxml",
       {"Oral contraceptives, reproductive history and risk of colorectal cancer",
        {"Materials and Methods", "Results", "Discussion"},
        {{"Table 1", "Participant characteristics at recruitment"}, {"Table 2", "Hazard ratio (HR)"}},
        0}},
      {"ehp-116-1694.nxml",
       {"Dietary Exposure to 2,2\xE2\x80\xB2,4,4\xE2\x80\xB2-Tetrabromodiphenyl Ether",
        {"Materials and Methods", "Results", "Discussion"},
        {},
        3}},
      {"mds526.nxml",
       {"Socio-demographic inequalities in stage of cancer diagnosis",
        {"introduction", "methods", "results", "discussion", "funding"},
        {{"Table 1", "Distribution of stage, gender, age"}, {"Table 2", "Independent associations of gender"},
         {"Table 3", "Association between gender, deprivation"}, {"Table 4", "Estimated annual reduction"}},
        2}},
      {"pntd.0002065.nxml",
       {"Serological Evidence of Rift Valley Fever Virus Circulation",
        {"Introduction", "Materials and Methods", "Results", "Discussion", "Author Summary"},
        {{"Table 1", "RVF seroprevalence in 2007"}, {"Table 2", "RVF seroprevalence in 2010"},
         {"Table 3", "RVF seroprevalence by sex and age group"}, {"Table 4", "Effect of sex, age and locality"},
         {"Table 5", "Number of RVF seropositive animals"}},
        1}},
      {"pone.0000217.nxml",
       {"Quantifying Organismal Complexity using a Population Genetic Approach",
        {"Introduction", "Model and Results", "Discussion", "Methods"},
        {},
        3}},
      {"pone.0046493.nxml",
       {"MmPPOX Inhibits Mycobacterium tuberculosis Lipolytic Enzymes",
        {"Abstract", "Introduction", "Materials and Methods", "Results", "Discussion", "References"},
        {{"Table 1", "Substrate specificity of recombinant Lip-HSL proteins."},
         {"Table 2", "Inhibition studies using MmPPOX."},
         {"Table 3", "Inhibition constants of MmPPOX and THL."}},
        4}},
  };
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(docs() / "jats")) {
    const std::string name = e.path().filename().string();
    SCOPED_TRACE(name);
    ASSERT_TRUE(facts.count(name)) << "a JATS file without facts";
    const Facts& f = facts.at(name);
    const std::string xml = read_file(e.path());
    const Article a = read_jats(xml, e.path().string(), "jats/" + name);
    ++files;
    EXPECT_EQ(a.title.rfind(f.title_start, 0), 0u) << a.title;
    EXPECT_FALSE(a.journal.empty());
    EXPECT_TRUE(a.year.has_value());
    const auto rows = chunk_article(a);
    const auto tops = top_level_headings(rows);
    for (const auto& h : f.headings) EXPECT_TRUE(tops.count(h)) << "heading " << h;
    // Each table is one chunk whose text starts with its label and caption.
    const auto tables = rows_of_type(rows, "table");
    EXPECT_EQ(tables.size(), f.tables.size());
    for (const auto& [label, caption] : f.tables) {
      size_t found = 0;
      for (const auto& t : tables)
        if (t["metadata"]["label"] == label) {
          ++found;
          EXPECT_EQ(t["text"].get<std::string>().rfind(label + ". " + caption, 0), 0u) << t["text"];
          EXPECT_GT(t["text"].get<std::string>().size(), label.size() + caption.size() + 20);  // cells too
        }
      EXPECT_EQ(found, 1u) << label;
    }
    EXPECT_EQ(rows_of_type(rows, "figure").size(), f.figures);
    // Every <xref ref-type="fig|table"> to a table or figure of the article is a
    // "cites" edge (the rids found by a plain pattern, not by the XML parser).
    std::set<std::string> anchors, cited;
    for (const auto& r : rows) {
      if (r.contains("metadata") && r["metadata"].contains("anchor")) anchors.insert(r["metadata"]["anchor"]);
      for (const auto& target : edges(r, "cites"))
        if (const json* t = row_with_id(rows, target)) cited.insert((*t)["metadata"]["anchor"].get<std::string>());
    }
    const std::regex xref(R"re(<xref\s[^>]*>)re"), type(R"re(ref-type="(fig|table)")re"), rid(R"re(rid="([^"]+)")re");
    size_t xrefs = 0;
    for (auto it = std::sregex_iterator(xml.begin(), xml.end(), xref); it != std::sregex_iterator(); ++it) {
      const std::string tag = it->str();
      std::smatch t, r;
      if (!std::regex_search(tag, t, type) || !std::regex_search(tag, r, rid)) continue;
      std::istringstream rids(r[1].str());
      for (std::string rid; rids >> rid;) {
        if (!anchors.count(rid)) continue;  // a supplementary table outside the article
        ++xrefs;
        EXPECT_TRUE(cited.count(rid)) << "xref " << rid << " is no edge";
      }
    }
    EXPECT_EQ(xrefs > 0, !f.tables.empty() || f.figures > 0);
    // References are their own section.
    EXPECT_FALSE(rows_of_type(rows, "text").empty());
    bool references = false;
    for (const auto& r : rows) references = references || r["chunk_type"] == "references";
    EXPECT_TRUE(references);
  }
  EXPECT_EQ(files, facts.size());
}

TEST(Jats, ErrorsNameTheFile) {
  try {
    read_jats("<article><front>", "bad.nxml", "bad");
    FAIL() << "malformed XML accepted";
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.nxml:"), std::string::npos) << e.what();
  }
  try {
    read_jats("<PubmedArticleSet/>", "p.xml", "p");
    FAIL() << "a PubMed file read as JATS";
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find("root <PubmedArticleSet>"), std::string::npos) << e.what();
  }
}

TEST(PubMed, TheArticleOfDocsPubmed) {
  const fs::path f = docs() / "pubmed" / "pubmed-29768149.xml";
  const auto articles = read_pubmed(read_file(f), f.string());
  ASSERT_EQ(articles.size(), 1u);
  const Article& a = articles[0];
  EXPECT_EQ(a.id, "29768149");
  EXPECT_EQ(a.pmid, "29768149");
  EXPECT_EQ(a.doi, "10.1056/NEJMoa1715274");
  EXPECT_EQ(a.title, "Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma.");
  EXPECT_EQ(a.journal, "The New England journal of medicine");
  EXPECT_EQ(a.year, 2018);
  EXPECT_EQ(a.source_type, "abstract");
  ASSERT_FALSE(a.authors.empty());
  EXPECT_EQ(a.authors[0], "Paul M O'Byrne");
  EXPECT_TRUE(std::find(a.tags.begin(), a.tags.end(), "Asthma") != a.tags.end());
  EXPECT_TRUE(std::find(a.tags.begin(), a.tags.end(), "Administration, Inhalation") != a.tags.end());
  ASSERT_EQ(a.blocks.size(), 4u);
  EXPECT_EQ(a.blocks[0].headings, (std::vector<std::string>{"Abstract", "Background"}));
  EXPECT_EQ(a.blocks[3].headings, (std::vector<std::string>{"Abstract", "Conclusions"}));
  // The β of "β2-agonist" (an entity in the XML) survives.
  EXPECT_NE(a.blocks[0].text.find("\xCE\xB2"), std::string::npos);
  const auto rows = chunk_article(a);
  EXPECT_EQ(rows_of_type(rows, "text").size(), 4u);
  EXPECT_EQ(rows_of_type(rows, "section_summary").size(), 5u);  // Abstract and its four sections
  for (const auto& r : rows) EXPECT_EQ(r["metadata"]["doi"], "10.1056/NEJMoa1715274");
  EXPECT_THROW(read_pubmed("<PubmedArticleSet><PubmedArticle><MedlineCitation/></PubmedArticle></PubmedArticleSet>", "x"),
               eagle::Error);
}

TEST(Html, HeadingsParagraphsTablesFiguresAndLinks) {
  const std::string html = R"(<html><head><title>Trial report</title><script>var x = "Table 9";</script></head>
<body><nav><p>Home | About</p></nav><h1>Trial report</h1>
<h2>Results</h2><p>Rates are in <a href="#t1">the table</a>; see Figure 1.</p>
<table id="t1"><caption>Table 1. Response rates</caption><tr><th>Arm</th><th>Rate</th></tr><tr><td>A</td><td>40%</td></tr></table>
<h3>Safety</h3><ul><li>No deaths.</li><li>Two rashes.</li></ul>
<figure id="f1"><img src="img/flow.png"><figcaption>Figure 1. Patient flow</figcaption></figure>
<div>Loose text in a <b>div</b> is kept.</div>
<figure id="f2"><figcaption>Fig. 2: Tablet formulations</figcaption><img src="f2.png"></figure>
<footer><p>Copyright</p></footer></body></html>)";
  const Article a = read_html(html, "report.html", "report.html");
  EXPECT_EQ(a.title, "Trial report");
  const auto rows = chunk_article(a);
  const auto tables = rows_of_type(rows, "table");
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0]["text"], "Table 1. Response rates\nArm | Rate\nA | 40%");
  const auto figures = rows_of_type(rows, "figure");
  ASSERT_EQ(figures.size(), 2u);
  EXPECT_EQ(figures[0]["metadata"]["graphic"], "flow.png");
  EXPECT_EQ(figures[1]["text"], "Figure 2. Tablet formulations");  // "Fig." read as a label, "Tablet" not
  const auto texts = rows_of_type(rows, "text");
  ASSERT_EQ(texts.size(), 3u);
  EXPECT_EQ(texts[0]["path"], "report/Results");
  EXPECT_EQ(edges(texts[0], "cites"), (std::vector<std::string>{tables[0]["id"], figures[0]["id"]}));
  EXPECT_EQ(texts[1]["path"], "report/Results/Safety");
  EXPECT_EQ(texts[1]["text"], "Results / Safety\nNo deaths.\nTwo rashes.");
  EXPECT_EQ(texts[2]["text"], "Results / Safety\nLoose text in a div is kept.");  // after the figure
  for (const auto& r : rows) {
    EXPECT_EQ(r["text"].get<std::string>().find("Copyright"), std::string::npos);
    EXPECT_EQ(r["text"].get<std::string>().find("Home"), std::string::npos);
  }
}

TEST(Pdf, EveryFileOfDocsPdfAgainstItsFacts) {
  struct Facts {
    std::string title_part;
    size_t pages;
    std::set<std::string> headings;             // top-level headings (some of them)
    std::map<std::string, std::string> tables;  // label -> caption start
    std::vector<std::string> in_tables;         // cell text found in some table chunk
    std::vector<std::string> absent;            // running headers / footers
    std::string doi;                            // "" when the first page has none
  };
  // Read from the rendered pages.
  const std::map<std::string, Facts> facts = {
      {"bmc-hsr-2014-14-1.pdf",
       {"Understanding the barriers to setting up a healthcare quality improvement process",
        10,
        {"Abstract", "Background", "Methods", "Results", "Discussion", "Conclusions", "References"},
        {{"Table 1", "Patient-provider relationship during consultation"}},
        {"Privacy given"},
        {"Page 4 of 10", "BMC Health Services Research 2014, 14:1"},
        ""}},
      {"clinical-science-2014-126.pdf",
       {"Fragment-based design for the development of N-domain-selective angiotensin-1-converting enzyme",
        13,
        {"INTRODUCTION", "MATERIALS AND METHODS", "RESULTS", "DISCUSSION", "References"},
        {{"Table 1", "A summary of relevant ACE substrates and inhibitors"},
         {"Table 5", "Potential hydrogen bonds of 33RE binding to N-ACE"}},
        {"Tyr498"},
        {},
        "10.1042/CS20130403"}},
      {"intl-psychogeriatrics-2014.pdf",
       {"Stressful life events are not associated with the development of dementia",
        8,
        {"Introduction", "Method", "Results", "Discussion", "References"},
        {{"Table 1", "Baseline characteristics of participants"}, {"Table 2", "Cox regression analyses"}},
        {},
        {},
        "10.1017/S1041610213001804"}},
      {"iron-deficiency-anaemia.pdf",
       {"Iron deficiency anaemia can be improved after eradication of Helicobacter pylori",
        7,
        {"METHODS", "RESULTS", "DISCUSSION", "References"},
        {{"Table 1", "Summary characteristics of studies and participants"}},
        {},
        {},
        "10.1136/pgmj.2009.089987"}},
      {"jtmo-2010-4-1.pdf",
       {"Complications related to deep venous thrombosis prophylaxis in trauma",
        4,
        {"Abstract", "Introduction", "Methods", "Conclusion", "References"},
        {},
        {},
        {},
        ""}},
      {"phoenix-paludosa.pdf",
       {"Phytochemical and Biological investigations of Phoenix paludosa",
        4,
        {"INTRODUCTION", "MATERIALS AND METHODS", "References"},
        {{"Table 1", "LC50 data of P. paludosa extractives"}},
        {"vincristine sulfate"},
        {},
        ""}},
      {"rehab-research-practice.pdf",
       {"Patient Experiences of Structured Heart Failure Programmes",
        6,
        {"1. Introduction", "2. Methods", "3. Results", "11. Discussion", "References"},
        {},
        {},
        {},
        "10.1155/2010/157939"}},
      {"vespa-peerj.pdf",
       {"VESPA: Very large-scale Evolutionary and Selective Pressure Analyses",
        16,
        {"ABSTRACT", "INTRODUCTION", "METHODS", "RESULTS", "DISCUSSION", "References"},
        {{"Table 1", "Overview of the 5 Phases in the VESPA software package."}, {"Table 3", "Comparison of the results"}},
        {"Data preparation", "Homology searching"},
        {"PeerJ Comput. Sci., DOI 10.7717/peerj-cs.118"},
        "10.7717/peerj-cs.118"}},
  };
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(docs() / "pdf")) {
    const std::string name = e.path().filename().string();
    SCOPED_TRACE(name);
    ASSERT_TRUE(facts.count(name)) << "a PDF without facts";
    const Facts& f = facts.at(name);
    const Article a = read_pdf(e.path(), "pdf/" + name);
    ++files;
    EXPECT_NE(a.title.find(f.title_part), std::string::npos) << a.title;
    EXPECT_EQ(a.pages, static_cast<int>(f.pages));
    if (!f.doi.empty()) {
      EXPECT_EQ(a.doi, f.doi);
    }
    const auto rows = chunk_article(a);
    const auto tops = top_level_headings(rows);
    for (const auto& h : f.headings) EXPECT_TRUE(tops.count(h)) << "heading " << h;
    const auto tables = rows_of_type(rows, "table");
    for (const auto& [label, caption] : f.tables) {
      bool found = false;
      for (const auto& t : tables)
        found = found || t["text"].get<std::string>().rfind(label + ". " + caption, 0) == 0;
      EXPECT_TRUE(found) << label << ": " << caption;
    }
    for (const auto& cell : f.in_tables) {
      bool found = false;
      for (const auto& t : tables) found = found || t["text"].get<std::string>().find(cell) != std::string::npos;
      EXPECT_TRUE(found) << "cell " << cell;
    }
    bool references = false;
    for (const auto& r : rows) {
      const std::string text = r["text"].get<std::string>();
      // Every chunk records its page; running headers, footers and page numbers are gone.
      ASSERT_TRUE(r.contains("page")) << r["id"];
      EXPECT_GE(r["page"].get<int>(), 1);
      EXPECT_LE(r["page"].get<int>(), a.pages);
      for (const auto& gone : f.absent) EXPECT_EQ(text.find(gone), std::string::npos) << r["id"] << ": " << gone;
      references = references || r["chunk_type"] == "references";
    }
    EXPECT_TRUE(references);
  }
  EXPECT_EQ(files, facts.size());
}

// The reading defects found on iron-deficiency-anaemia.pdf against its rendered pages,
// each with the text it must give.
TEST(Pdf, IronDeficiencyAnaemiaSidebarTablesAndCaptionsAreReadWhole) {
  const Article a = read_pdf(docs() / "pdf" / "iron-deficiency-anaemia.pdf", "pdf/iron-deficiency-anaemia.pdf");
  const auto rows = chunk_article(a);
  // Page 1's affiliations sidebar is read apart, before the abstract, which reads on
  // unbroken (they shared baselines and were interleaved line by line).
  const auto texts = rows_of_type(rows, "text");
  ASSERT_FALSE(texts.empty());
  const std::string sidebar = texts[0]["text"];
  EXPECT_NE(sidebar.find("7Department of Gastroenterology, Huashan Hospital affiliated to Fudan University, Shanghai, "
                         "China"),
            std::string::npos)
      << sidebar.substr(0, 400);
  bool abstract_whole = false;
  for (const auto& r : texts) {
    const std::string t = r["text"];
    if (t.find("Background Recent guidelines on iron deficiency anaemia (IDA) have confirmed the aetiological role of "
               "Helicobacter pylori (H pylori), but the relationship still remains controversial.") != std::string::npos) {
      abstract_whole = true;
      EXPECT_EQ(t.find("Shanghai"), std::string::npos) << t.substr(0, 400);
      EXPECT_NE(t.find("Results Eight studies met the inclusion criteria. All studies were performed in Asia"),
                std::string::npos)
          << t.substr(0, 600);
    }
  }
  EXPECT_TRUE(abstract_whole);
  // Table 2's body stays in the table: its header's "Summary" (over "estimate", set
  // smaller than the body) is a cell, not a section heading.
  const auto tables = rows_of_type(rows, "table");
  const json* table2 = nullptr;
  for (const auto& t : tables)
    if (t["text"].get<std::string>().rfind("Table 2. Summary estimates of effect of H pylori eradication on iron "
                                           "deficiency anaemia in subgroup analyses\n", 0) == 0)
      table2 = &t;
  ASSERT_TRUE(table2);
  const std::string body = (*table2)["text"];
  EXPECT_NE(body.find("\nSummary\nestimate | Heterogeneity"), std::string::npos) << body.substr(0, 300);
  EXPECT_NE(body.find("Haemoglobin (g/l)"), std::string::npos) << body.substr(0, 300);
  EXPECT_FALSE(top_level_headings(rows).count("Summary"));
  // So the later Results sub-sections stay under RESULTS.
  std::set<std::string> paths;
  for (const auto& r : rows_of_type(rows, "text")) paths.insert(r["path"].get<std::string>());
  for (const char* sub : {"RESULTS/Subgroup analyses", "RESULTS/Sensitivity analysis", "RESULTS/Publication bias"})
    EXPECT_TRUE(paths.count(std::string("iron-deficiency-anaemia/") + sub)) << sub;
  // Captions set in a narrow box beside their figure are read whole, legend included,
  // and none of their words leak into the paragraph after them.
  const auto figures = rows_of_type(rows, "figure");
  auto caption = [&](const std::string& label) {
    for (const auto& f : figures)
      if (f["text"].get<std::string>().rfind(label + ". ", 0) == 0) return f["text"].get<std::string>();
    return std::string();
  };
  EXPECT_EQ(caption("Figure 2").rfind("Figure 2. Treatment effect and underlying connection between H pylori and IDA. "
                                      "(a) Weighted mean difference (WMD) forest plots of changes in hemoglobin",
                                      0),
            0u)
      << caption("Figure 2");
  EXPECT_EQ(caption("Figure 4").rfind("Figure 4. Forest plot of therapy regimen subgroup. (a) Weighted mean difference", 0),
            0u)
      << caption("Figure 4");
  for (const char* label : {"Figure 2", "Figure 3", "Figure 4"}) {
    const std::string c = caption(label);
    EXPECT_GE(c.size(), 4 * 60u) << label << ": " << c;
    EXPECT_NE(c.find("The result favours experimental groups."), std::string::npos) << label << ": " << c;
  }
  for (const auto& r : rows_of_type(rows, "text")) {
    const std::string t = r["text"];
    for (const char* leaked : {"\nunderlying connection between H pylori", "\nregimen subgroup.",
                               "\n(a) Weighted mean difference"})
      EXPECT_EQ(t.find(leaked), std::string::npos) << r["id"] << ": " << t.substr(0, 200);
  }
}

TEST(Pdf, ErrorsNameTheFile) {
  EXPECT_THROW(read_pdf("/nonexistent/x.pdf", "x"), eagle::Error);
  try {
    read_pdf_bytes("this is not a PDF", "notes.pdf", "notes");
    FAIL() << "text read as a PDF";
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find("notes.pdf"), std::string::npos) << e.what();
  }
}

TEST(Markdown, HeadingsTitleTablesFiguresCodeAndLists) {
  const std::string md =
      "# A trial of drug A\n"
      "Written for a test.\n"
      "\n"
      "## Results\n"
      "Rates are in Table 1; the flow\n"
      "is in Figure 1.\n"
      "\n"
      "Table 1: Response by arm\n"
      "| Arm | Rate |\n"
      "|-----|-----:|\n"
      "| A   | 40%  |\n"
      "| B   | 20%  |\n"
      "\n"
      "![Figure 1. Patient flow](img/flow.png)\n"
      "\n"
      "### Safety\n"
      "- no deaths\n"
      "- two rashes\n"
      "\n"
      "```\n"
      "# not a heading\n"
      "```\n";
  const Article a = read_markdown(md, "trial.md", "trial.md");
  // A caption between two tables heads the second one.
  const Article two = read_markdown("| a |\n|---|\n| 1 |\n\nTable 2: Second\n| b |\n|---|\n| 2 |\n", "t.md", "t.md");
  ASSERT_EQ(two.blocks.size(), 2u);
  EXPECT_EQ(two.blocks[0].label, "Table");
  EXPECT_EQ(two.blocks[1].label, "Table 2");
  EXPECT_EQ(two.blocks[1].caption, "Second");
  EXPECT_EQ(a.title, "A trial of drug A");
  const auto rows = chunk_article(a);
  const auto tables = rows_of_type(rows, "table");
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0]["text"], "Table 1. Response by arm\nArm | Rate\nA | 40%\nB | 20%");
  EXPECT_EQ(tables[0]["path"], "trial/Results");
  const auto figures = rows_of_type(rows, "figure");
  ASSERT_EQ(figures.size(), 1u);
  EXPECT_EQ(figures[0]["text"], "Figure 1. Patient flow");
  EXPECT_EQ(figures[0]["metadata"]["graphic"], "flow.png");
  const auto texts = rows_of_type(rows, "text");
  ASSERT_EQ(texts.size(), 3u);
  EXPECT_EQ(texts[0]["text"], "Written for a test.");  // under the title: no section
  EXPECT_EQ(texts[1]["text"], "Results\nRates are in Table 1; the flow is in Figure 1.");
  EXPECT_EQ(edges(texts[1], "cites"), (std::vector<std::string>{tables[0]["id"], figures[0]["id"]}));
  EXPECT_EQ(texts[2]["path"], "trial/Results/Safety");
  EXPECT_EQ(texts[2]["text"], "Results / Safety\n- no deaths\n- two rashes\n```\n# not a heading\n```");
  EXPECT_EQ(rows_of_type(rows, "section_summary").size(), 2u);
}
