// Images: PNG and JPEG decoding with errors that name the
// file, the box-filter resize against hand-computed means, the DCT against its direct
// sum, and the dct-lowfreq-v1 descriptor on real pages: every page of
// ../shared/data/docs/pdf, rescaled and recompressed, finds itself first.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numbers>
#include <random>

#include "eagle/core/error.h"
#include "eagle/ingest/image/descriptor.h"
#include "eagle/ingest/image/image.h"
#include "eagle/ingest/formats.h"
#include "eagle/ingest/pdf/pdf_render.h"
#include "eagle/ingest/tiles/image_store.h"
#include "eagle/ingest/tiles/tiles.h"
#include "shared_data.h"
#include "support/images.h"

namespace fs = std::filesystem;
using namespace eagle::ingest;

namespace {

RgbImage gradient(uint32_t w, uint32_t h) {
  return eagle::test_support::image_of(w, h, [w, h](uint32_t x, uint32_t y, uint8_t* p) {
    p[0] = static_cast<uint8_t>(x * 255 / std::max(1u, w - 1));
    p[1] = static_cast<uint8_t>(y * 255 / std::max(1u, h - 1));
    p[2] = static_cast<uint8_t>((x * 7 + y * 13) % 256);
  });
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const eagle::Error& e) {
    return e.what();
  }
  return "(no error)";
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

std::string read_image_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST(Image, PngRoundTripsExactlyAndJpegClosely) {
  const RgbImage im = gradient(37, 23);
  const std::string png = encode_png(im);
  EXPECT_EQ(sniff_image_format(png), ImageFormat::png);
  const RgbImage back = decode_image(png, "g.png");
  EXPECT_EQ(back.width, 37u);
  EXPECT_EQ(back.height, 23u);
  EXPECT_EQ(back.pixels, im.pixels);

  const std::string jpg = encode_jpeg(im, 95);
  EXPECT_EQ(sniff_image_format(jpg), ImageFormat::jpeg);
  const RgbImage lossy = decode_image(jpg, "g.jpg");
  ASSERT_EQ(lossy.pixels.size(), im.pixels.size());
  double err = 0;
  for (size_t i = 0; i < im.pixels.size(); ++i) err += std::abs(int(lossy.pixels[i]) - int(im.pixels[i]));
  EXPECT_LT(err / static_cast<double>(im.pixels.size()), 6.0);  // mean absolute error of a q95 JPEG
}

TEST(Image, BadInputIsAnErrorNamingTheFile) {
  EXPECT_EQ(message_of([] { decode_image("GIF89a...", "figure1.gif"); }), "figure1.gif: not a PNG or JPEG image");
  const std::string png = encode_png(gradient(40, 40));
  EXPECT_NE(message_of([&] { decode_image(png.substr(0, 40), "cut.png"); }).find("cut.png: corrupt PNG"),
            std::string::npos);
  EXPECT_NE(message_of([] { decode_image(std::string("\xFF\xD8\xFF\x01junk", 8), "bad.jpg"); }).find("bad.jpg: corrupt JPEG"),
            std::string::npos);
  ImageLimits small;
  small.max_pixels = 100;
  EXPECT_EQ(message_of([&] { decode_image(png, "big.png", small); }),
            "big.png: image is 40 x 40 pixels, more than 100 (ImageLimits::max_pixels)");
  EXPECT_NE(message_of([&] { decode_image(encode_jpeg(gradient(40, 40), 80), "big.jpg", small); }).find("more than 100"),
            std::string::npos);
}

TEST(Image, ResizeAreaAveragesWhatEachPixelCovers) {
  // 3 -> 2 columns: output spans of 1.5 input pixels, the middle one split in half.
  RgbImage row;
  row.width = 3;
  row.height = 1;
  row.pixels = {0, 0, 0, 90, 90, 90, 180, 180, 180};
  const RgbImage two = resize_area(row, 2, 1);
  EXPECT_EQ(two.pixels, (std::vector<uint8_t>{30, 30, 30, 150, 150, 150}));  // (0+45)/1.5, (45+180)/1.5
  // 4 x 4 -> 2 x 2: plain 2 x 2 means.
  const RgbImage g = gradient(4, 4);
  const RgbImage q = resize_area(g, 2, 2);
  for (uint32_t y = 0; y < 2; ++y)
    for (uint32_t x = 0; x < 2; ++x)
      for (int c = 0; c < 3; ++c) {
        int sum = 0;
        for (uint32_t dy = 0; dy < 2; ++dy)
          for (uint32_t dx = 0; dx < 2; ++dx) sum += g.pixel(2 * x + dx, 2 * y + dy)[c];
        EXPECT_EQ(q.pixel(x, y)[c], static_cast<uint8_t>(std::lround(sum / 4.0))) << x << "," << y << "," << c;
      }
  // Upscaling repeats pixels.
  const RgbImage up = resize_area(row, 6, 2);
  EXPECT_EQ(up.pixel(0, 1)[0], 0);
  EXPECT_EQ(up.pixel(3, 0)[0], 90);
  EXPECT_EQ(up.pixel(5, 1)[0], 180);
}

TEST(Descriptor, TheSeparableDctEqualsTheDirectSum) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> value(0, 255);
  const uint32_t n = 64, keep = 16;
  std::vector<double> grid(static_cast<size_t>(n) * n);
  for (auto& v : grid) v = value(rng);
  const auto fast = dct2_lowfreq(grid, n, keep);
  double worst = 0;
  for (uint32_t v = 0; v < keep; ++v)
    for (uint32_t u = 0; u < keep; ++u) {
      double sum = 0;
      for (uint32_t y = 0; y < n; ++y)
        for (uint32_t x = 0; x < n; ++x)
          sum += grid[y * n + x] * std::cos(std::numbers::pi * (2 * x + 1) * u / (2.0 * n)) *
                 std::cos(std::numbers::pi * (2 * y + 1) * v / (2.0 * n));
      sum *= std::sqrt((u == 0 ? 1.0 : 2.0) / n) * std::sqrt((v == 0 ? 1.0 : 2.0) / n);
      worst = std::max(worst, std::abs(sum - fast[v * keep + u]));
    }
  EXPECT_LT(worst, 1e-8);
  // Orthonormal: the whole transform keeps the energy (Parseval).
  std::vector<double> small(64);
  for (auto& v : small) v = value(rng);
  const auto all = dct2_lowfreq(small, 8, 8);
  double e_in = 0, e_out = 0;
  for (double v : small) e_in += v * v;
  for (double v : all) e_out += v * v;
  EXPECT_NEAR(e_out, e_in, 1e-6 * e_in);
}

