// Parity of the native CLIP runtime with PIL and PyTorch, recorded by
// scripts/make_clip_fixtures.py: PIL's bicubic resize byte for byte, the 224 px
// preprocessing tensor, and the embeddings of four tiny random-weight towers (OpenCLIP
// ViT, BiomedCLIP-shaped timm trunk + BERT text tower, Hugging Face CLIP with
// quick_gelu, UNI2-shaped timm ViT with registers, LayerScale and SwiGLU) from PNG
// bytes through the Encoder interface. The tolerance is checked to be tight enough:
// a wrong activation or a wrong interpolation lands far outside it.
#include "eagle/encode/clip/clip.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "eagle/core/error.h"
#include "eagle/encode/registry_config.h"

namespace fs = std::filesystem;
using namespace eagle::encode;
using namespace eagle::encode::clip;
using eagle::ingest::RgbImage;
using nlohmann::json;

namespace {

// Max absolute difference allowed on an L2-normalised embedding (fp32 vs PyTorch fp32).
constexpr double kTolerance = 5e-6;

fs::path fixtures() { return fs::path(EAGLE_SOURCE_DIR) / "tests/fixtures/clip"; }

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  EXPECT_TRUE(in) << "missing fixture " << p;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

json read_json(const fs::path& p) { return json::parse(read_bytes(p)); }

RgbImage image(const std::string& name) { return eagle::ingest::decode_image(read_bytes(fixtures() / name), name); }

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - b[i]));
  return m;
}

std::vector<float> l2(std::vector<float> v) {
  double n = 0;
  for (float f : v) n += double(f) * f;
  for (auto& f : v) f = float(f / std::sqrt(n));
  return v;
}

// The embeddings of the reference's images through the Encoder (PNG bytes in).
std::vector<Embedding> embed_reference_images(Encoder& enc, const json& ref, std::vector<std::string>& keep) {
  for (const auto& name : ref.at("images")) keep.push_back(read_bytes(fixtures() / name.get<std::string>()));
  std::vector<std::string_view> views(keep.begin(), keep.end());
  return enc.encode_images(views);
}

void expect_image_parity(const std::string& model, uint32_t dim) {
  const auto ref = read_json(fixtures() / model / "reference.json");
  auto enc = make_clip_encoder(model, fixtures() / model);
  EXPECT_EQ(enc->info().dim, dim);
  EXPECT_EQ(enc->info().modality, Modality::image);
  std::vector<std::string> keep;
  const auto got = embed_reference_images(*enc, ref, keep);
  ASSERT_EQ(got.size(), ref.at("image_embeddings").size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = max_abs_diff(got[i], ref.at("image_embeddings")[i].get<std::vector<float>>());
    EXPECT_LT(d, kTolerance) << model << " image " << ref.at("images")[i];
    worst = std::max(worst, d);
  }
  std::printf("parity %s: %zu images, max |diff| %.3g (tolerance %.0e)\n", model.c_str(), got.size(), worst, kTolerance);
}

}  // namespace

TEST(ClipPreprocess, BicubicResizeMatchesPilByteForByte) {
  const auto cases = read_json(fixtures() / "pil_resize.json");
  ASSERT_GE(cases.size(), 5u);
  for (const auto& c : cases) {
    const auto in = image(c.at("input"));
    const auto want = image(c.at("expected"));
    const auto got = resize_bicubic_pil(in, c.at("width"), c.at("height"));
    ASSERT_EQ(got.width, want.width);
    ASSERT_EQ(got.height, want.height);
    size_t differing = 0;
    for (size_t i = 0; i < got.pixels.size(); ++i) differing += got.pixels[i] != want.pixels[i];
    EXPECT_EQ(differing, 0u) << c.at("input") << " -> " << c.at("width") << "x" << c.at("height");
  }
}

TEST(ClipPreprocess, ShorterSideRuleTruncatesLikeTorchvision) {
  EXPECT_EQ(shorter_side_size(97, 61, 32), std::make_pair(50u, 32u));    // int(32 * 97 / 61) = 50
  EXPECT_EQ(shorter_side_size(40, 300, 224), std::make_pair(224u, 1680u));
  EXPECT_EQ(shorter_side_size(224, 500, 224), std::make_pair(224u, 500u));  // already the size: untouched
}

TEST(ClipPreprocess, TensorMatchesThePilTorchvisionPipelineAt224) {
  const auto checks = read_json(fixtures() / "preprocess_224.json");
  ASSERT_EQ(checks.size(), 6u);
  for (const auto& c : checks) {
    const auto x = preprocess(image(c.at("image")), ImagePreprocess{});
    ASSERT_EQ(x.size(), 3u * 224 * 224);
    for (int ch = 0; ch < 3; ++ch) {
      double sum = 0;  // of 50,176 values
      for (size_t i = 0; i < 224u * 224; ++i) sum += x[ch * 224u * 224 + i];
      const double want = c.at("sums")[ch];
      EXPECT_NEAR(sum, want, 1e-5 * 224 * 224) << c.at("image") << " channel " << ch;
    }
    for (const auto& s : c.at("samples")) {
      const size_t ch = s[0], y = s[1], xx = s[2];
      EXPECT_NEAR(x[(ch * 224 + y) * 224 + xx], s[3].get<double>(), 1e-5) << c.at("image");
    }
  }
}

