#pragma once
// A synthetic figure for the visual tests: smooth ramps and a fine pattern, so its
// descriptor is far from any page's and survives JPEG recompression.
#include <cstdint>

#include "eagle/ingest/image/image.h"

namespace eagle::test_support {

// An image whose pixel (x, y) is fn(x, y, p) filling p[0..2] (R, G, B).
template <typename Fill>
ingest::RgbImage image_of(uint32_t width, uint32_t height, Fill fn) {
  ingest::RgbImage img;
  img.width = width;
  img.height = height;
  img.pixels.resize(static_cast<size_t>(width) * height * 3);
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x) fn(x, y, img.pixels.data() + (static_cast<size_t>(y) * width + x) * 3);
  return img;
}

inline ingest::RgbImage patterned_image(uint32_t width, uint32_t height) {
  return image_of(width, height, [](uint32_t x, uint32_t y, uint8_t* p) {
    p[0] = static_cast<uint8_t>(x * 2);
    p[1] = static_cast<uint8_t>(y * 3);
    p[2] = static_cast<uint8_t>((x ^ y) & 0xff);
  });
}

}  // namespace eagle::test_support
