#include "eagle/eval/beir.h"

#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "eagle/core/error.h"

namespace eagle::eval {
namespace fs = std::filesystem;

namespace {
std::vector<std::string> split_ws(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  std::string f;
  while (in >> f) out.push_back(f);
  return out;
}
bool parse_int(const std::string& s, int& v) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}
}  // namespace

Qrels load_qrels(const fs::path& file) {
  std::ifstream in(file);
  if (!in) fail(ErrorCode::not_found, "cannot open qrels " + file.string());
  Qrels q;
  std::string line;
  uint64_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    auto f = split_ws(line);
    if (f.empty()) continue;
    int rel = 0;
    if (f.size() == 3 && parse_int(f[2], rel)) {
      q[f[0]][f[1]] = rel;
    } else if (f.size() == 4 && parse_int(f[3], rel)) {
      q[f[0]][f[2]] = rel;
    } else if (lineno == 1) {
      continue;  // header ("query-id corpus-id score")
    } else {
      fail(ErrorCode::invalid_argument, file.string() + ":" + std::to_string(lineno) +
                                            ": expected `query-id corpus-id score`");
    }
  }
  return q;
}

std::vector<Query> load_queries(const fs::path& file) {
  std::ifstream in(file);
  if (!in) fail(ErrorCode::not_found, "cannot open queries " + file.string());
  std::vector<Query> out;
  std::string line;
  uint64_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      auto j = nlohmann::json::parse(line);
      Query q;
      const auto& id = j.at("_id");
      q.id = id.is_string() ? id.get<std::string>() : std::to_string(id.get<int64_t>());
      q.text = j.at("text").get<std::string>();
      out.push_back(std::move(q));
    } catch (const std::exception& e) {
      fail(ErrorCode::invalid_argument,
           file.string() + ":" + std::to_string(lineno) + ": bad query record: " + e.what());
    }
  }
  return out;
}

BeirSet load_beir(const fs::path& dir, const std::string& split) {
  BeirSet set;
  set.dir = dir;
  if (!fs::is_directory(dir)) fail(ErrorCode::not_found, "BEIR folder not found: " + dir.string());
  set.qrels = load_qrels(dir / "qrels" / (split + ".tsv"));
  for (auto& q : load_queries(dir / "queries.jsonl"))
    if (set.qrels.count(q.id)) set.queries.push_back(std::move(q));
  return set;
}

}  // namespace eagle::eval