TEST(Descriptor, IgnoresBrightnessAndContrastAndIsUnitLength) {
  const RgbImage im = gradient(120, 90);
  const auto d = dct_lowfreq_descriptor(im);
  ASSERT_EQ(d.size(), kDescriptorDim);
  EXPECT_NEAR(dot(d, d), 1.0, 1e-5);
  // Half the contrast, shifted brighter: the same descriptor (up to rounding).
  RgbImage dim = im;
  for (auto& p : dim.pixels) p = static_cast<uint8_t>(p / 2 + 100);
  EXPECT_GT(dot(d, dct_lowfreq_descriptor(dim)), 0.999);
  // A flat image has nothing but brightness: zeros.
  RgbImage flat = im;
  std::fill(flat.pixels.begin(), flat.pixels.end(), 128);
  for (float x : dct_lowfreq_descriptor(flat)) EXPECT_EQ(x, 0.0f);
}

// Near-duplicate search on real pages: each page of the sample PDFs, rendered at 72
// DPI, then shrunk to 60 % and recompressed as JPEG quality 70, has its own page as the
// nearest of all pages by inner product.
TEST(Descriptor, EveryPageOfTheSamplePdfsFindsItselfAfterRescalingAndJpeg) {
  struct Page {
    std::string name;
    std::vector<float> d;
  };
  std::vector<Page> pages;
  std::vector<std::pair<std::string, RgbImage>> queries;
  for (const auto& e : fs::directory_iterator(eagle::testing::shared_data() / "docs" / "pdf")) {
    const std::string file = e.path().filename().string();
    for (auto& rp : render_pdf_pages(read_image_bytes(e.path()), file, 72)) {
      const std::string name = file + " p" + std::to_string(rp.page);
      pages.push_back({name, dct_lowfreq_descriptor(rp.image)});
      const RgbImage smaller = resize_area(rp.image, rp.image.width * 3 / 5, rp.image.height * 3 / 5);
      queries.emplace_back(name, decode_image(encode_jpeg(smaller, 70), name + ".jpg"));
    }
  }
  ASSERT_EQ(pages.size(), 68u);  // 10 + 13 + 8 + 7 + 4 + 4 + 6 + 16
  size_t found_first = 0;
  double worst_self = 1, best_other = -1;
  for (const auto& [name, image] : queries) {
    const auto q = dct_lowfreq_descriptor(image);
    size_t best = 0;
    double self = 0;
    for (size_t i = 0; i < pages.size(); ++i) {
      const double s = dot(q, pages[i].d);
      if (s > dot(q, pages[best].d)) best = i;
      if (pages[i].name == name) self = s;
      else best_other = std::max(best_other, s);
    }
    worst_self = std::min(worst_self, self);
    if (pages[best].name == name) ++found_first;
    else ADD_FAILURE() << name << " found " << pages[best].name << " first";
  }
  EXPECT_EQ(found_first, queries.size());
  std::printf("{\"descriptor\": \"dct-lowfreq-v1\", \"pages\": %zu, \"found_first\": %zu, \"worst_self_ip\": %.4f, "
              "\"best_other_ip\": %.4f}\n",
              pages.size(), found_first, worst_self, best_other);
}

