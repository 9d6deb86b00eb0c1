#include "eagle/ingest/image/image.h"

// clang-format off
#include <cstdio>  // jpeglib.h needs FILE
#include <jpeglib.h>
// clang-format on
#include <png.h>

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstring>
#include <memory>

#include "eagle/core/error.h"

namespace eagle::ingest {
namespace {

constexpr unsigned char kPngMagic[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

void check_size(uint64_t width, uint64_t height, const std::string& name, const ImageLimits& limits) {
  if (width == 0 || height == 0) fail(ErrorCode::invalid_argument, name + ": image has no pixels");
  if (width * height > limits.max_pixels)
    fail(ErrorCode::invalid_argument, name + ": image is " + std::to_string(width) + " x " + std::to_string(height) +
                                          " pixels, more than " + std::to_string(limits.max_pixels) +
                                          " (ImageLimits::max_pixels)");
}

RgbImage decode_png(std::string_view bytes, const std::string& name, const ImageLimits& limits) {
  png_image im;
  std::memset(&im, 0, sizeof im);
  im.version = PNG_IMAGE_VERSION;
  // The simplified API reports errors in im.message instead of longjmp-ing into us.
  struct Release {
    png_image* im;
    ~Release() { png_image_free(im); }
  } release{&im};
  if (!png_image_begin_read_from_memory(&im, bytes.data(), bytes.size()))
    fail(ErrorCode::invalid_argument, name + ": corrupt PNG (" + im.message + ")");
  check_size(im.width, im.height, name, limits);
  im.format = PNG_FORMAT_RGB;  // grey, palette, 16-bit and alpha converted; alpha on white
  RgbImage out;
  out.width = im.width;
  out.height = im.height;
  out.pixels.resize(PNG_IMAGE_SIZE(im));
  const png_color white = {255, 255, 255};
  if (!png_image_finish_read(&im, &white, out.pixels.data(), 0, nullptr))
    fail(ErrorCode::invalid_argument, name + ": corrupt PNG (" + im.message + ")");
  return out;
}

// libjpeg reports errors through error_exit, which must not return: it longjmps
// back to the decoder, whose locals live on the heap (Jpeg*) so that nothing in the
// frame of setjmp changes between the two.
struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void on_jpeg_error(j_common_ptr c) {
  auto* e = reinterpret_cast<JpegError*>(c->err);
  (*c->err->format_message)(c, e->message);
  std::longjmp(e->jump, 1);
}

void on_jpeg_message(j_common_ptr) {}  // warnings (a truncated file decodes as far as it goes)

struct JpegDecode {
  jpeg_decompress_struct ci;
  JpegError error;
  RgbImage out;
  std::vector<uint8_t> cmyk;  // a CMYK or YCCK file, converted below
  bool created = false;
  ~JpegDecode() {
    if (created) jpeg_destroy_decompress(&ci);
  }
};

RgbImage decode_jpeg(std::string_view bytes, const std::string& name, const ImageLimits& limits) {
  auto d = std::make_unique<JpegDecode>();
  d->ci.err = jpeg_std_error(&d->error.mgr);
  d->error.mgr.error_exit = on_jpeg_error;
  d->error.mgr.output_message = on_jpeg_message;
  if (setjmp(d->error.jump)) fail(ErrorCode::invalid_argument, name + ": corrupt JPEG (" + d->error.message + ")");
  jpeg_create_decompress(&d->ci);
  d->created = true;
  jpeg_mem_src(&d->ci, reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&d->ci, TRUE);
  check_size(d->ci.image_width, d->ci.image_height, name, limits);  // before the decoder allocates
  const bool cmyk = d->ci.jpeg_color_space == JCS_CMYK || d->ci.jpeg_color_space == JCS_YCCK;
  d->ci.out_color_space = cmyk ? JCS_CMYK : JCS_EXT_RGB;
  jpeg_start_decompress(&d->ci);
  const uint32_t w = d->ci.output_width, h = d->ci.output_height;
  const int channels = d->ci.output_components;
  d->out.width = w;
  d->out.height = h;
  d->out.pixels.resize(static_cast<size_t>(w) * h * 3);
  d->cmyk.resize(cmyk ? static_cast<size_t>(w) * 4 : 0);
  while (d->ci.output_scanline < h) {
    unsigned char* row = cmyk ? d->cmyk.data() : d->out.pixels.data() + static_cast<size_t>(d->ci.output_scanline) * w * 3;
    const uint32_t y = d->ci.output_scanline;
    if (jpeg_read_scanlines(&d->ci, &row, 1) != 1) break;
    if (cmyk) {
      // Adobe writes CMYK inverted (255 = no ink): R = C * K / 255; other writers
      // store ink amounts (255 = full ink): R = (255 - C) * (255 - K) / 255.
      const bool inverted = d->ci.saw_Adobe_marker;
      uint8_t* dst = d->out.pixels.data() + static_cast<size_t>(y) * w * 3;
      for (uint32_t x = 0; x < w; ++x) {
        const int k = inverted ? row[x * channels + 3] : 255 - row[x * channels + 3];
        for (int c = 0; c < 3; ++c) {
          const int v = inverted ? row[x * channels + c] : 255 - row[x * channels + c];
          dst[x * 3 + c] = static_cast<uint8_t>(v * k / 255);
        }
      }
    }
  }
  jpeg_finish_decompress(&d->ci);
  return std::move(d->out);
}

struct JpegEncode {
  jpeg_compress_struct ci;
  JpegError error;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  bool created = false;
  ~JpegEncode() {
    if (created) jpeg_destroy_compress(&ci);
    std::free(buffer);
  }
};

}  // namespace

ImageFormat sniff_image_format(std::string_view bytes) {
  if (bytes.size() >= sizeof kPngMagic && std::memcmp(bytes.data(), kPngMagic, sizeof kPngMagic) == 0)
    return ImageFormat::png;
  if (bytes.size() >= 3 && static_cast<unsigned char>(bytes[0]) == 0xFF && static_cast<unsigned char>(bytes[1]) == 0xD8 &&
      static_cast<unsigned char>(bytes[2]) == 0xFF)
    return ImageFormat::jpeg;
  return ImageFormat::unknown;
}

RgbImage decode_image(std::string_view bytes, const std::string& name, const ImageLimits& limits) {
  switch (sniff_image_format(bytes)) {
    case ImageFormat::png: return decode_png(bytes, name, limits);
    case ImageFormat::jpeg: return decode_jpeg(bytes, name, limits);
    case ImageFormat::unknown: break;
  }
  fail(ErrorCode::invalid_argument, name + ": not a PNG or JPEG image");
}

std::string encode_png(const RgbImage& image) {
  if (image.pixels.size() != static_cast<size_t>(image.width) * image.height * 3 || image.width == 0 || image.height == 0)
    fail(ErrorCode::invalid_argument, "encode_png: the image's pixels do not match its size");
  png_image im;
  std::memset(&im, 0, sizeof im);
  im.version = PNG_IMAGE_VERSION;
  im.width = image.width;
  im.height = image.height;
  im.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&im, nullptr, &size, 0, image.pixels.data(), 0, nullptr))
    fail(ErrorCode::internal, std::string("encode_png: ") + im.message);
  std::string out(size, '\0');
  if (!png_image_write_to_memory(&im, out.data(), &size, 0, image.pixels.data(), 0, nullptr))
    fail(ErrorCode::internal, std::string("encode_png: ") + im.message);
  out.resize(size);
  return out;
}

