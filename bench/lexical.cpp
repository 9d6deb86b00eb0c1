// bench_lexical: Eagle's BM25 (MaxScore) against Xapian on one BEIR set, in one run.
// Each engine runs in its own forked child so its resident memory is its own; both
// read the same corpus and queries and are scored with the same trec_eval-exact
// metrics. Prints one JSON object per line.
//
// Xapian setup: BM25Weight(k1=0.9, k2=0, k3=1, b=0.4, min_normlen=0.5), English
// stemmer (TermGenerator/QueryParser STEM_SOME, their defaults), OP_OR query.
#include <sys/wait.h>
#include <unistd.h>
#include <xapian.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "eagle/core/error.h"
#include "eagle/eval/beir.h"
#include "eagle/eval/lexical_run.h"
#include "eagle/eval/metrics.h"
#include "eagle/ingest/corpus_reader.h"

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double secs(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

uint64_t rss_bytes() {
  std::ifstream in("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

uint64_t dir_bytes(const fs::path& p) {
  uint64_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(p))
    if (e.is_regular_file()) n += e.file_size();
  return n;
}

struct Inputs {
  std::vector<eagle::Document> docs;
  eagle::eval::BeirSet set;
};

// Times `search(q, k)` over all queries `repeat` times; returns queries/s.
template <typename F>
double time_queries(const std::vector<eagle::eval::Query>& qs, size_t k, int repeat, F&& search) {
  for (size_t i = 0; i < std::min<size_t>(qs.size(), 50); ++i) search(qs[i].text, k);  // warm
  auto t0 = Clock::now();
  for (int r = 0; r < repeat; ++r)
    for (const auto& q : qs) search(q.text, k);
  return static_cast<double>(qs.size() * repeat) / secs(t0);
}

void emit(json j) { std::cout << j.dump() << std::endl; }

void run_eagle(const Inputs& in, int repeat, const std::string& dataset) {
  const uint64_t rss0 = rss_bytes();
  auto t0 = Clock::now();
  auto idx = eagle::eval::build_bm25(in.docs, {}, {});
  idx.search("warm", 1);  // computes the collection statistics: part of the build
  const double build_s = secs(t0);
  const uint64_t rss = rss_bytes();
  auto st = idx.stats();
  auto run = eagle::eval::run_bm25(idx, in.docs, in.set.queries, 100);
  const double ndcg10 = eagle::eval::evaluate(in.set.qrels, run).mean("ndcg_cut_10");
  for (size_t k : {size_t{10}, size_t{100}}) {
    size_t sink = 0;
    double qps = time_queries(in.set.queries, k, repeat, [&](const std::string& q, size_t kk) {
      sink += idx.search(q, kk).size();
    });
    emit({{"bench", "lexical"}, {"engine", "eagle"}, {"dataset", dataset}, {"k", k}, {"qps", qps},
          {"ndcg10", ndcg10}, {"build_s", build_s}, {"docs", in.docs.size()},
          {"queries", in.set.queries.size()}, {"index_bytes", st.postings_bytes},
          {"rss_bytes", rss}, {"rss_index_delta_bytes", rss - rss0}, {"threads", 1},
          {"hits", sink}});
  }
}

void run_xapian(const Inputs& in, int repeat, const std::string& dataset) {
  const uint64_t rss0 = rss_bytes();
  char tmpl[] = "/tmp/eagle-xapian-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  const fs::path dir = tmpl;
  auto t0 = Clock::now();
  {
    Xapian::WritableDatabase db((dir / "db").string(), Xapian::DB_CREATE_OR_OVERWRITE);
    Xapian::TermGenerator tg;
    tg.set_stemmer(Xapian::Stem("english"));
    for (const auto& d : in.docs) {
      Xapian::Document doc;
      tg.set_document(doc);
      tg.index_text(d.indexed_text());
      doc.set_data(d.id);
      db.add_document(doc);
    }
    db.commit();
  }
  const double build_s = secs(t0);
  const uint64_t index_bytes = dir_bytes(dir);
  Xapian::Database db((dir / "db").string());
  Xapian::Enquire enquire(db);
  enquire.set_weighting_scheme(Xapian::BM25Weight(0.9, 0, 1, 0.4, 0.5));
  Xapian::QueryParser qp;
  qp.set_stemmer(Xapian::Stem("english"));
  qp.set_stemming_strategy(Xapian::QueryParser::STEM_SOME);
  qp.set_database(db);
  qp.set_default_op(Xapian::Query::OP_OR);
  auto search = [&](const std::string& q, size_t k) {
    enquire.set_query(qp.parse_query(q));
    return enquire.get_mset(0, static_cast<Xapian::doccount>(k));
  };
  const uint64_t rss = rss_bytes();
  eagle::eval::Run run;
  for (const auto& q : in.set.queries) {
    auto mset = search(q.text, 100);
    auto& entries = run[q.id];
    for (auto it = mset.begin(); it != mset.end(); ++it)
      entries.push_back({it.get_document().get_data(), eagle::eval::round_score_for_run(it.get_weight())});
  }
  const double ndcg10 = eagle::eval::evaluate(in.set.qrels, run).mean("ndcg_cut_10");
  for (size_t k : {size_t{10}, size_t{100}}) {
    size_t sink = 0;
    double qps = time_queries(in.set.queries, k, repeat, [&](const std::string& q, size_t kk) {
      sink += search(q, kk).size();
    });
    emit({{"bench", "lexical"}, {"engine", "xapian"}, {"dataset", dataset}, {"k", k}, {"qps", qps},
          {"ndcg10", ndcg10}, {"build_s", build_s}, {"docs", in.docs.size()},
          {"queries", in.set.queries.size()}, {"index_bytes", index_bytes}, {"rss_bytes", rss},
          {"rss_index_delta_bytes", rss - rss0}, {"threads", 1}, {"hits", sink}});
  }
  fs::remove_all(dir);
}

// Runs `fn` in a child process so each engine's memory and caches are its own.
int in_child(const std::function<void()>& fn) {
  std::cout.flush();
  pid_t pid = fork();
  if (pid == 0) {
    try {
      fn();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_lexical: %s\n", e.what());
      _exit(1);
    }
    std::cout.flush();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_lexical: Eagle BM25 vs Xapian on a BEIR set (JSON lines)"};
  std::string beir, split = "test", engines = "eagle,xapian";
  int repeat = 3;
  app.add_option("--beir", beir, "BEIR folder (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv)")->required();
  app.add_option("--split", split, "qrels split")->capture_default_str();
  app.add_option("--repeat", repeat, "timed passes over the queries")->capture_default_str()->check(CLI::Range(1, 100));
  app.add_option("--engines", engines, "comma-separated: eagle, xapian")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    Inputs in;
    in.set = eagle::eval::load_beir(beir, split);
    eagle::ingest::ReadOptions ro;
    ro.format = eagle::ingest::InputFormat::beir;
    in.docs = eagle::ingest::read_corpus(beir, ro).documents;
    const std::string dataset = fs::path(beir).filename().string();
    int rc = 0;
    if (engines.find("eagle") != std::string::npos) rc |= in_child([&] { run_eagle(in, repeat, dataset); });
    if (engines.find("xapian") != std::string::npos) rc |= in_child([&] { run_xapian(in, repeat, dataset); });
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_lexical: %s\n", e.what());
    return 2;
  }
}
