// StringDictionary (a packed sorted part plus a map of new keys) against an exact
// oracle, std::map, through enough inserts in random order to merge many times:
// lookups, ordered walks between every kind of bound, prefix walks and values
// changed after the merges that moved them.
#include "eagle/filter/string_dictionary.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace string_dictionary_test {

using eagle::filter::StringDictionary;
using Oracle = std::map<std::string, int, std::less<>>;

// What a walk visited, sorted (the dictionary visits its two parts one after the other).
template <typename Walk>
Oracle visited(Walk&& walk) {
  Oracle out;
  walk([&](std::string_view key, const int& v) {
    EXPECT_TRUE(out.emplace(std::string(key), v).second) << key;
  });
  return out;
}

std::string random_key(std::mt19937& rng) {
  // Short keys over a small alphabet: shared prefixes, and keys that are prefixes of others.
  std::string key(1 + rng() % 6, 'a');
  for (auto& c : key) c = static_cast<char>('a' + rng() % 4);
  return key;
}

TEST(StringDictionary, MatchesAMapThroughMergesWalksAndUpdates) {
  StringDictionary<int> dict;
  Oracle oracle;
  std::mt19937 rng(11);
  auto check = [&](const std::string& ctx) {
    ASSERT_EQ(dict.size(), oracle.size()) << ctx;
    for (const auto& [k, v] : oracle) {
      const int* found = dict.find(k);
      ASSERT_NE(found, nullptr) << ctx << " key " << k;
      ASSERT_EQ(*found, v) << ctx << " key " << k;
    }
    EXPECT_EQ(dict.find("zz"), nullptr);
    for (int probe = 0; probe < 40; ++probe) {
      // Bounds that are keys half the time: inclusive and exclusive bounds then differ.
      auto bound = [&] {
        return rng() % 2 && !oracle.empty() ? std::next(oracle.begin(), rng() % oracle.size())->first
                                            : random_key(rng);
      };
      const std::string lo = bound(), hi = bound();
      const bool lo_in = rng() % 2, hi_in = rng() % 2;
      const bool has_lo = probe % 4 != 1, has_hi = probe % 4 != 2;
      if (has_lo && has_hi && (lo > hi || (lo == hi && !(lo_in && hi_in))))
        continue;  // ScalarIndex::range stops these
      Oracle want;
      for (const auto& [k, v] : oracle) {
        if (has_lo && (lo_in ? k < lo : k <= lo)) continue;
        if (has_hi && (hi_in ? k > hi : k >= hi)) continue;
        want.emplace(k, v);
      }
      const auto got = visited([&](auto fn) {
        dict.for_each_between(has_lo ? std::optional<std::string_view>(lo) : std::nullopt, lo_in,
                              has_hi ? std::optional<std::string_view>(hi) : std::nullopt, hi_in, fn);
      });
      ASSERT_EQ(got, want) << ctx << " between " << lo << (lo_in ? "]" : ")") << " and " << hi
                           << (hi_in ? "]" : ")");
      const std::string prefix = random_key(rng).substr(0, 1 + probe % 3);
      Oracle with_prefix;
      for (const auto& [k, v] : oracle)
        if (k.starts_with(prefix)) with_prefix.emplace(k, v);
      ASSERT_EQ(visited([&](auto fn) { dict.for_each_with_prefix(prefix, fn); }), with_prefix)
          << ctx << " prefix " << prefix;
    }
  };
  check("empty");
  int next = 0;
  for (int round = 0; round < 8; ++round) {
    // Rounds of 1,500 operations: each passes a merge threshold at least once
    // (1,024 new keys, or 1/8 of the packed part).
    for (int op = 0; op < 1500; ++op) {
      std::string key = random_key(rng) + std::to_string(rng() % 400);
      if (rng() % 3 == 0 && !oracle.empty()) key = std::next(oracle.begin(), rng() % oracle.size())->first;
      dict[key] = ++next;  // a new key, or a new value for a packed or a new one
      oracle[key] = next;
    }
    check("round " + std::to_string(round));
  }
  ASSERT_GT(oracle.size(), 4000u);  // the packed part was merged into several times
}

}  // namespace string_dictionary_test
