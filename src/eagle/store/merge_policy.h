#pragma once
// Which segments of a collection to merge: a tiered policy by size, after Lucene's
// TieredMergePolicy and LogByteSizeMergePolicy. A segment's tier is
// floor(log_T(max(rows, floor_rows) / floor_rows)) with T = segments_per_tier; a run
// of T adjacent segments of one tier (the newest such run first) is merged into one
// of the next tier, and a merge result never passes max_merged_rows.
//
// Merges are of *adjacent* segments only, so a collection's segments stay in
// insertion order: ties in a ranking and a scan in row order mean the same as in one
// index over every row. Sizes count every row a segment holds (deleted ones too:
// they cost what live rows cost until a compaction drops them).
//
// Tier runs alone do not bound the count: a large segment appended after small ones
// (a bulk ingest after single writes) strands the small ones before it, so two or more
// adjacent segments of lower tiers than the one after them merge too. Then, while
// more than max_segments remain, the window of up to T adjacent
// segments with the smallest total is merged too. The bound (`segment_bound`): at
// most max(max_segments, 2 * N / max_merged_rows) segments for N rows (past that
// every adjacent pair already sums beyond max_merged_rows).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace eagle::store {

struct MergePolicy {
  // T: 4 keeps at most 3 segments a tier (a million rows: at most 30 segments) for
  // about log_4(N / floor_rows) rewrites of each row over its life.
  uint32_t segments_per_tier = 4;
  // Smaller segments count as this size (tier 0). 1: tier k holds [T^k, T^(k+1)) rows,
  // so a run merges segments of like size and single-row writes cost each row about
  // one rewrite per tier (a larger floor makes the newest tier-0 segment absorb every
  // few single rows, rewriting up to floor_rows * T rows each time).
  uint64_t floor_rows = 1;
  uint64_t max_merged_rows = 4u << 20;  // no merge produces a larger segment
  uint32_t max_segments = 40;          // more than this: the smallest windows merge too
};

struct MergeRange {
  size_t first;  // segments [first, first + count) become one
  size_t count;
  bool operator==(const MergeRange&) const = default;
};

uint32_t merge_tier(uint64_t rows, const MergePolicy& p);

// Merges to run now over segments of these sizes (oldest first), non-overlapping, in
// ascending order of `first`. Merging them and asking again converges: each merge
// removes T - 1 segments.
std::vector<MergeRange> find_merges(const std::vector<uint64_t>& segment_rows, const MergePolicy& p);

// The most segments a collection of `rows` rows holds once the merges find_merges
// asks for have run (and it is asked again until it asks for none).
size_t segment_bound(uint64_t rows, const MergePolicy& p);

}  // namespace eagle::store
