// bench_log: replaying a collection's write-ahead log, binary records (record_codec.h)
// against the JSON text records the store wrote before them, for the same rows in
// the same run. Rows: BioASQ passages spliced to --rows (eval/synthetic_corpus.h) with
// their GloVe vectors, computed once; written in batches of --batch rows, one log
// record each, no checkpoint, so an open replays every row.
//   binary: Collection::create + upsert per batch (what Eagle writes now);
//   json:   the same records as the older release logged them (record_to_json
//           arrays), appended to an empty collection's log with WalWriter.
// Figures, medians of --reps: the log's bytes; `decode_ms`, every record read and
// decoded into Records (json: parse + record_from_json), nothing applied; `open_ms`,
// Collection::open (replay: decode + apply to the BM25, vector and scalar indexes)
// for a flat and an HNSW vector index; the binary log also with the graph linked as
// it replays (binary_inline); `linked_ms`, until the graph builder has linked every
// replayed row. JSON lines; ratios are json (linked as replayed, as the previous
// release did) over binary.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench_rows.h"
#include "bench_support.h"
#include "eagle/app/config.h"
#include "eagle/core/schema.h"
#include "eagle/encode/static/word_vectors.h"
#include "eagle/eval/synthetic_corpus.h"
#include "eagle/ingest/corpus_reader.h"
#include "eagle/store/collection.h"
#include "eagle/store/record_codec.h"
#include "eagle/store/wal.h"

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using namespace eagle::store;

