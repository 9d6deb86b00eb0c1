// bench_open: how long a process needs to open a store and answer one query, at
// 20k and 200k rows (BioASQ snippets, replicated with new ids for the larger store).
// Two stores per size are built through the user's path (Engine::ingest): one ended
// by a checkpoint (the default since `eagle serve`), and the peer left as a log to
// replay (what every `eagle search` paid before). Each figure is measured in the same
// run, so the ratio is what to compare:
//   in-process: Engine(read_only) + one search, fresh each repetition;
//   process:    `eagle search` as a subprocess (what a shell user waits for).
// JSON lines; `--keep DIR` reuses stores built by an earlier run.
#include <CLI/CLI.hpp>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "bench_support.h"
#include "eagle/app/engine.h"
#include "eagle/encode/static/word_vectors.h"
#include "eagle/eval/beir.h"
#include "eagle/ingest/corpus_reader.h"

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

eagle::app::Config config_for(const fs::path& store, const std::string& glove, bool checkpoint) {
  eagle::app::Config cfg;
  cfg.data_dir = store.string();
  if (!glove.empty()) cfg.glove_file = glove;
  cfg.checkpoint_after_ingest = checkpoint;
  // The peer keeps its whole log (no automatic checkpoint on the way).
  if (!checkpoint) cfg.checkpoint_wal_bytes = uint64_t{1} << 40;
  cfg.ingest_commit_rows = 4096;
  return cfg;
}

// The corpus `copies` times (ids suffixed after the first copy), as one JSONL file.
fs::path write_corpus(const std::vector<eagle::Document>& docs, size_t rows, const fs::path& dir) {
  auto file = dir / ("corpus-" + std::to_string(rows) + ".jsonl");
  std::ofstream out(file);
  for (size_t i = 0; i < rows; ++i) {
    const auto& d = docs[i % docs.size()];
    const size_t copy = i / docs.size();
    json j = {{"_id", copy ? d.id + "~" + std::to_string(copy) : d.id}, {"title", d.title}, {"text", d.text}};
    out << j.dump() << "\n";
  }
  return file;
}

void build(const fs::path& store, const fs::path& corpus, const std::string& glove, bool checkpoint) {
  if (fs::exists(store / "collections" / "eagle_text" / "schema.json")) return;
  fs::remove_all(store);
  auto t0 = Clock::now();
  eagle::app::Engine engine(config_for(store, glove, checkpoint), eagle::app::StoreAccess::write, "bench_open");
  eagle::app::IngestOptions o;
  auto rep = engine.ingest({corpus.string()}, o);
  std::cout << json{{"bench", "open"}, {"step", "build"}, {"store", store.string()}, {"rows", rep.rows},
                    {"checkpoint", checkpoint}, {"seconds", ms_since(t0) / 1000}}
                   .dump()
            << std::endl;
}

double run_process(const std::string& cmd) {
  auto t0 = Clock::now();
  int rc = std::system((cmd + " >/dev/null 2>&1").c_str());
  const double ms = ms_since(t0);
  if (rc != 0) throw std::runtime_error("command failed: " + cmd);
  return ms;
}

}  // namespace

// Opens `store` `reps` times (read only, as `eagle search`), answering one query each
// time, and runs the eagle search process on it: medians.
json time_open(const fs::path& store, const std::string& glove, const std::string& eagle_bin, const std::string& query,
               int reps) {
  auto cfg = config_for(store, glove, true);
  std::vector<double> open_ms, query_ms, total_ms, process_ms;
  size_t hits = 0;
  for (int r = 0; r < reps; ++r) {
    {
      auto t0 = Clock::now();
      eagle::app::Engine engine(cfg, eagle::app::StoreAccess::read_only);
      engine.catalog().get("eagle_text");
      open_ms.push_back(ms_since(t0));
      auto t1 = Clock::now();
      eagle::search::RetrievalRequest req;
      req.query = query;
      req.top_k = 10;
      hits = engine.search(req).hits.size();
      query_ms.push_back(ms_since(t1));
      total_ms.push_back(ms_since(t0));
    }  // closed before the process runs: its graph builder would take a core from it
    std::string cmd = eagle_bin + " --data-dir " + store.string() + (glove.empty() ? "" : " --set glove.file=" + glove) +
                      " search -k 10 \"" + query + "\"";
    process_ms.push_back(run_process(cmd));
  }
  return {{"bench", "open"}, {"store", store.string()}, {"open_ms", median(open_ms)}, {"first_query_ms", median(query_ms)},
          {"open_and_query_ms", median(total_ms)}, {"eagle_search_process_ms", median(process_ms)},
          {"store_bytes", eagle::bench::folder_bytes(store)}, {"hits", hits}, {"reps", reps}};
}

