#pragma once
// Raster images from outside: PNG (libpng's simplified API) and JPEG (libjpeg-turbo),
// decoded to 8-bit RGB, and PNG encoding of what the store keeps for a tile. Both
// libraries are fuzzed upstream and patched by Debian; every dimension is bounded
// here before a byte is allocated, and a bad file is an eagle::Error naming it, never
// a crash (fuzz/fuzz_image.cpp).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace eagle::ingest {

// Row-major, 3 bytes a pixel (R, G, B), no padding.
struct RgbImage {
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<uint8_t> pixels;  // width * height * 3

  const uint8_t* pixel(uint32_t x, uint32_t y) const { return pixels.data() + (static_cast<size_t>(y) * width + x) * 3; }
};

enum class ImageFormat { unknown, png, jpeg };

// By the file's magic bytes (\x89PNG\r\n\x1a\n; \xFF\xD8\xFF), not its name.
ImageFormat sniff_image_format(std::string_view bytes);

struct ImageLimits {
  // A decoded image takes width * height * 3 bytes: 50 million pixels is 150 MB, larger
  // than any page rendered at 300 DPI and any figure of a paper.
  uint64_t max_pixels = 50'000'000;
};

// Decodes PNG or JPEG bytes (alpha composited on white; grey, palette, 16-bit and CMYK
// converted). `name` is for messages: "NAME: not a PNG or JPEG image", "NAME: image is
// W x H pixels, more than ...", "NAME: corrupt JPEG (...)".
RgbImage decode_image(std::string_view bytes, const std::string& name, const ImageLimits& limits = {});

// PNG bytes of the image (what the store keeps for a tile; lossless).
std::string encode_png(const RgbImage& image);
// JPEG bytes at `quality` (1..100): tests and benchmarks re-encode with it.
std::string encode_jpeg(const RgbImage& image, int quality);

// Box-filter resampling: each output pixel is the mean of the input area it covers,
// fractional edges weighted (what a descriptor needs to be stable under rescaling);
// upscaling repeats pixels, blending two where an output pixel straddles an input edge.
RgbImage resize_area(const RgbImage& image, uint32_t width, uint32_t height);

// The part of the image inside [x0, x1) x [y0, y1), given as shares of its width and
// height (clamped to [0, 1]; at least one pixel each way).
RgbImage crop(const RgbImage& image, double x0, double y0, double x1, double y1);

}  // namespace eagle::ingest
