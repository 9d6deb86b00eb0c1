// Tables and figures found by their captions (captions weighted as a field of their
// own: a caption row stands for its table or figure, article_chunker.h). Each table
// and figure of the shared JATS articles, asked for by its caption's title (read from
// the XML, as a user would type it), is in the top 3, on the user's path (ingest, then
// Engine::search with default settings), in both namespaces; before caption rows 30
// of 38 were (docs/benchmarks.md, "Captions").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "eagle/app/engine.h"
#include "eagle/plugin/plugin.h"
#include "eagle/ingest/xml/xml_tree.h"
#include "shared_data.h"
#include "support/temp_engine.h"

namespace fs = std::filesystem;
using namespace eagle;
namespace xml = eagle::ingest::xml;

namespace {

struct Caption {
  std::string file, label, query;
};

// Every table-wrap and fig with a caption: its label and its caption's title, else
// the caption's first sentence.
std::vector<Caption> captions_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  auto doc = xml::parse(bytes.str(), file.string());
  std::vector<Caption> out;
  std::vector<const xmlNode*> stack = {xmlDocGetRootElement(doc.get())};
  while (!stack.empty()) {
    const xmlNode* n = stack.back();
    stack.pop_back();
    for (const xmlNode* c = n->last; c; c = c->prev)
      if (c->type == XML_ELEMENT_NODE) stack.push_back(c);
    if (!xml::is(n, "table-wrap") && !xml::is(n, "fig")) continue;
    const xmlNode* caption = xml::child(n, "caption");
    if (!caption) continue;
    std::string query = xml::text(xml::child(caption, "title"));
    if (query.empty()) {
      const std::string p = xml::text(xml::child(caption, "p"));
      std::smatch m;
      query = std::regex_search(p, m, std::regex(R"(^.*?[a-z0-9)]\.(\s|$))")) ? m.str(0) : p;
    }
    if (query.empty()) continue;
    out.push_back({file.filename().string(), xml::text(xml::child(n, "label")), query});
  }
  return out;
}

// The rank (1-based) of the file's table or figure with this label, 0 when absent.
size_t rank_of(const search::RetrievalResponse& r, const Caption& c) {
  std::string label = c.label;
  while (!label.empty() && label.back() == '.') label.pop_back();
  for (size_t i = 0; i < r.hits.size(); ++i) {
    const auto& h = r.hits[i];
    const std::string type = h.field("chunk_type");
    if ((type == "table" || type == "figure") && h.document_id() == c.file && h.text.rfind(label, 0) == 0) return i + 1;
  }
  return 0;
}

}  // namespace

TEST(Captions, FindTheirTableOrFigureInTheTopThree) {
  const fs::path jats = eagle::testing::shared_data() / "docs" / "jats";
  ASSERT_TRUE(fs::is_directory(jats)) << jats;
  eagle::test_support::TempEngine s("captions");
  std::vector<std::string> files;
  std::vector<Caption> captions;
  for (const auto& e : fs::directory_iterator(jats)) {
    files.push_back(e.path().string());
    for (auto& c : captions_of(e.path())) captions.push_back(std::move(c));
  }
  ASSERT_EQ(files.size(), 8u);
  ASSERT_GE(captions.size(), 30u);
  app::IngestOptions o;
  s.engine->ingest(files, o);
  for (const auto& ns : plugin::namespaces()) {  // core and each plugin's of this build
    size_t top3 = 0;
    std::string misses;
    for (const auto& c : captions) {
      search::RetrievalRequest q;
      q.query = c.query;
      q.top_k = 5;
      q.plugin_namespace = ns;
      const auto r = s.engine->search(q);
      const size_t rank = rank_of(r, c);
      if (rank >= 1 && rank <= 3) ++top3;
      else misses += "\n  " + c.file + " " + c.label + " (rank " + std::to_string(rank) + "): " + c.query;
      // A caption row never reaches the caller: its table or figure stands in its place.
      for (const auto& h : r.hits) EXPECT_NE(h.field("type"), "caption") << h.id;
    }
    std::printf("captions %s: %zu of %zu in the top 3\n", ns.c_str(), top3, captions.size());
    EXPECT_GE(static_cast<double>(top3), 0.9 * static_cast<double>(captions.size())) << ns << misses;
  }
}

// A paragraph that cites a table brings it along (graph expansion, "cites"), and a
// caption row is not a chunk of the document's view.
TEST(Captions, ACitingParagraphBringsItsTableAndViewsHideCaptionRows) {
  const fs::path file = eagle::testing::shared_data() / "docs" / "jats" / "1471-2180-11-174.nxml";
  ASSERT_TRUE(fs::exists(file)) << file;
  eagle::test_support::TempEngine s("captions_cite");
  app::IngestOptions o;
  s.engine->ingest({file.string()}, o);
  // "All bacteria and phage strains used in this study are listed in Table 3."
  const auto r = s.search("bacteria and phage strains listed", 5);
  size_t paragraph = 0, table = 0;
  for (size_t i = 0; i < r.hits.size(); ++i) {
    if (!paragraph && r.hits[i].text.find("are listed in Table 3") != std::string::npos) paragraph = i + 1;
    if (!table && r.hits[i].field("chunk_type") == "table" && r.hits[i].text.rfind("Table 3", 0) == 0) table = i + 1;
  }
  ASSERT_GT(paragraph, 0u);
  ASSERT_GT(table, 0u) << "the cited table was not brought along";
  EXPECT_LE(table, paragraph + 2);
  const auto view = s.engine->document("1471-2180-11-174.nxml");
  ASSERT_TRUE(view);
  size_t tables = 0;
  for (const auto& c : view->chunks) {
    EXPECT_NE(c.metadata.value("type", ""), "caption") << c.id;
    tables += c.metadata.value("chunk_type", "") == "table";
  }
  EXPECT_EQ(tables, 3u);
  // Deleting it removes its caption rows too and counts what its view listed.
  EXPECT_EQ(s.engine->delete_document("1471-2180-11-174.nxml"), view->chunks.size());
  for (const auto& name : s.engine->catalog().list())
    EXPECT_TRUE(s.engine->catalog().get(name).ids_where_equals("document_id", "1471-2180-11-174.nxml").empty()) << name;
}
