// Parsing: the canonical form shows how an expression was understood (precedence,
// normalised operators, decoded literals); errors must name the right position.
#include <gtest/gtest.h>

#include "eagle/filter/filter_error.h"
#include "filter_test_support.h"

using namespace eagle;
using namespace eagle::filter;
using namespace eagle::filter::testing;

namespace {

std::string canon(std::string_view expr, const Params& params = {}) {
  return parse(expr, test_schema(), params).to_string();
}

}  // namespace

TEST(FilterParse, ComparisonsOnEveryScalarType) {
  EXPECT_EQ(canon("year == 2020"), "year == 2020");
  EXPECT_EQ(canon("year != -7"), "year != -7");
  EXPECT_EQ(canon("year<2020"), "year < 2020");
  EXPECT_EQ(canon("year <= 2020"), "year <= 2020");
  EXPECT_EQ(canon("year > 2020.5"), "year > 2020.5");  // a float bound on an int64 field is fine
  EXPECT_EQ(canon("score >= 1"), "score >= 1");        // so is an int bound on a double field
  EXPECT_EQ(canon("title == 'single'"), "title == \"single\"");
  EXPECT_EQ(canon("title < \"m\""), "title < \"m\"");
  EXPECT_EQ(canon("flag == TRUE"), "flag == true");
  EXPECT_EQ(canon("open != False"), "open != false");
  EXPECT_EQ(canon("id == \"doc-1\""), "id == \"doc-1\"");
}

TEST(FilterParse, NumberLiterals) {
  EXPECT_EQ(canon("score == 1.5"), "score == 1.5");
  EXPECT_EQ(canon("score == 1e3"), "score == 1000.0");
  EXPECT_EQ(canon("score == 2.5E-1"), "score == 0.25");
  EXPECT_EQ(canon("score == .5"), "score == 0.5");
  EXPECT_EQ(canon("score == -.5"), "score == -0.5");
  EXPECT_EQ(canon("year == -9223372036854775808"), "year == -9223372036854775808");
  EXPECT_EQ(canon("year>-5"), "year > -5");
  EXPECT_EQ(canon("score == 1e300"), "score == 1e+300");
}

TEST(FilterParse, ValueFirstComparisonsAreMirrored) {
  EXPECT_EQ(canon("2020 < year"), "year > 2020");
  EXPECT_EQ(canon("2020 >= year"), "year <= 2020");
  EXPECT_EQ(canon("\"x\" == title"), "title == \"x\"");
}

TEST(FilterParse, ChainedRanges) {
  EXPECT_EQ(canon("2020 <= year < 2025"), "2020 <= year < 2025");
  EXPECT_EQ(canon("2020 < year <= 2025"), "2020 < year <= 2025");
  EXPECT_EQ(canon("2025 > year >= 2020"), "2020 <= year < 2025");
  EXPECT_EQ(canon("2025 >= year > 2020"), "2020 < year <= 2025");
  EXPECT_EQ(canon("0.5 <= score <= 1"), "0.5 <= score <= 1");
  EXPECT_EQ(canon("\"a\" <= title < \"b\""), "\"a\" <= title < \"b\"");
}

TEST(FilterParse, PrecedenceAndBindsTighterThanOrNotTighterThanAnd) {
  EXPECT_EQ(canon("year == 1 or year == 2 and year == 3"), "(year == 1 or (year == 2 and year == 3))");
  EXPECT_EQ(canon("year == 1 and year == 2 or year == 3"), "((year == 1 and year == 2) or year == 3)");
  EXPECT_EQ(canon("not year == 1 and year == 2"), "(not year == 1 and year == 2)");
  EXPECT_EQ(canon("not (year == 1 and year == 2)"), "not (year == 1 and year == 2)");
  EXPECT_EQ(canon("(year == 1 or year == 2) and year == 3"), "((year == 1 or year == 2) and year == 3)");
  EXPECT_EQ(canon("!!(year == 1)"), "not not year == 1");
}

