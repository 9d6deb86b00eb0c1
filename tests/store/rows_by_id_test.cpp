// RowsById (an open-addressing table keyed by the rows' own ids) against an exact
// oracle, std::unordered_map from id to row, through random puts (new ids and
// replacements), erases, reserves, drains and clears, with ids that collide in their
// low hash bits as often as chance allows.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "eagle/store/rows_by_id.h"

namespace rows_by_id_test {

struct Row {
  std::string id;
};

TEST(RowsById, MatchesAMapThroughRandomPutsErasesAndDrains) {
  std::vector<Row> rows;
  eagle::store::RowsById<std::vector<Row>> index(&rows);
  std::unordered_map<std::string, uint32_t> oracle;
  std::mt19937 rng(7);
  auto check = [&](const std::string& ctx) {
    ASSERT_EQ(index.size(), oracle.size()) << ctx;
    for (const auto& [id, row] : oracle) {
      ASSERT_EQ(index.find(id), std::optional<uint32_t>(row)) << ctx << " id " << id;
      ASSERT_TRUE(index.contains(id));
    }
    size_t seen = 0;
    index.for_each([&](uint32_t row) {
      ++seen;
      ASSERT_EQ(oracle.at(rows[row].id), row) << ctx;
    });
    ASSERT_EQ(seen, oracle.size()) << ctx;
    EXPECT_FALSE(index.contains("absent-id"));
  };
  for (int round = 0; round < 6; ++round) {
    const int ids = round % 2 ? 300 : 5000;  // few ids: many replacements; many: growth
    for (int op = 0; op < 20000; ++op) {
      const std::string id = "doc" + std::to_string(rng() % ids);
      const unsigned kind = rng() % 10;
      if (kind < 6) {  // put: a new row with this id (an upsert)
        rows.push_back({id});
        const auto row = static_cast<uint32_t>(rows.size() - 1);
        const auto replaced = index.put(row);
        auto it = oracle.find(id);
        ASSERT_EQ(replaced, it == oracle.end() ? std::nullopt : std::optional<uint32_t>(it->second));
        oracle[id] = row;
      } else if (kind < 9) {
        const auto erased = index.erase(id);
        auto it = oracle.find(id);
        ASSERT_EQ(erased, it == oracle.end() ? std::nullopt : std::optional<uint32_t>(it->second));
        if (it != oracle.end()) oracle.erase(it);
      } else {
        ASSERT_EQ(index.find(id), oracle.count(id) ? std::optional<uint32_t>(oracle[id]) : std::nullopt);
      }
      if (op % 5000 == 4999) check("round " + std::to_string(round) + " op " + std::to_string(op));
    }
    check("round " + std::to_string(round));
    if (round == 2) {
      index.reserve(100000);
      check("after reserve");
    }
    if (round == 3) {
      std::unordered_map<std::string, uint32_t> drained;
      index.drain([&](uint32_t row) { drained[rows[row].id] = row; });
      EXPECT_EQ(drained, oracle);
      EXPECT_EQ(index.size(), 0u);
      oracle.clear();
      check("after drain");
    }
    if (round == 4) {
      index.clear();
      oracle.clear();
      check("after clear");
    }
  }
}

}  // namespace rows_by_id_test
