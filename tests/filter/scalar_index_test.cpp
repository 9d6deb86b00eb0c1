// The scalar inverted index on its own: lookups against a brute-force scan of the
// values it was given, plus its contract (row order, types, nulls, misuse).
#include "eagle/filter/scalar_index.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <random>

#include "eagle/core/error.h"
#include "eagle/filter/compare.h"
#include "filter_test_support.h"

using namespace eagle;
using namespace eagle::filter;
using eagle::filter::testing::bits;
using V = std::vector<uint32_t>;

TEST(ScalarIndex, SkippedRowsAreNull) {
  ScalarIndex idx(FieldType::int64);
  idx.add(0, int64_t{5});
  idx.add(3, int64_t{5});
  idx.add(4, std::monostate{});
  idx.add(6, int64_t{7});
  EXPECT_EQ(idx.row_count(), 7u);
  EXPECT_EQ(idx.term_count(), 2u);
  EXPECT_EQ(bits(idx.equal(int64_t{5})), V({0, 3}));
  EXPECT_EQ(bits(idx.equal(5.0)), V({0, 3}));
  EXPECT_EQ(bits(idx.equal(5.5)), V({}));
  EXPECT_EQ(bits(idx.equal(std::string("5"))), V({}));  // another kind matches nothing
  EXPECT_EQ(bits(idx.nulls()), V({1, 2, 4, 5}));
  EXPECT_EQ(bits(idx.not_null()), V({0, 3, 6}));
  EXPECT_EQ(bits(idx.equal_any({int64_t{7}, 5.0, std::string("x")})), V({0, 3, 6}));
}

