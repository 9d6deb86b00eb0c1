#include "eagle/store/merge_policy.h"

#include <algorithm>
#include <numeric>

namespace eagle::store {

uint32_t merge_tier(uint64_t rows, const MergePolicy& p) {
  const uint64_t t = std::max<uint32_t>(p.segments_per_tier, 2);
  uint64_t size = std::max<uint64_t>(p.floor_rows, 1);
  uint32_t tier = 0;
  // tier = floor(log_T(max(rows, floor) / floor)), in integers.
  while (rows >= size * t && size <= UINT64_MAX / t) {
    size *= t;
    ++tier;
  }
  return tier;
}

std::vector<MergeRange> find_merges(const std::vector<uint64_t>& rows, const MergePolicy& p) {
  const size_t t = std::max<uint32_t>(p.segments_per_tier, 2);
  std::vector<MergeRange> out;
  std::vector<bool> taken(rows.size(), false);
  // Tier merges: runs of adjacent segments of one tier, newest first, T at a time.
  size_t end = rows.size();
  while (end > 0) {
    const uint32_t tier = merge_tier(rows[end - 1], p);
    size_t begin = end - 1;
    while (begin > 0 && merge_tier(rows[begin - 1], p) == tier) --begin;
    // [begin, end) is one run; take windows of T from its newest end.
    size_t hi = end;
    while (hi - begin >= t) {
      const uint64_t sum = std::accumulate(rows.begin() + static_cast<std::ptrdiff_t>(hi - t),
                                           rows.begin() + static_cast<std::ptrdiff_t>(hi), uint64_t{0});
      if (sum > p.max_merged_rows) break;  // this tier is as large as segments get
      out.push_back({hi - t, t});
      for (size_t i = hi - t; i < hi; ++i) taken[i] = true;
      hi -= t;
    }
    end = begin;
  }
  // Stranded runs: segments followed by a larger one (a bulk ingest's segment after
  // single writes) never meet another of their tier again. Two or more adjacent ones,
  // each of a lower tier than the segment right after them, merge among themselves.
  // A sequence whose sizes never grow (single writes) has none.
  for (size_t e = 1; e < rows.size(); ++e) {
    const uint32_t after = merge_tier(rows[e], p);
    size_t b = e;
    uint64_t sum = 0;
    while (b > 0 && !taken[b - 1] && merge_tier(rows[b - 1], p) < after && sum + rows[b - 1] <= p.max_merged_rows) {
      --b;
      sum += rows[b];
    }
    if (e - b >= 2) {
      out.push_back({b, e - b});
      for (size_t k = b; k < e; ++k) taken[k] = true;
    }
  }
  // Count bound: while too many segments would remain, merge the smallest window of
  // up to T adjacent segments no other merge takes.
  size_t remaining = rows.size();
  for (const auto& m : out) remaining -= m.count - 1;
  while (remaining > p.max_segments) {
    size_t best = rows.size(), best_count = 0;
    uint64_t best_sum = UINT64_MAX;
    for (size_t i = 0; i < rows.size(); ++i) {
      uint64_t sum = 0;
      size_t n = 0;
      for (size_t j = i; j < rows.size() && n < t && !taken[j]; ++j) {
        sum += rows[j];
        ++n;
        if (sum > p.max_merged_rows) break;
        // Prefer the window that removes the most segments per row merged.
        if (n >= 2 && (best == rows.size() || sum * (best_count - 1) < best_sum * (n - 1))) {
          best = i;
          best_count = n;
          best_sum = sum;
        }
      }
    }
    if (best == rows.size()) break;  // every window passes max_merged_rows
    // Never more than needed: merging k segments removes k - 1.
    best_count = std::min(best_count, remaining - p.max_segments + 1);
    out.push_back({best, best_count});
    for (size_t i = best; i < best + best_count; ++i) taken[i] = true;
    remaining -= best_count - 1;
  }
  std::sort(out.begin(), out.end(), [](const MergeRange& a, const MergeRange& b) { return a.first < b.first; });
  return out;
}

size_t segment_bound(uint64_t rows, const MergePolicy& p) {
  const uint64_t by_size = p.max_merged_rows ? 2 * rows / p.max_merged_rows + 1 : rows;
  return std::max<uint64_t>(p.max_segments, by_size);
}

}  // namespace eagle::store
