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

// A key's value as `eagle config` prints it; a failure when there is no such key.
std::string option_value(const Config& c, const std::string& key) {
  for (const auto& o : config_options())
    if (o.key == key) return o.get(c);
  ADD_FAILURE() << "no key " << key;
  return std::string();
}

// The core's seed numbers (retrieval.txt: HNSW M=16, efConstruction=256, ef=64; the
// hybrid mode) are keys with the seed's defaults in every build; a bad value names its key.
TEST(Config, TheCoreSeedNumbersAreKeysWithTheSeedsDefaults) {
  Config c;
  auto get = [&](const std::string& key) { return option_value(c, key); };
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"store.hnsw_m", "16"}, {"store.hnsw_ef_construction", "256"}, {"store.hnsw_ef_search", "64"},
           {"pipeline.hybrid_mode", "true_hybrid"}, {"pipeline.hybrid_alpha", "0.6"}, {"pipeline.namespace", "auto"}})
    EXPECT_EQ(get(key), value) << key;
  set_option(c, "pipeline.rerank_policy", "core=general");
  EXPECT_EQ(get("pipeline.rerank_policy"), "core=general");
  for (const auto& [key, bad] : std::vector<std::pair<std::string, std::string>>{
           {"store.hnsw_m", "0"}, {"pipeline.hybrid_mode", "both"}, {"pipeline.namespace", "nope"}}) {
    try {
      set_option(c, key, bad);
      ADD_FAILURE() << key << "=" << bad << " was accepted";
    } catch (const eagle::Error& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

#if EAGLE_TEST_WITH_BIOMED  // the biomed plugin's
// Every weight, threshold and count of both seeds is a key with the seed's
// default, and a value out of its range names the key.
TEST(Config, TheSeedsNumbersAreKeysWithTheSeedsDefaults) {
  Config c;
  auto get = [&](const std::string& key) { return option_value(c, key); };
  // biomed-retrieval.txt: 2 aliases + 1 pathway per entity, capped at 12; text[:512];
  // supplement 2.0 * entity + lexical + 0.1 * dense, limit max(4 * docs, 8); +100 boost,
  // min_new 2; related_drugs[:4] / [:6]. retrieval.txt: HNSW M=16, efConstruction=256, ef=64.
  const std::pair<const char*, const char*> seed[] = {
      {"biomed.aliases_per_entity", "2"},      {"biomed.pathways_per_entity", "1"},
      {"biomed.expansion_cap", "12"},          {"biomed.entity_text_chars", "512"},
      {"biomed.supplement_entity_weight", "2"}, {"biomed.supplement_dense_weight", "0.1"},
      {"biomed.supplement_docs_per_hit", "4"}, {"biomed.supplement_min_docs_limit", "8"},
      {"biomed.injection_boost", "100"},       {"biomed.injection_min_new", "2"},
      {"biomed.related_drugs_for_supplement", "4"}, {"biomed.related_drugs_for_boost", "6"},
      {"biomed.expansion_encoder", "pubmedbert"}, {"biomed.collection_recall_top_k", "20"},
      {"biomed.radiology_collection", "eagle_medical_radiology"}, {"biomed.pathology_encoder", "uni2"},
      {"biomed.visual_collection", "eagle_visual"},
      {"store.hnsw_m", "16"}, {"store.hnsw_ef_construction", "256"}, {"store.hnsw_ef_search", "64"},
      {"pipeline.rerank_policy", ""}, {"pipeline.general_reranker", ""},
      {"pipeline.hybrid_mode", "true_hybrid"}, {"pipeline.hybrid_alpha", "0.6"}};
  for (const auto& [key, value] : seed) EXPECT_EQ(get(key), value) << key;
  EXPECT_NE(get("biomed.radiology_keywords").find("x-ray"), std::string::npos);
  EXPECT_NE(get("biomed.hybrid_text_collections").find("eagle_text_biomed"), std::string::npos);

  set_option(c, "biomed.expansion_cap", "0");  // 0 turns the suffix off
  EXPECT_EQ(get("biomed.expansion_cap"), "0");
  set_option(c, "biomed.injection_boost", "50");
  EXPECT_EQ(get("biomed.injection_boost"), "50");
  set_option(c, "biomed.exploratory_search_collections", "eagle_text_medcpt:medcpt-query, extra:glove");
  EXPECT_EQ(get("biomed.exploratory_search_collections"), "eagle_text_medcpt:medcpt-query,extra:glove");
  set_option(c, "pipeline.rerank_policy", "biomed=none, core=general");
  EXPECT_EQ(c.pipeline.rerank_policy.at("biomed"), "none");
  EXPECT_EQ(get("pipeline.rerank_policy"), "biomed=none,core=general");
  set_option(c, "store.hnsw_m", "32");
  EXPECT_EQ(c.hnsw.m, 32u);
  EXPECT_EQ(get("biomed.entity_min_query_share"), "0.25");  // learned on the dev splits
  set_option(c, "biomed.entity_min_query_share", "0");     // the seed: always
  EXPECT_EQ(get("biomed.entity_min_query_share"), "0");
  for (const auto& [key, bad] : std::vector<std::pair<std::string, std::string>>{
           {"biomed.injection_boost", "-1"},
           {"biomed.supplement_dense_weight", "nan"},
           {"biomed.entity_min_query_share", "1.5"},
           {"biomed.entity_min_query_share", "nan"},
           {"biomed.expansion_cap", "lots"},
           {"biomed.exploratory_search_collections", "no_encoder"},
           {"pipeline.rerank_policy", "biomed=sometimes"},
           {"pipeline.rerank_policy", "domain"},
           {"store.hnsw_m", "0"},
           {"pipeline.hybrid_mode", "both"}}) {
    try {
      set_option(c, key, bad);
      ADD_FAILURE() << key << "=" << bad << " was accepted";
    } catch (const eagle::Error& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}
#endif
