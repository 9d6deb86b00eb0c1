// bench_live: a live knowledge base as its users run it, at several store sizes in one
// run, so how a cost grows with the store is a ratio measured on the same machine.
// For each size, a store made through the user's path (Engine::ingest of BioASQ
// passages spliced to that many rows, default settings, reused with --keep) is
// copied and served by a warm `eagle serve`; one client then measures:
//   idle search:      POST /search, sequential, p50/p99;
//   one-record write: POST /ingest of ONE record, then GET /tasks/{id} until it
//                     succeeds (durable: the ingest's commit and checkpoint), p50/p90;
//   first search:     the POST /search right after each write, p50/p90.
// With --bulk-rows N (default 100,000), --clients C (default 16) clients then search at
// once (keep-alive connections, --think-ms between a client's searches: back to back,
// 16 clients saturate two cores and the ingest, at low priority, gets almost none), first on the idle server and then while POST /ingest {"path"} adds N new rows
// (a JSONL file under server.ingest_root) as one bulk ingest: p50/p99 of each, the
// ratio of the p99s, errors, and the bulk ingest's rows/s.
// The server's resident memory is read after the idle searches (RssAnon, its heap, over
// the corpus's JSONL bytes; RssFile, mapped segments) and again at the end. JSON lines;
// the ratios the store is judged by (one-record write at the largest size over the
// smallest; first search over idle) are printed last.
#include <CLI/CLI.hpp>
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <tuple>
#include <atomic>
#include <functional>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench_process.h"
#include "bench_rows.h"
#include "eagle/app/engine.h"
#include "eagle/eval/beir.h"

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

using eagle::bench::percentile;
using eagle::bench::status_mb;
double rss_anon_mb(pid_t pid) { return status_mb(pid, "RssAnon:"); }

// The store of `rows` rows, made once through Engine::ingest (the user's path).
void build_store(const fs::path& store, const std::vector<eagle::Document>& passages, uint64_t rows,
                 const std::string& glove) {
  if (fs::exists(store / "collections" / "eagle_text" / "schema.json")) return;
  fs::remove_all(store);
  const fs::path corpus = store.string() + ".jsonl";
  eagle::eval::write_spliced_corpus(passages, rows, corpus);
  eagle::app::Config cfg;
  cfg.data_dir = store.string();
  if (!glove.empty()) cfg.glove_file = glove;
  auto t0 = Clock::now();
  eagle::app::Engine engine(cfg, eagle::app::StoreAccess::write, "bench_live");
  auto rep = engine.ingest({corpus.string()}, eagle::app::IngestOptions{});
  fs::remove(corpus);
  std::cout << json{{"bench", "live"}, {"step", "build"}, {"rows", rep.rows}, {"seconds", ms_since(t0) / 1000}}.dump()
            << std::endl;
}

// A warm `eagle serve` on `store` (bench_process.h), stopped when it goes.
struct Server {
  pid_t pid = -1;
  int port = 0;
  Server(const std::string& eagle_bin, const fs::path& store, const std::string& glove, const fs::path& log,
         const std::vector<std::string>& settings) {
    std::vector<std::string> args = {eagle_bin, "--data-dir", store.string()};
    if (!glove.empty()) args.insert(args.end(), {"--set", "glove.file=" + glove});
    for (const auto& s : settings) args.insert(args.end(), {"--set", s});
    args.insert(args.end(), {"serve", "--port", "0"});
    std::tie(pid, port) = eagle::bench::start_server(args, log);
  }
  ~Server() { stop(); }
  void stop() {
    eagle::bench::stop_process(pid);
    pid = -1;
  }
};

