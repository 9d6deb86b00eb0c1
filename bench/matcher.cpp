// bench_matcher: the biomedical vocabulary and entity matcher.
//
// 1. Loads the full vocabulary (DrugBank, human genes, MeSH, DOID, UMLS sample) with
//    Vocabulary::load_cached. When the cache is missing or stale it is built and a
//    {"phase":"build"} line reports parse, compile and write times.
// 2. Drops that vocabulary and loads it again from the cache file in the same
//    process (load_s). The file was just written or read, so it is in the page cache:
//    load_s measures deserialising and validating, not the disk — the figure a
//    restarting server sees on a warm machine.
// 3. Matches every BioASQ snippet (title + text) single-threaded (match_s).
// 4. The peer: a brute-force oracle (std::string::find of every surface, same rules)
//    on a 200-snippet sample; both must agree exactly ("oracle_agree":true), and the
//    ratio of their times is printed.
// One JSON object per line; exit status 1 when the oracle disagrees.
#include "eagle/app/build_paths.h"
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "eagle/biomed/vocab/entity_matcher.h"
#include "eagle/biomed/vocab/vocabulary.h"
#include "eagle/core/error.h"
#include "eagle/ingest/corpus_reader.h"

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using namespace eagle::biomed;

namespace {

double secs(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

const char* outcome_name(CacheOutcome o) {
  switch (o) {
    case CacheOutcome::loaded: return "loaded";
    case CacheOutcome::built_missing: return "built_missing";
    case CacheOutcome::built_stale: return "built_stale";
    case CacheOutcome::built_corrupt: return "built_corrupt";
  }
  return "?";
}

bool same(const std::vector<EntityMatch>& a, const std::vector<EntityMatch>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].start != b[i].start || a[i].end != b[i].end || a[i].entity != b[i].entity) return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string vocab_dir = std::string(eagle::app::build_shared_data()) + "/vocab";
  std::string corpus = std::string(eagle::app::build_shared_data()) + "/bioasq/corpus.jsonl";
  std::string cache =
      (fs::temp_directory_path() / ("eagle-bench-vocab-" + std::to_string(getuid()) + ".bin")).string();
  size_t oracle_sample = 200;
  size_t top = 0;
  bool rebuild = false;
  CLI::App app{"Vocabulary load and entity matcher benchmark (JSON lines)"};
  app.add_option("--vocab", vocab_dir, "vocabulary folder (shared data layout)");
  app.add_option("--cache", cache, "binary vocabulary cache file");
  app.add_option("--corpus", corpus, "BEIR corpus.jsonl whose snippets are matched");
  app.add_option("--oracle-sample", oracle_sample, "snippets checked against the brute-force oracle");
  app.add_option("--top", top, "also print the N most frequent matched surfaces per type");
  app.add_flag("--rebuild", rebuild, "delete the cache first (measure the build)");
  CLI11_PARSE(app, argc, argv);

