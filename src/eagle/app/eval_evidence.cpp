#include "eagle/app/eval_evidence.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "eagle/app/progress.h"
#include "eagle/core/error.h"

namespace eagle::app {
namespace {
using nlohmann::json;

constexpr size_t kTop = 3;            // hits whose evidence makes a response's level
constexpr double kStrongPrecision = 0.90;
constexpr double kMaxFalseNone = 0.05;

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

struct HitRow {
  std::array<double, 4> x{};  // coverage, top_term, entities, bm25
  bool relevant = false;
};

struct QueryRow {
  std::string id, dataset;
  bool held_out = false;  // its judged documents were filtered out
  bool fit = false;       // in the fit half
  std::vector<HitRow> hits;
  bool answered() const {
    for (const auto& h : hits)
      if (h.relevant) return true;
    return false;
  }
};

double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

double p_of(const std::array<double, 5>& w, const std::array<double, 4>& x) {
  return sigmoid(w[0] + w[1] * x[0] + w[2] * x[1] + w[3] * x[2] + w[4] * x[3]);
}

// Logistic regression by Newton's method (IRLS) with an L2 penalty on the weights.
std::array<double, 5> fit_logistic(const std::vector<std::pair<std::array<double, 4>, bool>>& data) {
  std::array<double, 5> w{};
  const double l2 = 1e-3;
  for (int iter = 0; iter < 50; ++iter) {
    double g[5] = {0, 0, 0, 0, 0}, H[5][5] = {};
    for (const auto& [x, y] : data) {
      const double f[5] = {1, x[0], x[1], x[2], x[3]};
      const double p = p_of(w, x);
      for (int i = 0; i < 5; ++i) {
        g[i] += (p - (y ? 1 : 0)) * f[i];
        for (int j = 0; j < 5; ++j) H[i][j] += p * (1 - p) * f[i] * f[j];
      }
    }
    for (int i = 1; i < 5; ++i) {
      g[i] += l2 * w[i];
      H[i][i] += l2;
    }
    for (int i = 0; i < 5; ++i) H[i][i] += 1e-9;
    // Solve H d = g (5x5, Gauss-Jordan elimination with partial pivoting).
    double A[5][6];
    for (int i = 0; i < 5; ++i) {
      for (int j = 0; j < 5; ++j) A[i][j] = H[i][j];
      A[i][5] = g[i];
    }
    for (int c = 0; c < 5; ++c) {
      int piv = c;
      for (int r = c + 1; r < 5; ++r)
        if (std::abs(A[r][c]) > std::abs(A[piv][c])) piv = r;
      for (int k = 0; k < 6; ++k) std::swap(A[c][k], A[piv][k]);
      if (std::abs(A[c][c]) < 1e-12) continue;
      for (int r = 0; r < 5; ++r) {
        if (r == c) continue;
        const double m = A[r][c] / A[c][c];
        for (int k = c; k < 6; ++k) A[r][k] -= m * A[c][k];
      }
    }
    double step = 0;
    for (int i = 0; i < 5; ++i) {
      const double d = std::abs(A[i][i]) < 1e-12 ? 0 : A[i][5] / A[i][i];
      w[i] -= d;
      step = std::max(step, std::abs(d));
    }
    if (step < 1e-8) break;
  }
  return w;
}

double best_p(const QueryRow& q, const std::array<double, 5>& w) {
  double best = 0;
  for (size_t i = 0; i < q.hits.size() && i < kTop; ++i) best = std::max(best, p_of(w, q.hits[i].x));
  return best;
}

double best_coverage(const QueryRow& q) {
  double best = 0;
  for (size_t i = 0; i < q.hits.size() && i < kTop; ++i) best = std::max(best, q.hits[i].x[0]);
  return best;
}

struct Thresholds {
  double strong = 1, none = 0;
};

// Thresholds chosen on `rows` (the fit half).
Thresholds choose_thresholds(const std::vector<const QueryRow*>& rows, const std::array<double, 5>& w, double min_coverage) {
  std::vector<std::pair<double, bool>> scored;  // p1, correct (answerable and answered)
  std::vector<double> answerable_p;
  for (const auto* q : rows) {
    const double p = best_coverage(*q) < min_coverage ? 0 : best_p(*q, w);
    scored.push_back({p, !q->held_out && q->answered()});
    if (!q->held_out) answerable_p.push_back(p);
  }
  std::sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  Thresholds t;
  size_t right = 0;
  for (size_t i = 0; i < scored.size(); ++i) {
    right += scored[i].second;
    // At least 10 queries above a threshold, so one lucky query does not set it.
    if (i + 1 >= 10 && static_cast<double>(right) / static_cast<double>(i + 1) >= kStrongPrecision)
      t.strong = scored[i].first;
  }
  std::sort(answerable_p.begin(), answerable_p.end());
  if (!answerable_p.empty()) {
    const size_t allowed = static_cast<size_t>(std::floor(kMaxFalseNone * static_cast<double>(answerable_p.size())));
    t.none = allowed < answerable_p.size() ? answerable_p[allowed] : answerable_p.back();
  }
  if (t.none > t.strong) t.none = t.strong;
  return t;
}

json report(const std::vector<const QueryRow*>& rows, const std::array<double, 5>& w, const Thresholds& t,
            double min_coverage) {
  size_t strong = 0, strong_right = 0, answerable = 0, answerable_strong = 0, answerable_none = 0, unanswerable = 0,
         unanswerable_none = 0, unanswerable_strong = 0;
  std::array<double, 10> bin_p{}, bin_y{};
  std::array<size_t, 10> bin_n{};
  size_t hits = 0;
  for (const auto* q : rows) {
    const double p = best_coverage(*q) < min_coverage ? 0 : best_p(*q, w);
    const bool is_strong = p >= t.strong, is_none = p < t.none || best_coverage(*q) < min_coverage;
    if (is_strong) {
      ++strong;
      strong_right += !q->held_out && q->answered();
    }
    if (q->held_out) {
      ++unanswerable;
      unanswerable_none += is_none;
      unanswerable_strong += is_strong;
    } else {
      ++answerable;
      answerable_strong += is_strong;
      answerable_none += is_none;
    }
    for (size_t i = 0; i < q->hits.size() && i < kTop; ++i) {
      const double hp = p_of(w, q->hits[i].x);
      const size_t b = std::min<size_t>(9, static_cast<size_t>(hp * 10));
      bin_p[b] += hp;
      bin_y[b] += q->hits[i].relevant;
      ++bin_n[b];
      ++hits;
    }
  }
  double ece = 0;
  for (size_t b = 0; b < 10; ++b)
    if (bin_n[b]) ece += std::abs(bin_p[b] - bin_y[b]) / static_cast<double>(hits);
  auto share = [](size_t a, size_t b) { return b ? std::round(1e4 * static_cast<double>(a) / static_cast<double>(b)) / 1e4 : 0.0; };
  return {{"queries", rows.size()},
          {"strong_precision", share(strong_right, strong)},
          {"strong_queries", strong},
          {"answerable", answerable},
          {"answerable_strong", share(answerable_strong, answerable)},
          {"answerable_none", share(answerable_none, answerable)},
          {"unanswerable", unanswerable},
          {"unanswerable_none", share(unanswerable_none, unanswerable)},
          {"unanswerable_strong", share(unanswerable_strong, unanswerable)},
          {"ece", std::round(ece * 1e4) / 1e4}};
}

std::array<double, 5> configured(const answer::EvidenceOptions& o) {
  return {o.bias, o.w_coverage, o.w_top_term, o.w_entities, o.w_bm25};
}

std::vector<QueryRow> read_rows(const std::string& file) {
  std::ifstream in(file);
  if (!in) fail(ErrorCode::not_found, "cannot read " + file);
  std::vector<QueryRow> rows;
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    const json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) fail(ErrorCode::invalid_argument, file + ":" + std::to_string(n) + ": not JSON");
    QueryRow q;
    q.id = j.value("id", "");
    q.dataset = j.value("dataset", "");
    q.held_out = j.value("held_out", false);
    q.fit = j.value("fit", false);
    for (const auto& h : j.value("hits", json::array())) {
      HitRow r;
      r.x = {h.value("coverage", 0.0), h.value("top_term", 0.0), h.value("entities", 0.0), h.value("bm25", 0.0)};
      r.relevant = h.value("relevant", false);
      q.hits.push_back(r);
    }
    rows.push_back(std::move(q));
  }
  return rows;
}

