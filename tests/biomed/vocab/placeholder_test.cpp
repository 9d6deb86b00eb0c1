#include <gtest/gtest.h>
TEST(PlaceholderVocab, Builds) { EXPECT_EQ(1 + 1, 2); }
