#include "eagle/eval/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "eagle/core/error.h"

namespace eagle::eval {

void sort_run(Run& run) {
  for (auto& [qid, entries] : run) {
    std::sort(entries.begin(), entries.end(), [](const RunEntry& a, const RunEntry& b) {
      if (a.score != b.score) return a.score > b.score;
      return a.doc > b.doc;  // trec_eval: equal scores, larger docno first
    });
  }
}

double round_score_for_run(double score) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6f", score);
  return std::strtod(buf, nullptr);
}

void write_trec_run(std::ostream& out, const Run& run, const std::string& tag) {
  Run sorted = run;
  sort_run(sorted);
  char buf[64];
  for (const auto& [qid, entries] : sorted) {
    int rank = 1;
    for (const auto& e : entries) {
      std::snprintf(buf, sizeof(buf), "%.6f", e.score);
      out << qid << " Q0 " << e.doc << ' ' << rank++ << ' ' << buf << ' ' << tag << '\n';
    }
  }
}

Run read_trec_run(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) fail(ErrorCode::not_found, "cannot open run " + file.string());
  Run run;
  std::string line;
  uint64_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    std::istringstream ls(line);
    std::string qid, q0, doc, tag;
    int rank;
    double score;
    if (!(ls >> qid >> q0 >> doc >> rank >> score)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      fail(ErrorCode::invalid_argument,
           file.string() + ":" + std::to_string(lineno) + ": expected `qid Q0 docid rank score tag`");
    }
    run[qid].push_back({doc, score});
  }
  return run;
}

double EvalReport::mean(const std::string& name) const {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return means[i];
  fail(ErrorCode::not_found, "metric " + name + " was not computed");
}

EvalReport evaluate(const Qrels& qrels, Run run, const MetricSet& m) {
  sort_run(run);
  EvalReport rep;
  for (int k : m.ndcg_cuts) rep.names.push_back("ndcg_cut_" + std::to_string(k));
  for (int k : m.recall_cuts) rep.names.push_back("recall_" + std::to_string(k));
  for (int k : m.precision_cuts) rep.names.push_back("P_" + std::to_string(k));
  for (int k : m.hit_cuts) rep.names.push_back("hit_" + std::to_string(k));
  if (m.mrr) rep.names.push_back("recip_rank");
  if (m.map) rep.names.push_back("map");
  rep.means.assign(rep.names.size(), 0.0);

  static const std::vector<RunEntry> kEmpty;
  for (const auto& [qid, judged] : qrels) {
    std::vector<int> ideal;
    for (const auto& [doc, rel] : judged)
      if (rel > 0) ideal.push_back(rel);
    const size_t num_rel = ideal.size();
    if (num_rel == 0) continue;  // trec_eval: nothing to find, query not averaged
    std::sort(ideal.rbegin(), ideal.rend());
    auto it = run.find(qid);
    const auto& ranked = it == run.end() ? kEmpty : it->second;

    std::vector<int> grade(ranked.size(), 0);
    for (size_t i = 0; i < ranked.size(); ++i) {
      auto j = judged.find(ranked[i].doc);
      if (j != judged.end() && j->second > 0) grade[i] = j->second;
    }
    QueryScores qs;
    qs.qid = qid;
    for (int k : m.ndcg_cuts) {
      double dcg = 0, idcg = 0;
      for (size_t i = 0; i < ranked.size() && i < static_cast<size_t>(k); ++i)
        dcg += grade[i] / std::log2(static_cast<double>(i) + 2.0);
      for (size_t i = 0; i < ideal.size() && i < static_cast<size_t>(k); ++i)
        idcg += ideal[i] / std::log2(static_cast<double>(i) + 2.0);
      qs.values.push_back(idcg > 0 ? dcg / idcg : 0.0);
    }
    auto rel_in_top = [&](int k) {
      size_t c = 0;
      for (size_t i = 0; i < ranked.size() && i < static_cast<size_t>(k); ++i) c += grade[i] > 0;
      return c;
    };
    for (int k : m.recall_cuts) qs.values.push_back(static_cast<double>(rel_in_top(k)) / num_rel);
    for (int k : m.precision_cuts) qs.values.push_back(static_cast<double>(rel_in_top(k)) / k);
    for (int k : m.hit_cuts) qs.values.push_back(rel_in_top(k) > 0 ? 1.0 : 0.0);
    if (m.mrr) {
      double rr = 0;
      for (size_t i = 0; i < ranked.size(); ++i)
        if (grade[i] > 0) {
          rr = 1.0 / static_cast<double>(i + 1);
          break;
        }
      qs.values.push_back(rr);
    }
    if (m.map) {
      double sum = 0;
      size_t found = 0;
      for (size_t i = 0; i < ranked.size(); ++i)
        if (grade[i] > 0) sum += static_cast<double>(++found) / static_cast<double>(i + 1);
      qs.values.push_back(sum / num_rel);
    }
    for (size_t v = 0; v < qs.values.size(); ++v) rep.means[v] += qs.values[v];
    rep.per_query.push_back(std::move(qs));
  }
  rep.queries = rep.per_query.size();
  if (rep.queries)
    for (auto& v : rep.means) v /= static_cast<double>(rep.queries);
  return rep;
}

void write_summary(std::ostream& out, const EvalReport& r) {
  out << std::left << std::setw(16) << "metric" << "  value   (" << r.queries << " queries)\n";
  for (size_t i = 0; i < r.names.size(); ++i)
    out << std::left << std::setw(16) << r.names[i] << "  " << std::fixed << std::setprecision(4)
        << r.means[i] << '\n';
}

void write_per_query_csv(std::ostream& out, const EvalReport& r, const std::map<std::string, std::string>* extra,
                         const std::string& extra_name) {
  out << "qid";
  for (const auto& n : r.names) out << ',' << n;
  if (extra) out << ',' << extra_name;
  out << '\n';
  for (const auto& q : r.per_query) {
    // Query ids are opaque strings: quote them if they could break the CSV.
    if (q.qid.find_first_of(",\"\n") != std::string::npos) {
      out << '"';
      for (char c : q.qid) out << (c == '"' ? "\"\"" : std::string(1, c));
      out << '"';
    } else {
      out << q.qid;
    }
    for (double v : q.values) out << ',' << std::fixed << std::setprecision(6) << v;
    if (extra) {
      auto it = extra->find(q.qid);
      out << ',' << (it == extra->end() ? std::string() : it->second);
    }
    out << '\n';
  }
}

}  // namespace eagle::eval
