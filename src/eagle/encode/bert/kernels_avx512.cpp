// Compiled with -mavx512f -mavx512dq -mavx512vl -mavx512bw -mfma (CMakeLists.txt);
// called only after a runtime CPU check. Nothing here is shared with other files
// (no std containers), so no AVX-512 instance of a common template can be picked by
// the linker for generic code.
#define EIGEN_DONT_PARALLELIZE
#include <Eigen/Core>

#include "eagle/encode/bert/kernels.h"

namespace eagle::encode::kernels {
namespace {
using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstView = Eigen::Map<const RowMajor, 0, Eigen::OuterStride<>>;
using View = Eigen::Map<RowMajor, 0, Eigen::OuterStride<>>;
}  // namespace

void gemm_nt_avx512(int M, int N, int K, float alpha, const float* x, int ldx, const float* w, int ldw, float* y,
                    int ldy) {
  ConstView X(x, M, K, Eigen::OuterStride<>(ldx));
  ConstView W(w, N, K, Eigen::OuterStride<>(ldw));
  View Y(y, M, N, Eigen::OuterStride<>(ldy));
  if (alpha == 1.0f) Y.noalias() = X * W.transpose();
  else Y.noalias() = alpha * (X * W.transpose());
}

void gemm_nn_avx512(int M, int N, int K, const float* a, int lda, const float* b, int ldb, float* y, int ldy) {
  ConstView A(a, M, K, Eigen::OuterStride<>(lda));
  ConstView B(b, K, N, Eigen::OuterStride<>(ldb));
  View Y(y, M, N, Eigen::OuterStride<>(ldy));
  Y.noalias() = A * B;
}

}  // namespace eagle::encode::kernels

// Small-M projection without packing: Y[M x N] = X[M x K] * Wt[K x N] with the
// weights stored transposed once at load. Eigen (and OpenBLAS) repack the whole
// weight matrix on every call, which at a few dozen tokens costs about as much as
// the arithmetic. Register tile: R rows x 64 columns (R*4 accumulators), the weight
// row chunk loaded once per k and reused by the R rows; the K x 64 weight panel stays
// in L2 across the row tiles.
#include <immintrin.h>

#include <algorithm>

namespace eagle::encode::kernels {
namespace {

template <int R>
inline void tile(int K, const float* x, int ldx, const float* wt, int ldw, float* y, int ldy, const __mmask16* mk) {
  __m512 acc[R][4];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) acc[r][c] = _mm512_setzero_ps();
  for (int k = 0; k < K; ++k) {
    // Panels are zero-padded to 64 columns: full loads; only the stores are masked.
    const float* wr = wt + static_cast<size_t>(k) * ldw;
    const __m512 w0 = _mm512_loadu_ps(wr);
    const __m512 w1 = _mm512_loadu_ps(wr + 16);
    const __m512 w2 = _mm512_loadu_ps(wr + 32);
    const __m512 w3 = _mm512_loadu_ps(wr + 48);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 xb = _mm512_set1_ps(x[static_cast<size_t>(r) * ldx + k]);
      acc[r][0] = _mm512_fmadd_ps(xb, w0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(xb, w1, acc[r][1]);
      acc[r][2] = _mm512_fmadd_ps(xb, w2, acc[r][2]);
      acc[r][3] = _mm512_fmadd_ps(xb, w3, acc[r][3]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    float* yr = y + static_cast<size_t>(r) * ldy;
    _mm512_mask_storeu_ps(yr, mk[0], acc[r][0]);
    _mm512_mask_storeu_ps(yr + 16, mk[1], acc[r][1]);
    _mm512_mask_storeu_ps(yr + 32, mk[2], acc[r][2]);
    _mm512_mask_storeu_ps(yr + 48, mk[3], acc[r][3]);
  }
}

}  // namespace

void linear_panels_avx512(int M, int N, int K, const float* x, const float* panels, int first_panel, int panel_count,
                          float* y) {
  // Rows in blocks so a block of X stays in cache while every panel of the job
  // streams past it; each panel is a contiguous [K x 64] slab (prefetch- and
  // TLB-friendly, unlike 64-column strips of a row-major [K x N] matrix).
  constexpr int kRowBlock = 96;
  for (int m0 = 0; m0 < M; m0 += kRowBlock) {
    const int mb = std::min(kRowBlock, M - m0);
    for (int p = first_panel; p < first_panel + panel_count; ++p) {
      const int n0 = p * kPanel;
      __mmask16 mk[4];
      for (int c = 0; c < 4; ++c) {
        const int cnt = N - n0 - 16 * c;
        mk[c] = cnt >= 16 ? static_cast<__mmask16>(0xFFFF) : cnt <= 0 ? 0 : static_cast<__mmask16>((1u << cnt) - 1);
      }
      const float* w = panels + static_cast<size_t>(p) * K * kPanel;
      const float* xb = x + static_cast<size_t>(m0) * K;
      float* yb = y + static_cast<size_t>(m0) * N + n0;
      int m = 0;
      for (; m + 6 <= mb; m += 6) tile<6>(K, xb + static_cast<size_t>(m) * K, K, w, kPanel, yb + static_cast<size_t>(m) * N, N, mk);
      const float* xm = xb + static_cast<size_t>(m) * K;
      float* ym = yb + static_cast<size_t>(m) * N;
      switch (mb - m) {
        case 5: tile<5>(K, xm, K, w, kPanel, ym, N, mk); break;
        case 4: tile<4>(K, xm, K, w, kPanel, ym, N, mk); break;
        case 3: tile<3>(K, xm, K, w, kPanel, ym, N, mk); break;
        case 2: tile<2>(K, xm, K, w, kPanel, ym, N, mk); break;
        case 1: tile<1>(K, xm, K, w, kPanel, ym, N, mk); break;
        default: break;
      }
    }
  }
}

}  // namespace eagle::encode::kernels
