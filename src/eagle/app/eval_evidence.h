#pragma once
// `eagle eval --data-dir STORE --queries Q --qrels R --evidence-report ROWS`: the
// evidence model (answer/evidence.h) measured on a store's judged queries, as a user's
// searches meet it, and fitted.
//
// Unanswerable questions: the judged queries sorted by id, every 5th (index % 5 == 4)
// is searched with its judged documents filtered out (`not (id in [...])`); the
// others are answerable when a judged document is in their top 3. Fit and report
// halves: FNV-1a(query id) even = fit, odd = report. The fit is a logistic regression
// (Newton/IRLS, L2 1e-3) on the top-3 hits' signals of the fit half, label = judged
// relevant; `strong` is the lowest threshold whose fit-half precision (queries with a
// relevant top-3 hit among those at or above it; an unanswerable one counts wrong) is
// at least 0.90, `none` the highest that marks at most 5% of answerable fit queries.
// Printed for the report half: the precision of strong, the share of answerable
// queries marked strong and none, the share of unanswerable ones marked none, and the
// expected calibration error of the per-hit score over 10 bins, under the configured
// model and under the fitted one.
#include <string>
#include <vector>

#include "eagle/app/engine.h"
#include "eagle/eval/beir.h"

namespace eagle::app {

// Searches every query, writes one JSON row per query to `rows_file` (signals, labels,
// held out or not), prints the report; returns 0.
int evidence_report(Engine& engine, const std::vector<eval::Query>& queries, const eval::Qrels& qrels,
                    const std::string& plugin_namespace, const std::string& rows_file, const std::string& dataset);

// Fits one model on the fit halves of several row files (pooled) and reports each
// file's report half under it: the defaults of evidence.* come from this.
int evidence_fit(const Config& cfg, const std::vector<std::string>& rows_files);

}  // namespace eagle::app
