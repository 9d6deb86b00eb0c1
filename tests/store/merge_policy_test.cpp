// The tiered merge policy: runs of T adjacent segments of one tier merge, newest
// first; the count bound holds whatever the write pattern (single-row writes, bulk
// segments stranding small ones, deletes counted as rows), and merges converge.
#include "eagle/store/merge_policy.h"

#include <gtest/gtest.h>

#include <iostream>
#include <numeric>
#include <random>

using namespace eagle::store;

namespace {

// Applies find_merges until it asks for none; returns how many rows were rewritten.
uint64_t settle(std::vector<uint64_t>& rows, const MergePolicy& p) {
  uint64_t rewritten = 0;
  for (int round = 0; round < 1000; ++round) {
    const auto merges = find_merges(rows, p);
    if (merges.empty()) return rewritten;
    size_t prev_end = 0;
    std::vector<uint64_t> next;
    for (const auto& m : merges) {
      EXPECT_GE(m.first, prev_end) << "merges overlap or are out of order";
      EXPECT_GE(m.count, 2u);
      next.insert(next.end(), rows.begin() + static_cast<std::ptrdiff_t>(prev_end),
                  rows.begin() + static_cast<std::ptrdiff_t>(m.first));
      const uint64_t sum = std::accumulate(rows.begin() + static_cast<std::ptrdiff_t>(m.first),
                                           rows.begin() + static_cast<std::ptrdiff_t>(m.first + m.count), uint64_t{0});
      EXPECT_LE(sum, p.max_merged_rows);
      next.push_back(sum);
      rewritten += sum;
      prev_end = m.first + m.count;
    }
    next.insert(next.end(), rows.begin() + static_cast<std::ptrdiff_t>(prev_end), rows.end());
    rows = std::move(next);
  }
  ADD_FAILURE() << "merges did not converge";
  return rewritten;
}

}  // namespace

TEST(MergePolicy, TiersAreLogarithmicInSizeAboveTheFloor) {
  MergePolicy p;
  p.segments_per_tier = 4;
  p.floor_rows = 100;
  EXPECT_EQ(merge_tier(1, p), 0u);
  EXPECT_EQ(merge_tier(399, p), 0u);
  EXPECT_EQ(merge_tier(400, p), 1u);
  EXPECT_EQ(merge_tier(1599, p), 1u);
  EXPECT_EQ(merge_tier(1600, p), 2u);
  EXPECT_EQ(merge_tier(UINT64_MAX, p), 28u);  // 100 * 4^28 <= 2^64 - 1 < 100 * 4^29, no overflow
}

TEST(MergePolicy, ARunOfTSegmentsOfOneTierMergesNewestFirst) {
  MergePolicy p;
  p.segments_per_tier = 3;
  p.floor_rows = 10;
  // Tier 2 (90+), then five tier-0 segments: the newest three merge.
  EXPECT_EQ(find_merges({200, 5, 5, 5, 5, 5}, p), (std::vector<MergeRange>{{3, 3}}));
  // Two tier-0 segments: nothing to do.
  EXPECT_TRUE(find_merges({200, 5, 5}, p).empty());
  // A result past max_merged_rows is not made.
  p.max_merged_rows = 12;
  EXPECT_TRUE(find_merges({5, 5, 5}, p).empty());
}

TEST(MergePolicy, SingleRowWritesStayWithinTheBoundAtLogarithmicCost) {
  MergePolicy p;  // defaults
  std::vector<uint64_t> rows;
  uint64_t rewritten = 0;
  const uint64_t writes = 200000;
  for (uint64_t i = 0; i < writes; ++i) {
    rows.push_back(1);
    rewritten += settle(rows, p);
    ASSERT_LE(rows.size(), segment_bound(i + 1, p)) << "after write " << i;
  }
  EXPECT_EQ(std::accumulate(rows.begin(), rows.end(), uint64_t{0}), writes);
  // Each row is rewritten about once per tier it climbs, log_4(200000) = 8.8,
  // never a multiple of the store (merging everything each time would rewrite 100000).
  const double per_row = static_cast<double>(rewritten) / writes;
  std::cout << "rows rewritten per row written: " << per_row << ", segments at the end: " << rows.size() << "\n";
  EXPECT_LT(per_row, 9.5);
}

TEST(MergePolicy, BulkSegmentsAfterSmallOnesDoNotStrandThemPastTheBound) {
  MergePolicy p;
  p.segments_per_tier = 4;
  p.floor_rows = 1000;
  p.max_segments = 12;
  std::mt19937 rng(3);
  std::vector<uint64_t> rows;
  uint64_t total = 0;
  for (int i = 0; i < 3000; ++i) {
    // Mostly single writes, sometimes a bulk ingest's segment of 10k-200k rows.
    const uint64_t n = rng() % 50 == 0 ? 10000 + rng() % 190000 : 1 + rng() % 3;
    rows.push_back(n);
    total += n;
    settle(rows, p);
    ASSERT_LE(rows.size(), segment_bound(total, p)) << "after write " << i;
  }
}

TEST(MergePolicy, TheBoundGrowsOnlyPastMaxMergedRows) {
  MergePolicy p;
  p.max_merged_rows = 1000;
  p.max_segments = 10;
  EXPECT_EQ(segment_bound(5000, p), 11u);  // 2 * 5000 / 1000 + 1 > 10
  EXPECT_EQ(segment_bound(100, p), 10u);
  // Segments at the size cap are left alone.
  std::vector<uint64_t> rows(30, 900);
  settle(rows, p);
  EXPECT_EQ(rows.size(), 30u);
  EXPECT_LE(rows.size(), segment_bound(30 * 900, p));
}
