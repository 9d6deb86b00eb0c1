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
// whole input (box 0..in_size).
Coefficients coefficients(int in_size, int out_size) {
  constexpr double support_1 = 2.0;  // bicubic's support at scale 1
  const double scale = static_cast<double>(in_size) / out_size;
  const double filterscale = std::max(scale, 1.0);
  const double support = support_1 * filterscale;
  Coefficients c;
  c.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  c.bounds.resize(static_cast<size_t>(out_size) * 2);
  c.kk.assign(static_cast<size_t>(out_size) * c.ksize, 0);
  std::vector<double> k(c.ksize);
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = (xx + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    int xmin = static_cast<int>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      k[x] = bicubic((x + xmin - center + 0.5) * ss);
      ww += k[x];
    }
    for (int x = 0; x < xmax; ++x) {
      const double w = ww != 0.0 ? k[x] / ww : k[x];
      c.kk[static_cast<size_t>(xx) * c.ksize + x] =
          w < 0 ? static_cast<int32_t>(-0.5 + w * (1 << kPrecisionBits))
                : static_cast<int32_t>(0.5 + w * (1 << kPrecisionBits));
    }
    c.bounds[xx * 2] = xmin;
    c.bounds[xx * 2 + 1] = xmax;
  }
  return c;
}

uint8_t clip8(int32_t in) {
  if (in >= (1 << kPrecisionBits << 8)) return 255;
  if (in <= 0) return 0;
  return static_cast<uint8_t>(in >> kPrecisionBits);
}

}  // namespace

ingest::RgbImage resize_bicubic_pil(const ingest::RgbImage& in, uint32_t width, uint32_t height) {
  if (width == 0 || height == 0 || in.width == 0 || in.height == 0)
    fail(ErrorCode::invalid_argument, "cannot resize an image to or from zero pixels");
  const int xsize = static_cast<int>(width), ysize = static_cast<int>(height);
  const auto horiz = coefficients(static_cast<int>(in.width), xsize);
  auto vert = coefficients(static_cast<int>(in.height), ysize);
  const bool need_h = width != in.width, need_v = height != in.height;
  ingest::RgbImage cur = in;
  if (need_h) {
    // Only the input rows the vertical pass reads (ImagingResampleInner).
    const int first = vert.bounds[0];
    const int last = vert.bounds[ysize * 2 - 2] + vert.bounds[ysize * 2 - 1];
    for (int i = 0; i < ysize; ++i) vert.bounds[i * 2] -= first;
    ingest::RgbImage tmp;
    tmp.width = width;
    tmp.height = static_cast<uint32_t>(last - first);
    tmp.pixels.resize(static_cast<size_t>(tmp.width) * tmp.height * 3);
    for (uint32_t y = 0; y < tmp.height; ++y) {
      for (int xx = 0; xx < xsize; ++xx) {
        const int xmin = horiz.bounds[xx * 2], xmax = horiz.bounds[xx * 2 + 1];
        const int32_t* k = horiz.kk.data() + static_cast<size_t>(xx) * horiz.ksize;
        int32_t ss[3] = {1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1)};
        for (int x = 0; x < xmax; ++x) {
          const uint8_t* px = cur.pixel(static_cast<uint32_t>(x + xmin), y + static_cast<uint32_t>(first));
          for (int ch = 0; ch < 3; ++ch) ss[ch] += px[ch] * k[x];
        }
        uint8_t* out = tmp.pixels.data() + (static_cast<size_t>(y) * width + xx) * 3;
        for (int ch = 0; ch < 3; ++ch) out[ch] = clip8(ss[ch]);
      }
    }
    cur = std::move(tmp);
  }
  if (need_v) {
    ingest::RgbImage out;
    out.width = cur.width;
    out.height = height;
    out.pixels.resize(static_cast<size_t>(out.width) * height * 3);
    for (int yy = 0; yy < ysize; ++yy) {
      const int ymin = vert.bounds[yy * 2], ymax = vert.bounds[yy * 2 + 1];
      const int32_t* k = vert.kk.data() + static_cast<size_t>(yy) * vert.ksize;
      for (uint32_t xx = 0; xx < out.width; ++xx) {
        int32_t ss[3] = {1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1)};
        for (int y = 0; y < ymax; ++y) {
          const uint8_t* px = cur.pixel(xx, static_cast<uint32_t>(y + ymin));
          for (int ch = 0; ch < 3; ++ch) ss[ch] += px[ch] * k[y];
        }
        uint8_t* o = out.pixels.data() + (static_cast<size_t>(yy) * out.width + xx) * 3;
        for (int ch = 0; ch < 3; ++ch) o[ch] = clip8(ss[ch]);
      }
    }
    cur = std::move(out);
  }
  return cur;
}

std::pair<uint32_t, uint32_t> shorter_side_size(uint32_t width, uint32_t height, uint32_t size) {
  if (width <= height) {
    if (width == size) return {width, height};
    return {size, static_cast<uint32_t>(static_cast<double>(size) * height / width)};
  }
  if (height == size) return {width, height};
  return {static_cast<uint32_t>(static_cast<double>(size) * width / height), size};
}

std::vector<float> preprocess(const ingest::RgbImage& image, const ImagePreprocess& p) {
  const auto [w, h] = shorter_side_size(image.width, image.height, p.size);
  const ingest::RgbImage resized = w == image.width && h == image.height ? image : resize_bicubic_pil(image, w, h);
  // torchvision's CenterCrop: offsets int(round((in - out) / 2)), round half to even;
  // Hugging Face's: (in - out) // 2.
  auto offset = [&](uint32_t in) {
    const uint32_t margin = in - p.size;
    return p.crop_floor ? margin / 2 : static_cast<uint32_t>(std::nearbyint(margin / 2.0));
  };
  const uint32_t top = offset(resized.height), left = offset(resized.width);
  const size_t plane = static_cast<size_t>(p.size) * p.size;
  std::vector<float> out(3 * plane);
  for (uint32_t y = 0; y < p.size; ++y)
    for (uint32_t x = 0; x < p.size; ++x) {
      const uint8_t* px = resized.pixel(left + x, top + y);
      for (int ch = 0; ch < 3; ++ch)
        out[ch * plane + static_cast<size_t>(y) * p.size + x] = (px[ch] / 255.0f - p.mean[ch]) / p.std[ch];
    }
  return out;
}

}  // namespace eagle::encode::clip
