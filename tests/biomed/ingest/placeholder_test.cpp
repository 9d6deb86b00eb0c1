#include <gtest/gtest.h>
TEST(PlaceholderIngest, Builds) { EXPECT_EQ(1 + 1, 2); }
