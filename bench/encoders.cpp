// bench_encoders: Eagle's native BERT runtime against PyTorch on the same shapes, in
// one run (random weights: no pretrained weights can be downloaded here). Shapes:
// BERT-base (768 hidden, 12 layers, 12 heads, 3072 ff) and MiniLM-L6 (384, 6, 12,
// 1536); batches 1x32, 1x128, 16x256, 32x128; 2 threads. Prints JSON lines with the
// median ms per batch and sequences per second of each engine, then the ratios.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "eagle/encode/bert/bert.h"

using nlohmann::json;
using namespace eagle::encode;

namespace {

struct Shape {
  std::string name;
  uint32_t hidden, layers, heads, ff;
};
struct Case {
  size_t batch, seq;
};

double median_ms(const std::function<void()>& fn, double min_seconds) {
  fn();  // warm-up
  std::vector<double> t;
  auto start = std::chrono::steady_clock::now();
  while (t.size() < 3 || std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < min_seconds) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_encoders: native BERT runtime vs PyTorch (JSON lines)"};
  int threads = 2;
  double min_seconds = 2.0;
  std::string python = "/usr/bin/python3", script = std::string(EAGLE_SOURCE_DIR) + "/bench/torch_bert.py";
  bool skip_torch = false;
  app.add_option("--threads", threads, "threads for both engines")->capture_default_str();
  app.add_option("--min-seconds", min_seconds, "time per case and engine")->capture_default_str();
  app.add_option("--python", python, "Debian python3 with python3-torch")->capture_default_str();
  app.add_flag("--no-torch", skip_torch, "measure the native runtime only");
  std::string only_model, only_case;
  app.add_option("--model", only_model, "only this shape (bert-base or minilm-l6)");
  app.add_option("--case", only_case, "only this batch x seq, e.g. 1x32");
  CLI11_PARSE(app, argc, argv);

  const std::vector<Shape> shapes = {{"bert-base", 768, 12, 12, 3072}, {"minilm-l6", 384, 6, 12, 1536}};
  const std::vector<Case> cases = {{1, 32}, {1, 128}, {16, 256}, {32, 128}};
  set_bert_threads(threads);
  std::map<std::string, double> eagle_ms;
  std::string torch_cases;
  for (const auto& s : shapes) {
    if (!only_model.empty() && s.name != only_model) continue;
    BertConfig c;
    c.vocab_size = 30522;
    c.hidden = s.hidden;
    c.layers = s.layers;
    c.heads = s.heads;
    c.intermediate = s.ff;
    auto model = BertModel::random(c, false, 42);
    std::mt19937 rng(1);
    for (const auto& k : cases) {
      if (!only_case.empty() && only_case != std::to_string(k.batch) + "x" + std::to_string(k.seq)) continue;
      std::vector<std::vector<int32_t>> ids(k.batch), types(k.batch);
      for (size_t b = 0; b < k.batch; ++b) {
        for (size_t i = 0; i < k.seq; ++i) ids[b].push_back(static_cast<int32_t>(rng() % c.vocab_size));
        types[b].assign(k.seq, 0);
      }
      size_t L;
      double ms = median_ms([&] { model.forward(ids, types, L); }, min_seconds);
      std::string key = s.name + ":" + std::to_string(k.batch) + ":" + std::to_string(k.seq);
      eagle_ms[key] = ms;
      std::cout << json{{"bench", "encoders"}, {"engine", "eagle"}, {"model", s.name}, {"batch", k.batch},
                        {"seq", k.seq}, {"threads", threads}, {"ms_per_batch", ms},
                        {"seq_per_s", k.batch / (ms / 1000)}}.dump()
                << std::endl;
      torch_cases += (torch_cases.empty() ? "" : ",") + s.name + ":" + std::to_string(s.hidden) + ":" +
                     std::to_string(s.layers) + ":" + std::to_string(s.heads) + ":" + std::to_string(s.ff) + ":" +
                     std::to_string(k.batch) + ":" + std::to_string(k.seq);
    }
  }
  if (skip_torch) return 0;
  const std::string cmd = python + " " + script + " --threads " + std::to_string(threads) + " --min-seconds " +
                          std::to_string(min_seconds) + " --cases " + torch_cases;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    std::fprintf(stderr, "bench_encoders: cannot run %s\n", cmd.c_str());
    return 2;
  }
  std::array<char, 4096> buf;
  std::string line;
  while (fgets(buf.data(), buf.size(), p)) {
    line = buf.data();
    std::cout << line << std::flush;
    try {
      auto j = json::parse(line);
      std::string key = j["model"].get<std::string>() + ":" + std::to_string(j["batch"].get<size_t>()) + ":" +
                        std::to_string(j["seq"].get<size_t>());
      const double torch_ms = j["ms_per_batch"].get<double>();
      std::cout << json{{"bench", "encoders"}, {"engine", "ratio"}, {"model", j["model"]}, {"batch", j["batch"]},
                        {"seq", j["seq"]}, {"speedup_vs_torch", torch_ms / eagle_ms[key]}}.dump()
                << std::endl;
    } catch (const std::exception&) {
    }
  }
  int rc = pclose(p);
  if (rc != 0) {
    std::fprintf(stderr, "bench_encoders: the torch peer failed (is python3-torch installed? %s)\n", cmd.c_str());
    return 2;
  }
  return 0;
}
