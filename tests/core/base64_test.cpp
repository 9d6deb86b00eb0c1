// Base64 (RFC 4648 §10 test vectors), and what the strict decoder refuses.
#include <gtest/gtest.h>

#include <random>

#include "eagle/core/base64.h"

using eagle::base64_decode;
using eagle::base64_encode;

TEST(Base64, Rfc4648TestVectors) {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},         {"f", "Zg=="},       {"fo", "Zm8="},
                                                          {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
                                                          {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, coded] : vectors) {
    EXPECT_EQ(base64_encode(plain), coded) << plain;
    EXPECT_EQ(base64_decode(coded), std::string(plain)) << coded;
  }
}

TEST(Base64, EveryByteRoundTrips) {
  std::mt19937 rng(7);
  for (size_t n = 0; n < 300; ++n) {
    std::string bytes(n, '\0');
    for (auto& c : bytes) c = static_cast<char>(rng() & 0xff);
    EXPECT_EQ(base64_decode(base64_encode(bytes)), bytes) << n;
  }
}

TEST(Base64, MalformedInputIsRefused) {
  for (const char* bad : {"Zg=", "Zg", "Z===", "Zm9v YmFy", "Zm9v\nYmFy", "Zg==Zg==", "Zm=v", "%%%%", "Zm9v-_8="})
    EXPECT_FALSE(base64_decode(bad)) << bad;
}
