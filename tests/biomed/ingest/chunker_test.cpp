// The biomedical chunker: chunk rows for labels and papers (seed biomed_chunk_transform,
// chunker._primary_drugs_for_node, parent-document section summaries).
#include "eagle/biomed/ingest/chunker.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "eagle/core/error.h"
#include "eagle/core/schema.h"
#include "eagle/core/value.h"
#include "ingest_test_support.h"

using namespace eagle::biomed;
using eagle::biomed::testing::present;
using eagle::biomed::testing::shared_file;
using eagle::biomed::testing::spl_label_files;
using nlohmann::json;

namespace {

ChunkOptions max_chars(size_t n) {
  ChunkOptions o;
  o.max_chars = n;
  return o;
}

std::vector<json> humira_chunks(const ChunkOptions& o = {}) {
  return chunk_label(parse_spl_file(shared_file("spl/humira.xml")), o);
}

// Every chunk_schema field is present and converts to the field's type.
void expect_schema_row(const json& row) {
  const auto schema = eagle::chunk_schema("c", 4);
  ASSERT_TRUE(row.contains("id") && row["id"].is_string() && !row["id"].get<std::string>().empty())
      << row.dump();
  ASSERT_TRUE(row.contains("text") && row["text"].is_string()) << row.dump();
  EXPECT_FALSE(row["text"].get<std::string>().empty()) << row["id"];
  for (const auto& f : schema.fields) {
    ASSERT_TRUE(row.contains(f.name)) << f.name << " missing in " << row["id"];
    EXPECT_NO_THROW(eagle::value_from_json(row[f.name], f.type, f.name)) << f.name << " in " << row["id"];
  }
  EXPECT_EQ(row["source_chunk_id"], row["id"]);
}

// A stand-in for the entity matcher: occurrences of known names, in text order.
FindDrugs lexicon_finder(std::vector<std::string> names) {
  return [names = std::move(names)](std::string_view text) {
    std::vector<std::pair<size_t, std::string>> hits;
    std::string lower(text);
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const auto& n : names)
      for (size_t p = lower.find(n); p != std::string::npos; p = lower.find(n, p + 1))
        hits.emplace_back(p, std::string(text.substr(p, n.size())));
    std::sort(hits.begin(), hits.end());
    std::vector<std::string> out;
    for (auto& h : hits) out.push_back(std::move(h.second));
    return out;
  };
}

}  // namespace

TEST(Chunker, LabelChunksCarrySchemaFieldsDrugsAndSections) {
  // Seed chunker._primary_drugs_for_node: every chunk is stamped, so the entity boost
  // at query time needs no rescan of the text.
  for (const auto& name : spl_label_files()) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(present(shared_file("spl/" + name)));
    const SplLabel label = parse_spl_file(shared_file("spl/" + name));
    const auto expected_drugs = label_primary_drugs(label);
    ASSERT_FALSE(expected_drugs.empty());
    const auto rows = chunk_label(label, {.kb_name = "fda"});
    if (name == "METHOXSALEN.xml") {
      EXPECT_TRUE(rows.empty());  // an indexing document has no section text
      continue;
    }
    ASSERT_FALSE(rows.empty());
    std::set<std::string> ids;
    for (const auto& r : rows) {
      expect_schema_row(r);
      EXPECT_TRUE(ids.insert(r["id"].get<std::string>()).second) << "duplicate id " << r["id"];
      EXPECT_EQ(r["primary_drugs"], json(expected_drugs));
      EXPECT_FALSE(r["biomed_section"].get<std::string>().empty()) << r["id"];
      EXPECT_EQ(r["source_type"], "label");
      EXPECT_EQ(r["kb_name"], "fda");
      EXPECT_EQ(r["document_id"], label.document_id);
      EXPECT_EQ(r["file_name"], name);
      EXPECT_EQ(r["document_name"], label.display_title());
      EXPECT_EQ(r["year"], label.year());
    }
  }
}

TEST(Chunker, LabelPrimaryDrugsAreLowerCasedNamesInOrder) {
  ASSERT_TRUE(present(shared_file("spl/lipitor-orig.xml")));
  EXPECT_EQ(label_primary_drugs(parse_spl_file(shared_file("spl/lipitor-orig.xml"))),
            (std::vector<std::string>{"lipitor", "atorvastatin calcium", "atorvastatin",
                                      "atorvastatin calcium trihydrate"}));
  ASSERT_TRUE(present(shared_file("spl/humira.xml")));
  EXPECT_EQ(label_primary_drugs(parse_spl_file(shared_file("spl/humira.xml"))),
            (std::vector<std::string>{"humira", "adalimumab"}));
}

