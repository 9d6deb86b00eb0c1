// bench_encoders: Eagle's native BERT runtime and CLIP image tower against PyTorch on
// the same shapes, in one run (random weights: no pretrained weights can be downloaded here). Shapes:
// BERT-base (768 hidden, 12 layers, 12 heads, 3072 ff) and MiniLM-L6 (384, 6, 12,
// 1536); batches 1x32, 1x128, 16x256, 32x128; and the image tower ViT-B/16 (CLIP's and
// BiomedCLIP's: 768 wide, 12 layers, 12 heads, 3072 MLP, 224 x 224, projection 512) at
// batch 1 and 32; 2 threads. Prints JSON lines with the median ms per batch of each
// engine, then the ratios.
#include "eagle/app/build_paths.h"
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
#include "eagle/encode/bert/kernels.h"
#include "eagle/encode/clip/clip.h"

using nlohmann::json;
using namespace eagle::encode;
using eagle::encode::kernels::kernel_name;

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
  std::string python = "/usr/bin/python3", script = std::string(eagle::app::build_source_dir()) + "/bench/torch_bert.py";
  bool skip_torch = false;
  app.add_option("--threads", threads, "threads for both engines")->capture_default_str();
  app.add_option("--min-seconds", min_seconds, "time per case and engine")->capture_default_str();
  app.add_option("--python", python, "Debian python3 with python3-torch")->capture_default_str();
  app.add_flag("--no-torch", skip_torch, "measure the native runtime only");
  std::string only_model, only_case, tower = "all";
  app.add_option("--tower", tower, "text (BERT), image (ViT) or all")->check(CLI::IsMember({"text", "image", "all"}))->capture_default_str();
  std::string vit_script = std::string(eagle::app::build_source_dir()) + "/bench/torch_vit.py";
  app.add_option("--model", only_model, "only this shape (bert-base or minilm-l6)");
  app.add_option("--case", only_case, "only this batch x seq, e.g. 1x32");
  CLI11_PARSE(app, argc, argv);

  const std::vector<Shape> shapes = {{"bert-base", 768, 12, 12, 3072}, {"minilm-l6", 384, 6, 12, 1536}};
  const std::vector<Case> cases = {{1, 32}, {1, 128}, {16, 256}, {32, 128}};
  set_bert_threads(threads);
  std::map<std::string, double> eagle_ms;
  std::string torch_cases;
  for (const auto& s : shapes) {
    if (tower == "image" || (!only_model.empty() && s.name != only_model)) continue;
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
                        {"seq", k.seq}, {"threads", threads}, {"kernels", kernel_name()}, {"ms_per_batch", ms},
                        {"seq_per_s", k.batch / (ms / 1000)}}.dump()
                << std::endl;
      torch_cases += (torch_cases.empty() ? "" : ",") + s.name + ":" + std::to_string(s.hidden) + ":" +
                     std::to_string(s.layers) + ":" + std::to_string(s.heads) + ":" + std::to_string(s.ff) + ":" +
                     std::to_string(k.batch) + ":" + std::to_string(k.seq);
    }
  }
  // The image tower: ViT-B/16 at 224 x 224 (CLIP's and BiomedCLIP's), batch 1 and 32.
  std::string vit_cases;
  if (tower != "text") {
    eagle::encode::clip::VitConfig v;
    v.width = 768;
    v.layers = 12;
    v.heads = 12;
    v.mlp_hidden = 3072;
    v.patch = 16;
    v.image_size = 224;
    v.embed_dim = 512;
    v.ln_pre = true;
    auto vit = eagle::encode::clip::VitModel::random(v, 42);
    std::mt19937 rng(2);
    std::normal_distribution<float> pixel(0.0f, 1.0f);
    for (size_t batch : {size_t{1}, size_t{32}}) {
      if (!only_case.empty() && only_case != std::to_string(batch) + "x224") continue;
      std::vector<std::vector<float>> images(batch, std::vector<float>(3 * 224 * 224));
      for (auto& im : images)
        for (auto& f : im) f = pixel(rng);
      const double ms = median_ms([&] { vit.embed(images); }, min_seconds);
      eagle_ms["vit-b16:" + std::to_string(batch) + ":224"] = ms;
      std::cout << json{{"bench", "encoders"}, {"engine", "eagle"}, {"model", "vit-b16"}, {"batch", batch},
                        {"image", 224}, {"threads", threads}, {"kernels", eagle::encode::kernels::kernel_name()}, {"ms_per_batch", ms},
                        {"images_per_s", batch / (ms / 1000)}}.dump()
                << std::endl;
      vit_cases += (vit_cases.empty() ? "" : ",") + std::string("vit-b16:768:12:12:3072:16:224:512:") + std::to_string(batch);
    }
  }
  if (skip_torch) return 0;
  // Runs a torch peer script and prints its lines, each followed by the ratio to Eagle's
  // time for the same case (`size_key` names the case's size field: seq or image).
  auto run_peer = [&](const std::string& peer, const std::string& cases, const char* size_key) {
    const std::string cmd = python + " " + peer + " --threads " + std::to_string(threads) + " --min-seconds " +
                            std::to_string(min_seconds) + " --cases " + cases;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) {
      std::fprintf(stderr, "bench_encoders: cannot run %s\n", cmd.c_str());
      return false;
    }
    std::array<char, 8192> buf;
    while (fgets(buf.data(), buf.size(), p)) {
      const std::string line = buf.data();
      std::cout << line << std::flush;
      try {
        auto j = json::parse(line);
        const std::string key = j["model"].get<std::string>() + ":" + std::to_string(j["batch"].get<size_t>()) + ":" +
                                std::to_string(j[size_key].get<size_t>());
        const double torch_ms = j["ms_per_batch"].get<double>();
        std::cout << json{{"bench", "encoders"}, {"engine", "ratio"}, {"model", j["model"]}, {"batch", j["batch"]},
                          {size_key, j[size_key]}, {"speedup_vs_torch", torch_ms / eagle_ms[key]}}.dump()
                  << std::endl;
      } catch (const std::exception&) {
      }
    }
    if (pclose(p) != 0) {
      std::fprintf(stderr, "bench_encoders: the torch peer failed (is python3-torch installed? %s)\n", cmd.c_str());
      return false;
    }
    return true;
  };
  if (!torch_cases.empty() && !run_peer(script, torch_cases, "seq")) return 2;
  if (!vit_cases.empty() && !run_peer(vit_script, vit_cases, "image")) return 2;
  return 0;
}