std::string encode_jpeg(const RgbImage& image, int quality) {
  if (image.pixels.size() != static_cast<size_t>(image.width) * image.height * 3 || image.width == 0 || image.height == 0)
    fail(ErrorCode::invalid_argument, "encode_jpeg: the image's pixels do not match its size");
  if (quality < 1 || quality > 100) fail(ErrorCode::invalid_argument, "encode_jpeg: quality must be in [1, 100]");
  auto e = std::make_unique<JpegEncode>();
  e->ci.err = jpeg_std_error(&e->error.mgr);
  e->error.mgr.error_exit = on_jpeg_error;
  e->error.mgr.output_message = on_jpeg_message;
  if (setjmp(e->error.jump)) {
    // jpeg_mem_dest may have replaced (and freed) the buffer it last told us of: leak
    // what it holds now rather than free a stale pointer (an allocation failure only).
    e->buffer = nullptr;
    fail(ErrorCode::internal, std::string("encode_jpeg: ") + e->error.message);
  }
  jpeg_create_compress(&e->ci);
  e->created = true;
  jpeg_mem_dest(&e->ci, &e->buffer, &e->size);
  e->ci.image_width = image.width;
  e->ci.image_height = image.height;
  e->ci.input_components = 3;
  e->ci.in_color_space = JCS_RGB;
  jpeg_set_defaults(&e->ci);
  jpeg_set_quality(&e->ci, quality, TRUE);
  jpeg_start_compress(&e->ci, TRUE);
  while (e->ci.next_scanline < image.height) {
    auto* row = const_cast<unsigned char*>(image.pixel(0, e->ci.next_scanline));
    jpeg_write_scanlines(&e->ci, &row, 1);
  }
  jpeg_finish_compress(&e->ci);
  return std::string(reinterpret_cast<const char*>(e->buffer), e->size);
}