TEST(Chunker, LabelChunkIdsAreDeterministic) {
  ASSERT_TRUE(present(shared_file("spl/humira.xml")));
  const auto a = humira_chunks();
  const auto b = humira_chunks();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]);  // re-ingest upserts the same rows
  // document id + section index.
  const SplLabel l = parse_spl_file(shared_file("spl/humira.xml"));
  std::map<std::string, json> by_id;
  for (const auto& r : a) by_id[r["id"]] = r;
  for (const auto& s : l.sections) {
    if (s.title != "5.1 Serious Infections") continue;
    const std::string id = l.document_id + ":s" + std::to_string(s.index);
    ASSERT_TRUE(by_id.count(id)) << id;
    EXPECT_EQ(by_id[id]["path"], s.path);
    EXPECT_EQ(by_id[id]["biomed_section"], "warnings_and_precautions");
    EXPECT_EQ(by_id[id]["parent_section"], "warnings_and_precautions");
    // 4.8 KB of text: split into ~1,500-char pieces with "#2", "#3" ids on the same path.
    ASSERT_TRUE(by_id.count(id + "#2")) << "long section not split";
    EXPECT_EQ(by_id[id + "#2"]["path"], s.path);
    EXPECT_EQ(by_id[id + "#2"]["biomed_section"], "warnings_and_precautions");
    EXPECT_EQ(by_id[id + "#2"]["text"].get<std::string>().rfind("5.1 Serious Infections\n", 0), 0u);
  }
}

TEST(Chunker, LongSectionsSplitNearTheLimit) {
  ASSERT_TRUE(present(shared_file("spl/humira.xml")));
  const SplLabel l = parse_spl_file(shared_file("spl/humira.xml"));
  for (const auto& r : chunk_label(l)) {
    if (r["type"] != "text") continue;
    std::string text = r["text"];
    const size_t nl = text.find('\n');
    // The body (after the title line) is at most max_chars.
    const std::string body = nl == std::string::npos ? text : text.substr(nl + 1);
    EXPECT_LE(body.size(), 1500u + 200u) << r["id"];  // + the title line when the section has none
  }
  size_t pieces = 0;
  for (const auto& r : chunk_label(l, max_chars(400)))
    if (r["id"].get<std::string>().find('#') != std::string::npos) ++pieces;
  EXPECT_GT(pieces, 100u);
}

TEST(Chunker, SectionSummariesPrefixAndConnectTheirChildren) {
  ASSERT_TRUE(present(shared_file("spl/humira.xml")));
  const auto rows = humira_chunks();
  std::map<std::string, json> by_id;
  for (const auto& r : rows) by_id[r["id"]] = r;
  std::set<std::string> connected;
  size_t summaries = 0;
  for (const auto& r : rows) {
    if (r["type"] != "section_summary") {
      EXPECT_TRUE(r["connect_to"].is_null());
      EXPECT_EQ(r["chunk_type"], "section");
      continue;
    }
    ++summaries;
    EXPECT_EQ(r["chunk_type"], "section_summary");
    const std::string path = r["path"];
    const std::string summary = r["content_summary"];
    EXPECT_FALSE(summary.empty()) << r["id"];
    EXPECT_LE(summary.size(), 200u);
    ASSERT_TRUE(r["connect_to"].is_array());
    ASSERT_FALSE(r["connect_to"].empty());
    for (const auto& edge : r["connect_to"]) {
      ASSERT_TRUE(edge.is_string());
      ASSERT_TRUE(by_id.count(edge)) << "dangling edge " << edge;
      const json& child = by_id[edge];
      // Parent-document drill-down: path like "<summary path>%" within the document.
      EXPECT_EQ(child["path"].get<std::string>().rfind(path, 0), 0u) << child["path"] << " vs " << path;
      EXPECT_EQ(child["document_id"], r["document_id"]);
      EXPECT_EQ(child["parent_section"], r["biomed_section"]);
      EXPECT_TRUE(connected.insert(edge).second) << edge << " under two summaries";
    }
  }
  EXPECT_GE(summaries, 15u);
  for (const auto& r : rows) {
    if (r["type"] == "text") {
      EXPECT_TRUE(connected.count(r["id"])) << r["id"] << " has no summary";
    }
  }

  // The WARNINGS AND PRECAUTIONS summary uses the Highlights excerpt and lists the subsections.
  bool found = false;
  for (const auto& r : rows) {
    if (r["type"] != "section_summary" || r["path"] != "5 WARNINGS AND PRECAUTIONS") continue;
    found = true;
    EXPECT_EQ(r["biomed_section"], "warnings_and_precautions");
    const std::string text = r["text"];
    EXPECT_EQ(text.rfind("5 WARNINGS AND PRECAUTIONS\n", 0), 0u) << text;
    EXPECT_NE(text.find("Subsections: 5.1 Serious Infections; 5.2 Malignancies"), std::string::npos) << text;
    EXPECT_GE(r["connect_to"].size(), 11u);
  }
  EXPECT_TRUE(found);
}

