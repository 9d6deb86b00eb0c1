// Semantics of every operator on hand-made rows, checked three ways: evaluate(), and
// compile() with and without scalar indexes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "filter_test_support.h"

using namespace eagle;
using namespace eagle::filter;
using namespace eagle::filter::testing;
using json = nlohmann::json;

namespace {

std::vector<Row> hand_rows() {
  std::vector<Row> rows(5);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto set = [&](size_t r, std::string id, std::vector<Value> v) {
    rows[r].id = std::move(id);
    rows[r].values = std::move(v);
  };
  //          title            path      year          count                        score   ratio
  //          flag   open      drugs                         tags                   meta
  set(0, "a1",
      {std::string("alpha"), std::string("/x/1"), int64_t{2020}, int64_t{5}, 0.5, 1.0, true, false,
       StringList{"aspirin", "ibuprofen"}, StringList{"t1"},
       json{{"k", 1}, {"s", "xy"}, {"arr", {1, "two", 3.5}}, {"nested", {{"a", true}}}}});
  set(1, "b2",
      {std::string("beta"),
       {},
       int64_t{2023},
       {},
       2.0,
       nan,
       false,
       {},
       StringList{},
       {},
       json{{"k", "1"}, {"s", nullptr}}});
  set(2, "c3", {{}, std::string("/y"), {}, int64_t{-3}, {}, -0.0, {}, true, {}, StringList{"t1", "t2"}, {}});
  set(3, "d4",
      {std::string("50% off_sale"), std::string("a\\b"), int64_t{2024}, std::numeric_limits<int64_t>::max(),
       1e300, 9007199254740992.0, true, true, StringList{"aspirin"}, StringList{}, json(nullptr)});
  set(4, "e5",
      {std::string("\xCE\xB1\xCE\xB2\xCE\xB3"),
       std::string(""),
       int64_t{-1},
       int64_t{0},
       -2.5,
       {},
       false,
       {},
       StringList{"x", "x"},
       {},
       json{{"k", 2.5}, {"arr", "not a list"}}});
  return rows;
}

class FilterEval : public ::testing::Test {
 protected:
  FilterEval()
      : schema_(test_schema()),
        indexed_(schema_, hand_rows(), true, true),
        plain_(schema_, hand_rows(), false, false) {}

  // The rows evaluate() accepts, after checking both compiled bitsets agree with it.
  std::vector<uint32_t> rows_where(const std::string& expr, const Params& params = {}) {
    Filter f = parse(expr, schema_, params);
    auto want = indexed_.evaluated(f);
    EXPECT_EQ(bits(compile(f, indexed_)), want) << expr << " (indexed)";
    EXPECT_EQ(bits(compile(f, plain_)), want) << expr << " (row by row)";
    return want;
  }

  CollectionSchema schema_;
  Table indexed_, plain_;
};

using V = std::vector<uint32_t>;

}  // namespace

TEST_F(FilterEval, IntComparisons) {
  EXPECT_EQ(rows_where("year == 2020"), V({0}));
  EXPECT_EQ(rows_where("year != 2020"), V({1, 3, 4}));  // null year: != is false
  EXPECT_EQ(rows_where("year < 2023"), V({0, 4}));
  EXPECT_EQ(rows_where("year <= 2023"), V({0, 1, 4}));
  EXPECT_EQ(rows_where("year > 2023"), V({3}));
  EXPECT_EQ(rows_where("year >= 2023"), V({1, 3}));
  EXPECT_EQ(rows_where("year > 2020.5"), V({1, 3}));
  EXPECT_EQ(rows_where("year == 2020.0"), V({0}));
  EXPECT_EQ(rows_where("year == 2020.5"), V({}));
  EXPECT_EQ(rows_where("2023 > year"), V({0, 4}));
  EXPECT_EQ(rows_where("year == 1999"), V({}));
}

TEST_F(FilterEval, IntExtremesCompareExactlyWithDoubles) {
  EXPECT_EQ(rows_where("count == 9223372036854775807"), V({3}));
  EXPECT_EQ(rows_where("count < 9223372036854775808.0"), V({0, 2, 3, 4}));  // 2^63 exceeds every int64
  EXPECT_EQ(rows_where("count >= 9223372036854775807.0"), V({}));           // that literal rounds to 2^63
  EXPECT_EQ(rows_where("count > 9.2e18"), V({3}));
  EXPECT_EQ(rows_where("count > -1e300"), V({0, 2, 3, 4}));
}