  try {
    const VocabularyPaths paths = default_vocabulary_paths(vocab_dir);
    if (rebuild) fs::remove(cache);
    {
      CacheReport report;
      Vocabulary first = Vocabulary::load_cached(paths, cache, &report);
      if (report.outcome != CacheOutcome::loaded) {
        const auto& st = first.stats();
        std::cout << json{{"bench", "matcher"},
                          {"phase", "build"},
                          {"cache", outcome_name(report.outcome)},
                          {"reason", report.reason},
                          {"parse_s", report.parse_seconds},
                          {"compile_s", report.compile_seconds},
                          {"write_s", report.cache_seconds},
                          {"entities", first.size()},
                          {"surfaces", st.surfaces},
                          {"surface_conflicts", st.surface_conflicts},
                          {"surfaces_dropped", st.surfaces_dropped},
                          {"merged", st.merged},
                          {"drugbank", st.drugbank_drugs},
                          {"genes", st.genes},
                          {"mesh", st.mesh_terms},
                          {"obo", st.obo_terms},
                          {"umls", st.umls_concepts},
                          {"cache_bytes", fs::file_size(cache)}}
                         .dump()
                  << std::endl;
      }
    }

    auto t0 = Clock::now();
    CacheReport report;
    Vocabulary vocab = Vocabulary::load_cached(paths, cache, &report);
    const double load_s = secs(t0);
    if (report.outcome != CacheOutcome::loaded)
      throw eagle::Error(eagle::ErrorCode::internal, "cache was not reused: " + report.reason);
    EntityMatcher matcher(vocab);

    eagle::ingest::ReadOptions ro;
    ro.format = eagle::ingest::InputFormat::beir;
    auto docs = eagle::ingest::read_corpus(corpus, ro).documents;
    std::vector<std::string> snippets;
    snippets.reserve(docs.size());
    size_t text_bytes = 0;
    for (const auto& d : docs) {
      snippets.push_back(d.indexed_text());
      text_bytes += snippets.back().size();
    }

    std::map<std::string, size_t> by_type;
    std::map<std::string, std::map<std::string, size_t>> surfaces;
    size_t n_matches = 0;
    t0 = Clock::now();
    for (const auto& s : snippets) {
      auto m = matcher.match_entities(s);
      n_matches += m.size();
      for (const auto& x : m) ++by_type[entity_type_name(x.type)];
      if (top)
        for (const auto& x : m) ++surfaces[entity_type_name(x.type)][x.text];
    }
    const double match_s = secs(t0);
    std::cout << json{{"bench", "matcher"},
                      {"load_s", load_s},
                      {"match_s", match_s},
                      {"bytes", vocab.memory_bytes() + matcher.memory_bytes()},
                      {"entities", vocab.size()},
                      {"surfaces", vocab.stats().surfaces},
                      {"states", vocab.automaton()->state_slots()},
                      {"snippets", snippets.size()},
                      {"text_mb", static_cast<double>(text_bytes) / 1e6},
                      {"mb_per_s", static_cast<double>(text_bytes) / 1e6 / match_s},
                      {"matches", n_matches},
                      {"by_type", by_type}}
                     .dump()
              << std::endl;

    // The oracle on an evenly spaced sample.
    std::vector<const std::string*> sample;
    const size_t n = std::min(oracle_sample, snippets.size());
    for (size_t i = 0; i < n; ++i) sample.push_back(&snippets[i * snippets.size() / n]);
    BruteForceMatcher oracle(matcher);
    t0 = Clock::now();
    std::vector<std::vector<EntityMatch>> fast;
    for (const auto* s : sample) fast.push_back(matcher.match_entities(*s));
    const double fast_s = secs(t0);
    t0 = Clock::now();
    bool agree = true;
    size_t oracle_matches = 0, first_bad = 0;
    for (size_t i = 0; i < sample.size(); ++i) {
      auto slow = oracle.match_entities(*sample[i]);
      oracle_matches += slow.size();
      if (agree && !same(slow, fast[i])) {
        agree = false;
        first_bad = i;
      }
    }
    const double oracle_s = secs(t0);
    json line{{"bench", "matcher"},        {"peer", "brute_force_oracle"},
              {"snippets", sample.size()}, {"matcher_s", fast_s},
              {"oracle_s", oracle_s},      {"speedup", oracle_s / std::max(fast_s, 1e-9)},
              {"matches", oracle_matches}, {"oracle_agree", agree}};
    if (!agree) {
      line["first_disagreement"] = *sample[first_bad];
      line["matcher"] = matches_to_json(vocab, fast[first_bad]);
      line["oracle"] = matches_to_json(vocab, oracle.match_entities(*sample[first_bad]));
    }
    std::cout << line.dump() << std::endl;

    if (top) {
      for (auto& [type, counts] : surfaces) {
        std::vector<std::pair<size_t, std::string>> v;
        for (auto& [s, c] : counts) v.emplace_back(c, s);
        std::sort(v.rbegin(), v.rend());
        if (v.size() > top) v.resize(top);
        json list = json::array();
        for (auto& [c, s] : v) list.push_back({s, c});
        std::cout << json{{"bench", "matcher"}, {"top_surfaces", type}, {"surfaces", list}}.dump()
                  << std::endl;
      }
    }
    return agree ? 0 : 1;
  } catch (const eagle::Error& e) {
    std::cerr << "bench_matcher: " << e.what() << std::endl;
    return 2;
  }
}