TEST(Chunker, PaperChunksFromStructuredAbstract) {
  PaperInput p;
  p.id = "pmid:123";
  p.title = "Metformin versus insulin in gestational diabetes";
  p.text =
      "BACKGROUND: Gestational diabetes is common. METHODS: Women received metformin or insulin. "
      "RESULTS: Glibenclamide was not used. Metformin lowered glucose. CONCLUSIONS: Metformin is safe.";
  p.year = 2008;
  p.file_name = "pubmed.jsonl";
  const auto find = lexicon_finder({"metformin", "insulin", "glibenclamide"});
  const auto rows = chunk_paper(p, find, {.kb_name = "papers"});
  ASSERT_EQ(rows.size(), 4u);
  const std::vector<std::string> sections = {"background", "methods", "results", "conclusion"};
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    expect_schema_row(r);
    EXPECT_EQ(r["id"], "pmid:123:p" + std::to_string(i));
    EXPECT_EQ(r["biomed_section"], sections[i]);
    EXPECT_EQ(r["source_type"], "paper");
    EXPECT_EQ(r["year"], 2008);
    EXPECT_EQ(r["document_name"], p.title);
    // Title drugs win (seed _primary_drugs_for_node), lower-cased, in order.
    EXPECT_EQ(r["primary_drugs"], json({"metformin", "insulin"}));
  }
  EXPECT_EQ(rows[1]["text"], p.title + "\nMETHODS\nWomen received metformin or insulin.");
  EXPECT_EQ(rows[1]["path"], "METHODS");
  EXPECT_EQ(chunk_paper(p, find, {.kb_name = "papers"}), rows);  // deterministic: re-ingest upserts
}

TEST(Chunker, PaperDrugsFallBackToTheMostFrequentInText) {
  const auto find = lexicon_finder({"metformin", "insulin", "aspirin", "warfarin", "heparin"});
  PaperInput p;
  p.id = "x";
  p.title = "Outcomes in gestational diabetes";
  p.text =
      "Insulin was compared. Aspirin once. Metformin and metformin and METFORMIN. Insulin again. "
      "Heparin once. Warfarin once.";
  EXPECT_EQ(paper_primary_drugs(p, find), (std::vector<std::string>{"metformin", "insulin", "aspirin"}));
  EXPECT_EQ(paper_primary_drugs(p, find, 1), (std::vector<std::string>{"metformin"}));
  EXPECT_TRUE(paper_primary_drugs(p, {}).empty());  // no matcher plugged in
  // Unstructured text: one span under the paper's default section; drugs on every chunk.
  const auto rows = chunk_paper(p, find, max_chars(40));
  ASSERT_GT(rows.size(), 1u);
  for (const auto& r : rows) {
    expect_schema_row(r);
    EXPECT_EQ(r["biomed_section"], "body");
    EXPECT_EQ(r["primary_drugs"], json({"metformin", "insulin", "aspirin"}));
    EXPECT_TRUE(r["year"].is_null());
  }
  EXPECT_EQ(rows[1]["id"], "x:p0#2");
  PaperInput no_id = p;
  no_id.id.clear();
  EXPECT_THROW(chunk_paper(no_id, find), eagle::Error);
  PaperInput title_only;
  title_only.id = "t";
  title_only.title = "Aspirin and heparin";
  const auto t = chunk_paper(title_only, find);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0]["text"], "Aspirin and heparin");
  EXPECT_EQ(t[0]["primary_drugs"], json({"aspirin", "heparin"}));
}
