#pragma once
// The image preprocessing of CLIP-style models, exactly as their Python pipelines do it
// (open_clip / torchvision on a PIL image, Hugging Face's CLIPImageProcessor, timm's
// eval transform): resize so the shorter side is `size` with PIL's bicubic filter,
// centre-crop size x size, scale to [0, 1], normalise per channel. Matching PIL
// matters: its resize is an antialiased two-pass convolution with 22-bit fixed-point
// weights and 8-bit rounding between the passes, and a model sees that image, not an
// idealised one.
#include <array>
#include <cstdint>
#include <vector>

#include "eagle/ingest/image/image.h"

namespace eagle::encode::clip {

struct ImagePreprocess {
  uint32_t size = 224;    // the square crop
  uint32_t resize_to = 0;  // the shorter side after resizing; 0 = size (timm: size / crop_pct)
  // OpenAI CLIP's constants (also BiomedCLIP's); timm/UNI use ImageNet's.
  std::array<float, 3> mean{0.48145466f, 0.4578275f, 0.40821073f};
  std::array<float, 3> std{0.26862954f, 0.26130258f, 0.27577711f};
  // Where the centre crop starts when the margin is odd: torchvision's CenterCrop
  // (OpenCLIP, timm) rounds half the margin to even, Hugging Face's image processors
  // floor it (`(height - crop) // 2`); one pixel apart.
  bool crop_floor = false;
};

// PIL's Image.resize(size, Image.BICUBIC) on an RGB image (Pillow's Resample.c: the
// cubic kernel with a = -0.5, support scaled by the downscaling factor, weights
// normalised then rounded to 22-bit fixed point, horizontal pass first, clipped to
// 8 bits after each pass).
ingest::RgbImage resize_bicubic_pil(const ingest::RgbImage& image, uint32_t width, uint32_t height);
// The part [x0, x0 + w) x [y0, y0 + h) of that resize to width x height, computed alone
// (the same pixels, at the cost of the window).
ingest::RgbImage resize_bicubic_pil_window(const ingest::RgbImage& image, uint64_t width, uint64_t height, uint32_t x0,
                                           uint32_t y0, uint32_t w, uint32_t h);

// torchvision's Resize(size) output size: the shorter side becomes `size`, the longer
// int(size * long / short) (truncated, as torchvision does).
std::pair<uint64_t, uint64_t> shorter_side_size(uint64_t width, uint64_t height, uint32_t size);

// The model's input: [3][size][size] floats (channel-major, as a tensor of NCHW).
std::vector<float> preprocess(const ingest::RgbImage& image, const ImagePreprocess& p);

}  // namespace eagle::encode::clip
