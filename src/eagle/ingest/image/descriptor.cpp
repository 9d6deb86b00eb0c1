#include "eagle/ingest/image/descriptor.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "eagle/core/error.h"

namespace eagle::ingest {

namespace {
// Squared AC energy below which an image counts as flat: one grey level of contrast
// over a single grid cell is about 1e-1; double rounding leaves about 1e-24.
constexpr double kFlatEnergy = 1e-9;
}  // namespace

std::vector<double> dct2_lowfreq(const std::vector<double>& grid, uint32_t n, uint32_t keep) {
  if (n == 0 || keep == 0 || keep > n || grid.size() != static_cast<size_t>(n) * n)
    fail(ErrorCode::invalid_argument, "dct2_lowfreq: a grid of " + std::to_string(grid.size()) + " values is not " +
                                          std::to_string(n) + " x " + std::to_string(n) + " with keep <= n");
  // basis[k][i] = a(k) cos(pi (2i + 1) k / 2n), a(0) = sqrt(1/n), a(k) = sqrt(2/n).
  std::vector<double> basis(static_cast<size_t>(keep) * n);
  for (uint32_t k = 0; k < keep; ++k)
    for (uint32_t i = 0; i < n; ++i)
      basis[static_cast<size_t>(k) * n + i] = std::sqrt((k == 0 ? 1.0 : 2.0) / n) *
                                              std::cos(std::numbers::pi * (2.0 * i + 1.0) * k / (2.0 * n));
  // Rows first (each row's low frequencies), then columns.
  std::vector<double> rows(static_cast<size_t>(n) * keep, 0.0);
  for (uint32_t y = 0; y < n; ++y)
    for (uint32_t u = 0; u < keep; ++u) {
      double acc = 0;
      for (uint32_t x = 0; x < n; ++x) acc += grid[static_cast<size_t>(y) * n + x] * basis[static_cast<size_t>(u) * n + x];
      rows[static_cast<size_t>(y) * keep + u] = acc;
    }
  std::vector<double> out(static_cast<size_t>(keep) * keep, 0.0);
  for (uint32_t v = 0; v < keep; ++v)
    for (uint32_t u = 0; u < keep; ++u) {
      double acc = 0;
      for (uint32_t y = 0; y < n; ++y) acc += rows[static_cast<size_t>(y) * keep + u] * basis[static_cast<size_t>(v) * n + y];
      out[static_cast<size_t>(v) * keep + u] = acc;
    }
  return out;
}

std::vector<float> dct_lowfreq_descriptor(const RgbImage& image) {
  const RgbImage small = resize_area(image, kDescriptorGrid, kDescriptorGrid);
  std::vector<double> grey(static_cast<size_t>(kDescriptorGrid) * kDescriptorGrid);
  for (size_t i = 0; i < grey.size(); ++i) {
    const uint8_t* p = small.pixels.data() + i * 3;
    grey[i] = 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
  }
  const auto c = dct2_lowfreq(grey, kDescriptorGrid, kDescriptorKeep);
  std::vector<float> out(c.begin() + 1, c.end());  // without DC: brightness does not count
  double norm = 0;
  for (float x : out) norm += static_cast<double>(x) * x;
  // A flat image leaves only rounding noise (about 1e-13 a coefficient on a 0..255
  // grid) beside DC: no structure to describe, zeros rather than normalised noise.
  if (norm > kFlatEnergy)
    for (float& x : out) x = static_cast<float>(x / std::sqrt(norm));
  else
    std::fill(out.begin(), out.end(), 0.0f);
  return out;
}

}  // namespace eagle::ingest