TEST(FilterParse, KeywordsAndSymbolsAnyCase) {
  const std::string want = "((year == 1 and year == 2) or not year == 3)";
  EXPECT_EQ(canon("year == 1 and year == 2 or not year == 3"), want);
  EXPECT_EQ(canon("year == 1 AND year == 2 OR NOT year == 3"), want);
  EXPECT_EQ(canon("year == 1 And year == 2 Or Not year == 3"), want);
  EXPECT_EQ(canon("year == 1 && year == 2 || !year == 3"), want);
  EXPECT_EQ(canon("title IN [\"a\"] and title NOT in [\"b\"] and title LIKE \"c%\" and path IS NOT NULL"),
            "(title in [\"a\"] and title not in [\"b\"] and title like \"c%\" and path is not null)");
}

TEST(FilterParse, AndOrAreFlattened) {
  EXPECT_EQ(canon("year == 1 and (year == 2 and year == 3) and year == 4"),
            "(year == 1 and year == 2 and year == 3 and year == 4)");
  EXPECT_EQ(canon("(year == 1 or year == 2) or year == 3"), "(year == 1 or year == 2 or year == 3)");
}

TEST(FilterParse, ListsAreSortedAndDeduplicated) {
  EXPECT_EQ(canon("title in [\"b\", \"a\", \"b\"]"), "title in [\"a\", \"b\"]");
  EXPECT_EQ(canon("score in [2, 1.0, 1, 0.5]"), "score in [0.5, 1.0, 2]");
  EXPECT_EQ(canon("year not in []"), "year not in []");
  EXPECT_EQ(canon("flag in [true, false]"), "flag in [false, true]");
}