TEST_F(FilterEval, ChainedRanges) {
  EXPECT_EQ(rows_where("2020 < year <= 2024"), V({1, 3}));
  EXPECT_EQ(rows_where("2020 <= year < 2024"), V({0, 1}));
  EXPECT_EQ(rows_where("2024 >= year > 2020"), V({1, 3}));
  EXPECT_EQ(rows_where("2023 <= year <= 2023"), V({1}));
  EXPECT_EQ(rows_where("2023 < year < 2023"), V({}));
  EXPECT_EQ(rows_where("2024 < year < 2020"), V({}));
  EXPECT_EQ(rows_where("-1 <= year < 2020.5"), V({0, 4}));
  EXPECT_EQ(rows_where("\"alpha\" <= title < \"beta\""), V({0}));
}

TEST_F(FilterEval, DoublesNaNAndSignedZero) {
  EXPECT_EQ(rows_where("score > 1"), V({1, 3}));
  EXPECT_EQ(rows_where("score == 0.5"), V({0}));
  EXPECT_EQ(rows_where("ratio != 1"), V({1, 2, 3}));  // NaN != 1, as in IEEE
  EXPECT_EQ(rows_where("ratio == 0"), V({2}));        // -0.0 == 0
  EXPECT_EQ(rows_where("ratio < 1"), V({2}));         // NaN is in no range
  EXPECT_EQ(rows_where("ratio in [0, 1]"), V({0, 2}));
  EXPECT_EQ(rows_where("ratio not in [1]"), V({1, 2, 3}));
  EXPECT_EQ(rows_where("ratio == 9007199254740992"), V({3}));
  EXPECT_EQ(rows_where("ratio == 9007199254740993"), V({}));  // 2^53 + 1 is not the double 2^53
  EXPECT_EQ(rows_where("ratio < 9007199254740993"), V({0, 2, 3}));
  EXPECT_EQ(rows_where("score is null"), V({2}));
  EXPECT_EQ(rows_where("ratio is not null"), V({0, 1, 2, 3}));  // NaN is a value
}

TEST_F(FilterEval, Strings) {
  EXPECT_EQ(rows_where("title == \"alpha\""), V({0}));
  EXPECT_EQ(rows_where("title != 'alpha'"), V({1, 3, 4}));
  EXPECT_EQ(rows_where("title > \"b\""), V({1, 4}));  // bytes: UTF-8 sorts after ASCII
  EXPECT_EQ(rows_where("title in [\"alpha\", \"beta\", \"zzz\"]"), V({0, 1}));
  EXPECT_EQ(rows_where("title not in [\"alpha\"]"), V({1, 3, 4}));
  EXPECT_EQ(rows_where("title in []"), V({}));
  EXPECT_EQ(rows_where("title not in []"), V({0, 1, 3, 4}));
  EXPECT_EQ(rows_where("path == \"\""), V({4}));
  EXPECT_EQ(rows_where("path == \"a\\\\b\""), V({3}));
}

TEST_F(FilterEval, Like) {
  EXPECT_EQ(rows_where("title like \"a%\""), V({0}));
  EXPECT_EQ(rows_where("title like \"%a\""), V({0, 1}));
  EXPECT_EQ(rows_where("title like \"%lp%\""), V({0}));
  EXPECT_EQ(rows_where("title like \"_eta\""), V({1}));
  EXPECT_EQ(rows_where("title like \"_et\""), V({}));
  EXPECT_EQ(rows_where(R"(title like "50\% off\_%")"), V({3}));
  EXPECT_EQ(rows_where(R"(title like "50\%%")"), V({3}));
  EXPECT_EQ(rows_where(R"(title like "50_ off%")"), V({3}));  // '_' matches the '%'
  EXPECT_EQ(rows_where(R"(title like "%\_%")"), V({3}));
  EXPECT_EQ(rows_where(R"(title like "50\_%")"), V({}));
  EXPECT_EQ(rows_where("title like \"\xCE\xB1_\xCE\xB3\""), V({4}));  // '_' is one UTF-8 character
  EXPECT_EQ(rows_where("title like \"___\""), V({4}));
  EXPECT_EQ(rows_where("title like \"%\""), V({0, 1, 3, 4}));  // every non-null string
  EXPECT_EQ(rows_where("title like \"\""), V({}));
  EXPECT_EQ(rows_where("path like \"\""), V({4}));
  EXPECT_EQ(rows_where(R"(path like "a\\b")"), V({3}));
  EXPECT_EQ(rows_where(R"(path like "%/_")"), V({0, 2}));
  EXPECT_EQ(rows_where("not title like \"a%\""), V({1, 2, 3, 4}));
}

