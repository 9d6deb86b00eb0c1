#include "eagle/app/config.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "eagle/core/error.h"

namespace fs = std::filesystem;
using namespace eagle::app;

TEST(Config, DefaultsArePyserinisBeirSetting) {
  unsetenv("EAGLE_CONFIG");
  Config c = load_config(std::nullopt);
  EXPECT_DOUBLE_EQ(c.bm25.k1, 0.9);
  EXPECT_DOUBLE_EQ(c.bm25.b, 0.4);
  EXPECT_EQ(c.top_k, 10u);
  EXPECT_EQ(c.run_depth, 1000u);
}

TEST(Config, FileThenEnvironmentOverride) {
  auto f = fs::temp_directory_path() / "eagle_cfg_test.yaml";
  std::ofstream(f) << "bm25:\n  k1: 1.2\n  b: 0.75\nanalyzer:\n  stemmer: english\nsearch:\n  top_k: 7\n";
  setenv("EAGLE_BM25_B", "0.5", 1);
  Config c = load_config(f);
  unsetenv("EAGLE_BM25_B");
  EXPECT_DOUBLE_EQ(c.bm25.k1, 1.2);
  EXPECT_DOUBLE_EQ(c.bm25.b, 0.5);
  EXPECT_EQ(c.analyzer.stemmer, eagle::text::Stemmer::english);
  EXPECT_EQ(c.top_k, 7u);
  fs::remove(f);
}

TEST(Config, UnknownKeysAndBadValuesNameTheKey) {
  auto f = fs::temp_directory_path() / "eagle_cfg_bad.yaml";
  std::ofstream(f) << "bm25:\n  kone: 1.2\n";
  try {
    load_config(f);
    FAIL();
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find("bm25.kone"), std::string::npos) << e.what();
  }
  Config c;
  EXPECT_THROW(set_option(c, "bm25.b", "1.5"), eagle::Error);
  EXPECT_THROW(set_option(c, "bm25.k1", "abc"), eagle::Error);
  EXPECT_THROW(set_option(c, "search.top_k", "0"), eagle::Error);
  EXPECT_THROW(set_option(c, "search.top_k", "100000000"), eagle::Error);  // bounded
  setenv("EAGLE_ANALYZER_STOPWORDS", "maybe", 1);
  EXPECT_THROW(load_config(std::nullopt), eagle::Error);
  unsetenv("EAGLE_ANALYZER_STOPWORDS");
  fs::remove(f);
}

TEST(Config, DescribeListsEveryOptionWithItsEnvironmentName) {
  auto text = describe_config(Config{});
  for (const auto& o : config_options()) EXPECT_NE(text.find(o.env_name()), std::string::npos) << o.key;
  EXPECT_NE(text.find("k1: 0.9"), std::string::npos);
}

TEST(Config, EncodersSectionIsKeptAsStructuredSettings) {
  auto f = fs::temp_directory_path() / "eagle_cfg_enc.yaml";
  std::ofstream(f) << "bm25:\n  k1: 1.1\nencoders:\n  pubmedbert:\n    type: bert\n    path: /models/pubmedbert\n"
                      "    max_length: 256\n    normalize: false\n";
  Config c = load_config(f);
  EXPECT_DOUBLE_EQ(c.bm25.k1, 1.1);
  ASSERT_TRUE(c.encoders.contains("pubmedbert"));
  EXPECT_EQ(c.encoders["pubmedbert"]["type"], "bert");
  EXPECT_EQ(c.encoders["pubmedbert"]["max_length"], 256);
  EXPECT_EQ(c.encoders["pubmedbert"]["normalize"], false);
  fs::remove(f);
}
