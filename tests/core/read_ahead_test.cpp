// read_ahead: every item consumed once, in the order produced, with at most `depth`
// waiting; a producer's exception reaches the caller after the items before it; a
// consumer's exception stops the producer. No thread outlives the call (each case
// returns only after the join).
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "eagle/core/read_ahead.h"

using eagle::read_ahead;

TEST(ReadAhead, EveryItemInOrderWithABoundedQueue) {
  std::atomic<int> produced{0};
  std::vector<int> seen;
  int most_ahead = 0;
  read_ahead<int>(
      3,
      [&](auto&& push) {
        for (int i = 0; i < 5000; ++i) {
          if (!push(int{i})) return;
          ++produced;
        }
      },
      [&](int& v) {
        seen.push_back(v);
        // Pushed but not yet consumed, at most the depth (the one in hand is consumed).
        most_ahead = std::max(most_ahead, produced.load() - static_cast<int>(seen.size()));
      });
  ASSERT_EQ(seen.size(), 5000u);
  for (int i = 0; i < 5000; ++i) ASSERT_EQ(seen[i], i);
  EXPECT_LE(most_ahead, 3);
}

TEST(ReadAhead, AProducersErrorComesAfterTheItemsBeforeIt) {
  std::vector<int> seen;
  try {
    read_ahead<int>(
        2,
        [&](auto&& push) {
          for (int i = 0; i < 10; ++i) push(int{i});
          throw std::runtime_error("bad record 10");
        },
        [&](int& v) { seen.push_back(v); });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "bad record 10");
  }
  EXPECT_EQ(seen.size(), 10u);
}

TEST(ReadAhead, AConsumersErrorStopsTheProducer) {
  int pushes_refused = 0, produced = 0;
  EXPECT_THROW(read_ahead<int>(
                   2,
                   [&](auto&& push) {
                     for (int i = 0; i < 1000000; ++i) {
                       if (!push(int{i})) {
                         ++pushes_refused;
                         return;
                       }
                       ++produced;
                     }
                   },
                   [&](int& v) {
                     if (v == 5) throw std::invalid_argument("stop at 5");
                   }),
               std::invalid_argument);
  EXPECT_EQ(pushes_refused, 1);  // the producer saw the stop and returned
  EXPECT_LT(produced, 1000000);
}
