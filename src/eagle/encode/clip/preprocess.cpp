#include "eagle/encode/clip/preprocess.h"

#include <algorithm>
#include <cmath>

#include "eagle/core/error.h"

namespace eagle::encode::clip {
namespace {

// Pillow's PRECISION_BITS for 8-bit images: 32 - 8 - 2.
constexpr int kPrecisionBits = 22;

// Pillow's bicubic_filter with a = -0.5 (Keys' cubic).
double bicubic(double x) {
  constexpr double a = -0.5;
  if (x < 0.0) x = -x;
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

struct Coefficients {
  int ksize = 0;
  std::vector<int> bounds;   // per output pixel: first input pixel, count
  std::vector<int32_t> kk;   // per output pixel: ksize fixed-point weights
};

// Pillow's precompute_coeffs + normalize_coeffs_8bpc for in_size -> out_size over the
// whole input (box 0..in_size), for the output pixels [first, first + count) only: each
// output pixel's weights depend on its own index alone, so a window of the output is
// exactly that part of the whole resize, without the whole resize's cost.
Coefficients coefficients(int64_t in_size, int64_t out_size, int64_t first, int64_t count) {
  constexpr double support_1 = 2.0;  // bicubic's support at scale 1
  const double scale = static_cast<double>(in_size) / static_cast<double>(out_size);
  const double filterscale = std::max(scale, 1.0);
  const double support = support_1 * filterscale;
  Coefficients c;
  c.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  c.bounds.resize(static_cast<size_t>(count) * 2);
  c.kk.assign(static_cast<size_t>(count) * c.ksize, 0);
  std::vector<double> k(c.ksize);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t xx = first + i;
    const double center = (static_cast<double>(xx) + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    int64_t xmin = static_cast<int64_t>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int64_t xmax = static_cast<int64_t>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double ww = 0.0;
    for (int64_t x = 0; x < xmax; ++x) {
      k[x] = bicubic((static_cast<double>(x + xmin) - center + 0.5) * ss);
      ww += k[x];
    }
    for (int64_t x = 0; x < xmax; ++x) {
      const double w = ww != 0.0 ? k[x] / ww : k[x];
      c.kk[static_cast<size_t>(i) * c.ksize + x] = w < 0 ? static_cast<int32_t>(-0.5 + w * (1 << kPrecisionBits))
                                                         : static_cast<int32_t>(0.5 + w * (1 << kPrecisionBits));
    }
    c.bounds[i * 2] = static_cast<int>(xmin);
    c.bounds[i * 2 + 1] = static_cast<int>(xmax);
  }
  return c;
}

uint8_t clip8(int32_t in) {
  if (in >= (1 << kPrecisionBits << 8)) return 255;
  if (in <= 0) return 0;
  return static_cast<uint8_t>(in >> kPrecisionBits);
}

}  // namespace

ingest::RgbImage resize_bicubic_pil_window(const ingest::RgbImage& in, uint64_t width, uint64_t height, uint32_t x0,
                                           uint32_t y0, uint32_t w, uint32_t h) {
  if (width == 0 || height == 0 || in.width == 0 || in.height == 0 || w == 0 || h == 0)
    fail(ErrorCode::invalid_argument, "cannot resize an image to or from zero pixels");
  if (uint64_t{x0} + w > width || uint64_t{y0} + h > height)
    fail(ErrorCode::invalid_argument, "the window lies outside the resized image");
  const bool need_h = width != in.width, need_v = height != in.height;
  // Horizontal pass first (ImagingResampleInner), over the input rows the vertical pass
  // reads for the window's rows, and the window's columns only.
  uint32_t first_row = y0, rows = h;
  Coefficients vert;
  if (need_v) {
    vert = coefficients(in.height, static_cast<int64_t>(height), y0, h);
    const int first = vert.bounds[0];
    const int last = vert.bounds[(h - 1) * 2] + vert.bounds[(h - 1) * 2 + 1];
    for (uint32_t i = 0; i < h; ++i) vert.bounds[i * 2] -= first;
    first_row = static_cast<uint32_t>(first);
    rows = static_cast<uint32_t>(last - first);
  }
  ingest::RgbImage tmp;
  tmp.width = w;
  tmp.height = rows;
  tmp.pixels.resize(static_cast<size_t>(w) * rows * 3);
  if (need_h) {
    const auto horiz = coefficients(in.width, static_cast<int64_t>(width), x0, w);
    for (uint32_t y = 0; y < rows; ++y)
      for (uint32_t xx = 0; xx < w; ++xx) {
        const int xmin = horiz.bounds[xx * 2], xmax = horiz.bounds[xx * 2 + 1];
        const int32_t* k = horiz.kk.data() + static_cast<size_t>(xx) * horiz.ksize;
        int32_t ss[3] = {1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1)};
        for (int x = 0; x < xmax; ++x) {
          const uint8_t* px = in.pixel(static_cast<uint32_t>(x + xmin), first_row + y);
          for (int ch = 0; ch < 3; ++ch) ss[ch] += px[ch] * k[x];
        }
        uint8_t* out = tmp.pixels.data() + (static_cast<size_t>(y) * w + xx) * 3;
        for (int ch = 0; ch < 3; ++ch) out[ch] = clip8(ss[ch]);
      }
  } else {
    for (uint32_t y = 0; y < rows; ++y)
      std::copy_n(in.pixel(x0, first_row + y), static_cast<size_t>(w) * 3, tmp.pixels.data() + static_cast<size_t>(y) * w * 3);
  }
  if (!need_v) return tmp;
  ingest::RgbImage out;
  out.width = w;
  out.height = h;
  out.pixels.resize(static_cast<size_t>(w) * h * 3);
  for (uint32_t yy = 0; yy < h; ++yy) {
    const int ymin = vert.bounds[yy * 2], ymax = vert.bounds[yy * 2 + 1];
    const int32_t* k = vert.kk.data() + static_cast<size_t>(yy) * vert.ksize;
    for (uint32_t xx = 0; xx < w; ++xx) {
      int32_t ss[3] = {1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1)};
      for (int y = 0; y < ymax; ++y) {
        const uint8_t* px = tmp.pixel(xx, static_cast<uint32_t>(y + ymin));
        for (int ch = 0; ch < 3; ++ch) ss[ch] += px[ch] * k[y];
      }
      uint8_t* o = out.pixels.data() + (static_cast<size_t>(yy) * w + xx) * 3;
      for (int ch = 0; ch < 3; ++ch) o[ch] = clip8(ss[ch]);
    }
  }
  return out;
}