json weights_json(const std::array<double, 5>& w) {
  auto r = [](double d) { return std::round(d * 1e3) / 1e3; };
  return {{"bias", r(w[0])}, {"w_coverage", r(w[1])}, {"w_top_term", r(w[2])}, {"w_entities", r(w[3])}, {"w_bm25", r(w[4])}};
}

void print_reports(const std::vector<QueryRow>& all, const std::array<double, 5>& fitted, const Thresholds& fitted_t,
                   const answer::EvidenceOptions& cfg) {
  std::map<std::string, std::vector<const QueryRow*>> by_dataset;
  for (const auto& q : all)
    if (!q.fit) by_dataset[q.dataset].push_back(&q);
  for (const auto& [dataset, rows] : by_dataset) {
    json line = {{"evidence_report", dataset},
                 {"half", "report"},
                 {"configured", report(rows, configured(cfg), {cfg.strong, cfg.none}, cfg.min_coverage)},
                 {"fitted", report(rows, fitted, fitted_t, cfg.min_coverage)}};
    std::printf("%s\n", line.dump().c_str());
  }
}

}  // namespace

int evidence_report(Engine& engine, const std::vector<eval::Query>& queries, const eval::Qrels& qrels,
                    const std::string& plugin_namespace, const std::string& rows_file, const std::string& dataset) {
  std::vector<const eval::Query*> sorted;
  for (const auto& q : queries) sorted.push_back(&q);
  std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->id < b->id; });
  std::ofstream out(rows_file);
  if (!out) fail(ErrorCode::unavailable, "cannot write " + rows_file);
  std::vector<QueryRow> rows;
  Progress progress("evidence");
  for (size_t i = 0; i < sorted.size(); ++i) {
    const auto& q = *sorted[i];
    const auto& judged = qrels.at(q.id);
    search::RetrievalRequest req;
    req.query = q.text;
    req.top_k = kTop;
    req.plugin_namespace = plugin_namespace;
    QueryRow row;
    row.id = q.id;
    row.dataset = dataset;
    row.held_out = i % 5 == 4;
    row.fit = fnv1a(q.id) % 2 == 0;
    if (row.held_out) {
      json ids = json::array();
      for (const auto& [doc, rel] : judged) ids.push_back(doc);
      req.filter = "not (id in " + ids.dump() + ")";
    }
    const auto resp = engine.search(req);
    const auto ev = engine.evidence_of(req, resp.hits, kTop, true);
    json hits = json::array();
    for (size_t h = 0; h < resp.hits.size() && h < ev.signals.size(); ++h) {
      bool relevant = false;
      auto rel = [&](const std::string& id) {
        auto it = judged.find(id);
        return it != judged.end() && it->second > 0;
      };
      relevant = rel(resp.hits[h].id);
      if (resp.hits[h].duplicates.is_array())
        for (const auto& d : resp.hits[h].duplicates) relevant = relevant || rel(d.value("id", ""));
      const auto& s = ev.signals[h];
      hits.push_back({{"coverage", s.coverage}, {"top_term", s.top_term}, {"entities", s.entities}, {"bm25", s.bm25},
                      {"relevant", relevant}});
      HitRow hr;
      hr.x = {s.coverage, s.top_term, s.entities, s.bm25};
      hr.relevant = relevant;
      row.hits.push_back(hr);
    }
    out << json{{"id", q.id}, {"dataset", dataset}, {"held_out", row.held_out}, {"fit", row.fit}, {"hits", hits}}.dump()
        << "\n";
    rows.push_back(std::move(row));
    progress.update(i + 1, sorted.size(), "queries");
  }
  progress.finish();
  out.close();  // read back whole below
  if (!out) fail(ErrorCode::unavailable, "cannot write " + rows_file);
  return evidence_fit(engine.config(), {rows_file});
}

