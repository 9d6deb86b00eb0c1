// bench_ingest: the memory and time of a large ingest on the user's path (`eagle
// ingest` of a JSONL file, as a subprocess), against the corpus size, with SQLite's
// FTS5 indexing the same file in the same run as the peer (an embedded engine with a
// bounded page cache; it builds a lexical index only, where Eagle also embeds each
// row and builds BM25, HNSW and scalar indexes).
//
// The corpus is made from the BioASQ snippets (eval::write_spliced_corpus: one
// snippet-sized row each, no row repeated). Each process's peak RSS comes from
// wait4's rusage. Also printed: the peak RSS of `eagle search` on the finished store
// (what serving it costs) and the store's size on disk. JSON lines.
#include <CLI/CLI.hpp>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "bench_support.h"
#include "eagle/eval/synthetic_corpus.h"
#include "eagle/ingest/corpus_reader.h"

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

struct ChildRun {
  int status = 0;
  long peak_rss_kb = 0;
  double seconds = 0;
};

// Runs argv as a child process (stdout and stderr to `log`) and waits for it.
ChildRun run_child(const std::vector<std::string>& args, const fs::path& log) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const auto t0 = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    if (!std::freopen(log.c_str(), "w", stdout) || !std::freopen(log.c_str(), "a", stderr)) ::_exit(126);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ChildRun r;
  struct rusage ru {};
  if (::wait4(pid, &r.status, 0, &ru) != pid) throw std::runtime_error("wait4 failed");
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.peak_rss_kb = ru.ru_maxrss;
  return r;
}