int main(int argc, char** argv) {
  CLI::App app{"bench_open: open a store and answer one query, checkpointed vs log replay (JSON lines)"};
  std::string beir, keep, glove, eagle_bin;
  std::vector<size_t> sizes = {20000, 200000};
  int reps = 5;
  std::string query = "Which gene is mutated in cystic fibrosis?";
  app.add_option("--beir", beir, "BEIR folder whose corpus fills the stores (required unless --open-store)");
  app.add_option("--sizes", sizes, "row counts")->capture_default_str();
  app.add_option("--reps", reps, "repetitions per figure (median reported)")->capture_default_str();
  std::vector<std::string> open_stores;
  app.add_option("--open-store", open_stores,
                 "only time opening these existing stores (each: open, first query, the eagle search process), "
                 "e.g. one made by bench_ingest --rows 1000000 --keep");
  app.add_option("--keep", keep, "folder for the stores (reused when present); default: a temporary folder");
  app.add_option("--glove", glove, "converted GloVe file (default: the configuration's)");
  app.add_option("--eagle", eagle_bin, "the eagle binary for the subprocess figure (default: beside this one)");
  app.add_option("--query", query, "the query")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    if (eagle_bin.empty()) eagle_bin = (fs::path(argv[0]).parent_path() / "eagle").string();
    const fs::path root = keep.empty() ? fs::temp_directory_path() / ("eagle_bench_open_" + std::to_string(::getpid())) : fs::path(keep);
    fs::create_directories(root);
    if (!open_stores.empty()) {
      for (const auto& store : open_stores) std::cout << time_open(store, glove, eagle_bin, query, reps).dump() << std::endl;
      return 0;
    }
    if (beir.empty()) throw std::runtime_error("--beir is required (or --open-store)");
    eagle::ingest::ReadOptions ro;
    ro.format = eagle::ingest::InputFormat::beir;
    auto docs = eagle::ingest::read_corpus(beir, ro).documents;
    std::cout << json{{"bench", "open"}, {"build_flags", "-O2 -march=x86-64-v2 (CMake Release)"},
                      {"corpus", beir}, {"corpus_docs", docs.size()}, {"query", query}}
                     .dump()
              << std::endl;
    {
      // The GloVe vectors every process loads before its first query (the figure a
      // test used to assert); the peer is reading the same file's bytes, the floor.
      eagle::app::Config gcfg;
      if (!glove.empty()) gcfg.glove_file = glove;
      eagle::app::build_encoder_registry(gcfg);  // converts the npm asset on the first run
      const std::string glove_file = eagle::app::glove_file_of(gcfg);
      std::vector<double> load, read;
      for (int r = 0; r < reps; ++r) {
        auto t0 = Clock::now();
        auto enc = eagle::encode::make_glove_encoder("glove", glove_file);
        load.push_back(ms_since(t0));
        t0 = Clock::now();
        std::ifstream in(glove_file, std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), {});
        read.push_back(ms_since(t0));
      }
      std::cout << json{{"bench", "open"}, {"part", "glove_load"}, {"file", glove_file},
                        {"bytes", fs::file_size(glove_file)}, {"glove_load_ms", median(load)},
                        {"read_file_ms", median(read)}, {"ratio_to_read", median(load) / median(read)}}
                       .dump()
                << std::endl;
    }
    for (size_t rows : sizes) {
      const auto corpus = write_corpus(docs, rows, root);
      const fs::path cp = root / ("store-" + std::to_string(rows) + "-checkpoint");
      const fs::path log = root / ("store-" + std::to_string(rows) + "-log");
      build(cp, corpus, glove, true);
      build(log, corpus, glove, false);
      fs::remove(corpus);
      json line = {{"bench", "open"}, {"rows", rows}, {"reps", reps}};
      for (const auto& [name, store] : {std::pair{"checkpoint", cp}, std::pair{"log_replay", log}}) {
        line[name] = time_open(store, glove, eagle_bin, query, reps);
      }
      line["ratio_log_replay_over_checkpoint"] =
          line["log_replay"]["open_and_query_ms"].get<double>() / line["checkpoint"]["open_and_query_ms"].get<double>();
      std::cout << line.dump() << std::endl;
    }
    if (keep.empty()) fs::remove_all(root);
  } catch (const std::exception& e) {
    std::cerr << "bench_open: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