// POST /search from `clients` threads at once, each with its own connection, until
// `stop` says so (after each has made at least `min_each`); latencies in ms, failures
// counted.
struct ConcurrentSearches {
  std::vector<double> ms;
  size_t errors = 0;
};
ConcurrentSearches search_concurrently(int port, int clients, const std::vector<std::string>& queries, size_t min_each,
                                       std::chrono::milliseconds think, const std::function<bool()>& stop) {
  std::vector<ConcurrentSearches> each(static_cast<size_t>(clients));
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&, c] {
      httplib::Client cli("127.0.0.1", port);
      cli.set_read_timeout(120, 0);
      cli.set_keep_alive(true);  // as an application's client: one connection, many requests
      cli.set_tcp_nodelay(true);  // its header and body writes must not wait on a delayed ACK
      auto& mine = each[static_cast<size_t>(c)];
      for (size_t i = 0; i < min_each || !stop(); ++i) {
        const auto& q = queries[(static_cast<size_t>(c) * 131 + i) % queries.size()];
        auto t0 = Clock::now();
        auto r = cli.Post("/search", json{{"query", q}, {"top_k", 10}}.dump(), "application/json");
        if (!r || r->status != 200) {
          ++mine.errors;
          continue;
        }
        mine.ms.push_back(ms_since(t0));
        if (think.count()) std::this_thread::sleep_for(think);
      }
    });
  for (auto& t : threads) t.join();
  ConcurrentSearches all;
  for (auto& e : each) {
    all.ms.insert(all.ms.end(), e.ms.begin(), e.ms.end());
    all.errors += e.errors;
  }
  return all;
}

