// parse_json_input, the one parser of JSON from outside: nesting bounded before
// anything is built, errors that give the byte and never quote the input, numbers
// out of range refused.
#include "eagle/core/json_input.h"

#include <gtest/gtest.h>

#include <string>

#include "eagle/core/error.h"

namespace json_input_test {

using eagle::Error;
using eagle::kMaxJsonDepth;

std::string nested(size_t levels, char open = '[', char close = ']') {
  return std::string(levels, open) + std::string(levels, close);
}

std::string message_of(const std::string& text) {
  try {
    eagle::parse_json_input(text, "the body");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), eagle::ErrorCode::invalid_argument);
    return e.what();
  }
  return "";
}

TEST(JsonInput, NestingIsBoundedAndTheFirstLevelTooDeepIsNamed) {
  EXPECT_NO_THROW(eagle::parse_json_input(nested(kMaxJsonDepth), "x"));
  EXPECT_EQ(eagle::json_too_deep(nested(kMaxJsonDepth)), std::nullopt);
  EXPECT_EQ(eagle::json_too_deep(nested(kMaxJsonDepth + 1)), kMaxJsonDepth);
  // 100,000 levels (what overflowed a server thread's stack) is refused unparsed.
  const std::string deep = "{\"metadata\":" + nested(100000) + "}";
  EXPECT_EQ(message_of(deep), "the body nests deeper than " + std::to_string(kMaxJsonDepth) +
                                  " levels (byte " + std::to_string(12 + kMaxJsonDepth - 1) + ")");
  // Objects count as arrays do; brackets inside strings, escaped quotes included, do not.
  std::string objects;
  for (size_t i = 0; i <= kMaxJsonDepth; ++i) objects += "{\"a\":";
  objects += "1" + std::string(kMaxJsonDepth + 1, '}');
  EXPECT_TRUE(eagle::json_too_deep(objects).has_value());
  const std::string in_strings = "[\"" + std::string(1000, '[') + "\\\"[[[\", \"{{{{\"]";
  EXPECT_EQ(eagle::json_too_deep(in_strings), std::nullopt);
  EXPECT_NO_THROW(eagle::parse_json_input(in_strings, "x"));
}

TEST(JsonInput, ErrorsGiveTheByteAndNeverTheContent) {
  const std::string secret = "root:x:0:0:root:/root:/bin/bash";
  const std::string msg = message_of(secret);
  EXPECT_EQ(msg, "the body is not valid JSON (byte 0)");
  EXPECT_EQ(msg.find("root"), std::string::npos);
  EXPECT_EQ(message_of("{\"a\": [1, 2,, 3]}"), "the body is not valid JSON (byte 12)");
  // nlohmann alone would stop at a NUL and accept what came before it.
  EXPECT_EQ(message_of(std::string("{\"a\": 1}\0{{{garbage", 17)), "the body is not valid JSON (byte 8)");
}

TEST(JsonInput, NumbersOutOfRangeAreRefused) {
  EXPECT_EQ(message_of("{\"top_k\": 1e400}"), "the body holds a number out of range");
  EXPECT_EQ(eagle::parse_json_input("{\"top_k\": 1e300}", "x")["top_k"].get<double>(), 1e300);
}

}  // namespace json_input_test
