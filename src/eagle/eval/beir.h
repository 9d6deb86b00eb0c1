#pragma once
// BEIR layout: corpus.jsonl, queries.jsonl, qrels/<split>.tsv.
#include <filesystem>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace eagle::eval {

struct Query {
  std::string id;
  std::string text;
};

// qid -> (docid -> relevance grade). Ordered by qid so reports are stable.
using Qrels = std::map<std::string, std::unordered_map<std::string, int>>;

// Reads a qrels TSV (`query-id corpus-id score`, optional header line; TREC's
// four-column `qid 0 docid rel` also accepted). Errors name file and line.
Qrels load_qrels(const std::filesystem::path& file);
std::vector<Query> load_queries(const std::filesystem::path& file);

struct BeirSet {
  std::filesystem::path dir;
  std::vector<Query> queries;  // only those judged in the split, in file order
  Qrels qrels;
};

// Loads queries and qrels of `split` (corpus is read by the ingest readers).
BeirSet load_beir(const std::filesystem::path& dir, const std::string& split);

}  // namespace eagle::eval
