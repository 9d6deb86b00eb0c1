// The binary form of a log record: every field type round-trips, damage is an error
// naming what was being read, and a store whose log holds the older JSON records
// still opens with every row.
#include "eagle/store/record_codec.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "eagle/core/error.h"
#include "eagle/store/collection.h"
#include "eagle/store/wal.h"

namespace fs = std::filesystem;
using namespace eagle;
using namespace eagle::store;

namespace {

CollectionSchema every_type_schema() {
  CollectionSchema s = chunk_schema("codec", 3);
  s.fields.clear();
  for (auto [name, type] : {std::pair{"s", FieldType::string}, {"i", FieldType::int64}, {"f", FieldType::float64},
                            {"b", FieldType::boolean}, {"l", FieldType::string_list}, {"j", FieldType::json}})
    s.fields.push_back({name, type, false});
  return s;
}

Record every_type_record(const std::string& id) {
  return Record{id,
                std::string("text with\0nul and \xc3\xa9", 20),
                {0.25f, -1e-30f, 3.0e38f},
                {std::string("label"), int64_t{-42}, 2.5, true, StringList{"a", "", "b"},
                 nlohmann::json{{"k", {1, 2.5, "x", nullptr}}}}};
}

}  // namespace

TEST(RecordCodec, EveryFieldTypeAndTheVectorBitsRoundTrip) {
  const auto schema = every_type_schema();
  std::vector<Record> records = {every_type_record("r1"), Record{"r2", "", {0, 0, 0}, std::vector<Value>(6)}};
  std::string bytes;
  encode_write(0xfeedULL, {"gone", "also gone"}, records, schema, bytes);
  size_t expect = 1 + 8 + 4 + 4 + encoded_id_bytes("gone") + encoded_id_bytes("also gone");
  for (const auto& r : records) expect += encoded_record_bytes(r, schema);
  EXPECT_EQ(bytes.size(), expect);  // the part cutter's arithmetic is the encoder's
  ASSERT_TRUE(is_binary_write(bytes));
  const auto w = decode_write(bytes, schema);
  EXPECT_EQ(w.txn, 0xfeedULL);
  EXPECT_EQ(w.deletes, (std::vector<std::string>{"gone", "also gone"}));
  ASSERT_EQ(w.records.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(w.records[i].id, records[i].id);
    EXPECT_EQ(w.records[i].text, records[i].text);
    EXPECT_EQ(w.records[i].vector, records[i].vector);  // the same bits: no text round trip
    EXPECT_EQ(w.records[i].values, records[i].values);
  }
  // A JSON payload (older logs) is told apart by its first byte.
  EXPECT_FALSE(is_binary_write(R"([{"id":"a"}])"));
  EXPECT_FALSE(is_binary_write("00000000000000ff\n{}"));
}

TEST(RecordCodec, DamageIsAnErrorNamingWhatWasBeingRead) {
  const auto schema = every_type_schema();
  std::string bytes;
  encode_write(0, {}, {every_type_record("r1")}, schema, bytes);
  // Every truncation fails cleanly.
  for (size_t n = 0; n < bytes.size(); ++n) {
    try {
      decode_write(std::string_view(bytes).substr(0, n), schema);
      ADD_FAILURE() << "a payload cut to " << n << " bytes decoded";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    }
  }
  // A count larger than the payload is refused before anything is allocated.
  std::string huge = bytes;
  huge[1 + 8 + 4] = '\xff', huge[1 + 8 + 5] = '\xff', huge[1 + 8 + 6] = '\xff', huge[1 + 8 + 7] = '\x7f';
  try {
    decode_write(huge, schema);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("record count"), std::string::npos) << e.what();
  }
  // Another schema's dimension, a value of the wrong kind, bytes left over.
  auto other = schema;
  other.vector.dim = 4;
  EXPECT_THROW(decode_write(bytes, other), Error);
  auto retyped = schema;
  retyped.fields[1].type = FieldType::string;
  EXPECT_THROW(decode_write(bytes, retyped), Error);
  EXPECT_THROW(decode_write(bytes + "x", schema), Error);
}

// A store written before the binary form: its log's JSON records replay, and new
// writes after them are binary; both survive the next open.
TEST(RecordCodec, ALogOfJsonRecordsStillReplaysBesideBinaryOnes) {
  const auto dir = fs::temp_directory_path() / ("eagle_codec_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const auto schema = chunk_schema("c", 4);
  { Collection::create(dir, schema); }
  fs::path log;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("wal-", 0) == 0) log = e.path();
  ASSERT_FALSE(log.empty());
  {
    WalWriter w(log, WalSync::always);
    w.append(1, WalOp::insert, R"([{"id":"a","text":"aspirin","vector":[1,0,0,0]},{"id":"b","text":"b","vector":[0,1,0,0]}])");
    w.append(2, WalOp::delete_ids, R"(["b"])");
    w.append(3, WalOp::txn_part, "00000000000000aa\n" R"({"delete":[],"upsert":[{"id":"t","text":"t","vector":[0,0,1,0]}]})");
    w.append(4, WalOp::txn_commit, "00000000000000aa");
  }
  {
    auto c = Collection::open(dir);
    EXPECT_TRUE(c->get("a"));
    EXPECT_FALSE(c->get("b"));
    EXPECT_TRUE(c->get("t"));
    c->upsert({Record{"n", "new", {0, 0, 0, 1}, std::vector<Value>(schema.fields.size())}});
  }
  auto c = Collection::open(dir);
  EXPECT_EQ(c->count(), 3u);
  ASSERT_TRUE(c->get("n"));
  EXPECT_EQ(c->get("n")->text, "new");
  EXPECT_EQ(c->search_text("aspirin", 5).at(0).id, "a");
  fs::remove_all(dir);
}