TEST_F(FilterEval, Bools) {
  EXPECT_EQ(rows_where("flag == true"), V({0, 3}));
  EXPECT_EQ(rows_where("flag != true"), V({1, 4}));
  EXPECT_EQ(rows_where("flag == false"), V({1, 4}));
  EXPECT_EQ(rows_where("open == false"), V({0}));
  EXPECT_EQ(rows_where("open in [true, false]"), V({0, 2, 3}));
  EXPECT_EQ(rows_where("true == open"), V({2, 3}));
}

TEST_F(FilterEval, NullsAndTwoValuedNot) {
  EXPECT_EQ(rows_where("title is null"), V({2}));
  EXPECT_EQ(rows_where("title is not null"), V({0, 1, 3, 4}));
  EXPECT_EQ(rows_where("drugs is null"), V({2}));
  EXPECT_EQ(rows_where("drugs is not null"), V({0, 1, 3, 4}));  // an empty list is not null
  EXPECT_EQ(rows_where("meta is null"), V({2, 3}));             // missing or a json null
  EXPECT_EQ(rows_where("id is null"), V({}));
  EXPECT_EQ(rows_where("id is not null"), V({0, 1, 2, 3, 4}));
  EXPECT_EQ(rows_where("not year == 2020"), V({1, 2, 3, 4}));  // not is plain negation...
  EXPECT_EQ(rows_where("year != 2020"), V({1, 3, 4}));         // ...but != on null is false
  EXPECT_EQ(rows_where("not year in [2020]"), V({1, 2, 3, 4}));
  EXPECT_EQ(rows_where("year not in [2020]"), V({1, 3, 4}));
  EXPECT_EQ(rows_where("not not year == 2020"), V({0}));
  EXPECT_EQ(rows_where("not (year == 2020 or year is null)"), V({1, 3, 4}));
}

TEST_F(FilterEval, Arrays) {
  EXPECT_EQ(rows_where("array_contains(drugs, \"aspirin\")"), V({0, 3}));
  EXPECT_EQ(rows_where("array_contains(drugs, \"x\")"), V({4}));
  EXPECT_EQ(rows_where("array_contains_any(drugs, [\"ibuprofen\", \"none\"])"), V({0}));
  EXPECT_EQ(rows_where("array_contains_any(drugs, [\"ibuprofen\", \"aspirin\"])"), V({0, 3}));
  EXPECT_EQ(rows_where("array_contains_all(drugs, [\"aspirin\", \"ibuprofen\"])"), V({0}));
  EXPECT_EQ(rows_where("array_contains_all(drugs, [\"aspirin\"])"), V({0, 3}));
  EXPECT_EQ(rows_where("array_contains_all(drugs, [\"x\"])"), V({4}));
  EXPECT_EQ(rows_where("array_contains_all(drugs, [\"x\", \"y\"])"), V({}));
  EXPECT_EQ(rows_where("array_contains_all(tags, [\"t1\"])"), V({0, 2}));
  EXPECT_EQ(rows_where("array_contains_any(tags, [\"t2\", \"t9\"])"), V({2}));
  EXPECT_EQ(rows_where("not array_contains(drugs, \"aspirin\")"), V({1, 2, 4}));
}

TEST_F(FilterEval, Id) {
  EXPECT_EQ(rows_where("id == \"b2\""), V({1}));
  EXPECT_EQ(rows_where("id in [\"a1\", \"e5\", \"zz\"]"), V({0, 4}));
  EXPECT_EQ(rows_where("id like \"%5\""), V({4}));
  EXPECT_EQ(rows_where("id > \"c\""), V({2, 3, 4}));
  EXPECT_EQ(rows_where("id != \"a1\""), V({1, 2, 3, 4}));
}