ingest::RgbImage resize_bicubic_pil(const ingest::RgbImage& in, uint32_t width, uint32_t height) {
  return resize_bicubic_pil_window(in, width, height, 0, 0, width, height);
}

std::pair<uint64_t, uint64_t> shorter_side_size(uint64_t width, uint64_t height, uint32_t size) {
  if (width <= height) {
    if (width == size) return {width, height};
    return {size, static_cast<uint64_t>(static_cast<double>(size) * static_cast<double>(height) / static_cast<double>(width))};
  }
  if (height == size) return {width, height};
  return {static_cast<uint64_t>(static_cast<double>(size) * static_cast<double>(width) / static_cast<double>(height)), size};
}

std::vector<float> preprocess(const ingest::RgbImage& image, const ImagePreprocess& p) {
  const uint32_t resize_to = p.resize_to ? p.resize_to : p.size;
  if (resize_to < p.size)
    fail(ErrorCode::invalid_argument, "the resize size " + std::to_string(resize_to) + " is smaller than the crop " +
                                          std::to_string(p.size));
  const auto [w, h] = shorter_side_size(image.width, image.height, resize_to);
  // torchvision's CenterCrop: offsets int(round((in - out) / 2)), round half to even;
  // Hugging Face's: (in - out) // 2. Only the crop is resized (a 1 x 65,000 image
  // would otherwise resize to 224 x 14.6 million pixels first).
  auto offset = [&](uint64_t in) {
    const uint64_t margin = in - p.size;
    return static_cast<uint32_t>(p.crop_floor ? margin / 2 : static_cast<uint64_t>(std::nearbyint(margin / 2.0)));
  };
  const uint32_t top = offset(h), left = offset(w);
  const ingest::RgbImage crop = resize_bicubic_pil_window(image, w, h, left, top, p.size, p.size);
  const size_t plane = static_cast<size_t>(p.size) * p.size;
  std::vector<float> out(3 * plane);
  for (uint32_t y = 0; y < p.size; ++y)
    for (uint32_t x = 0; x < p.size; ++x) {
      const uint8_t* px = crop.pixel(x, y);
      for (int ch = 0; ch < 3; ++ch)
        out[ch * plane + static_cast<size_t>(y) * p.size + x] = (px[ch] / 255.0f - p.mean[ch]) / p.std[ch];
    }
  return out;
}

}  // namespace eagle::encode::clip
