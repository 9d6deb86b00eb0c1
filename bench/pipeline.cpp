// bench_pipeline: in-process latency of the orchestrated query path on a BEIR corpus
// (one collection, hybrid, explain off): p50/p99 over the queries and the share of
// time spent outside the index searches and the encoder (pipeline overhead).
// The oracle-style peer is the sum of the raw stages measured inside each request.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "eagle/encode/static/word_vectors.h"
#include "eagle/eval/beir.h"
#include "eagle/ingest/corpus_reader.h"
#include "eagle/search/orchestrator.h"

using nlohmann::json;

int main(int argc, char** argv) {
  CLI::App app{"bench_pipeline: pipeline latency and overhead share (JSON lines)"};
  std::string beir, split = "dev", glove;
  size_t top_k = 10, recall = 20;
  app.add_option("--beir", beir, "BEIR folder")->required();
  app.add_option("--split", split, "qrels split whose queries are run")->capture_default_str();
  app.add_option("--glove", glove, "converted GloVe file (eagle encoders makes it)")->required();
  app.add_option("--top-k", top_k, "final_top_k")->capture_default_str();
  app.add_option("--recall", recall, "recall_top_k per leg")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    auto set = eagle::eval::load_beir(beir, split);
    eagle::ingest::ReadOptions ro;
    auto docs = eagle::ingest::read_corpus(beir, ro).documents;
    eagle::encode::EncoderRegistry reg;
    reg.add(eagle::encode::make_glove_encoder("glove", glove));
    auto& enc = reg.encoder("glove");
    auto schema = eagle::chunk_schema("eagle_text", enc.info().dim);
    schema.vector.index = eagle::VectorIndexKind::flat;
    auto coll = eagle::store::Collection::in_memory(schema);
    const size_t doc_field = *schema.field_index("document_id");
    std::vector<eagle::store::Record> recs;
    for (const auto& d : docs) {
      eagle::store::Record r;
      r.id = d.id;
      r.text = d.indexed_text();
      r.vector = enc.encode({r.text}, eagle::encode::EncodeMode::document)[0];
      r.values.assign(schema.fields.size(), std::monostate{});
      r.values[doc_field] = d.id;
      recs.push_back(std::move(r));
      if (recs.size() == 4096) coll->insert(std::move(recs)), recs.clear();
    }
    coll->insert(std::move(recs));
    eagle::search::HookBus bus;
    eagle::search::PipelineConfig pc;
    pc.recall_top_k = recall;
    eagle::search::Orchestrator orch([&](const std::string& n) { return n == "eagle_text" ? coll.get() : nullptr; },
                                     reg, bus, pc);
    std::vector<double> total, overhead;
    double sum_total = 0, sum_stages = 0;
    for (int pass = 0; pass < 2; ++pass) {  // pass 0 warms caches
      for (const auto& q : set.queries) {
        eagle::search::RetrievalRequest req;
        req.query = q.text;
        req.top_k = top_k;
        auto t0 = std::chrono::steady_clock::now();
        auto resp = orch.retrieve(req);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (pass == 0) continue;
        const double stages = resp.metadata["encode_ms"].get<double>() + resp.metadata["search_ms"].get<double>();
        total.push_back(ms);
        sum_total += ms;
        sum_stages += stages;
      }
    }
    std::sort(total.begin(), total.end());
    auto pct = [&](double p) { return total[std::min(total.size() - 1, static_cast<size_t>(p * total.size()))]; };
    std::cout << json{{"bench", "pipeline"}, {"dataset", std::filesystem::path(beir).filename().string()},
                      {"docs", docs.size()}, {"queries", total.size()}, {"mode", "hybrid"}, {"explain", false},
                      {"recall_top_k", recall}, {"top_k", top_k}, {"p50_ms", pct(0.5)}, {"p99_ms", pct(0.99)},
                      {"mean_ms", sum_total / total.size()}, {"index_and_encoder_ms", sum_stages / total.size()},
                      {"overhead_share", (sum_total - sum_stages) / sum_total}}.dump()
              << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "bench_pipeline: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