TEST(ScalarIndex, RangesAcrossIntAndDoubleBounds) {
  ScalarIndex idx(FieldType::int64);
  for (uint32_t r = 0; r < 10; ++r) idx.add(r, int64_t{r} - 5);  // -5 .. 4
  auto range = [&](std::optional<Value> lo, bool li, std::optional<Value> hi, bool hi_incl) {
    return bits(idx.range(lo, li, hi, hi_incl));
  };
  EXPECT_EQ(range(int64_t{-1}, true, int64_t{1}, true), V({4, 5, 6}));
  EXPECT_EQ(range(int64_t{-1}, false, int64_t{1}, false), V({5}));
  EXPECT_EQ(range(-1.5, true, 1.5, false), V({4, 5, 6}));
  EXPECT_EQ(range(-1.5, false, std::nullopt, false), V({4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(range(std::nullopt, false, -4.0, true), V({0, 1}));
  EXPECT_EQ(range(int64_t{2}, true, int64_t{2}, true), V({7}));
  EXPECT_EQ(range(int64_t{2}, false, int64_t{2}, true), V({}));
  EXPECT_EQ(range(int64_t{2}, false, int64_t{2}, false), V({}));  // an empty interval, not a crash
  EXPECT_EQ(range(int64_t{3}, true, int64_t{1}, true), V({}));
  EXPECT_EQ(range(std::numeric_limits<double>::quiet_NaN(), true, std::nullopt, false), V({}));
  EXPECT_EQ(range(std::string("a"), true, std::nullopt, false), V({}));
  EXPECT_EQ(range(-1e300, true, 1e300, true).size(), 10u);
}

TEST(ScalarIndex, DoublesKeepNaNOutOfTheDictionary) {
  ScalarIndex idx(FieldType::float64);
  idx.add(0, 1.0);
  idx.add(1, std::numeric_limits<double>::quiet_NaN());
  idx.add(2, -0.0);
  idx.add(3, 0.0);
  EXPECT_EQ(bits(idx.equal(int64_t{0})), V({2, 3}));
  EXPECT_EQ(bits(idx.equal(std::numeric_limits<double>::quiet_NaN())), V({}));
  EXPECT_EQ(bits(idx.range(std::nullopt, false, std::nullopt, false)), V({0, 2, 3}));
  EXPECT_EQ(bits(idx.not_null()), V({0, 1, 2, 3}));
}

TEST(ScalarIndex, StringsBoolsAndPrefixScans) {
  ScalarIndex s(FieldType::string);
  const std::vector<std::string> words = {"apple", "apricot", "banana", "apple", "", "ap"};
  for (uint32_t r = 0; r < words.size(); ++r) s.add(r, words[r]);
  EXPECT_EQ(bits(s.equal(std::string("apple"))), V({0, 3}));
  EXPECT_EQ(bits(s.range(std::string("ap"), false, std::string("b"), false)), V({0, 1, 3}));
  size_t seen = 0;
  auto any = [&](std::string_view) { return ++seen, true; };
  EXPECT_EQ(bits(s.matching_terms(any, "ap")), V({0, 1, 3, 5}));
  EXPECT_EQ(seen, 3u);  // only the terms under the prefix were visited: ap, apple, apricot
  EXPECT_EQ(bits(s.matching_terms([](std::string_view t) { return t.size() == 6; })), V({2}));
  EXPECT_EQ(bits(s.matching_terms([](std::string_view) { return true; }, "zz")), V({}));

  ScalarIndex b(FieldType::boolean);
  b.add(1, true);
  b.add(2, false);
  EXPECT_EQ(bits(b.equal(true)), V({1}));
  EXPECT_EQ(bits(b.equal(int64_t{1})), V({}));
  EXPECT_EQ(bits(b.nulls()), V({0}));
}

TEST(ScalarIndex, StringLists) {
  ScalarIndex l(FieldType::string_list);
  l.add(0, StringList{"a", "b", "a"});
  l.add(1, StringList{});
  l.add(3, StringList{"b"});
  EXPECT_EQ(bits(l.contains("a")), V({0}));
  EXPECT_EQ(bits(l.contains("b")), V({0, 3}));
  EXPECT_EQ(bits(l.contains("c")), V({}));
  EXPECT_EQ(bits(l.contains_any({"a", "c", "b"})), V({0, 3}));
  EXPECT_EQ(bits(l.nulls()), V({2}));
  EXPECT_EQ(bits(l.not_null()), V({0, 1, 3}));
}

TEST(ScalarIndex, ContractViolationsAreErrors) {
  EXPECT_THROW(ScalarIndex{FieldType::json}, Error);
  ScalarIndex i(FieldType::int64);
  i.add(2, int64_t{1});
  EXPECT_THROW(i.add(2, int64_t{1}), Error);  // rows must increase
  EXPECT_THROW(i.add(1, int64_t{1}), Error);
  EXPECT_THROW(i.add(3, 1.5), Error);  // a double in an int64 index
  EXPECT_THROW(i.add(4, std::string("x")), Error);
  EXPECT_EQ(i.row_count(), 3u);          // a rejected value changes nothing
  EXPECT_THROW(i.contains("x"), Error);  // list lookups on a scalar index
  EXPECT_THROW(i.matching_terms([](std::string_view) { return true; }), Error);
  ScalarIndex l(FieldType::string_list);
  EXPECT_THROW(l.add(0, std::string("x")), Error);
  EXPECT_THROW(l.equal(std::string("x")), Error);
  EXPECT_THROW(l.range(std::nullopt, false, std::nullopt, false), Error);
  try {
    i.add(0, int64_t{1});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("increasing order: row 0 after row 2"), std::string::npos)
        << e.what();
  }
}

// Random values and bounds: every range and equality lookup equals a scan with the
// obvious double arithmetic (the values are small enough to be exact as doubles).
TEST(ScalarIndex, MatchesBruteForceOnRandomNumbers) {
  std::mt19937_64 rng(7);
  for (FieldType type : {FieldType::int64, FieldType::float64}) {
    ScalarIndex idx(type);
    std::vector<std::optional<double>> vals;
    uint32_t row = 0;
    for (int i = 0; i < 500; ++i) {
      row += 1 + static_cast<uint32_t>(rng() % 3);
      if (rng() % 5 == 0) continue;  // a skipped row: null
      int64_t k = static_cast<int64_t>(rng() % 41) - 20;
      Value v = type == FieldType::int64 ? Value(k) : Value(static_cast<double>(k) / 4);
      vals.resize(row + 1);
      vals[row] = type == FieldType::int64 ? static_cast<double>(k) : static_cast<double>(k) / 4;
      idx.add(row, v);
    }
    auto bound = [&]() -> std::optional<Value> {
      switch (rng() % 3) {
        case 0: return std::nullopt;
        case 1: return Value(static_cast<int64_t>(rng() % 41) - 20);
        default: return Value((static_cast<double>(rng() % 161) - 80) / 8);
      }
    };
    auto as_double = [](const Value& v) {
      return std::holds_alternative<int64_t>(v) ? static_cast<double>(std::get<int64_t>(v))
                                                : std::get<double>(v);
    };
    for (int q = 0; q < 2000; ++q) {
      auto lo = bound(), hi = bound();
      bool li = rng() % 2, hi_incl = rng() % 2;
      V want, want_eq;
      for (uint32_t r = 0; r < vals.size(); ++r) {
        if (!vals[r]) continue;
        double x = *vals[r];
        bool ok = (!lo || (li ? x >= as_double(*lo) : x > as_double(*lo))) &&
                  (!hi || (hi_incl ? x <= as_double(*hi) : x < as_double(*hi)));
        if (ok) want.push_back(r);
        if (lo && x == as_double(*lo)) want_eq.push_back(r);
      }
      ASSERT_EQ(bits(idx.range(lo, li, hi, hi_incl)), want) << q;
      if (lo) {
        ASSERT_EQ(bits(idx.equal(*lo)), want_eq) << q;
      }
    }
  }
}

// A value's rows are kept inline while there is one and in a vector from two on
// (scalar_index.h, Rows): every count from 0 to many, against a brute-force
// oracle, in the index and in a copy of it.
TEST(ScalarIndex, RowsOfAValueStayExactFromOneRowToMany) {
  std::mt19937 rng(5);
  ScalarIndex idx(FieldType::string);
  std::map<std::string, V> oracle;
  for (uint32_t r = 0; r < 4000; ++r) {
    // Value "v<k>" gets rows with probability falling in k: many single-row values,
    // some with a handful, a few with hundreds.
    const uint32_t k = static_cast<uint32_t>(std::min<double>(std::exp(std::uniform_real_distribution<>(0, 9)(rng)), 5000));
    const std::string v = "v" + std::to_string(k);
    idx.add(r, v);
    oracle[v].push_back(r);
  }
  const ScalarIndex copy = idx;
  size_t singles = 0, multis = 0;
  for (const auto& [v, rows] : oracle) {
    (rows.size() == 1 ? singles : multis) += 1;
    for (const ScalarIndex* i : {static_cast<const ScalarIndex*>(&idx), &copy}) {
      std::vector<uint32_t> got;
      i->equal(v).for_each([&](size_t r) { got.push_back(static_cast<uint32_t>(r)); });
      ASSERT_EQ(got, rows) << v;
    }
  }
  EXPECT_GT(singles, 50u);
  EXPECT_GT(multis, 10u);
  EXPECT_EQ(bits(idx.equal(std::string("absent"))), V({}));
}

// A batch (as an open loads a segment) must leave exactly the index that add() row by
// row leaves: the same rows for every key, the same nulls, across several batches
// whose keys overlap each other's and the keys added row by row between them.
TEST(ScalarIndex, BatchesEqualRowByRowAdds) {
  for (FieldType type : {FieldType::string, FieldType::string_list, FieldType::int64}) {
    std::mt19937 rng(7);
    ScalarIndex one_by_one(type), batched(type);
    std::vector<std::string> keys;
    for (int i = 0; i < 3000; ++i) keys.push_back("k" + std::to_string(rng() % 5000));
    uint32_t row = 0;
    for (int part = 0; part < 6; ++part) {
      const bool as_batch = part % 2 == 0;
      std::optional<ScalarIndex::Batch> batch;
      if (as_batch) batch.emplace(batched);
      const int rows_in_part = 500 + static_cast<int>(rng() % 1500);
      for (int i = 0; i < rows_in_part; ++i, row += 1 + rng() % 2) {  // some rows skipped: null
        Value v;
        const auto pick = rng() % 10;
        if (pick == 0) {
          v = std::monostate{};
        } else if (type == FieldType::string) {
          v = keys[rng() % keys.size()];
        } else if (type == FieldType::int64) {
          v = static_cast<int64_t>(rng() % 300);
        } else {
          StringList list;  // empty lists, and lists repeating an element
          for (uint32_t e = 0, m = rng() % 4; e < m; ++e) list.push_back(keys[rng() % keys.size()]);
          if (!list.empty() && pick == 1) list.push_back(list.front());
          v = list;
        }
        one_by_one.add(row, v);
        if (as_batch)
          batch->add(row, v);
        else
          batched.add(row, v);
      }
      if (as_batch) {
        if (type != FieldType::int64 && rows_in_part > 0)
          EXPECT_LT(batched.row_count(), one_by_one.row_count()) << "a batch reaches the index at finish()";
        batch->finish();
      }
      ASSERT_EQ(batched.row_count(), one_by_one.row_count());
    }
    EXPECT_EQ(batched.term_count(), one_by_one.term_count());
    EXPECT_EQ(bits(batched.nulls()), bits(one_by_one.nulls()));
    for (const auto& key : keys) {
      if (type == FieldType::string) {
        ASSERT_EQ(bits(batched.equal(std::string(key))), bits(one_by_one.equal(std::string(key)))) << key;
      } else if (type == FieldType::string_list) {
        ASSERT_EQ(bits(batched.contains(key)), bits(one_by_one.contains(key))) << key;
      }
    }
    if (type == FieldType::int64)
      for (int64_t k = 0; k < 300; ++k) ASSERT_EQ(bits(batched.equal(k)), bits(one_by_one.equal(k))) << k;
    if (type == FieldType::string)
      EXPECT_EQ(bits(batched.matching_terms([](std::string_view t) { return t.ends_with("7"); }, "k1")),
                bits(one_by_one.matching_terms([](std::string_view t) { return t.ends_with("7"); }, "k1")));
  }
}

TEST(ScalarIndex, BatchRefusesWhatAddRefuses) {
  ScalarIndex idx(FieldType::string);
  idx.add(5, std::string("a"));
  ScalarIndex::Batch batch(idx);
  EXPECT_THROW(batch.add(4, std::string("b")), Error);  // behind the index's rows
  batch.add(6, std::string("b"));
  EXPECT_THROW(batch.add(6, std::string("c")), Error);  // behind the batch's rows
  EXPECT_THROW(batch.add(7, int64_t{3}), Error);        // another type
  batch.finish();
  EXPECT_EQ(idx.row_count(), 7u);
  EXPECT_EQ(bits(idx.equal(std::string("b"))), V({6}));
  EXPECT_EQ(bits(idx.equal(std::string("c"))), V({}));
}