TEST(PdfRender, PagesAtTheAskedDpiAndErrorsNameTheFile) {
  const fs::path pdf = eagle::testing::shared_data() / "docs" / "pdf" / "jtmo-2010-4-1.pdf";
  const auto pages = render_pdf_pages(read_image_bytes(pdf), "jtmo-2010-4-1.pdf", 36);
  ASSERT_EQ(pages.size(), 4u);
  EXPECT_EQ(pages[0].page, 1);
  // A4 or Letter at 36 DPI: about 300 x 400 pixels, portrait.
  EXPECT_GT(pages[0].image.width, 280u);
  EXPECT_LT(pages[0].image.width, 320u);
  EXPECT_GT(pages[0].image.height, pages[0].image.width);
  // Mostly white paper with dark text.
  size_t white = 0, dark = 0;
  for (size_t i = 0; i < pages[0].image.pixels.size(); i += 3) {
    const int v = pages[0].image.pixels[i];
    white += v > 240;
    dark += v < 100;
  }
  EXPECT_GT(white, pages[0].image.pixels.size() / 3 / 2);
  EXPECT_GT(dark, 0u);
  EXPECT_EQ(message_of([] { render_pdf_pages("not a pdf", "x.pdf", 72); }), "not a PDF file: x.pdf");
  EXPECT_NE(message_of([&] { render_pdf_pages(read_image_bytes(pdf), "jtmo.pdf", 0); }).find("DPI must be in [1, 600]"),
            std::string::npos);
  ImageLimits small;
  small.max_pixels = 1000;
  EXPECT_NE(message_of([&] { render_pdf_pages(read_image_bytes(pdf), "jtmo.pdf", 72, small); }).find("jtmo.pdf: page 1 is"),
            std::string::npos);
}

TEST(Image, CropKeepsTheAskedSharesPixelForPixel) {
  const RgbImage im = gradient(40, 20);
  const RgbImage part = crop(im, 0.25, 0.5, 0.75, 1.0);
  ASSERT_EQ(part.width, 20u);
  ASSERT_EQ(part.height, 10u);
  for (uint32_t y = 0; y < part.height; ++y)
    for (uint32_t x = 0; x < part.width; ++x)
      for (int c = 0; c < 3; ++c) ASSERT_EQ(part.pixel(x, y)[c], im.pixel(x + 10, y + 10)[c]);
  // Out-of-range and empty shares still give a pixel inside the image.
  const RgbImage corner = crop(im, 1.5, 2.0, -1.0, 0.0);
  EXPECT_EQ(corner.width, 1u);
  EXPECT_EQ(corner.height, 1u);
  EXPECT_EQ(corner.pixel(0, 0)[0], im.pixel(39, 19)[0]);
}

