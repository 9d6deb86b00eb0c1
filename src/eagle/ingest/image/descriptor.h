#pragma once
// The embedded image descriptor for image-to-image near-duplicate search without
// model weights, so images work out of the box: dct-lowfreq-v1.
//
// The image is box-filtered to a 64 x 64 grey grid (luma 0.299 R + 0.587 G + 0.114 B),
// transformed by the orthonormal 2-D DCT-II, and the 16 x 16 lowest frequencies but
// the DC term (overall brightness) are kept: 255 numbers, L2-normalised (contrast).
// By Parseval the inner product of two descriptors is the correlation of the two
// images low-passed, so a rescaled or recompressed copy (JPEG loses high frequencies
// first) stays close to 1 while a different page or figure does not. The same idea as
// pHash and Facebook's PDQ (64 x 64 -> 16 x 16 DCT), kept real-valued so that it ranks
// in an inner-product index instead of being compared bit by bit.
#include <string>
#include <vector>

#include "eagle/ingest/image/image.h"

namespace eagle::ingest {

inline constexpr uint32_t kDescriptorGrid = 64;   // the grey grid's side
inline constexpr uint32_t kDescriptorKeep = 16;   // the low-frequency block's side
inline constexpr uint32_t kDescriptorDim = kDescriptorKeep * kDescriptorKeep - 1;  // 255
// What made the vectors, recorded in a collection's schema like any encoder's.
inline constexpr const char* kDescriptorIdentity = "type=classic name=dct-lowfreq-v1 grid=64 keep=16 dim=255 metric=IP";

// The descriptor of an image (a flat image, with nothing but its DC term, gives zeros).
std::vector<float> dct_lowfreq_descriptor(const RgbImage& image);

// The orthonormal 2-D DCT-II coefficients C[v][u] (v, u < keep) of an n x n grid
// (row-major, grid[y * n + x]), separable: exposed so tests can hold it against the
// direct double sum.
std::vector<double> dct2_lowfreq(const std::vector<double>& grid, uint32_t n, uint32_t keep);

}  // namespace eagle::ingest
