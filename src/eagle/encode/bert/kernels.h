#pragma once
// The BERT runtime's matrix kernels with runtime dispatch. On CPUs with AVX-512
// (F, DQ, VL, BW) the products run on Eigen's AVX-512 GEMM (a separately compiled
// file), split across Eagle's own worker threads: the projection GEMMs by output
// columns, attention by (sequence, head). Elsewhere, or with EAGLE_BERT_KERNELS=blas,
// they run on OpenBLAS sgemm with OpenBLAS's threads. Both paths are tested for
// parity with PyTorch; the build stays x86-64-v2.
#include <cstddef>
#include <functional>
#include <vector>

namespace eagle::encode::kernels {

// Row-major. Y[M x N] = alpha * X[M x K] * W^T where W is [N x K] (ldw = row stride).
void gemm_nt(int M, int N, int K, float alpha, const float* x, int ldx, const float* w, int ldw, float* y, int ldy);
// Row-major. Y[M x N] = A[M x K] * B[K x N].
void gemm_nn(int M, int N, int K, const float* a, int lda, const float* b, int ldb, float* y, int ldy);

// Projection weights in the layout of the active path, made once at load from
// PyTorch's [out][in]: the AVX-512 path packs 64-column panels ([K x 64] each,
// zero-padded), the BLAS path keeps W^T ([K x N], row-major).
inline constexpr int kPanel = 64;
std::vector<float> pack_weights(const std::vector<float>& w_out_in, int N, int K);

// Projection: Y[M x N] = X[M x K] * W^T with W as pack_weights made it; work split
// across the threads (AVX-512 path) or OpenBLAS's threads.
void linear(int M, int N, int K, const float* x, const float* packed, float* y);

// Runs fn(job, worker) for job in [0, jobs) on the worker threads (worker < threads()).
void parallel_for(int jobs, const std::function<void(int job, int worker)>& fn);

void set_threads(int n);  // also sets OpenBLAS's thread count for the BLAS path
int threads();
bool avx512();  // the AVX-512 path is in use
const char* kernel_name();

// Implemented in kernels_avx512.cpp (compiled with AVX-512 flags; call only when avx512()).
void gemm_nt_avx512(int M, int N, int K, float alpha, const float* x, int ldx, const float* w, int ldw, float* y,
                    int ldy);
void gemm_nn_avx512(int M, int N, int K, const float* a, int lda, const float* b, int ldb, float* y, int ldy);
void linear_panels_avx512(int M, int N, int K, const float* x, const float* panels, int first_panel, int panel_count,
                          float* y);

}  // namespace eagle::encode::kernels