// The image store: content names, one copy of the same bytes, and a damaged file
// reported (data_loss naming it), never served.
TEST(ImageStore, KeepsBytesUnderTheirHashAndReportsADamagedFile) {
  const fs::path root = fs::temp_directory_path() / ("eagle_image_store_" + std::to_string(::getpid()));
  fs::remove_all(root);
  const ImageStore store(root / "images");
  const std::string png = encode_png(gradient(8, 8));
  const std::string name = store.put(png, "png");
  EXPECT_TRUE(ImageStore::valid_name(name)) << name;
  EXPECT_EQ(name, bytes_sha256(png) + ".png");
  EXPECT_EQ(store.put(png, "png"), name);  // kept once
  EXPECT_EQ(store.get(name), png);
  EXPECT_EQ(ImageStore::media_type(name), "image/png");
  EXPECT_EQ(ImageStore::media_type(store.put(encode_jpeg(gradient(8, 8), 80), "jpg")), "image/jpeg");
  EXPECT_THROW(store.put(png, "gif"), eagle::Error);
  for (const char* bad : {"../../etc/passwd", "abc.png", "", "0000000000000000000000000000000000000000000000000000000000000000.gif"})
    EXPECT_FALSE(ImageStore::valid_name(bad)) << bad;
  try {
    store.get("../x");
    ADD_FAILURE() << "a bad name was read";
  } catch (const eagle::Error& e) {
    EXPECT_EQ(e.code(), eagle::ErrorCode::invalid_argument);
  }
  try {
    store.get(std::string(64, 'a') + ".png");
    ADD_FAILURE() << "a missing image was read";
  } catch (const eagle::Error& e) {
    EXPECT_EQ(e.code(), eagle::ErrorCode::not_found);
  }
  // A flipped byte.
  {
    std::fstream f(store.path_of(name), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.put('\x5a');
  }
  try {
    store.get(name);
    ADD_FAILURE() << "a damaged image was served";
  } catch (const eagle::Error& e) {
    EXPECT_EQ(e.code(), eagle::ErrorCode::data_loss);
    EXPECT_NE(std::string(e.what()).find(store.path_of(name).string()), std::string::npos) << e.what();
  }
  // Unreferenced images and a crash's temporary file go; kept ones and foreign files stay.
  const std::string other = store.put(encode_png(gradient(9, 9)), "png");
  std::ofstream(store.path_of(other).parent_path() / (other + ".tmp")) << "torn";
  std::ofstream(store.path_of(other).parent_path() / "README") << "not ours";
  EXPECT_EQ(store.remove_unreferenced({other}), 3u);  // the damaged png, the jpg, the .tmp
  EXPECT_EQ(store.get(other), encode_png(gradient(9, 9)));
  EXPECT_TRUE(fs::exists(store.path_of(other).parent_path() / "README"));
  EXPECT_EQ(store.remove_unreferenced({other}), 0u);
  fs::remove_all(root);
}

// A figure's file is found beside its document, by name only; a file there that is a
// link out of the folder (an upload's or the ingest root's) is not it, and neither
// lands in a folder scan: the bytes it points at are never read.
TEST(FigureFiles, ALinkOutOfTheDocumentsFolderIsNotTheFiguresFile) {
  const fs::path root = fs::temp_directory_path() / ("eagle_figure_links_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "article");
  std::ofstream(root / "outside-secret.jpg") << "not read";
  std::ofstream(root / "article" / "fig2.jpg") << "inside";
  fs::create_symlink(root / "outside-secret.jpg", root / "article" / "fig1.jpg");
  fs::create_symlink(root / "article" / "fig2.jpg", root / "article" / "fig3.jpg");  // stays inside
  const fs::path doc = root / "article" / "paper.nxml";
  EXPECT_EQ(figure_file(doc, "fig1"), fs::path());
  EXPECT_EQ(figure_file(doc, "fig2.tif"), root / "article" / "fig2.jpg");
  EXPECT_EQ(figure_file(doc, "fig3"), root / "article" / "fig3.jpg");
  const auto scan = scan_folder(root / "article");
  ASSERT_EQ(scan.links_out.size(), 1u);
  EXPECT_EQ(scan.links_out[0].filename(), "fig1.jpg");
  for (const auto& [file, kind] : scan.structured) EXPECT_NE(file.filename(), "fig1.jpg");
  fs::remove_all(root);
}

