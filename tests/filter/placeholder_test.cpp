#include <gtest/gtest.h>
TEST(FilterPlaceholder, ModuleBuilds) { EXPECT_EQ(1 + 1, 2); }
