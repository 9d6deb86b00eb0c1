// bench_server: `eagle serve` under load, against the same engine in-process, in one
// run (so the server's cost is a ratio on the same machine). On a copy of a store:
//   1. in-process: Engine(read_only) searched by N threads for D seconds;
//   2. server: `eagle serve` with the same namespace, N connections from wrk (Debian)
//      for D seconds, while a BEIR corpus is ingested into the same server through
//      POST /ingest; RSS sampled from /proc at start and end.
// Prints JSON lines: each phase's q/s, p50/p99, wrk's non-2xx and socket errors, RSS,
// the ingest's time, and the ratios the goals are stated in.
#include <CLI/CLI.hpp>
#include <httplib.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "bench_process.h"
#include "hostile_clients.h"
#include "eagle/app/engine.h"
#include "eagle/eval/beir.h"

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double secs_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

using eagle::bench::percentile;
using eagle::bench::spawn;
using eagle::bench::start_server;
std::string read_file(const fs::path& p) { return eagle::bench::read_text(p); }
double rss_mb(pid_t pid, const char* field = "VmRSS:") { return eagle::bench::status_mb(pid, field); }

std::string wrk_script(const std::vector<std::string>& bodies, const std::string& token = "") {
  std::string s = "local bodies = {\n";
  for (const auto& b : bodies) s += "  [==[" + b + "]==],\n";
  s += R"(}
local i = math.random(#bodies)
request = function()
  i = i % #bodies + 1
  return wrk.format("POST", "/search", {["Content-Type"] = "application/json"TOKEN_HEADER}, bodies[i])
end
done = function(summary, latency, requests)
  io.write(string.format('WRKJSON {"requests":%d,"duration_us":%d,"non_2xx":%d,"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"mean_us":%.1f,"max_us":%d}\n',
    summary.requests, summary.duration, summary.errors.status, summary.errors.connect, summary.errors.read,
    summary.errors.write, summary.errors.timeout, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.mean, latency.max))
end
)";
  const std::string header = token.empty() ? "" : ", [\"Authorization\"] = \"Bearer " + token + "\"";
  s.replace(s.find("TOKEN_HEADER"), 12, header);
  return s;
}

// wrk's summary line (WRKJSON, printed by the script's done()) from its output file.
json wrk_summary(const fs::path& out_file) {
  const std::string out = read_file(out_file);
  const auto at = out.find("WRKJSON ");
  if (at == std::string::npos) throw std::runtime_error("wrk printed no summary: " + out);
  return json::parse(out.substr(at + 8, out.find('\n', at) - at - 8));
}

int socket_errors(const json& w) {
  return w["connect_errors"].get<int>() + w["read_errors"].get<int>() + w["write_errors"].get<int>() +
         w["timeouts"].get<int>();
}

