// Reference lists on the user's path: `type: references` chunks from JATS ref-lists,
// PDF bibliographies and Markdown/HTML "References" sections, left out of default
// search (they are dense with a paper's own terms and crowded the hits) and brought
// back by a chunk_type or type facet.
#include <gtest/gtest.h>
#include "support/build_paths.h"

#include <filesystem>
#include <fstream>

#include "eagle/app/engine.h"
#include "shared_data.h"
#include "support/temp_engine.h"

namespace fs = std::filesystem;
using namespace eagle;
using namespace eagle::app;

namespace {

size_t references_in(const search::RetrievalResponse& r) {
  size_t n = 0;
  for (const auto& h : r.hits) n += h.field("chunk_type") == "references" || h.field("type") == "references";
  return n;
}

}  // namespace

TEST(References, AreTheirOwnTypeOutOfDefaultSearchAndBackWithAFacet) {
  const fs::path docs = eagle::testing::shared_data() / "docs";
  ASSERT_TRUE(fs::is_directory(docs)) << docs;
  eagle::test_support::TempEngine s("references");
  // A Markdown paper with a References list.
  const fs::path md = s.dir / "note.md";
  std::ofstream(md) << "# Zolmitriptan in cluster headache\n\n## Results\n\nZolmitriptan nasal spray relieved cluster "
                       "headache attacks within 30 minutes.\n\n## References\n\n1. Smith J. Zolmitriptan nasal spray "
                       "for cluster headache attacks. Neurology. 2006.\n2. Cittadini E. Zolmitriptan trials. Brain. "
                       "2010.\n";
  IngestOptions o;
  s.engine->ingest({(docs / "jats" / "pone.0000217.nxml").string(), (docs / "pdf" / "iron-deficiency-anaemia.pdf").string(),
                    md.string()},
                   o);
  // Every chunk of a reference list is type references, in each format, and no
  // paragraph is left under a References heading.
  for (const char* id : {"jats/pone.0000217.nxml", "pdf/iron-deficiency-anaemia.pdf", "note.md"}) {
    std::optional<DocumentView> v;
    for (const auto& d : s.engine->list_documents({}))
      if (d.document_id.find(fs::path(id).filename().string()) != std::string::npos) v = s.engine->document(d.document_id);
    ASSERT_TRUE(v) << id;
    size_t refs = 0;
    for (const auto& c : v->chunks) {
      const std::string path = c.metadata.value("path", "");
      const bool under_references = path.find("/References") != std::string::npos;
      if (c.metadata.value("chunk_type", "") == "references") {
        ++refs;
        EXPECT_EQ(c.metadata.value("type", ""), "references") << c.id;
      } else if (under_references && c.metadata.value("chunk_type", "") != "section_summary") {
        ADD_FAILURE() << id << ": a " << c.metadata.value("chunk_type", "") << " chunk under References: " << c.id;
      }
      // A section of entries alone has no summary to restate them.
      if (c.metadata.value("chunk_type", "") == "section_summary")
        EXPECT_EQ(path.find("/References"), std::string::npos) << c.id;
    }
    EXPECT_GT(refs, 0u) << id;
  }
  // A reference's own words: no references chunk by default; with the facet, it.
  search::RetrievalRequest q;
  q.query = "Smith Zolmitriptan nasal spray Neurology 2006";
  q.top_k = 5;
  auto plain = s.engine->search(q);
  EXPECT_EQ(references_in(plain), 0u);
  ASSERT_FALSE(plain.hits.empty());
  EXPECT_NE(plain.hits[0].text.find("relieved cluster headache"), std::string::npos) << plain.hits[0].text;
  q.facets["chunk_type"] = "references";
  auto faceted = s.engine->search(q);
  ASSERT_FALSE(faceted.hits.empty());
  EXPECT_EQ(references_in(faceted), faceted.hits.size());
  q.facets.clear();
  q.facets["type"] = "references";
  EXPECT_GT(references_in(s.engine->search(q)), 0u);
  // The papers' own titles find their text, not their bibliographies.
  for (const auto& d : s.engine->list_documents({})) {
    search::RetrievalRequest t;
    t.query = d.document_name;
    t.top_k = 5;
    EXPECT_EQ(references_in(s.engine->search(t)), 0u) << d.document_name;
  }
}
