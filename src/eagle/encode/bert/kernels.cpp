#include "eagle/encode/bert/kernels.h"

#include <cblas.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace eagle::encode::kernels {
namespace {

bool detect_avx512() {
  if (const char* env = std::getenv("EAGLE_BERT_KERNELS"); env && std::strcmp(env, "blas") == 0) return false;
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
}

const bool kAvx512 = detect_avx512();

// A small persistent pool: the caller works as worker 0; the others spin briefly on a
// generation counter (a forward pass issues dozens of short parallel regions, where a
// sleep/wake per region would cost more than the work) and then sleep.
class Pool {
 public:
  explicit Pool(int n) { resize(n); }
  ~Pool() { stop(); }

  int size() const { return count_.load(std::memory_order_acquire); }

  void resize(int n) {
    n = std::max(1, n);
    std::lock_guard run_lock(run_mutex_);  // never while a region is running
    if (n == size()) return;
    stop();
    stop_ = false;
    // A worker joins at the current generation: read here, not in the new thread,
    // or a region started before the thread first runs would never be seen by it.
    const uint64_t start = generation_.load(std::memory_order_acquire);
    for (int i = 1; i < n; ++i) workers_.emplace_back([this, i, start] { loop(i, start); });
    count_.store(n, std::memory_order_release);
  }

  void run(int jobs, const std::function<void(int, int)>& fn) {
    if (jobs <= 0) return;
    std::lock_guard run_lock(run_mutex_);  // one parallel region at a time; no resize meanwhile
    if (workers_.empty() || jobs == 1) {
      for (int j = 0; j < jobs; ++j) fn(j, 0);
      return;
    }
    fn_ = &fn;
    jobs_ = jobs;
    error_ = nullptr;
    next_.store(0, std::memory_order_relaxed);
    pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
    {
      std::lock_guard lock(mutex_);
      generation_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_all();
    work(0);
    // Always wait for the workers to leave the region (they may still be finishing a
    // job that reads `fn`), even when a job threw.
    for (int spin = 0; pending_.load(std::memory_order_acquire) != 0; ++spin) {
      if (spin < 200000) _mm_pause();
      else std::this_thread::yield();
    }
    fn_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  // Runs jobs until none is left; the first exception is kept for the caller and the
  // remaining jobs are skipped (an exception must not escape a worker thread).
  void work(int worker) {
    for (int j = next_.fetch_add(1, std::memory_order_relaxed); j < jobs_; j = next_.fetch_add(1, std::memory_order_relaxed)) {
      try {
        (*fn_)(j, worker);
      } catch (...) {
        std::lock_guard lock(error_mutex_);
        if (!error_) error_ = std::current_exception();
        next_.store(jobs_, std::memory_order_relaxed);
      }
    }
  }

  void loop(int worker, uint64_t seen) {
    for (;;) {
      int spin = 0;
      while (generation_.load(std::memory_order_acquire) == seen && !stop_flag_.load(std::memory_order_relaxed)) {
        if (++spin < 100000) {
          _mm_pause();
          continue;
        }
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen || stop_flag_.load(); });
      }
      if (stop_flag_.load()) return;
      seen = generation_.load(std::memory_order_acquire);
      work(worker);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      stop_flag_.store(true);
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
    stop_flag_.store(false);
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_, run_mutex_, error_mutex_;
  std::exception_ptr error_;
  std::atomic<int> count_{1};
  std::condition_variable cv_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_flag_{false};
  bool stop_ = false;
  const std::function<void(int, int)>* fn_ = nullptr;
  int jobs_ = 0;
  std::atomic<int> next_{0};
  std::atomic<int> pending_{0};
};

int default_threads() {
  const unsigned hc = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(hc, 1u, 8u));
}

std::mutex g_config_mutex;
Pool& pool() {
  static Pool p(kAvx512 ? default_threads() : 1);  // the BLAS path threads inside OpenBLAS
  return p;
}

}  // namespace

bool avx512() { return kAvx512; }
const char* kernel_name() { return kAvx512 ? "eigen-avx512" : "openblas"; }

void set_threads(int n) {
  if (n <= 0) return;
  std::lock_guard lock(g_config_mutex);
  openblas_set_num_threads(kAvx512 ? 1 : n);  // the AVX-512 path threads by itself
  pool().resize(kAvx512 ? n : 1);
}

int threads() { return pool().size(); }

void parallel_for(int jobs, const std::function<void(int, int)>& fn) { pool().run(jobs, fn); }

void gemm_nt(int M, int N, int K, float alpha, const float* x, int ldx, const float* w, int ldw, float* y, int ldy) {
  if (kAvx512) return gemm_nt_avx512(M, N, K, alpha, x, ldx, w, ldw, y, ldy);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, alpha, x, ldx, w, ldw, 0.0f, y, ldy);
}

void gemm_nn(int M, int N, int K, const float* a, int lda, const float* b, int ldb, float* y, int ldy) {
  if (kAvx512) return gemm_nn_avx512(M, N, K, a, lda, b, ldb, y, ldy);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, lda, b, ldb, 0.0f, y, ldy);
}

std::vector<float> pack_weights(const std::vector<float>& w, int N, int K) {
  if (!kAvx512) {
    std::vector<float> wt(static_cast<size_t>(K) * N);
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < K; ++k) wt[static_cast<size_t>(k) * N + n] = w[static_cast<size_t>(n) * K + k];
    return wt;
  }
  const int panels = (N + kPanel - 1) / kPanel;
  std::vector<float> out(static_cast<size_t>(panels) * K * kPanel, 0.0f);
  for (int n = 0; n < N; ++n) {
    float* dst = out.data() + static_cast<size_t>(n / kPanel) * K * kPanel + n % kPanel;
    const float* src = w.data() + static_cast<size_t>(n) * K;
    for (int k = 0; k < K; ++k) dst[static_cast<size_t>(k) * kPanel] = src[k];
  }
  return out;
}

void linear(int M, int N, int K, const float* x, const float* packed, float* y) {
  if (!kAvx512) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, x, K, packed, N, 0.0f, y, N);
    return;
  }
  // Panels split evenly across the workers.
  const int panels = (N + kPanel - 1) / kPanel;
  const int t = std::min(threads(), panels);
  parallel_for(t, [&](int j, int) {
    const int first = panels * j / t, last = panels * (j + 1) / t;
    linear_panels_avx512(M, N, K, x, packed, first, last - first, y);
  });
}

}  // namespace eagle::encode::kernels