namespace {
// For each output index, the input indexes it covers with their weights (the
// fraction of the input pixel inside the output pixel's span), summing to 1.
struct Taps {
  std::vector<uint32_t> first;  // per output: start in `index` / `weight`
  std::vector<uint32_t> index;
  std::vector<float> weight;
};

Taps area_taps(uint32_t in, uint32_t out) {
  Taps t;
  const double scale = static_cast<double>(in) / out;
  for (uint32_t o = 0; o < out; ++o) {
    t.first.push_back(static_cast<uint32_t>(t.index.size()));
    const double lo = o * scale, hi = (o + 1) * scale;
    for (auto i = static_cast<uint32_t>(std::floor(lo)); i < in && i < hi; ++i) {
      const double cover = std::min<double>(hi, i + 1) - std::max<double>(lo, i);
      if (cover <= 0) continue;
      t.index.push_back(i);
      t.weight.push_back(static_cast<float>(cover / scale));
    }
  }
  t.first.push_back(static_cast<uint32_t>(t.index.size()));
  return t;
}
}  // namespace

RgbImage resize_area(const RgbImage& image, uint32_t width, uint32_t height) {
  if (image.pixels.size() != static_cast<size_t>(image.width) * image.height * 3)
    fail(ErrorCode::invalid_argument, "resize_area: the image's pixels do not match its size");
  if (width == 0 || height == 0 || image.width == 0 || image.height == 0)
    fail(ErrorCode::invalid_argument, "resize_area: " + std::to_string(image.width) + " x " +
                                          std::to_string(image.height) + " to " + std::to_string(width) + " x " +
                                          std::to_string(height) + ": no pixels");
  const Taps tx = area_taps(image.width, width), ty = area_taps(image.height, height);
  // Horizontal pass into floats, then vertical.
  std::vector<float> rows(static_cast<size_t>(image.height) * width * 3);
  for (uint32_t y = 0; y < image.height; ++y)
    for (uint32_t x = 0; x < width; ++x) {
      float acc[3] = {0, 0, 0};
      for (uint32_t k = tx.first[x]; k < tx.first[x + 1]; ++k) {
        const uint8_t* p = image.pixel(tx.index[k], y);
        for (int c = 0; c < 3; ++c) acc[c] += tx.weight[k] * p[c];
      }
      for (int c = 0; c < 3; ++c) rows[(static_cast<size_t>(y) * width + x) * 3 + c] = acc[c];
    }
  RgbImage out;
  out.width = width;
  out.height = height;
  out.pixels.resize(static_cast<size_t>(width) * height * 3);
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c) {
        float acc = 0;
        for (uint32_t k = ty.first[y]; k < ty.first[y + 1]; ++k)
          acc += ty.weight[k] * rows[(static_cast<size_t>(ty.index[k]) * width + x) * 3 + c];
        out.pixels[(static_cast<size_t>(y) * width + x) * 3 + c] =
            static_cast<uint8_t>(std::clamp(std::lround(acc), 0L, 255L));
      }
  return out;
}

RgbImage crop(const RgbImage& image, double x0, double y0, double x1, double y1) {
  if (image.width == 0 || image.height == 0 ||
      image.pixels.size() != static_cast<size_t>(image.width) * image.height * 3)
    fail(ErrorCode::invalid_argument, "crop: the image's pixels do not match its size");
  auto edge = [](double share, uint32_t n) {
    const double v = std::floor(std::clamp(std::isfinite(share) ? share : 0.0, 0.0, 1.0) * n + 0.5);
    return static_cast<uint32_t>(v);
  };
  uint32_t px0 = std::min(edge(x0, image.width), image.width - 1), py0 = std::min(edge(y0, image.height), image.height - 1);
  uint32_t px1 = std::max(edge(x1, image.width), px0 + 1), py1 = std::max(edge(y1, image.height), py0 + 1);
  px1 = std::min(px1, image.width);
  py1 = std::min(py1, image.height);
  RgbImage out;
  out.width = px1 - px0;
  out.height = py1 - py0;
  out.pixels.resize(static_cast<size_t>(out.width) * out.height * 3);
  for (uint32_t y = 0; y < out.height; ++y)
    std::memcpy(out.pixels.data() + static_cast<size_t>(y) * out.width * 3, image.pixel(px0, py0 + y),
                static_cast<size_t>(out.width) * 3);
  return out;
}

}  // namespace eagle::ingest
