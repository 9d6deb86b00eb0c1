// Parity of the native CLIP runtime with PIL and PyTorch, recorded by
// scripts/make_clip_fixtures.py: PIL's bicubic resize byte for byte, the 224 px
// preprocessing tensor, and the embeddings of four tiny random-weight towers (OpenCLIP
// ViT, BiomedCLIP-shaped timm trunk + BERT text tower, Hugging Face CLIP with
// quick_gelu, UNI2-shaped timm ViT with registers, LayerScale and SwiGLU) from PNG
// bytes through the Encoder interface. The tolerance is checked to be tight enough:
// a wrong activation or a wrong interpolation lands far outside it.
#include "eagle/encode/clip/clip.h"
#include "support/build_paths.h"

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

double clip_max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
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
    const double d = clip_max_abs_diff(got[i], ref.at("image_embeddings")[i].get<std::vector<float>>());
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

// A window of the resize is exactly that part of the whole resize, so the crop alone
// is computed; a 1 x 65,500 image (224 x 14.7 million pixels resized) is cut, not
// resized whole.
TEST(ClipPreprocess, AWindowOfTheResizeIsThatPartOfTheWholeResize) {
  for (const char* name : {"image-0-97x61.png", "image-1-40x300.png", "image-2-20x20.png", "image-4-400x300.png"}) {
    const auto in = image(name);
    for (const auto& [W, H] : {std::pair<uint32_t, uint32_t>{50, 32}, {224, 300}, {37, 211}, {in.width, 77}}) {
      const auto whole = resize_bicubic_pil(in, W, H);
      const uint32_t x0 = W / 3, y0 = H / 4, w = W - x0 - W / 5, h = H - y0 - H / 6;
      const auto part = resize_bicubic_pil_window(in, W, H, x0, y0, w, h);
      ASSERT_EQ(part.width, w);
      ASSERT_EQ(part.height, h);
      size_t differing = 0;
      for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x)
          for (int ch = 0; ch < 3; ++ch) differing += part.pixel(x, y)[ch] != whole.pixel(x0 + x, y0 + y)[ch];
      EXPECT_EQ(differing, 0u) << name << " -> " << W << "x" << H;
    }
  }
  RgbImage thin;
  thin.width = 1;
  thin.height = 65500;
  thin.pixels.assign(size_t{65500} * 3, 128);
  const auto x = preprocess(thin, ImagePreprocess{});
  EXPECT_EQ(x.size(), 3u * 224 * 224);
  EXPECT_THROW(resize_bicubic_pil_window(thin, 224, 1000, 0, 900, 224, 224), eagle::Error);  // outside
}

