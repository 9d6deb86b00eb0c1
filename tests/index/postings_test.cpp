#include "eagle/index/lexical/postings.h"

#include <gtest/gtest.h>

#include <random>

using namespace eagle::index;

TEST(Postings, RoundTripAcrossBlocksAndTail) {
  std::mt19937 rng(7);
  PostingList pl;
  std::vector<std::pair<DocId, uint32_t>> ref;
  DocId d = 0;
  for (int i = 0; i < 1000; ++i) {
    d += 1 + rng() % 300000;  // large gaps exercise multi-byte varints
    uint32_t tf = 1 + rng() % 70000;
    pl.append(d, tf);
    ref.emplace_back(d, tf);
  }
  EXPECT_EQ(pl.size(), 1000u);
  EXPECT_EQ(pl.num_blocks(), 8u);  // 7 sealed blocks + the tail of 104
  PostingCursor c(&pl);
  for (auto [doc, tf] : ref) {
    ASSERT_EQ(c.doc(), doc);
    ASSERT_EQ(c.tf(), tf);
    c.next();
  }
  EXPECT_EQ(c.doc(), kEndDoc);
  EXPECT_LT(pl.compressed_bytes(), 1000u * 8);  // smaller than raw pairs
}

TEST(Postings, AdvanceToFindsFirstNotLess) {
  PostingList pl;
  for (DocId d = 0; d < 5000; d += 3) pl.append(d, 1);
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    PostingCursor c(&pl);
    DocId target = 0;
    while (true) {
      target += rng() % 200;
      c.advance_to(target);
      DocId expect = (target + 2) / 3 * 3;
      if (expect >= 5000) {
        ASSERT_EQ(c.doc(), kEndDoc);
        break;
      }
      ASSERT_EQ(c.doc(), expect);
    }
  }
}
