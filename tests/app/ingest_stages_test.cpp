// The ingest's stage types on their own (app/ingest/): the slice and its tenancy
// renames, the registry spill, the typed copy of a source's fields, the extension
// lookups. The stages together are tested through Engine::ingest (documents_ingest,
// ingest_hooks, concurrency tests).
#include <gtest/gtest.h>

#include "eagle/app/ingest/extension.h"
#include "eagle/app/ingest/slice.h"
#include "eagle/app/ingest/spill.h"

namespace eagle::app {
namespace {
using nlohmann::json;

Slice two_documents() {
  Slice s;
  registry::DocumentRecord a, b;
  a.document_id = "a";
  b.document_id = "kb1:b";
  s.documents.push_back(a);
  s.add({{"id", "a#0"}, {"document_id", "a"}, {"connect_to", json::array({"a#1", {{"target", "a#0"}}})}}, "t0");
  s.add({{"id", "a#1"}, {"document_id", "a"}, {"source_chunk_id", "a#0"}}, "t1", IngestRoute{"c", "e"});
  s.documents.push_back(b);
  s.add({{"id", "kb1:b#0"}, {"document_id", "kb1:b"}}, "t2");
  s.tags["a"] = {"x"};
  s.brands["a"] = {{"Brand", "generic"}};
  s.source_sha256["kb1:b"] = "h";
  return s;
}

TEST(IngestSlice, RowsKeepTheirDocumentRouteAndImageSlotsInStep) {
  auto s = two_documents();
  ASSERT_EQ(s.rows.size(), 3u);
  EXPECT_EQ(s.document_of, (std::vector<size_t>{0, 0, 1}));
  EXPECT_FALSE(s.route[0]);
  ASSERT_TRUE(s.route[1]);
  EXPECT_EQ(s.route[1]->collection, "c");
  EXPECT_EQ(s.embed[2], "t2");
  ingest::ImageTile tile;
  tile.encoded = "PNG";
  tile.extension = ".png";
  s.add_tile({{"id", "kb1:b#p1"}}, std::move(tile));
  EXPECT_TRUE(s.is_tile(3));
  EXPECT_FALSE(s.is_tile(2));
  EXPECT_EQ(s.image_bytes, 3u);
  EXPECT_EQ(s.document_of.back(), 1u);
  EXPECT_EQ(s.route.size(), s.rows.size());
}

TEST(IngestSlice, AScopedIngestQualifiesIdsEdgesAndKeysButKeepsWhatItIsTold) {
  auto s = two_documents();
  qualify_slice(s, "kb1", [](const std::string& id) { return id == "never"; });
  EXPECT_EQ(s.documents[0].document_id, "kb1:a");
  EXPECT_EQ(s.documents[1].document_id, "kb1:b");  // already qualified: unchanged
  EXPECT_EQ(s.rows[0]["id"], "kb1:a#0");
  EXPECT_EQ(s.rows[0]["document_id"], "kb1:a");
  EXPECT_EQ(s.rows[0]["connect_to"][0], "kb1:a#1");
  EXPECT_EQ(s.rows[0]["connect_to"][1]["target"], "kb1:a#0");
  EXPECT_EQ(s.rows[1]["source_chunk_id"], "kb1:a#0");
  EXPECT_EQ(s.rows[2]["id"], "kb1:b#0");
  EXPECT_TRUE(s.tags.count("kb1:a"));
  EXPECT_TRUE(s.brands.count("kb1:a"));
  EXPECT_TRUE(s.source_sha256.count("kb1:b"));

  auto kept = two_documents();
  qualify_slice(kept, "kb1", [](const std::string& id) { return id == "a"; });
  EXPECT_EQ(kept.documents[0].document_id, "a");
  EXPECT_EQ(kept.rows[0]["id"], "a#0");
  EXPECT_EQ(kb_qualified("k", "k:x"), "k:x");
  EXPECT_EQ(kb_qualified("k", "x"), "k:x");
}

TEST(IngestSlice, OnlyFieldsOfTheSchemaWithTheirTypeAreCopied) {
  const auto schema = chunk_schema("c", 4);
  json row = {{"id", "r"}, {"section", "kept"}};
  const json meta = {{"year", 2020}, {"section", "source"}, {"keywords", json::array({"a", 1})},
                     {"document_name", 7}, {"journal", "not a field"}, {"kb_name", "k"}};
  copy_known_fields(meta, schema, row);
  EXPECT_EQ(row["year"], 2020);
  EXPECT_EQ(row["section"], "kept");      // the row's own value wins
  EXPECT_FALSE(row.contains("document_name"));  // a number where a string is wanted
  EXPECT_FALSE(row.contains("journal"));
  EXPECT_EQ(row["kb_name"], "k");
}

TEST(IngestSpill, RecordsComeBackInOrderWithTheirBrandsTagsAndHashesAcrossBatches) {
  DocumentSpill spill;
  constexpr size_t kRecords = 2500;  // more than two of the reader's batches
  for (size_t i = 0; i < kRecords; ++i) {
    registry::DocumentRecord d;
    d.document_id = "d" + std::to_string(i);
    d.name = "name \xce\xb1 " + std::to_string(i);
    d.collections_used = {"c1", "c2"};
    if (i % 3 == 0) d.year = static_cast<int64_t>(1900 + i);
    const std::vector<registry::BrandName> brands = {{"B", "g"}};
    const std::vector<std::string> tags = {"t" + std::to_string(i)};
    spill.write(d, i % 2 ? &brands : nullptr, i % 5 == 0 ? &tags : nullptr, i % 7 == 0 ? "sha" : "");
  }
  EXPECT_EQ(spill.count(), kRecords);
  size_t n = 0;
  spill.for_each([&](registry::DocumentRecord& d, const std::vector<registry::BrandName>* brands,
                     const std::vector<std::string>* tags, const std::string& sha) {
    EXPECT_EQ(d.document_id, "d" + std::to_string(n));
    EXPECT_EQ(d.name, "name \xce\xb1 " + std::to_string(n));
    EXPECT_EQ(d.collections_used, (std::vector<std::string>{"c1", "c2"}));
    EXPECT_EQ(d.year.has_value(), n % 3 == 0);
    EXPECT_EQ(brands != nullptr, n % 2 == 1);
    if (brands) EXPECT_EQ((*brands)[0].generic, "g");
    EXPECT_EQ(tags != nullptr, n % 5 == 0);
    if (tags) EXPECT_EQ((*tags)[0], "t" + std::to_string(n));
    EXPECT_EQ(sha, n % 7 == 0 ? "sha" : "");
    ++n;
  });
  EXPECT_EQ(n, kRecords);
}

TEST(IngestExtensionLookup, ReadersByKindAndFormatsByName) {
  IngestExtensions ext;
  ext.readers.push_back({ingest::FileKind::spl, "an SPL label", std::nullopt, {}});
  InputFormat f;
  f.name = "compounds";
  ext.formats.push_back(f);
  ASSERT_NE(ext.reader_of(ingest::FileKind::spl), nullptr);
  EXPECT_EQ(ext.reader_of(ingest::FileKind::spl)->description, "an SPL label");
  EXPECT_EQ(ext.reader_of(ingest::FileKind::jats), nullptr);
  EXPECT_NE(ext.format_named("compounds"), nullptr);
  EXPECT_EQ(ext.format_named("spl"), nullptr);
}

}  // namespace
}  // namespace eagle::app
