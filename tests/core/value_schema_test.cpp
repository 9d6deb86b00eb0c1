#include <gtest/gtest.h>

#include "eagle/core/bitset.h"
#include "eagle/core/error.h"
#include "eagle/core/schema.h"
#include "eagle/core/value.h"

using namespace eagle;

TEST(Bitset, SetOperationsAndIteration) {
  Bitset a(130), b(130);
  a.set(0);
  a.set(64);
  a.set(129);
  b.set(64);
  b.set(100);
  EXPECT_EQ(a.count(), 3u);
  Bitset c = a;
  c &= b;
  EXPECT_EQ(c.count(), 1u);
  EXPECT_TRUE(c.test(64));
  c = a;
  c |= b;
  EXPECT_EQ(c.count(), 4u);
  c.flip();
  EXPECT_EQ(c.count(), 126u);  // flip never sets bits past size()
  std::vector<size_t> seen;
  a.for_each([&](size_t i) { seen.push_back(i); });
  EXPECT_EQ(seen, (std::vector<size_t>{0, 64, 129}));
  a.subtract(b);
  EXPECT_FALSE(a.test(64));
  Bitset all(70, true);
  EXPECT_EQ(all.count(), 70u);
}

TEST(Value, FromJsonChecksTypesAndNamesTheField) {
  EXPECT_EQ(std::get<int64_t>(value_from_json(2021, FieldType::int64, "year")), 2021);
  EXPECT_TRUE(is_null(value_from_json(nullptr, FieldType::string, "x")));
  auto l = std::get<StringList>(value_from_json({"a", "b"}, FieldType::string_list, "drugs"));
  EXPECT_EQ(l.size(), 2u);
  try {
    value_from_json("2021", FieldType::int64, "year");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("year"), std::string::npos);
  }
  EXPECT_THROW(value_from_json({1, 2}, FieldType::string_list, "drugs"), Error);
  EXPECT_EQ(value_to_json(Value{std::string("x")}), "x");
}

TEST(Schema, ChunkSchemaHasEverySpecFieldAndRoundTrips) {
  auto s = chunk_schema("eagle_text", 100);
  for (const char* f : {"kb_name", "document_id", "type", "path", "source_type", "year", "chunk_type",
                        "parent_section", "source_chunk_id", "file_name", "document_name", "source_uri",
                        "content_summary", "connect_to"})
    EXPECT_TRUE(s.field_index(f).has_value()) << f;
  // A plugin's chunk fields come after the core's, with their type and index.
  const auto with = chunk_schema("eagle_text", 100, Metric::cosine, {{"topics", FieldType::string_list, true}});
  ASSERT_TRUE(with.field_index("topics").has_value());
  EXPECT_EQ(*with.field_index("topics"), s.fields.size());
  EXPECT_EQ(with.fields.back().type, FieldType::string_list);
  EXPECT_TRUE(with.fields.back().indexed);
  EXPECT_FALSE(s.field_index("topics").has_value());
  auto back = CollectionSchema::from_json(s.to_json());
  EXPECT_EQ(back.to_json(), s.to_json());
  EXPECT_EQ(back.vector.hnsw.m, 16u);
  EXPECT_EQ(back.vector.hnsw.ef_construction, 256u);
  EXPECT_EQ(back.vector.hnsw.ef_search, 64u);
}

TEST(Schema, ValidationRejectsBadNamesAndDuplicates) {
  auto s = chunk_schema("ok", 8);
  s.name = "../etc";
  EXPECT_THROW(s.validate(), Error);
  s = chunk_schema("ok", 8);
  s.fields.push_back({"year", FieldType::int64, false});
  EXPECT_THROW(s.validate(), Error);
  s = chunk_schema("ok", 8);
  s.vector.dim = 0;
  EXPECT_THROW(s.validate(), Error);
  EXPECT_THROW(parse_metric("hamming"), Error);
  EXPECT_EQ(parse_metric("cosine"), Metric::cosine);
}

// PackedValues keeps exactly the non-null values: every field reads back as it was
// set (the unpacked vector is the oracle), nulls and fields past the end read null.
TEST(PackedValues, ReadsBackEveryFieldAsSetAndNullElsewhere) {
  std::vector<Value> all(16);
  all[0] = std::string("doc-1");
  all[3] = int64_t{2024};
  all[7] = StringList{"a", "b"};
  all[15] = nlohmann::json{{"k", 1}};
  const PackedValues packed(all);
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(packed[i], all[i]) << "field " << i;
  EXPECT_TRUE(is_null(packed[16]));
  EXPECT_TRUE(is_null(packed[1000]));
  EXPECT_EQ(packed.unpack(16), all);
  const ValuesView full(all), view(packed);
  for (size_t i = 0; i < 20; ++i) EXPECT_EQ(full[i], view[i]) << "field " << i;
  EXPECT_TRUE(is_null(PackedValues(std::vector<Value>(16))[0]));
}
