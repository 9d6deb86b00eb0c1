// Parity of the native BERT runtime with the PyTorch reference recorded by
// scripts/make_bert_fixtures.py (three configurations: hidden 32/48/64, 2/3/1
// layers, 4/6/2 heads; padding within a batch; truncation; sentence pairs with a
// classifier head). Tolerance: 1e-4 max absolute difference.
#include "eagle/encode/bert/bert.h"
#include "support/build_paths.h"
#include "eagle/encode/bert/kernels.h"

#include <gtest/gtest.h>

#include <cstdio>

#include <cmath>
#include <random>
#include <vector>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "eagle/core/error.h"

namespace fs = std::filesystem;
using namespace eagle::encode;
using nlohmann::json;

namespace {

fs::path fixture(const std::string& name) { return fs::path(EAGLE_SOURCE_DIR) / "tests/fixtures/bert" / name; }

json reference(const std::string& name) {
  std::ifstream in(fixture(name) / "reference.json");
  EXPECT_TRUE(in) << "missing fixture " << fixture(name);
  return json::parse(in);
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - b[i]));
  return m;
}

void check_embeddings(const std::string& name) {
  auto ref = reference(name);
  auto texts = ref["texts"].get<std::vector<std::string>>();
  // Through the whole encoder: tokenizer, truncation, length-bucketed batches with padding.
  for (auto pooling : {Pooling::cls, Pooling::mean}) {
    BertEncoderOptions o;
    o.pooling = pooling;
    o.l2 = false;
    o.batch_size = 4;  // batches mix lengths: padding inside a batch
    auto enc = make_bert_encoder("test", fixture(name), o);
    auto got = enc->encode(texts, EncodeMode::document);
    const auto& want = ref[pooling == Pooling::cls ? "cls" : "mean"];
    double worst = 0;
    for (size_t i = 0; i < texts.size(); ++i) worst = std::max(worst, max_abs_diff(got[i], want[i].get<std::vector<float>>()));
    std::printf("%s %s pooling: max |diff| = %.2e\n", name.c_str(), pooling == Pooling::cls ? "cls" : "mean", worst);
    EXPECT_LT(worst, 1e-4) << name;
  }
  // The tokenizer produced the reference ids (including truncation).
  auto model = BertModel::load(fixture(name));
  auto ids = ref["ids"].get<std::vector<std::vector<int32_t>>>();
  std::vector<std::vector<int32_t>> types;
  for (const auto& s : ids) types.emplace_back(s.size(), 0);
  auto l2 = model.embed(ids, types, Pooling::cls, true);
  double n = 0;
  for (float f : l2[0]) n += double(f) * f;
  EXPECT_NEAR(n, 1.0, 1e-5);
}

}  // namespace

TEST(BertParity, TinyA) { check_embeddings("tiny-a"); }
TEST(BertParity, TinyBTruncates) { check_embeddings("tiny-b"); }

TEST(BertParity, CrossEncoderPairs) {
  auto ref = reference("tiny-cross");
  auto model = BertModel::load(fixture("tiny-cross"));
  ASSERT_TRUE(model.has_classifier());
  auto logits = model.classify(ref["ids"].get<std::vector<std::vector<int32_t>>>(),
                               ref["type_ids"].get<std::vector<std::vector<int32_t>>>());
  auto want = ref["logits"].get<std::vector<float>>();
  const double worst = max_abs_diff(logits, want);
  std::printf("tiny-cross logits: max |diff| = %.2e\n", worst);
  EXPECT_LT(worst, 1e-4);
  // Through the reranker: the tokenizer builds the same pairs (with truncation).
  BertEncoderOptions o;
  o.batch_size = 2;
  auto rr = make_bert_cross_encoder("medcpt-rerank", fixture("tiny-cross"), o);
  for (size_t i = 0; i < want.size(); ++i) {
    auto pair = ref["pairs"][i].get<std::vector<std::string>>();
    EXPECT_NEAR(rr->score(pair[0], {pair[1]})[0], want[i], 1e-4);
  }
}