TEST(ClipPreprocess, ShorterSideRuleTruncatesLikeTorchvision) {
  using Size = std::pair<uint64_t, uint64_t>;
  EXPECT_EQ(shorter_side_size(97, 61, 32), Size(50, 32));  // int(32 * 97 / 61) = 50
  EXPECT_EQ(shorter_side_size(40, 300, 224), Size(224, 1680));
  EXPECT_EQ(shorter_side_size(224, 500, 224), Size(224, 500));  // already the size: untouched
  EXPECT_EQ(shorter_side_size(1, 65500, 224), Size(224, 14672000));
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
    EXPECT_LT(clip_max_abs_diff(got[i], ref.at("text_embeddings")[i].get<std::vector<float>>()), kTolerance) << texts[i];
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
  EXPECT_LT(clip_max_abs_diff(l2(right.embed({preprocess(img, folder.preprocess)})[0]), want), kTolerance);

  std::printf("hf-clip image 0: right %.3g, ", clip_max_abs_diff(l2(right.embed({preprocess(img, folder.preprocess)})[0]), want));
  auto gelu_cfg = folder.vit;
  gelu_cfg.act = layers::Activation::gelu;
  auto wrong_act = VitModel::load(st, folder.layout, folder.vit_prefix, gelu_cfg);
  const double act_miss = clip_max_abs_diff(l2(wrong_act.embed({preprocess(img, folder.preprocess)})[0]), want);
  EXPECT_GT(act_miss, 50 * kTolerance);

  // Box filter to the same size, same crop.
  const auto [w, h] = shorter_side_size(img.width, img.height, 32);
  const auto boxed = eagle::ingest::resize_area(img, static_cast<uint32_t>(w), static_cast<uint32_t>(h));
  auto no_resize = folder.preprocess;
  const double filter_miss = clip_max_abs_diff(l2(right.embed({preprocess(boxed, no_resize)})[0]), want);
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

// A malformed checkpoint or configuration is an error naming what is wrong, never a
// read past a buffer: a position table that fits no grid, OpenCLIP's default timm_pool
// ("avg", not the class token), a text projection that does not chain.
TEST(ClipEncoder, MalformedCheckpointsAndConfigsAreRefused) {
  const auto tmp = fs::temp_directory_path() / "eagle_clip_malformed";
  auto expect_refused = [&](const std::string& what) {
    try {
      make_clip_encoder("x", tmp);
      ADD_FAILURE() << "accepted; expected an error mentioning " << what;
    } catch (const eagle::Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  auto cfg = read_json(fixtures() / "openclip-vit/open_clip_config.json");
  std::ofstream(tmp / "open_clip_config.json") << cfg.dump();
  auto tensors = [](int positions) {
    std::vector<std::pair<std::string, std::pair<std::vector<int64_t>, std::vector<float>>>> t;
    t.push_back({"visual.conv1.weight", {{32, 3, 8, 8}, std::vector<float>(32 * 3 * 64, 0.01f)}});
    t.push_back({"visual.class_embedding", {{32}, std::vector<float>(32, 0.1f)}});
    t.push_back({"visual.positional_embedding", {{positions, 32}, std::vector<float>(size_t(positions) * 32, 0.1f)}});
    return t;
  };
  write_safetensors(tmp / "open_clip_model.safetensors", tensors(7));  // 32 px / 8 = 16 patches: 16 or 17 rows
  expect_refused("positional_embedding holds 224 values");
  write_safetensors(tmp / "open_clip_model.safetensors", tensors(17));
  expect_refused("ln_post");  // the rest of the tower is missing: named, not read
  fs::remove_all(tmp);

  fs::create_directories(tmp);
  for (const auto& e : fs::directory_iterator(fixtures() / "openclip-timm")) fs::copy_file(e.path(), tmp / e.path().filename());
  cfg = read_json(tmp / "open_clip_config.json");
  cfg["model_cfg"]["vision_cfg"].erase("timm_pool");
  std::ofstream(tmp / "open_clip_config.json") << cfg.dump();
  expect_refused("timm_pool");
  cfg["model_cfg"]["vision_cfg"]["timm_pool"] = "";
  cfg["model_cfg"]["text_cfg"]["hf_pooler_type"] = "max_pooler";
  std::ofstream(tmp / "open_clip_config.json") << cfg.dump();
  expect_refused("hf_pooler_type");
  cfg["model_cfg"]["text_cfg"]["hf_pooler_type"] = "cls_last_hidden_state_pooler";
  cfg["model_cfg"]["text_cfg"]["heads"] = 5;  // 24 wide: not a multiple
  std::ofstream(tmp / "open_clip_config.json") << cfg.dump();
  expect_refused("text tower");
  fs::remove_all(tmp);
}

TEST(ClipEncoder, ConfiguredAsTypeClipWithItsIdentity) {
  EncoderRegistry reg;
  add_from_config(reg, json{{"biomedclip", {{"type", "clip"}, {"path", (fixtures() / "openclip-timm").string()}}}});
  auto& enc = reg.encoder("biomedclip");
  EXPECT_EQ(enc.info().implementation, "clip");
  EXPECT_NE(enc.info().identity.find("type=clip"), std::string::npos) << enc.info().identity;
  EXPECT_EQ(enc.encode({"lung cancer"}, EncodeMode::query).at(0).size(), 16u);
}