TEST_F(FilterEval, JsonKeys) {
  EXPECT_EQ(rows_where("meta[\"k\"] == 1"), V({0}));
  EXPECT_EQ(rows_where("meta[\"k\"] == \"1\""), V({1}));
  EXPECT_EQ(rows_where("meta[\"k\"] > 1"), V({4}));
  EXPECT_EQ(rows_where("meta[\"k\"] != 1"), V({4}));  // a string member is not comparable with 1
  EXPECT_EQ(rows_where("meta[\"k\"] in [1, \"1\"]"), V({0, 1}));
  EXPECT_EQ(rows_where("meta[\"k\"] not in [1]"), V({4}));
  EXPECT_EQ(rows_where("meta[\"k\"] not in [1, \"x\"]"), V({}));  // mixed kinds: some != is false
  EXPECT_EQ(rows_where("meta[\"s\"] is null"), V({1, 2, 3, 4}));
  EXPECT_EQ(rows_where("meta[\"s\"] like \"x%\""), V({0}));
  EXPECT_EQ(rows_where("meta[\"arr\"][1] == \"two\""), V({0}));
  EXPECT_EQ(rows_where("meta[\"arr\"][9] is null"), V({0, 1, 2, 3, 4}));
  EXPECT_EQ(rows_where("meta[\"nested\"][\"a\"] == true"), V({0}));
  EXPECT_EQ(rows_where("meta[\"nested\"] is not null"), V({0}));
  EXPECT_EQ(rows_where("meta[\"nested\"] == 1"), V({}));  // an object is not a scalar
  EXPECT_EQ(rows_where("array_contains(meta[\"arr\"], 3.5)"), V({0}));
  EXPECT_EQ(rows_where("array_contains(meta[\"arr\"], \"t\")"), V({}));
  EXPECT_EQ(rows_where("array_contains_all(meta[\"arr\"], [1, \"two\"])"), V({0}));
  EXPECT_EQ(rows_where("array_contains_any(meta[\"arr\"], [7, 3.5])"), V({0}));
}

TEST_F(FilterEval, Precedence) {
  EXPECT_EQ(rows_where("flag == false or year == 2020 and title == \"beta\""), V({1, 4}));
  EXPECT_EQ(rows_where("(flag == false or year == 2020) and title == \"beta\""), V({1}));
  EXPECT_EQ(rows_where("not flag == true and year > 2020"), V({1}));  // (not flag) and year
  EXPECT_EQ(rows_where("not (flag == true and year > 2020)"), V({0, 1, 2, 4}));
  EXPECT_EQ(rows_where("year == 2020 || year == 2023 && flag == false"), V({0, 1}));
}

TEST_F(FilterEval, Templates) {
  Params p = {{"ys", {2020, 2024}}, {"lo", 2021}, {"pat", "%a"}, {"drug", "aspirin"}};
  EXPECT_EQ(rows_where("year in {ys}", p), V({0, 3}));
  EXPECT_EQ(rows_where("{lo} <= year", p), V({1, 3}));
  EXPECT_EQ(rows_where("title like {pat}", p), V({0, 1}));
  EXPECT_EQ(rows_where("array_contains(drugs, {drug}) and year >= {lo}", p), V({3}));
}

TEST_F(FilterEval, MixedIndexedAndUnindexedOperands) {
  // title and year are indexed, path and count are not: compile mixes lookups and scans.
  EXPECT_EQ(rows_where("year >= 2020 and path is not null"), V({0, 3}));
  EXPECT_EQ(rows_where("count < 1 or title == \"alpha\""), V({0, 2, 4}));
  EXPECT_EQ(rows_where("not (path like \"/%\" and year is null)"), V({0, 1, 3, 4}));
  EXPECT_EQ(rows_where("(open == true or flag == true) and not count == 0"), V({0, 2, 3}));
}

// compile() with a row set reads no row outside it (deleted rows may hold anything).
TEST(FilterCompile, ReadsOnlyRowsWithinTheGivenSet) {
  class Spy : public Table {
   public:
    using Table::Table;
    const RowView& row(uint32_t r) const override {
      read.push_back(r);
      return Table::row(r);
    }
    mutable std::vector<uint32_t> read;
  };
  const CollectionSchema schema = test_schema();
  Spy spy(schema, hand_rows(), true, false);
  Bitset within(5);
  within.set(1);
  within.set(3);
  // path has no index: the scan visits only rows 1 and 3; the indexed year narrows it to 3.
  Filter f = parse("year > 2023 and path is not null", schema);
  EXPECT_EQ(bits(compile(f, spy, within)), V({3}));
  EXPECT_EQ(spy.read, V({3}));
  spy.read.clear();
  EXPECT_EQ(bits(compile(parse("path is null or count == 5", schema), spy, within)), V({1}));
  EXPECT_EQ(spy.read, V({1, 3}));  // the 'or' does not revisit row 1 once it matched
  EXPECT_THROW(compile(f, spy, Bitset(4)), Error);
}

TEST(FilterCompile, IndexOfTheWrongTypeIsAnInternalError) {
  class Wrong : public Table {
   public:
    using Table::Table;
    const ScalarIndex* index(size_t) const override { return &idx; }
    ScalarIndex idx{FieldType::string};
  };
  Wrong t(test_schema(), hand_rows(), false, false);
  try {
    compile(parse("year == 1", test_schema()), t);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::internal);
    EXPECT_NE(std::string(e.what()).find("the index of field 'year' is string"), std::string::npos);
  }
}