// Runs wrk against the server for `seconds`, calling `tick` every 500 ms meanwhile.
// timeout_s: a request unanswered that long counts as a timeout (an error).
json run_wrk(const fs::path& work, const std::string& name, int port, int clients, int seconds,
             const std::function<void()>& tick, int timeout_s = 30) {
  pid_t wrk = spawn({"wrk", "-t1", "-c" + std::to_string(clients), "-d" + std::to_string(seconds) + "s", "--timeout",
                     std::to_string(timeout_s) + "s", "-s", (work / (name + ".lua")).string(), "http://127.0.0.1:" + std::to_string(port)},
                    work / (name + ".out"));
  int status = 0;
  while (::waitpid(wrk, &status, WNOHANG) != wrk) {
    tick();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return wrk_summary(work / (name + ".out"));
}

// nginx (Debian's) with `conf` made to listen on 127.0.0.1:port in plain HTTP and to
// proxy to the server on `upstream`; returns the command line that stops it (+ " -s stop").
std::string start_nginx(const fs::path& conf_file, const fs::path& dir, int port, int upstream) {
  fs::create_directories(dir);
  std::string conf = read_file(conf_file), out;
  std::istringstream lines(conf);
  std::string line;
  while (std::getline(lines, line)) {
    const auto first = line.find_first_not_of(' ');
    const std::string t = first == std::string::npos ? "" : line.substr(first);
    if (t.rfind("ssl_", 0) == 0) continue;  // plain HTTP: the attackers speak it
    if (t.rfind("listen ", 0) == 0) line = "    listen 127.0.0.1:" + std::to_string(port) + ";";
    if (t.rfind("server 127.0.0.1:", 0) == 0) line = "    server 127.0.0.1:" + std::to_string(upstream) + ";";
    if (t.rfind("access_log ", 0) == 0) line = "  access_log off;";
    if (t.rfind("error_log ", 0) == 0) line = "  error_log " + (dir / "error.log").string() + ";";
    out += line + "\n";
    if (t == "http {")
      out += "  client_body_temp_path " + (dir / "body").string() + ";\n  proxy_temp_path " + (dir / "proxy").string() + ";\n";
  }
  std::ofstream(dir / "nginx.conf") << out;
  const std::string cmd = "nginx -p " + dir.string() + " -c " + (dir / "nginx.conf").string() + " -g 'pid " +
                          (dir / "nginx.pid").string() + "; error_log " + (dir / "main.log").string() + ";'";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("nginx did not start: " + read_file(dir / "main.log"));
  for (int i = 0; i < 100; ++i) {
    httplib::Client probe("127.0.0.1", port);
    if (auto r = probe.Get("/health"); r && r->status == 200) return cmd;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw std::runtime_error("nginx in front answered no /health: " + read_file(dir / "error.log"));
}

// wrk's summary as this benchmark reports a run.
json wrk_figures(const json& w) {
  const double d = w["duration_us"].get<double>() / 1e6;
  return json{{"requests", w["requests"]},
              {"qps", w["requests"].get<double>() / d},
              {"p50_ms", w["p50_us"].get<double>() / 1000},
              {"p99_ms", w["p99_us"].get<double>() / 1000},
              {"non_2xx", w["non_2xx"]},
              {"socket_errors", socket_errors(w)}};
}

struct HostileSetup {
  fs::path work;
  std::vector<std::string> serve_args;
  const std::vector<std::string>& bodies;
  int clients, seconds;
  eagle::bench::HostileClients::Plan attack;
  std::string proxy_conf;  // nginx in front with this configuration ("": none)
};

// 3. The same server with a token (the attackers have none), measured by the same
//    clients for the same time without and then with the attack; prints one line.
void hostile_phase(HostileSetup h) {
  const fs::path& work = h.work;
  const std::string token = "bench-hostile-phase-token-0123456789";
  ::setenv("EAGLE_BENCH_TOKEN", token.c_str(), 1);
  auto args = h.serve_args;
  args.insert(args.begin() + 1, {"--set", R"(auth.tokens=[{"name":"bench","token_env":"EAGLE_BENCH_TOKEN"}])"});
  auto [hs, hport] = start_server(args, work / "serve-hostile.log");
  httplib::Client hc("127.0.0.1", hport);
  hc.set_read_timeout(60, 0);
  hc.set_bearer_token_auth(token);
  for (const auto& b : h.bodies) hc.Post("/search", b, "application/json");
  // Clients and attackers aim at the server, or at nginx in front of it.
  int target = hport;
  std::string nginx;
  if (!h.proxy_conf.empty()) {
    target = eagle::bench::free_port();
    nginx = start_nginx(h.proxy_conf, work / "nginx", target, hport);
  }
  std::ofstream(work / "calm.lua") << wrk_script(h.bodies, token);
  std::ofstream(work / "attacked.lua") << wrk_script(h.bodies, token);
  // A request unanswered for 5 s is an error here (the phase is short; wrk's usual
  // 30 s would let a starved client finish the phase with no error at all).
  const auto calm = run_wrk(work, "calm", target, h.clients, h.seconds, [] {}, 5);
  const double rss_before = rss_mb(hs);
  h.attack.port = target;
  eagle::bench::HostileClients attackers(h.attack);
  attackers.start();
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the holds are in place
  double rss_attack_peak = rss_before;
  const auto attacked = run_wrk(
      work, "attacked", target, h.clients, h.seconds, [&] { rss_attack_peak = std::max(rss_attack_peak, rss_mb(hs)); }, 5);
  attackers.stop();
  if (!nginx.empty()) std::system((nginx + " -s stop").c_str());
  const double rss_after = rss_mb(hs);
  ::kill(hs, SIGTERM);
  int st;
  ::waitpid(hs, &st, 0);
  const json c = wrk_figures(calm), a = wrk_figures(attacked);
  json line = {{"bench", "server"},
               {"phase", "hostile"},
               {"clients", h.clients},
               {"in_front", h.proxy_conf.empty() ? json("nothing") : json("nginx: " + h.proxy_conf)},
               {"calm", c},
               {"attacked", a},
               {"attack", attackers.stats()},
               {"p99_attacked_over_calm", a["p99_ms"].get<double>() / std::max(1e-9, c["p99_ms"].get<double>())},
               {"errors_attacked", a["non_2xx"].get<int>() + a["socket_errors"].get<int>()},
               // wrk counts no error for a request that is never answered: a starved
               // run shows as no requests at all.
               {"answered_attacked", a["requests"]},
               {"rss_growth_mb", rss_attack_peak - rss_before},
               {"rss_before_mb", rss_before},
               {"rss_after_mb", rss_after},
               {"goals", {{"errors", 0}, {"answered_min_over_calm", 0.5}, {"p99_ratio_max", 2}, {"rss_growth_mb_max", 50}}}};
  std::cout << line.dump() << std::endl;
}

// 4. The HTTP server against another eagle binary's (--peer-eagle: e.g. the release
//    before a server change), the same store and clients, no ingest: `rounds` turns
//    each, alternating, so drift on a noisy machine falls on both; prints one line.
void peer_phase(const fs::path& work, const fs::path& store, std::vector<std::string> serve_args,
                const std::string& peer_bin, const std::vector<std::string>& bodies, int clients, int seconds,
                int rounds) {
  const fs::path copy = work / "store-peer";
  fs::copy(store, copy, fs::copy_options::recursive);
  fs::remove(copy / "LOCK");
  serve_args[2] = copy.string();  // {eagle, --data-dir, DIR, ...}
  std::ofstream(work / "peer.lua") << wrk_script(bodies);
  json runs = json::array();
  std::vector<double> qps[2];
  for (int round = 0; round < rounds; ++round)
    for (int side = 0; side < 2; ++side) {
      auto args = serve_args;
      if (side == 1) args[0] = peer_bin;
      auto [pid, port] = start_server(args, work / "serve-peer.log");
      httplib::Client warm("127.0.0.1", port);
      warm.set_read_timeout(60, 0);
      for (const auto& b : bodies) warm.Post("/search", b, "application/json");
      json f = wrk_figures(run_wrk(work, "peer", port, clients, seconds, [] {}));
      ::kill(pid, SIGTERM);
      int st;
      ::waitpid(pid, &st, 0);
      f["binary"] = side == 0 ? "this" : "peer";
      qps[side].push_back(f["qps"].get<double>());
      runs.push_back(f);
    }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
  };
  std::cout << json{{"bench", "server"}, {"phase", "peer"}, {"peer", peer_bin}, {"runs", runs},
                    {"qps_this", mean(qps[0])}, {"qps_peer", mean(qps[1])},
                    {"qps_this_over_peer", mean(qps[0]) / std::max(1e-9, mean(qps[1]))},
                    {"goals", {{"qps_ratio_min", 0.95}}}}
                   .dump()
            << std::endl;
}

struct InProcessSetup {
  fs::path store;
  std::string glove, ns, ingest_beir;
  int clients, seconds;
  const std::vector<std::string>& texts;
  size_t slowest;
};

// 1. In-process: the same engine, N threads, no HTTP, and the same ingest run
//    beside them on a thread of the same niceness as the server's task thread.
//    Prints its line (and the slowest queries) and returns it.
json in_process_phase(const InProcessSetup& p) {
  const std::string& ns = p.ns;
  const int clients = p.clients;
  const auto& texts = p.texts;
  const size_t slowest = p.slowest;
  eagle::app::Config cfg;
  cfg.data_dir = p.store.string();
  if (!p.glove.empty()) cfg.glove_file = p.glove;
  eagle::app::Engine engine(cfg, eagle::app::StoreAccess::write, "bench_server");
  engine.preload(ns);
  std::thread ingester;
  json inproc_ingest = nullptr;
  if (!p.ingest_beir.empty())
    ingester = std::thread([&] {
      setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), cfg.server.ingest_nice);
      std::this_thread::sleep_for(std::chrono::seconds(2));
      eagle::app::IngestOptions o;
      o.plugin_namespace = ns;
      o.format = "beir";
      auto t0 = Clock::now();
      auto rep = engine.ingest({p.ingest_beir}, o);
      inproc_ingest = {{"rows", rep.rows}, {"seconds", secs_since(t0)}};
    });
  std::atomic<size_t> next{0};
  std::vector<std::vector<double>> lat(clients);
  std::vector<std::vector<std::pair<double, size_t>>> by_query(clients);
  const auto t0 = Clock::now();
  const auto deadline = t0 + std::chrono::seconds(p.seconds);
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; ++t)
    threads.emplace_back([&, t] {
      while (Clock::now() < deadline) {
        eagle::search::RetrievalRequest req;
        const size_t qi = next++ % texts.size();
        req.query = texts[qi];
        req.top_k = 10;
        req.plugin_namespace = ns;
        auto q0 = Clock::now();
        engine.search(req);
        lat[t].push_back(secs_since(q0) * 1000);
        if (slowest) by_query[t].emplace_back(lat[t].back(), qi);
      }
    });
  for (auto& t : threads) t.join();
  const double elapsed = secs_since(t0);
  if (ingester.joinable()) ingester.join();
  std::vector<double> all;
  for (auto& v : lat) all.insert(all.end(), v.begin(), v.end());
  json inproc = {{"bench", "server"}, {"phase", "in_process"}, {"requests", all.size()},
            {"qps", static_cast<double>(all.size()) / elapsed}, {"p50_ms", percentile(all, 50)},
            {"p99_ms", percentile(all, 99)}, {"ingest", inproc_ingest}};
  std::cout << inproc.dump() << std::endl;
  if (slowest) {
    std::vector<std::pair<double, size_t>> all_q;
    for (auto& v : by_query) all_q.insert(all_q.end(), v.begin(), v.end());
    std::sort(all_q.rbegin(), all_q.rend());
    for (size_t i = 0; i < slowest && i < all_q.size(); ++i)
      std::cout << json{{"bench", "server"}, {"slow_query_ms", all_q[i].first}, {"query", texts[all_q[i].second]}}.dump()
                << std::endl;
  }
  return inproc;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_server: eagle serve under load vs in-process (JSON lines)"};
  std::string store, beir, split = "dev", ingest_beir, ns = "biomed", eagle_bin, glove;
  int seconds = 60, clients = 16;
  size_t slowest = 0;
  bool hostile = false;
  eagle::bench::HostileClients::Plan attack;
  uint64_t chunked_mib = 300;
  std::string proxy_conf, peer_eagle;
  int peer_rounds = 2;
  app.add_option("--store", store, "store to serve (copied first; build it with eagle ingest)")->required();
  app.add_option("--beir", beir, "BEIR folder whose queries are sent")->required();
  app.add_option("--split", split, "qrels split of the queries")->capture_default_str();
  app.add_option("--ingest", ingest_beir, "BEIR folder ingested through the server during the load (empty: none)");
  app.add_option("--namespace", ns, "plugin namespace of the searches")->capture_default_str();
  app.add_option("--seconds", seconds, "seconds per phase")->capture_default_str();
  app.add_option("--clients", clients, "concurrent clients (wrk connections; in-process threads)")->capture_default_str();
  app.add_option("--eagle", eagle_bin, "the eagle binary (default: beside this one)");
  app.add_option("--glove", glove, "converted GloVe file (default: the configuration's)");
  app.add_option("--slowest", slowest, "also print the N slowest queries of the in-process phase");
  app.add_flag("--hostile", hostile,
               "3. hostile phase: a server with a token, measured without and then with attackers that hold "
               "--idle and --slowloris connections and stream a --chunked-mib body without a token");
  app.add_option("--idle", attack.idle, "hostile phase: connections that send nothing")->capture_default_str();
  app.add_option("--slowloris", attack.slowloris, "hostile phase: connections that never finish their headers")
      ->capture_default_str();
  app.add_option("--chunked-mib", chunked_mib, "hostile phase: MiB of the chunked body sent without a token")
      ->capture_default_str();
  app.add_option("--proxy-conf", proxy_conf,
                 "hostile phase: put nginx in front, with this configuration (docs/deploy/nginx.conf; its listen "
                 "becomes plain HTTP on a free port, its upstream the server), and aim clients and attackers at it");
  app.add_option("--peer-eagle", peer_eagle,
                 "4. peer phase: the same clients against this eagle binary's server and the given one's, "
                 "alternating, on a fresh copy of the store (no ingest)");
  app.add_option("--peer-rounds", peer_rounds, "peer phase: turns per binary")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    if (eagle_bin.empty()) eagle_bin = (fs::path(argv[0]).parent_path() / "eagle").string();
    const fs::path work = fs::temp_directory_path() / ("eagle_bench_server_" + std::to_string(::getpid()));
    fs::remove_all(work);
    fs::create_directories(work);
    // Each phase gets its own copy: both start from the same data and both take the
    // same ingest, so the only difference left is the HTTP server.
    const fs::path copy = work / "store", inproc_copy = work / "store-in-process";
    fs::copy(store, copy, fs::copy_options::recursive);
    fs::copy(store, inproc_copy, fs::copy_options::recursive);
    fs::remove(copy / "LOCK");
    fs::remove(inproc_copy / "LOCK");
    auto queries = eagle::eval::load_beir(beir, split).queries;
    std::vector<std::string> texts, bodies;
    for (const auto& q : queries) {
      texts.push_back(q.text);
      bodies.push_back(json{{"query", q.text}, {"top_k", 10}, {"plugin_namespace", ns}}.dump());
    }
    auto wrk_version = read_file(work / "none");
    {
      pid_t p = spawn({"wrk", "--version"}, work / "wrk-version");
      int st;
      ::waitpid(p, &st, 0);
      wrk_version = read_file(work / "wrk-version");
      wrk_version = wrk_version.substr(0, wrk_version.find('\n'));
    }
    std::cout << json{{"bench", "server"}, {"eagle_build", "-O2 -march=x86-64-v2 (CMake Release)"},
                      {"peer", "wrk from Debian: " + wrk_version}, {"queries", texts.size()},
                      {"clients", clients}, {"seconds", seconds}, {"namespace", ns},
                      {"cores", std::thread::hardware_concurrency()}}
                     .dump()
              << std::endl;

    const json inproc = in_process_phase({inproc_copy, glove, ns, ingest_beir, clients, seconds, texts, slowest});

    // 2. The server, loaded by wrk while an ingest runs through it.
    const fs::path ingest_root = ingest_beir.empty() ? work : fs::path(ingest_beir).parent_path();
    std::vector<std::string> serve_args = {eagle_bin, "--data-dir", copy.string()};
    if (!glove.empty()) serve_args.insert(serve_args.end(), {"--set", "glove.file=" + glove});
    serve_args.insert(serve_args.end(), {"serve", "--port", "0", "--namespace", ns, "--ingest-root", ingest_root.string(),
                                         "--threads", std::to_string(std::max(clients + 4, 16))});
    auto [server, port] = start_server(serve_args, work / "serve.log");
    httplib::Client http("127.0.0.1", port);
    http.set_read_timeout(60, 0);
    // Warm: every query once, so mapped files (word vectors, vocabulary) are resident
    // and per-thread scratch exists before the start figure.
    for (const auto& b : bodies) http.Post("/search", b, "application/json");
    const double rss_start = rss_mb(server), anon_start = rss_mb(server, "RssAnon:");
    std::ofstream(work / "load.lua") << wrk_script(bodies);
    json ingest = nullptr;
    double rss_peak = rss_start;
    const auto t0 = Clock::now();
    std::string task;
    // wrk starts first; the ingest two seconds into its run.
    bool ingest_started = ingest_beir.empty();
    const auto w = run_wrk(work, "load", port, clients, seconds, [&] {
      rss_peak = std::max(rss_peak, rss_mb(server));
      if (!ingest_started && secs_since(t0) >= 2) {
        ingest_started = true;
        auto r = http.Post("/ingest",
                           json{{"path", fs::path(ingest_beir).filename().string()}, {"format", "beir"}, {"plugin_namespace", ns}}.dump(),
                           "application/json");
        if (!r || r->status != 202) throw std::runtime_error("POST /ingest failed");
        task = json::parse(r->body)["task_id"];
      }
      if (!task.empty() && ingest.is_null()) {
        auto r = http.Get("/tasks/" + task);
        if (r && r->status == 200) {
          auto t = json::parse(r->body);
          if (t["state"] == "succeeded" || t["state"] == "failed")
            ingest = {{"state", t["state"]}, {"rows", t.value("result", json::object()).value("rows", 0)},
                      {"seconds", secs_since(t0) - 2}};
        }
      }
    });
    const double rss_end = rss_mb(server), anon_end = rss_mb(server, "RssAnon:");
    ::kill(server, SIGTERM);
    int st;
    ::waitpid(server, &st, 0);
    // The same store as it now is, opened by a fresh server and warmed the same way:
    // what the grown data costs by itself, so growth beyond it is the server's.
    double rss_fresh = 0, anon_fresh = 0;
    {
      auto [fresh, fport] = start_server(serve_args, work / "serve-fresh.log");
      httplib::Client fh("127.0.0.1", fport);
      fh.set_read_timeout(60, 0);
      for (const auto& b : bodies) fh.Post("/search", b, "application/json");
      rss_fresh = rss_mb(fresh);
      anon_fresh = rss_mb(fresh, "RssAnon:");
      ::kill(fresh, SIGTERM);
      ::waitpid(fresh, &st, 0);
    }
    json srv = wrk_figures(w);
    srv.update({{"bench", "server"},
                {"phase", "server"},
                {"rss_start_mb", rss_start},
                {"rss_end_mb", rss_end},
                {"rss_peak_mb", rss_peak},
                {"rss_anon_start_mb", anon_start},
                {"rss_anon_end_mb", anon_end},
                {"rss_fresh_same_store_mb", rss_fresh},
                {"rss_anon_fresh_same_store_mb", anon_fresh},
                {"ingest", ingest}});
    std::cout << srv.dump() << std::endl;
    json ratios = {{"bench", "server"},
                   {"phase", "ratios"},
                   {"server_qps_over_in_process", srv["qps"].get<double>() / inproc["qps"].get<double>()},
                   {"server_p99_over_p50", srv["p99_ms"].get<double>() / srv["p50_ms"].get<double>()},
                   {"rss_growth", (rss_end - rss_start) / rss_start},
                   {"rss_end_over_fresh_same_store", rss_end / rss_fresh},
                   {"goals", {{"qps_ratio_min", 0.7}, {"p99_over_p50_max", 5}, {"rss_growth_max", 0.1}, {"non_2xx", 0}}}};
    std::cout << ratios.dump() << std::endl;
    if (hostile) {
      attack.chunked_bytes = chunked_mib << 20;
      hostile_phase({work, serve_args, bodies, clients, seconds, attack, proxy_conf});
    }
    if (!peer_eagle.empty()) peer_phase(work, store, serve_args, peer_eagle, bodies, clients, seconds, peer_rounds);
    fs::remove_all(work);
  } catch (const std::exception& e) {
    std::cerr << "bench_server: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
