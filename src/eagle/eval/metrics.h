#pragma once
// Retrieval metrics computed exactly as trec_eval computes them:
//  - a query's ranking is its run entries sorted by score descending, ties broken
//    by document id in decreasing lexicographic order (trec_eval's comp_sim_docno);
//  - relevant means grade >= 1; gains are the grades (linear), discount log2(rank+1);
//  - ideal DCG is built from every judged document of the query;
//  - P@k divides by k even when fewer documents were retrieved;
//  - means are over the queries of the qrels that have a relevant document; a query
//    absent from the run counts as zero (trec_eval -c).
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "eagle/eval/beir.h"

namespace eagle::eval {

struct RunEntry {
  std::string doc;
  double score;
};
using Run = std::map<std::string, std::vector<RunEntry>>;

// Sorts every query's entries into trec_eval's order.
void sort_run(Run& run);
// The score as the run file stores it, so in-process metrics see trec_eval's ties.
double round_score_for_run(double score);
void write_trec_run(std::ostream& out, const Run& run, const std::string& tag);
Run read_trec_run(const std::filesystem::path& file);

struct MetricSet {
  std::vector<int> ndcg_cuts{10, 100};
  std::vector<int> recall_cuts{5, 10, 100, 1000};  // Recall@5: the seed's smoke-set metric
  std::vector<int> precision_cuts{10};
  std::vector<int> hit_cuts{5, 10};                 // Hit@5: likewise
  bool mrr = true;
  bool map = true;
};

struct QueryScores {
  std::string qid;
  std::vector<double> values;  // in EvalReport::names order
};

struct EvalReport {
  std::vector<std::string> names;  // trec_eval names: ndcg_cut_10, recall_100, P_10, recip_rank, map, hit_10
  std::vector<double> means;
  std::vector<QueryScores> per_query;
  size_t queries = 0;
  double mean(const std::string& name) const;
};

EvalReport evaluate(const Qrels& qrels, Run run, const MetricSet& metrics = {});

void write_summary(std::ostream& out, const EvalReport& report);
// `extra`: one more column, `extra_name`, by query id (empty cells for the others).
void write_per_query_csv(std::ostream& out, const EvalReport& report,
                         const std::map<std::string, std::string>* extra = nullptr,
                         const std::string& extra_name = "");

}  // namespace eagle::eval