TEST(Bert, BadModelFoldersAreClearErrors) {
  EXPECT_THROW(BertModel::load("/nonexistent/model"), eagle::Error);
  EXPECT_THROW(make_bert_cross_encoder("x", fixture("tiny-a")), eagle::Error);  // no classifier head
  auto model = BertModel::load(fixture("tiny-a"));
  size_t L;
  EXPECT_THROW(model.forward({{2, 99999, 3}}, {{0, 0, 0}}, L), eagle::Error);  // id outside the vocabulary
  EXPECT_THROW(model.forward({std::vector<int32_t>(100, 5)}, {std::vector<int32_t>(100, 0)}, L), eagle::Error);
}

#include "eagle/encode/registry_config.h"

TEST(EncoderConfig, BuildsEveryTypeAndNamesTheLabelOnErrors) {
  EncoderRegistry reg;
  json cfg = {{"pubmedbert", {{"type", "bert"}, {"path", fixture("tiny-a").string()}, {"pooling", "mean"}}},
              {"medcpt-rerank", {{"type", "bert-cross"}, {"path", fixture("tiny-cross").string()}}},
              {"text-embedding-v4",
               {{"type", "openai"}, {"base_url", "http://127.0.0.1:9"}, {"model", "text-embedding-v4"}, {"dim", 1024}}},
              {"qwen3-rerank", {{"type", "cohere-rerank"}, {"base_url", "http://127.0.0.1:9"}}}};
  add_from_config(reg, cfg);
  EXPECT_EQ(reg.encoder("pubmedbert").info().dim, 32u);
  EXPECT_EQ(reg.encoder("text-embedding-v4").info().dim, 1024u);
  EXPECT_TRUE(reg.has_reranker("medcpt-rerank"));
  EXPECT_NO_THROW(reg.require({"pubmedbert", "medcpt-rerank", "qwen3-rerank"}));
  auto expect_error = [](const json& c, const std::string& needle) {
    EncoderRegistry r;
    try {
      add_from_config(r, c);
      FAIL() << "expected an error for " << c.dump();
    } catch (const eagle::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error({{"pubmedbert", {{"type", "bert"}, {"path", "/nonexistent"}}}}, "encoder 'pubmedbert'");
  expect_error({{"x", {{"type", "quantum"}}}}, "unknown type 'quantum'");
  expect_error({{"y", {{"type", "openai"}}}}, "base_url");
  expect_error({{"z", {{"type", "bert"}, {"path", fixture("tiny-a").string()}, {"pooling", "max"}}}}, "pooling");
}

// The projection kernel of either path (AVX-512 panel tiles with masked tails and
// row blocks, or OpenBLAS) against a double-precision loop.
TEST(BertKernels, LinearMatchesANaiveProductOnOddShapes) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  eagle::encode::kernels::set_threads(2);
  // Which path this run checks (ctest runs it again with EAGLE_BERT_KERNELS=blas); on a
  // CPU without AVX-512 the AVX-512 path is not checked, and the output says so.
  std::printf("[   NOTE   ] BERT projection kernel under test: %s\n", eagle::encode::kernels::kernel_name());
  for (int M : {1, 5, 6, 7, 13, 32, 97, 130})
    for (int N : {1, 15, 16, 17, 63, 64, 65, 130})
      for (int K : {1, 3, 64, 70}) {
        std::vector<float> x(static_cast<size_t>(M) * K), w(static_cast<size_t>(N) * K), y(static_cast<size_t>(M) * N, -7.0f);
        for (auto& v : x) v = u(rng);
        for (auto& v : w) v = u(rng);  // [N][K], as PyTorch stores a Linear
        const auto packed = eagle::encode::kernels::pack_weights(w, N, K);
        eagle::encode::kernels::linear(M, N, K, x.data(), packed.data(), y.data());
        double worst = 0;
        for (int m = 0; m < M; ++m)
          for (int n = 0; n < N; ++n) {
            double s = 0;
            for (int k = 0; k < K; ++k) s += static_cast<double>(x[m * K + k]) * w[static_cast<size_t>(n) * K + k];
            worst = std::max(worst, std::abs(s - y[static_cast<size_t>(m) * N + n]));
          }
        ASSERT_LT(worst, 1e-4) << "M " << M << " N " << N << " K " << K << " (" << eagle::encode::kernels::kernel_name() << ")";
      }
}