// Waits for an ingest task; returns its final state's JSON.
json wait_for_task(httplib::Client& cli, const std::string& task, std::chrono::microseconds poll) {
  for (;;) {
    auto t = cli.Get("/tasks/" + task);
    if (!t || t->status != 200) throw std::runtime_error("task poll failed");
    auto state = json::parse(t->body);
    const auto name = state["state"].get<std::string>();
    if (name == "succeeded") return state;
    if (name == "failed") throw std::runtime_error("ingest task failed: " + t->body);
    std::this_thread::sleep_for(poll);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_live: one-record writes and searches on a warm eagle serve, by store size (JSON lines)"};
  std::string beir, keep, glove, eagle_bin;
  std::vector<uint64_t> sizes = {20000, 200000};
  int writes = 30, searches = 1000, clients = 16;
  uint64_t bulk_rows = 100000;
  int think_ms = 20;
  app.add_option("--beir", beir, "BEIR folder: its passages fill the stores, its queries are searched")->required();
  app.add_option("--sizes", sizes, "store sizes in rows")->capture_default_str();
  app.add_option("--writes", writes, "one-record writes per size")->capture_default_str();
  app.add_option("--searches", searches, "idle searches per size")->capture_default_str();
  app.add_option("--bulk-rows", bulk_rows, "rows of the bulk ingest the concurrent clients search beside (0: none)")
      ->capture_default_str();
  app.add_option("--clients", clients, "concurrent searching clients")->capture_default_str()->check(CLI::Range(1, 256));
  app.add_option("--think-ms", think_ms,
                 "pause of each concurrent client between its searches (0: back to back, which saturates the cores "
                 "and leaves the low-priority ingest almost none)")
      ->capture_default_str()
      ->check(CLI::Range(0, 10000));
  std::vector<std::string> server_settings;
  app.add_option("--server-set", server_settings,
                 "KEY=VALUE given to each eagle serve as --set (e.g. store.map_vectors=false), repeatable");
  app.add_option("--keep", keep, "folder for the stores (reused when present); default: a temporary folder");
  app.add_option("--glove", glove, "converted GloVe file (default: the configuration's)");
  app.add_option("--eagle", eagle_bin, "the eagle binary (default: beside this one)");
  CLI11_PARSE(app, argc, argv);
  try {
    if (eagle_bin.empty()) eagle_bin = (fs::path(argv[0]).parent_path() / "eagle").string();
    const fs::path root = keep.empty() ? eagle::bench::fresh_work_folder("", "live") : fs::path(keep);
    fs::create_directories(root);
    const auto passages = eagle::bench::read_passages(beir);
    std::vector<std::string> queries;
    for (const auto& q : eagle::eval::load_queries(fs::path(beir) / "queries.jsonl")) queries.push_back(q.text);
    std::cout << json{{"bench", "live"}, {"build_flags", "-O2 -march=x86-64-v2 (CMake Release)"},
                      {"baseline", "the smallest store, same run"}, {"sizes", sizes}, {"writes", writes},
                      {"searches", searches}, {"server_set", server_settings}}
                     .dump()
              << std::endl;
    const std::chrono::milliseconds think(think_ms);
    std::map<uint64_t, json> by_size;
    for (uint64_t rows : sizes) {
      const fs::path store = root / ("store-" + std::to_string(rows));
      build_store(store, passages, rows, glove);
      const fs::path copy = root / ("serving-" + std::to_string(rows));
      fs::remove_all(copy);
      fs::copy(store, copy, fs::copy_options::recursive);
      fs::remove(copy / "LOCK");
      // Workers for every client plus the task polls (a worker a connection), and the
      // bulk file's folder readable by POST /ingest {"path"}.
      const fs::path bulk_file = root / ("bulk-" + std::to_string(rows) + ".jsonl");
      Server server(eagle_bin, copy, glove, root / ("serve-" + std::to_string(rows) + ".log"),
                    [&] {
                      std::vector<std::string> set = {"server.threads=" + std::to_string(clients + 8),
                                                      "server.ingest_root=" + root.string()};
                      set.insert(set.end(), server_settings.begin(), server_settings.end());
                      return set;
                    }());
      httplib::Client cli("127.0.0.1", server.port);
      cli.set_read_timeout(120, 0);
      auto search = [&](const std::string& q) {
        auto t0 = Clock::now();
        auto r = cli.Post("/search", json{{"query", q}, {"top_k", 10}}.dump(), "application/json");
        if (!r || r->status != 200) throw std::runtime_error("search failed: " + (r ? r->body : std::string("no reply")));
        return ms_since(t0);
      };
      for (int i = 0; i < 20; ++i) search(queries[i % queries.size()]);  // warm
      std::vector<double> idle, write, first;
      for (int i = 0; i < searches; ++i) idle.push_back(search(queries[i % queries.size()]));
      // The memory a server holds for the store once searched (before any write).
      const double anon_after_searches = rss_anon_mb(server.pid), file_after_searches = status_mb(server.pid, "RssFile:");
      // The corpus the store was made from, as JSONL bytes (what "x the corpus" divides by).
      const double corpus_mb =
          static_cast<double>(eagle::eval::write_spliced_corpus(passages, rows, "/dev/null")) / 1024.0 / 1024.0;
      for (int i = 0; i < writes; ++i) {
        const std::string id = "live-" + std::to_string(i);
        const json body = {{"records", {{{"id", id}, {"text", eagle::eval::spliced_text(passages, rows + i)}}}}};
        auto t0 = Clock::now();
        auto r = cli.Post("/ingest", body.dump(), "application/json");
        if (!r || r->status != 202) throw std::runtime_error("ingest failed: " + (r ? r->body : std::string("no reply")));
        const std::string task = json::parse(r->body)["task_id"];
        wait_for_task(cli, task, std::chrono::microseconds(500));
        write.push_back(ms_since(t0));
        first.push_back(search(queries[(i * 7) % queries.size()]));
      }
      json bulk;
      if (bulk_rows > 0) {
        {
          std::ofstream out(bulk_file, std::ios::binary);
          for (uint64_t i = 0; i < bulk_rows; ++i)
            out << json{{"id", "bulk-" + std::to_string(i)},
                        {"text", eagle::eval::spliced_text(passages, rows + static_cast<uint64_t>(writes) + i)}}
                       .dump()
                << "\n";
        }
        const size_t per_client = std::max<size_t>(50, static_cast<size_t>(searches) / static_cast<size_t>(clients));
        const auto idle_many = search_concurrently(server.port, clients, queries, per_client, think, [] { return true; });
        std::atomic<bool> ingest_done{false};
        auto t0 = Clock::now();
        auto r = cli.Post("/ingest", json{{"path", bulk_file.filename().string()}}.dump(), "application/json");
        if (!r || r->status != 202) throw std::runtime_error("bulk ingest failed: " + (r ? r->body : std::string("no reply")));
        const std::string task = json::parse(r->body)["task_id"];
        double bulk_s = 0;
        std::thread poller([&] {
          httplib::Client poll_cli("127.0.0.1", server.port);
          poll_cli.set_read_timeout(120, 0);
          try {
            wait_for_task(poll_cli, task, std::chrono::milliseconds(100));
          } catch (const std::exception& e) {
            std::cerr << "bench_live: " << e.what() << "\n";
          }
          bulk_s = ms_since(t0) / 1000;
          ingest_done = true;
        });
        const auto during = search_concurrently(server.port, clients, queries, 1, think, [&] { return ingest_done.load(); });
        poller.join();
        fs::remove(bulk_file);
        bulk = {{"clients", clients},
                {"think_ms", think_ms},
                {"bulk_rows", bulk_rows},
                {"concurrent_idle_p50_ms", percentile(idle_many.ms, 50)},
                {"concurrent_idle_p99_ms", percentile(idle_many.ms, 99)},
                {"during_bulk_p50_ms", percentile(during.ms, 50)},
                {"during_bulk_p99_ms", percentile(during.ms, 99)},
                {"during_bulk_searches", during.ms.size()},
                {"during_over_idle_p99", percentile(during.ms, 99) / percentile(idle_many.ms, 99)},
                {"search_errors", idle_many.errors + during.errors},
                {"bulk_seconds", bulk_s},
                {"bulk_rows_per_s", static_cast<double>(bulk_rows) / bulk_s}};
      }
      json line = {{"bench", "live"},
                   {"rows", rows},
                   {"idle_search_p50_ms", percentile(idle, 50)},
                   {"idle_search_p99_ms", percentile(idle, 99)},
                   {"one_record_write_p50_ms", percentile(write, 50)},
                   {"one_record_write_p90_ms", percentile(write, 90)},
                   {"first_search_p50_ms", percentile(first, 50)},
                   {"first_search_p90_ms", percentile(first, 90)},
                   {"first_over_idle", percentile(first, 50) / percentile(idle, 50)},
                   {"corpus_mb", corpus_mb},
                   {"searched_rss_anon_mb", anon_after_searches},
                   {"searched_rss_anon_over_corpus", anon_after_searches / corpus_mb},
                   {"searched_rss_file_mb", file_after_searches},
                   {"server_rss_anon_mb", rss_anon_mb(server.pid)}};
      if (!bulk.empty()) line["concurrent"] = bulk;
      std::cout << line.dump() << std::endl;
      by_size[rows] = line;
      server.stop();  // its merges may still be deleting files in the copy
      fs::remove_all(copy);
    }
    if (by_size.size() > 1) {
      const auto& small = by_size.begin()->second;
      const auto& large = by_size.rbegin()->second;
      std::cout << json{{"bench", "live"},
                        {"ratio", "largest over smallest store"},
                        {"rows", {by_size.begin()->first, by_size.rbegin()->first}},
                        {"one_record_write_p50", large["one_record_write_p50_ms"].get<double>() /
                                                     small["one_record_write_p50_ms"].get<double>()},
                        {"first_search_p50", large["first_search_p50_ms"].get<double>() /
                                                 small["first_search_p50_ms"].get<double>()},
                        {"idle_search_p50", large["idle_search_p50_ms"].get<double>() /
                                                small["idle_search_p50_ms"].get<double>()}}
                       .dump()
                << std::endl;
    }
    if (keep.empty()) fs::remove_all(root);
  } catch (const std::exception& e) {
    std::cerr << "bench_live: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
