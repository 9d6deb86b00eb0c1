// RowTable (rows packed into shared blocks) against the rows it was given: ids, text
// references, every value and each field alone, for rows of every field type, rows
// larger than a block and a table moved (as a compaction moves its fresh rows in).
#include "eagle/store/row_table.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "eagle/store/record_codec.h"

namespace row_table_test {

using namespace eagle;
using eagle::store::RowTable;
using eagle::store::TextRef;

CollectionSchema test_schema() {
  CollectionSchema s;
  s.name = "t";
  s.fields = {{"name", FieldType::string, true},      {"year", FieldType::int64, true},
              {"score", FieldType::float64, false},   {"flag", FieldType::boolean, false},
              {"tags", FieldType::string_list, true}, {"meta", FieldType::json, false}};
  return s;
}

std::vector<Value> random_values(std::mt19937& rng, size_t big) {
  std::vector<Value> v(6);
  if (rng() % 2) v[0] = std::string(rng() % 3 == 0 ? big : rng() % 40, static_cast<char>('a' + rng() % 26));
  if (rng() % 2) v[1] = static_cast<int64_t>(rng()) - (1 << 30);
  if (rng() % 3 == 0) v[2] = static_cast<double>(rng()) / 7.0;
  if (rng() % 3 == 0) v[3] = rng() % 2 == 0;
  if (rng() % 2) v[4] = StringList{"x" + std::to_string(rng() % 9), "y"};
  if (rng() % 4 == 0) v[5] = nlohmann::json{{"k", rng() % 100}, {"l", {1, 2}}};
  return v;
}

TEST(RowTable, KeepsEveryRowsIdTextAndValues) {
  const auto schema = test_schema();
  std::mt19937 rng(5);
  RowTable table;
  std::vector<std::string> ids;
  std::vector<std::vector<Value>> values;
  std::vector<TextRef> texts;
  for (uint32_t r = 0; r < 3000; ++r) {
    // Every 500th row is larger than a block (1 MiB): a block of its own.
    const size_t big = r % 500 == 7 ? (1u << 20) + 3 : 60;
    ids.push_back(r % 97 == 0 ? std::string() : "row-" + std::to_string(r) + std::string(rng() % 30, 'i'));
    values.push_back(random_values(rng, big));
    TextRef t;
    t.offset = rng() % (1ull << 40);
    t.length = static_cast<uint32_t>(rng());
    t.crc = static_cast<uint32_t>(rng());
    texts.push_back(t);
    table.append(ids.back(), t, values.back(), schema);
  }
  table.text(17).offset = 12345;  // references change after a checkpoint writes the text
  texts[17].offset = 12345;
  RowTable moved = std::move(table);
  ASSERT_EQ(moved.size(), ids.size());
  for (uint32_t r = 0; r < moved.size(); ++r) {
    ASSERT_EQ(moved.id(r), ids[r]) << r;
    ASSERT_EQ(moved.text(r).offset, texts[r].offset) << r;
    ASSERT_EQ(moved.text(r).length, texts[r].length) << r;
    ASSERT_EQ(moved.text(r).crc, texts[r].crc) << r;
    ASSERT_EQ(moved.values(r, schema).unpack(schema.fields.size()), values[r]) << r;
    for (size_t f = 0; f < schema.fields.size(); ++f)
      ASSERT_EQ(moved.value(r, f, schema), values[r][f]) << r << "/" << f;
    ASSERT_EQ(store::decode_values(moved.encoded_values(r), schema), values[r]) << r;
  }
  EXPECT_GT(moved.memory_bytes(), 6u << 20);  // six rows of more than a block each
  moved.clear();
  EXPECT_EQ(moved.size(), 0u);
  EXPECT_EQ(moved.memory_bytes(), 0u);
}

TEST(RowTable, AValueOfAFieldPastTheSchemaIsRefused) {
  const auto schema = test_schema();
  RowTable table;
  table.append("a", TextRef{}, std::vector<Value>(6), schema);
  EXPECT_THROW(table.value(0, 6, schema), Error);
}

}  // namespace row_table_test
