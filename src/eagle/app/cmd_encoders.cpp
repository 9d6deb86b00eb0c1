// `eagle encoders`: the configured encoders and rerankers (what a collection records of
// each), or the vectors one of them gives a few texts.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eagle/app/cli.h"
#include "eagle/app/engine.h"
#include "eagle/core/schema.h"

namespace eagle::app {
namespace {
using nlohmann::json;

struct EncoderFlags {
  std::string label = "glove";
  std::vector<std::string> texts;
  bool query_mode = false;
};

int cmd_encoders(const GlobalFlags& g, const std::string& label, const std::vector<std::string>& texts,
                 bool query_mode) {
  auto cfg = resolve_config(g);
  auto t0 = std::chrono::steady_clock::now();
  auto reg = eagle::app::build_encoder_registry(cfg);
  std::printf("encoders loaded in %.3f s\n", seconds_since(t0));
  if (texts.empty()) {
    for (const auto& l : reg.labels()) {
      if (reg.has_encoder(l)) {
        const auto& i = reg.encoder(l).info();
        std::printf("  %-20s encoder  %-10s dim %-5u %s%s%s\n", l.c_str(), i.implementation.c_str(), i.dim,
                    std::string(eagle::metric_name(i.metric)).c_str(), i.asymmetric ? " asymmetric" : "",
                    eagle::app::stand_in_of(cfg, l).empty()
                        ? ""
                        : ("  stand-in (" + eagle::app::stand_in_of(cfg, l) + "): set encoders." + l +
                           " to the real model").c_str());
        // What a collection records of it, and refuses once it changes.
        std::printf("  %-20s          %s\n", "", i.identity.c_str());
      } else {
        std::printf("  %-20s reranker\n", l.c_str());
      }
    }
    return 0;
  }
  auto& enc = reg.encoder(label);
  t0 = std::chrono::steady_clock::now();
  auto vecs = enc.encode(texts, query_mode ? eagle::encode::EncodeMode::query : eagle::encode::EncodeMode::document);
  double ms = seconds_since(t0) * 1000;
  for (size_t i = 0; i < texts.size(); ++i) {
    json j = {{"text", texts[i]}, {"encoder", label}, {"dim", vecs[i].size()}};
    std::vector<float> head(vecs[i].begin(), vecs[i].begin() + std::min<size_t>(8, vecs[i].size()));
    j["head"] = head;
    std::cout << j.dump() << "\n";
  }
  std::printf("encoded %zu texts in %.2f ms\n", texts.size(), ms);
  return 0;
}

}  // namespace

void add_encoders_command(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out) {
  auto f = std::make_shared<EncoderFlags>();
  auto* encoders_cmd = app.add_subcommand("encoders", "list the configured encoders, or embed texts with one");
  encoders_cmd->add_option("texts", f->texts, "texts to embed (none: list the encoders)");
  encoders_cmd->add_option("--label", f->label, "encoder label")->capture_default_str();
  encoders_cmd->add_flag("--query", f->query_mode, "encode as queries (asymmetric encoders)");
  out.push_back({encoders_cmd, [&g, f] { return cmd_encoders(g, f->label, f->texts, f->query_mode); }});
}

}  // namespace eagle::app
