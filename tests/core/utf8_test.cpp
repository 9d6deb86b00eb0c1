#include "eagle/core/utf8.h"

#include <gtest/gtest.h>

using eagle::first_invalid_utf8;
using eagle::repair_utf8;

TEST(Utf8, AcceptsWellFormedTextOfEveryLength) {
  EXPECT_FALSE(first_invalid_utf8(""));
  EXPECT_FALSE(first_invalid_utf8("plain ascii"));
  EXPECT_FALSE(first_invalid_utf8("caf\xC3\xA9 \xCE\xB1-synuclein \xE2\x80\x94 \xF0\x9F\xA7\xAC"));  // 2, 2, 3, 4 bytes
  EXPECT_FALSE(first_invalid_utf8("\xF4\x8F\xBF\xBF"));  // U+10FFFF, the last code point
}

TEST(Utf8, FindsTheFirstBadByte) {
  EXPECT_EQ(first_invalid_utf8("ab\xFF"), 2u);
  EXPECT_EQ(first_invalid_utf8("ab\xC3"), 2u);              // truncated
  EXPECT_EQ(first_invalid_utf8("\xC0\xAF"), 0u);            // overlong '/'
  EXPECT_EQ(first_invalid_utf8("x\xE0\x80\xAF"), 1u);       // overlong 3-byte
  EXPECT_EQ(first_invalid_utf8("\xED\xA0\x80"), 0u);        // a surrogate
  EXPECT_EQ(first_invalid_utf8("\xF4\x90\x80\x80"), 0u);    // past U+10FFFF
  EXPECT_EQ(first_invalid_utf8("ok \xE2\x82"), 3u);         // cut inside a 3-byte sequence
  EXPECT_EQ(first_invalid_utf8("\x80 stray continuation"), 0u);
}

TEST(Utf8, RepairReplacesEachMaximalSubpartWithOneReplacementCharacter) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(repair_utf8("ok"), "ok");
  EXPECT_EQ(repair_utf8("a\xFF" "b"), "a" + fffd + "b");
  // A valid prefix of a sequence cut short is one subpart (Unicode 15, §3.9 U+FFFD
  // substitution of maximal subparts), a stray byte is another.
  EXPECT_EQ(repair_utf8("\xE2\x82" "x"), fffd + "x");
  EXPECT_EQ(repair_utf8("\xE2\x82\xFF"), fffd + fffd);
  EXPECT_EQ(repair_utf8("\xF0\x9F\xA7"), fffd);
  EXPECT_FALSE(first_invalid_utf8(repair_utf8("\xC0\xAF\xED\xA0\x80\xF4\x90")));
}