namespace {

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

fs::path only_log(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("wal-", 0) == 0) return e.path();
  throw std::runtime_error("no log in " + dir.string());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_log: log replay, binary records vs the older JSON records (JSON lines)"};
  std::string beir, work, glove = eagle::app::glove_file_of(eagle::app::Config{});  // the cache eagle makes
  uint64_t rows = 100000;
  size_t batch = 256;
  int reps = 3;
  app.add_option("--beir", beir, "BEIR folder whose passages make the rows")->required();
  app.add_option("--rows", rows, "rows")->capture_default_str();
  app.add_option("--batch", batch, "rows per log record")->capture_default_str();
  app.add_option("--reps", reps, "repetitions per figure (median)")->capture_default_str();
  app.add_option("--glove", glove, "converted GloVe file (eagle makes it on first use: `eagle ingest` or `eagle search`)")->capture_default_str();
  std::string index = "both";
  app.add_option("--index", index, "vector index of the collections: flat, hnsw or both")
      ->check(CLI::IsMember({"flat", "hnsw", "both"}))
      ->capture_default_str();
  std::vector<std::string> ways{"binary", "binary_inline", "json"};
  app.add_option("--ways", ways, "which logs to open: binary, binary_inline, json (ratios need all three)")
      ->check(CLI::IsMember({"binary", "binary_inline", "json"}))
      ->capture_default_str();
  app.add_option("--work", work, "folder for the stores (default: a temporary folder, removed)");
  CLI11_PARSE(app, argc, argv);
  try {
    const bool temporary = work.empty();
    const fs::path root = eagle::bench::fresh_work_folder(work, "log");
    const auto passages = eagle::bench::read_passages(beir);
    auto encoder = eagle::encode::make_glove_encoder("glove", glove);
    auto base_schema = eagle::chunk_schema("bench", encoder->info().dim, encoder->info().metric);
    const auto records = eagle::bench::passage_rows(passages, rows, *encoder, base_schema, /*rows_per_document=*/8);
    std::cout << json{{"bench", "log"}, {"build_flags", "-O2 -march=x86-64-v2 (CMake Release)"},
                      {"peer", "the same rows as JSON log records (the format before the binary one)"},
                      {"rows", rows}, {"batch", batch}, {"dim", encoder->info().dim}}
                     .dump()
              << std::endl;
    for (auto kind : {eagle::VectorIndexKind::flat, eagle::VectorIndexKind::hnsw}) {
      if (index != "both" && index != (kind == eagle::VectorIndexKind::flat ? "flat" : "hnsw")) continue;
      auto schema = base_schema;
      schema.vector.index = kind;
      CollectionOptions opts;
      opts.checkpoint_wal_bytes = uint64_t{1} << 40;  // every row stays in the log
      const fs::path bin_dir = root / "binary", json_dir = root / "json";
      fs::remove_all(bin_dir);
      fs::remove_all(json_dir);
      {
        auto c = Collection::create(bin_dir, schema, opts);
        for (uint64_t s = 0; s < rows; s += batch)
          c->upsert(std::vector<Record>(records.begin() + static_cast<std::ptrdiff_t>(s),
                                        records.begin() + static_cast<std::ptrdiff_t>(std::min<uint64_t>(rows, s + batch))));
      }
      {
        Collection::create(json_dir, schema, opts);
        WalWriter w(only_log(json_dir), WalSync::always);
        uint64_t lsn = 0;
        for (uint64_t s = 0; s < rows; s += batch) {
          json arr = json::array();
          for (uint64_t i = s; i < std::min<uint64_t>(rows, s + batch); ++i)
            arr.push_back(record_to_json(records[i], schema, true));
          w.append(++lsn, WalOp::upsert, arr.dump());
        }
      }
      json line = {{"bench", "log"}, {"rows", rows}, {"index", kind == eagle::VectorIndexKind::flat ? "flat" : "hnsw"}};
      std::map<std::string, double> open_ms;
      // Each log opened as a reader; `linking` is store.background_linking (on: the
      // replayed rows are only stored, and the builder links them after the open;
      // `linked_ms` is the open plus the wait until every row is linked). The previous
      // release linked every row as it replayed the JSON log: json with linking off.
      struct Way {
        const char* name;
        fs::path dir;
        bool linking;
      };
      for (const auto& [name, dir, linking] :
           {Way{"binary", bin_dir, true}, Way{"binary_inline", bin_dir, false}, Way{"json", json_dir, false}}) {
        if (std::find(ways.begin(), ways.end(), name) == ways.end()) continue;
        const fs::path log = only_log(dir);
        std::vector<double> decode, open, linked;
        size_t decoded = 0;
        for (int r = 0; r < reps; ++r) {
          auto t0 = Clock::now();
          decoded = 0;
          replay_wal(
              log,
              [&](uint64_t, WalOp, const std::string& payload) {
                if (is_binary_write(payload)) {
                  decoded += decode_write(payload, schema).records.size();
                } else {
                  for (const auto& rj : json::parse(payload)) {
                    record_from_json(rj, schema);
                    ++decoded;
                  }
                }
              },
              /*truncate_torn_tail=*/false);
          decode.push_back(ms_since(t0));
          t0 = Clock::now();
          CollectionOptions ro_opts;
          ro_opts.read_only = true;
          ro_opts.background_linking = linking;
          auto c = Collection::open(dir, ro_opts);
          open.push_back(ms_since(t0));
          if (c->count() != rows) throw std::runtime_error(std::string(name) + ": open found the wrong row count");
          while (c->describe()["vector_rows_unlinked"].get<size_t>() > 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
          linked.push_back(ms_since(t0));
        }
        line[std::string(name) + "_linked_ms"] = median(linked);
        if (decoded != rows) throw std::runtime_error(std::string(name) + ": decoded the wrong row count");
        line[std::string(name) + "_log_bytes"] = fs::file_size(log);
        line[std::string(name) + "_decode_ms"] = median(decode);
        line[std::string(name) + "_open_ms"] = median(open);
        open_ms[name] = median(open);
      }
      if (ways.size() < 3) {
        std::cout << line.dump() << std::endl;
        continue;
      }
      line["decode_ratio"] = line["json_decode_ms"].get<double>() / line["binary_decode_ms"].get<double>();
      line["open_ratio"] = open_ms["json"] / open_ms["binary"];
      line["open_ratio_both_inline"] = open_ms["json"] / open_ms["binary_inline"];
      line["linked_ratio"] = line["json_linked_ms"].get<double>() / line["binary_linked_ms"].get<double>();
      line["bytes_ratio"] = line["json_log_bytes"].get<double>() / line["binary_log_bytes"].get<double>();
      std::cout << line.dump() << std::endl;
    }
    if (temporary) fs::remove_all(root);
  } catch (const std::exception& e) {
    std::cerr << "bench_log: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
