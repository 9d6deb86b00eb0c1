#include <gtest/gtest.h>
TEST(VectorPlaceholder, ModuleBuilds) { EXPECT_EQ(1 + 1, 2); }