TEST(FilterParse, LikeEscapes) {
  EXPECT_EQ(canon(R"(title like "ab%")"), R"(title like "ab%")");
  EXPECT_EQ(canon(R"(title like "a_c")"), R"(title like "a_c")");
  EXPECT_EQ(canon(R"(title like "50\%%")"), R"(title like "50\%%")");
  EXPECT_EQ(canon(R"(title like "snake\_case")"), R"(title like "snake\_case")");
  EXPECT_EQ(canon(R"(title like "back\\slash%")"), R"(title like "back\\slash%")");
  EXPECT_EQ(canon(R"(title like 'it\'s "q"%')"), R"(title like "it's \"q\"%")");
  EXPECT_EQ(canon(R"(title like "%%a")"), R"(title like "%a")");  // %% is one %
  auto f = parse(R"(title like "50\%\_\\%")", test_schema());
  const auto& like = std::get<Like>(f.root().expr);
  ASSERT_EQ(like.pattern.pieces().size(), 2u);
  EXPECT_EQ(like.pattern.pieces()[0].text, "50%_\\");
  EXPECT_EQ(like.pattern.literal_prefix(), "50%_\\");
}

TEST(FilterParse, StringEscapes) {
  auto value = [](std::string_view expr) {
    return std::get<std::string>(std::get<Compare>(parse(expr, test_schema()).root().expr).value);
  };
  EXPECT_EQ(value(R"(title == "a\"b")"), "a\"b");
  EXPECT_EQ(value(R"(title == 'a\'b')"), "a'b");
  EXPECT_EQ(value(R"(title == "tab\there\nline\\")"), "tab\there\nline\\");
  EXPECT_EQ(value(R"(title == "\u00e9\u03b1")"), "\xC3\xA9\xCE\xB1");  // é α
  EXPECT_EQ(value(R"(title == "\ud83d\ude00")"), "\xF0\x9F\x98\x80");  // U+1F600 from a surrogate pair
  EXPECT_EQ(value("title == \"raw \xCE\xB1 bytes\""), "raw \xCE\xB1 bytes");
  EXPECT_EQ(value("title == 'it\"s'"), "it\"s");
}

TEST(FilterParse, IsNullAndArrayFunctions) {
  EXPECT_EQ(canon("path is null"), "path is null");
  EXPECT_EQ(canon("drugs IS NOT null"), "drugs is not null");
  EXPECT_EQ(canon("meta is null"), "meta is null");
  EXPECT_EQ(canon("array_contains(drugs, \"aspirin\")"), "array_contains(drugs, \"aspirin\")");
  EXPECT_EQ(canon("ARRAY_CONTAINS_ANY(drugs, [\"b\", \"a\"])"), "array_contains_any(drugs, [\"a\", \"b\"])");
  EXPECT_EQ(canon("array_contains_all(tags, [\"x\", \"x\"])"), "array_contains_all(tags, [\"x\"])");
}

TEST(FilterParse, JsonKeys) {
  EXPECT_EQ(canon("meta[\"k\"] == 1"), "meta[\"k\"] == 1");
  EXPECT_EQ(canon("meta['a'][0] < 2.5"), "meta[\"a\"][0] < 2.5");
  EXPECT_EQ(canon("meta[\"s\"] like \"x%\""), "meta[\"s\"] like \"x%\"");
  EXPECT_EQ(canon("meta[\"s\"] in [1, \"one\", true]"), "meta[\"s\"] in [true, 1, \"one\"]");
  EXPECT_EQ(canon("array_contains(meta[\"arr\"], 3)"), "array_contains(meta[\"arr\"], 3)");
  EXPECT_EQ(canon("meta[\"k\"] is not null"), "meta[\"k\"] is not null");
}

TEST(FilterParse, TemplateParameters) {
  Params p = {{"y", 2020},       {"lo", 0.5},   {"name", "x\"y"},        {"names", {"b", "a"}},
              {"pat", "50\\%%"}, {"yes", true}, {"years", {2021, 2020}}, {"big", 1e300}};
  EXPECT_EQ(canon("year > {y}", p), "year > 2020");
  EXPECT_EQ(canon("{lo} <= score < {y}", p), "0.5 <= score < 2020");
  EXPECT_EQ(canon("title == {name}", p), "title == \"x\\\"y\"");
  EXPECT_EQ(canon("title in {names}", p), "title in [\"a\", \"b\"]");
  EXPECT_EQ(canon("title not in { names }", p), "title not in [\"a\", \"b\"]");
  EXPECT_EQ(canon("title in [{name}, \"z\"]", p), "title in [\"x\\\"y\", \"z\"]");
  EXPECT_EQ(canon("title like {pat}", p), R"(title like "50\%%")");
  EXPECT_EQ(canon("flag == {yes}", p), "flag == true");
  EXPECT_EQ(canon("year in {years}", p), "year in [2020, 2021]");
  EXPECT_EQ(canon("array_contains_any(drugs, {names})", p), "array_contains_any(drugs, [\"a\", \"b\"])");
  EXPECT_EQ(canon("array_contains(drugs, {name})", p), "array_contains(drugs, \"x\\\"y\")");
  EXPECT_EQ(canon("score < {big}", p), "score < 1e+300");
}

TEST(FilterParse, CanonicalFormParsesBackToItself) {
  for (const char* expr : {"2020 <= year < 2025 and (title like \"a\\%b_%\" or not flag == true)",
                           "meta[\"a\\\"b\"][2] != \"x\\ny\" || array_contains_all(drugs, [\"p\", \"q\"])",
                           "score in [1e-7, 3, 2.5] and path is null and id not in [\"a\"]"}) {
    std::string once = canon(expr);
    EXPECT_EQ(canon(once), once) << expr;
  }
}

TEST(FilterParse, KeepsTheSource) {
  EXPECT_EQ(parse(" year == 1 ", test_schema()).source(), " year == 1 ");
}

// ---- errors -------------------------------------------------------------------

struct ErrorCase {
  std::string expr;
  size_t position;
  std::string message;  // a substring of the detail
};
void PrintTo(const ErrorCase& c, std::ostream* os) {
  *os << c.expr;
}

class FilterErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(FilterErrors, NameThePositionAndWhatWasExpected) {
  const ErrorCase& c = GetParam();
  Params p = {{"y", 2020},         {"ys", {1, 2}}, {"nul", nullptr},   {"obj", {{"a", 1}}},
              {"big", UINT64_MAX}, {"s", "x"},     {"bad_pat", "a\\q"}};
  try {
    parse(c.expr, test_schema(), p);
    FAIL() << "expected an error for: " << c.expr;
  } catch (const FilterError& e) {
    EXPECT_EQ(e.position(), c.position) << c.expr << " -> " << e.what();
    EXPECT_NE(e.detail().find(c.message), std::string::npos) << c.expr << " -> " << e.what();
    EXPECT_EQ(std::string(e.what()),
              "filter error at position " + std::to_string(c.position) + ": " + e.detail());
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, FilterErrors,
    ::testing::Values(
        // lexing
        ErrorCase{"year = 1", 5, "expected '==' for equality"},
        ErrorCase{"year == 1 & year == 2", 10, "expected '&&'"},
        ErrorCase{"year == 1 | year == 2", 10, "expected '||'"},
        ErrorCase{"year # 1", 5, "unexpected character '#'"},
        ErrorCase{"title == \"\xCE\xB1\" and \xCE\xB1", 18, "unexpected character byte 0xCE"},
        ErrorCase{"year == -", 8, "unexpected character '-'"},
        ErrorCase{"title == \"abc", 9, "unterminated string: expected a closing \""},
        ErrorCase{"title == 'abc\\'", 9, "unterminated string"},
        ErrorCase{"year == 99999999999999999999", 8, "does not fit in 64 bits"},
        ErrorCase{"score == 1e999", 9, "out of range for a double"},
        ErrorCase{"score == 1e", 11, "digits of the exponent"},
        ErrorCase{"score == 1.", 11, "digits after the decimal point"},
        ErrorCase{"score == 1.5.2", 12, "unexpected '.' in number"},
        ErrorCase{"year == 12abc", 10, "unexpected 'a' in number"},
        ErrorCase{"year == { }", 8, "expected a template parameter like {name}"},
        ErrorCase{"year == {y", 8, "expected a template parameter like {name}"},
        // structure
        ErrorCase{"", 0, "empty expression"}, ErrorCase{"   ", 0, "empty expression"},
        ErrorCase{"year == ", 8, "expected a value after '==', found end of input"},
        ErrorCase{"year == 1 2", 10, "expected 'and', 'or' or end of input, found '2'"},
        ErrorCase{"(year == 1", 10, "expected ')' to close the '(' at position 0, found end of input"},
        ErrorCase{"((year == 1) or (year == 2)", 27, "to close the '(' at position 0"},
        ErrorCase{"year == 1)", 9, "unbalanced ')'"},
        ErrorCase{"()", 1, "expected a condition (a field, a value, '(' or 'not') after '(', found ')'"},
        ErrorCase{"year > 1 and", 12, "expected a condition (a field, a value, '(' or 'not') after 'and'"},
        ErrorCase{"not", 3, "after 'not', found end of input"},
        ErrorCase{"year", 4, "expected an operator after field 'year'"},
        ErrorCase{"year 1", 5,
                  "expected an operator after field 'year' (==, !=, <, <=, >, >=, in, not in, like, "
                  "is null), found '1'"},
        ErrorCase{"year is", 7, "expected 'null' or 'not null' after 'is', found end of input"},
        ErrorCase{"year is not 1", 12, "expected 'null' after 'is not'"},
        ErrorCase{"title not like \"a\"", 10, "expected 'in' after 'title not'"},
        ErrorCase{"year in 1", 8, "expected a list such as [1, 2] or a {parameter} after 'in', found '1'"},
        ErrorCase{"year in [1, 2", 13, "expected ',' or ']' in the list that starts at position 8"},
        ErrorCase{"year in [1,]", 11, "expected a value in the list, found ']'"},
        ErrorCase{"year in [1 2]", 11, "expected ',' or ']'"},
        ErrorCase{"1 < year > 2", 9, "a chained range needs two of '<', '<=' or two of '>', '>='"},
        ErrorCase{"1 == year < 2", 10, "a chained range needs"},
        ErrorCase{"year < 1 < 2", 9, "a chained comparison must start with a value"},
        ErrorCase{"1 < year < 2 < 3", 13, "a range chains at most two comparisons"},
        ErrorCase{"1 and year == 1", 2, "expected a comparison operator after the value '1'"},
        ErrorCase{"1 < 2", 4, "expected a field after '<', found '2'"},
        ErrorCase{"year == count", 8, "comparing two fields is not supported"},
        ErrorCase{"title like 5", 11, "expected a quoted pattern"},
        ErrorCase{"array_contains drugs", 15, "expected '(' after array_contains"},
        ErrorCase{"array_contains(\"a\", drugs)", 15,
                  "expected a field as the first argument of array_contains"},
        ErrorCase{"array_contains(drugs \"a\")", 21, "expected ',' after the field in array_contains(...)"},
        ErrorCase{"array_contains(drugs, \"a\"", 25, "expected ')' to close array_contains( at position 0"},
        ErrorCase{"array_contains_any(drugs, \"a\")", 26, "expected a list such as [1, 2]"},
        ErrorCase{"array_contains_any(drugs, [])", 26, "array_contains_any needs at least one value"},
        ErrorCase{"array_contains_all(drugs, [])", 26, "array_contains_all needs at least one value"},
        ErrorCase{"meta[\"a\" == 1", 9, "expected ']' after the json key"},
        ErrorCase{"meta[-1] == 1", 5, "expected a quoted key or an array index >= 0"},
        // schema and types
        ErrorCase{"yeer == 1", 0, "unknown field 'yeer'; did you mean 'year'?"},
        ErrorCase{"yeer == 1 = 2", 0, "unknown field 'yeer'"},  // reported in reading order
        ErrorCase{"xyz == 1", 0, "unknown field 'xyz'"},
        ErrorCase{"year == 1 and nosuchfield == 2", 14, "unknown field 'nosuchfield'"},
        ErrorCase{"year == \"x\"", 8, "field 'year' is int64 and cannot be compared with a string"},
        ErrorCase{"title == 1", 9, "field 'title' is string and cannot be compared with an integer"},
        ErrorCase{"score == true", 9, "field 'score' is double and cannot be compared with a bool"},
        ErrorCase{"flag == 1", 8, "field 'flag' is bool and cannot be compared with an integer"},
        ErrorCase{"id == 3", 6, "field 'id' is string and cannot be compared with an integer"},
        ErrorCase{"\"x\" < year", 0, "field 'year' is int64 and cannot be compared with a string"},
        ErrorCase{"1 <= year < \"z\"", 12, "field 'year' is int64 and cannot be compared with a string"},
        ErrorCase{"year in [1, \"two\"]", 12, "field 'year' is int64 and cannot be compared with a string"},
        ErrorCase{"flag < true", 5, "operator '<' does not apply to bool field 'flag'; use == or !="},
        ErrorCase{"true < flag", 5, "operator '<' does not apply to bool field 'flag'"},
        ErrorCase{"year like \"a%\"", 5, "'like' needs a string field; 'year' is int64"},
        ErrorCase{"drugs == \"a\"", 6,
                  "field 'drugs' is a string_list; '==' does not apply to it; use array_contains"},
        ErrorCase{"drugs in [\"a\"]", 6, "field 'drugs' is a string_list"},
        ErrorCase{"meta == 1", 5, "json field 'meta' needs a key before '=='"},
        ErrorCase{"year[\"a\"] == 1", 4, "field 'year' is int64; only json fields take a key"},
        ErrorCase{"array_contains(title, \"a\")", 15,
                  "array_contains needs a string_list field or a json key; "
                  "'title' is string"},
        ErrorCase{"array_contains(drugs, 1)", 22,
                  "field 'drugs' holds strings and cannot be compared with an integer"},
        ErrorCase{"meta[\"k\"] < true", 12, "bools have no order"},
        // string escapes
        ErrorCase{"title == \"a\\qb\"", 11, "unknown escape '\\q'"},
        ErrorCase{"title == \"50\\%\"", 12, "only has a meaning in a like pattern"},
        ErrorCase{"title like \"a\\qb\"", 13, "unknown escape '\\q'; expected one of"},
        ErrorCase{"title == \"\\u12\"", 10, "expected 4 hex digits after \\u"},
        ErrorCase{"title == \"\\udc00\"", 10, "lone low surrogate"},
        ErrorCase{"title == \"\\ud800x\"", 10, "high surrogate without its low surrogate"},
        // templates
        ErrorCase{"year == {missing}", 8, "missing template parameter 'missing'"},
        ErrorCase{"year in {y}", 8,
                  "template parameter 'y' must be a list (a JSON array) here, found number"},
        ErrorCase{"year == {ys}", 8, "template parameter 'ys' is a list"},
        ErrorCase{"year == {nul}", 8, "template parameter 'nul' is null; test for null with 'is null'"},
        ErrorCase{"year == {obj}", 8, "template parameter 'obj' is object"},
        ErrorCase{"year == {big}", 8, "does not fit in int64"},
        ErrorCase{"year == {s}", 8, "field 'year' is int64 and cannot be compared with a string"},
        ErrorCase{"title in {ys}", 9,
                  "cannot be compared with an integer (element 0 of template parameter 'ys')"},
        ErrorCase{"title like {y}", 11, "must be a string to serve as a like pattern"},
        ErrorCase{"title like {bad_pat}", 11, "unknown escape '\\q'"}));

TEST(FilterLimits, ExpressionLength) {
  std::string expr = "title == \"" + std::string(kMaxExpressionBytes, 'a') + "\"";
  try {
    parse(expr, test_schema());
    FAIL();
  } catch (const FilterError& e) {
    EXPECT_EQ(e.position(), kMaxExpressionBytes);
    EXPECT_NE(e.detail().find("longer than 65536 bytes"), std::string::npos);
  }
  // Just under the limit parses.
  std::string ok = "title == \"" + std::string(kMaxExpressionBytes - 11, 'a') + "\"";
  ASSERT_EQ(ok.size(), kMaxExpressionBytes);
  EXPECT_NO_THROW(parse(ok, test_schema()));
}

TEST(FilterLimits, NestingDepth) {
  auto nested = [](size_t n) { return std::string(n, '(') + "year == 1" + std::string(n, ')'); };
  EXPECT_NO_THROW(parse(nested(kMaxDepth), test_schema()));
  try {
    parse(nested(kMaxDepth + 50), test_schema());
    FAIL();
  } catch (const FilterError& e) {
    EXPECT_EQ(e.position(), kMaxDepth);  // the first '(' past the limit
    EXPECT_NE(e.detail().find("deeper than 256"), std::string::npos);
  }
  std::string nots;
  for (size_t i = 0; i < 300; ++i) nots += "not ";
  try {
    parse(nots + "year == 1", test_schema());
    FAIL();
  } catch (const FilterError& e) {
    EXPECT_EQ(e.position(), kMaxDepth * 4);
  }
  // A long flat chain is not nesting: and/or are n-ary.
  std::string chain = "year == 0";
  for (int i = 1; i < 3000; ++i) chain += " or year == " + std::to_string(i);
  auto f = parse(chain, test_schema());
  EXPECT_EQ(std::get<Or>(f.root().expr).operands.size(), 3000u);
}

TEST(FilterLimits, ListLength) {
  nlohmann::json big = nlohmann::json::array();
  for (size_t i = 0; i < kMaxListLength; ++i) big.push_back(i);
  EXPECT_NO_THROW(parse("year in {v}", test_schema(), {{"v", big}}));
  big.push_back(-1);
  try {
    parse("year in {v}", test_schema(), {{"v", big}});
    FAIL();
  } catch (const FilterError& e) {
    EXPECT_EQ(e.position(), 8u);
    EXPECT_NE(e.detail().find("more than 65536 values"), std::string::npos);
  }
}