// The peer, in its own process: every record of `corpus` into an FTS5 table in one
// transaction, with SQLite's defaults (2 MB page cache).
int sqlite_child(const std::string& corpus, const std::string& db_file) {
  sqlite3* db = nullptr;
  if (sqlite3_open(db_file.c_str(), &db) != SQLITE_OK) return 2;
  auto exec = [&](const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::cerr << "sqlite: " << (err ? err : "?") << "\n";
      std::exit(3);
    }
  };
  exec("CREATE VIRTUAL TABLE docs USING fts5(id UNINDEXED, title, text)");
  exec("BEGIN");
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO docs(id, title, text) VALUES (?, ?, ?)", -1, &st, nullptr);
  std::ifstream in(corpus);
  std::string line;
  uint64_t rows = 0;
  while (std::getline(in, line)) {
    const auto j = json::parse(line);
    const auto id = j.at("_id").get<std::string>(), title = j.value("title", ""), text = j.at("text").get<std::string>();
    sqlite3_bind_text(st, 1, id.c_str(), static_cast<int>(id.size()), SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, title.c_str(), static_cast<int>(title.size()), SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, text.c_str(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    if (sqlite3_step(st) != SQLITE_DONE) return 4;
    sqlite3_reset(st);
    ++rows;
  }
  sqlite3_finalize(st);
  exec("COMMIT");
  sqlite3_close(db);
  std::cout << rows << " rows\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--sqlite-child") return sqlite_child(argv[2], argv[3]);
  CLI::App app{"bench_ingest: peak memory and time of a large `eagle ingest` vs the corpus size (JSON lines)"};
  std::string beir, work, eagle_bin;
  uint64_t rows = 1000000;
  std::string query = "Which gene is mutated in cystic fibrosis?";
  bool peer = true;
  app.add_option("--beir", beir, "BEIR folder whose passages make the corpus (BioASQ)")->required();
  app.add_option("--rows", rows, "rows in the generated corpus")->capture_default_str();
  app.add_option("--work", work, "folder for the corpus and stores (default: a temporary folder, removed)");
  app.add_option("--eagle", eagle_bin, "the eagle binary (default: beside this one)");
  app.add_option("--peer", peer, "also index the corpus with SQLite FTS5")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    if (eagle_bin.empty()) eagle_bin = (fs::canonical("/proc/self/exe").parent_path() / "eagle").string();
    const bool temporary = work.empty();
    const fs::path root = temporary ? fs::temp_directory_path() / ("eagle_bench_ingest_" + std::to_string(::getpid()))
                                    : fs::path(work);
    fs::create_directories(root);
    eagle::ingest::ReadOptions ro;
    ro.format = eagle::ingest::InputFormat::beir;
    const auto passages = eagle::ingest::read_corpus(beir, ro).documents;
    const fs::path corpus = root / ("corpus-" + std::to_string(rows) + ".jsonl");
    const uint64_t corpus_bytes = eagle::eval::write_spliced_corpus(passages, rows, corpus);
    std::cout << json{{"bench", "ingest"}, {"build_flags", "-O2 -march=x86-64-v2 (CMake Release)"},
                      {"passages", beir}, {"passages_read", passages.size()}, {"rows", rows},
                      {"corpus_bytes", corpus_bytes}, {"peer", "SQLite FTS5, Debian libsqlite3 " + std::string(sqlite3_libversion()) + ", default pragmas, one transaction"}}
                     .dump()
              << std::endl;

    const fs::path store = root / "store";
    fs::remove_all(store);
    auto ing = run_child({eagle_bin, "--data-dir", store.string(), "ingest", corpus.string()}, root / "ingest.log");
    if (ing.status != 0) throw std::runtime_error("eagle ingest failed; see " + (root / "ingest.log").string());
    const double rss_bytes = static_cast<double>(ing.peak_rss_kb) * 1024.0;
    std::cout << json{{"bench", "ingest"}, {"engine", "eagle"}, {"step", "ingest"}, {"rows", rows},
                      {"corpus_bytes", corpus_bytes}, {"peak_rss_kb", ing.peak_rss_kb},
                      {"peak_rss_per_corpus_byte", rss_bytes / static_cast<double>(corpus_bytes)},
                      {"peak_rss_bytes_per_row", rss_bytes / static_cast<double>(rows)},
                      {"seconds", ing.seconds}, {"rows_per_second", static_cast<double>(rows) / ing.seconds},
                      {"store_bytes", eagle::bench::folder_bytes(store)}}
                     .dump()
              << std::endl;
    auto search = run_child({eagle_bin, "--data-dir", store.string(), "search", "-k", "10", query}, root / "search.log");
    if (search.status != 0) throw std::runtime_error("eagle search failed; see " + (root / "search.log").string());
    std::cout << json{{"bench", "ingest"}, {"engine", "eagle"}, {"step", "open_and_search"}, {"rows", rows},
                      {"peak_rss_kb", search.peak_rss_kb},
                      {"peak_rss_per_corpus_byte", static_cast<double>(search.peak_rss_kb) * 1024.0 /
                                                       static_cast<double>(corpus_bytes)},
                      {"seconds", search.seconds}}
                     .dump()
              << std::endl;
    if (peer) {
      const fs::path db = root / "fts5.db";
      fs::remove(db);
      auto fts = run_child({fs::canonical("/proc/self/exe").string(), "--sqlite-child", corpus.string(), db.string()},
                           root / "sqlite.log");
      if (fts.status != 0) throw std::runtime_error("the SQLite peer failed; see " + (root / "sqlite.log").string());
      std::cout << json{{"bench", "ingest"}, {"engine", "sqlite-fts5"}, {"step", "ingest"}, {"rows", rows},
                        {"peak_rss_kb", fts.peak_rss_kb},
                        {"peak_rss_per_corpus_byte",
                         static_cast<double>(fts.peak_rss_kb) * 1024.0 / static_cast<double>(corpus_bytes)},
                        {"seconds", fts.seconds}, {"rows_per_second", static_cast<double>(rows) / fts.seconds},
                        {"store_bytes", fs::file_size(db)},
                        {"eagle_to_peer_seconds", ing.seconds / fts.seconds},
                        {"eagle_to_peer_peak_rss", static_cast<double>(ing.peak_rss_kb) /
                                                       static_cast<double>(fts.peak_rss_kb)}}
                       .dump()
                << std::endl;
    }
    if (temporary) fs::remove_all(root);
  } catch (const std::exception& e) {
    std::cerr << "bench_ingest: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