// An odd crop margin (32 x 51 -> 19 rows): torchvision rounds half to even (row 10),
// Hugging Face floors (row 9); each layout's parity above includes that image.
TEST(ClipPreprocess, CentreCropRoundsLikeTorchvisionOrFloorsLikeHuggingFace) {
  const auto img = image("image-5-32x51.png");
  ImagePreprocess torchvision, hf;
  torchvision.size = hf.size = 32;
  hf.crop_floor = true;
  const auto a = preprocess(img, torchvision), b = preprocess(img, hf);
  // Row 0 of the torchvision crop is row 1 of Hugging Face's.
  for (size_t x = 0; x < 32; ++x) EXPECT_EQ(a[x], b[32 + x]);
  EXPECT_NE(a, b);
  EXPECT_TRUE(ClipFolder::read(fixtures() / "hf-clip").preprocess.crop_floor);
  EXPECT_FALSE(ClipFolder::read(fixtures() / "openclip-vit").preprocess.crop_floor);
}

TEST(ClipParity, OpenClipVitImageTower) { expect_image_parity("openclip-vit", 16); }
TEST(ClipParity, HuggingFaceClipVisionWithQuickGelu) { expect_image_parity("hf-clip", 16); }
TEST(ClipParity, TimmVitWithRegistersLayerScaleAndSwiGlu) { expect_image_parity("timm-reg", 32); }
TEST(ClipParity, BiomedClipShapedTimmTrunkAndBertTextTower) {
  expect_image_parity("openclip-timm", 16);
  const auto ref = read_json(fixtures() / "openclip-timm/reference.json");
  auto enc = make_clip_encoder("biomedclip", fixtures() / "openclip-timm");
  EXPECT_TRUE(enc->info().embeds_text);
  const auto texts = ref.at("texts").get<std::vector<std::string>>();
  const auto got = enc->encode(texts, EncodeMode::query);
  ASSERT_EQ(got.size(), texts.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_LT(max_abs_diff(got[i], ref.at("text_embeddings")[i].get<std::vector<float>>()), kTolerance) << texts[i];
}

// The tolerance means something: the same tower with GELU in place of QuickGELU, or
// with a box filter in place of PIL's bicubic, misses the reference by far more.
TEST(ClipParity, ToleranceCatchesAWrongActivationOrInterpolation) {
  const auto folder = ClipFolder::read(fixtures() / "hf-clip");
  const auto st = SafeTensors::open(folder.weights);
  const auto ref = read_json(fixtures() / "hf-clip/reference.json");
  const auto img = image(ref.at("images")[0]);
  const auto want = ref.at("image_embeddings")[0].get<std::vector<float>>();
  auto right = VitModel::load(st, folder.layout, folder.vit_prefix, folder.vit);
  EXPECT_LT(max_abs_diff(l2(right.embed({preprocess(img, folder.preprocess)})[0]), want), kTolerance);

  std::printf("hf-clip image 0: right %.3g, ", max_abs_diff(l2(right.embed({preprocess(img, folder.preprocess)})[0]), want));
  auto gelu_cfg = folder.vit;
  gelu_cfg.act = layers::Activation::gelu;
  auto wrong_act = VitModel::load(st, folder.layout, folder.vit_prefix, gelu_cfg);
  const double act_miss = max_abs_diff(l2(wrong_act.embed({preprocess(img, folder.preprocess)})[0]), want);
  EXPECT_GT(act_miss, 50 * kTolerance);

  // Box filter to the same size, same crop.
  const auto [w, h] = shorter_side_size(img.width, img.height, 32);
  const auto boxed = eagle::ingest::resize_area(img, w, h);
  auto no_resize = folder.preprocess;
  const double filter_miss = max_abs_diff(l2(right.embed({preprocess(boxed, no_resize)})[0]), want);
  EXPECT_GT(filter_miss, 50 * kTolerance);
  std::printf("gelu for quick_gelu %.3g, box filter for bicubic %.3g\n", act_miss, filter_miss);
}

TEST(ClipEncoder, ImageOnlyTowerRefusesTextAndNamesWhy) {
  auto enc = make_clip_encoder("uni2", fixtures() / "timm-reg");
  EXPECT_FALSE(enc->info().embeds_text);
  try {
    enc->encode({"a pathology slide"}, EncodeMode::query);
    FAIL() << "text accepted";
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no text tower"), std::string::npos) << e.what();
  }
}

TEST(ClipEncoder, BadFoldersAndImagesAreClearErrors) {
  const auto tmp = fs::temp_directory_path() / "eagle_clip_bad";
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  try {
    make_clip_encoder("x", tmp);
    FAIL();
  } catch (const eagle::Error& e) {
    EXPECT_EQ(e.code(), eagle::ErrorCode::not_found);
    EXPECT_NE(std::string(e.what()).find("open_clip_config.json"), std::string::npos) << e.what();
  }
  std::ofstream(tmp / "config.json") << "{\"model_type\": \"bert\"}";
  std::ofstream(tmp / "model.safetensors") << "";
  try {
    make_clip_encoder("x", tmp);
    FAIL();
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find("vision_config"), std::string::npos) << e.what();
  }
  fs::remove_all(tmp);
  auto enc = make_clip_encoder("hf", fixtures() / "hf-clip");
  std::vector<std::string_view> bad{"not an image"};
  EXPECT_THROW(enc->encode_images(bad), eagle::Error);
}

TEST(ClipEncoder, ConfiguredAsTypeClipWithItsIdentity) {
  EncoderRegistry reg;
  add_from_config(reg, json{{"biomedclip", {{"type", "clip"}, {"path", (fixtures() / "openclip-timm").string()}}}});
  auto& enc = reg.encoder("biomedclip");
  EXPECT_EQ(enc.info().implementation, "clip");
  EXPECT_NE(enc.info().identity.find("type=clip"), std::string::npos) << enc.info().identity;
  EXPECT_EQ(enc.encode({"lung cancer"}, EncodeMode::query).at(0).size(), 16u);
}