int evidence_fit(const Config& cfg, const std::vector<std::string>& rows_files) {
  std::vector<QueryRow> all;
  for (const auto& f : rows_files)
    for (auto& q : read_rows(f)) all.push_back(std::move(q));
  std::vector<std::pair<std::array<double, 4>, bool>> data;
  std::vector<const QueryRow*> fit_rows;
  for (const auto& q : all) {
    if (!q.fit) continue;
    fit_rows.push_back(&q);
    for (size_t i = 0; i < q.hits.size() && i < kTop; ++i) data.push_back({q.hits[i].x, q.hits[i].relevant});
  }
  if (data.empty()) fail(ErrorCode::invalid_argument, "no fit-half hits in the evidence rows");
  const auto w = fit_logistic(data);
  const auto t = choose_thresholds(fit_rows, w, cfg.evidence.min_coverage);
  json fit = weights_json(w);
  fit["strong"] = std::round(t.strong * 1e3) / 1e3;
  fit["none"] = std::round(t.none * 1e3) / 1e3;
  std::printf("%s\n", json{{"evidence_fit", fit}, {"fit_queries", fit_rows.size()}, {"fit_hits", data.size()},
                           {"files", rows_files}}
                          .dump()
                          .c_str());
  print_reports(all, w, t, cfg.evidence);
  return 0;
}

}  // namespace eagle::app
