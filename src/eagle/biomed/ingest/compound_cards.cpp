#include "eagle/biomed/ingest/compound_cards.h"

#include <algorithm>
#include <fstream>
#include <unordered_set>

#include "eagle/ingest/text_util.h"
#include "eagle/core/csv.h"
#include "eagle/core/error.h"

namespace eagle::biomed {

using ingest::ascii_lower;
using ingest::collapse_whitespace;

using nlohmann::json;

namespace {

size_t column(const std::vector<std::string>& header, std::string_view name, const std::string& source) {
  for (size_t i = 0; i < header.size(); ++i)
    if (collapse_whitespace(header[i]) == name) return i;
  fail(ErrorCode::invalid_argument, source + ":1: missing column '" + std::string(name) +
                                        "' (expected DrugBank ID,Name,Drug Groups,SMILES)");
}

}  // namespace

std::vector<CompoundCard> read_compound_cards(std::istream& in, std::string_view source_name,
                                              const CompoundCardOptions& options) {
  const std::string source(source_name);
  const std::string file_name = ingest::base_name(source);
  std::vector<std::string> fields;
  size_t line = 0;
  if (!read_csv_record(in, fields, line))
    fail(ErrorCode::invalid_argument, source + ": empty file, expected a DrugBank structures CSV header");
  if (!fields.empty() && fields[0].rfind("\xEF\xBB\xBF", 0) == 0) fields[0].erase(0, 3);  // UTF-8 BOM
  const size_t c_id = column(fields, "DrugBank ID", source);
  const size_t c_name = column(fields, "Name", source);
  const size_t c_groups = column(fields, "Drug Groups", source);
  const size_t c_smiles = column(fields, "SMILES", source);
  const size_t needed = std::max({c_id, c_name, c_groups, c_smiles}) + 1;

  std::vector<CompoundCard> cards;
  std::unordered_set<std::string> seen;
  for (size_t record_line = line + 1; read_csv_record(in, fields, line); record_line = line + 1) {
    if (fields.size() == 1 && collapse_whitespace(fields[0]).empty()) continue;  // blank line
    const std::string where = source + ":" + std::to_string(record_line) + ": ";
    if (fields.size() < needed)
      fail(ErrorCode::invalid_argument,
           where + "expected " + std::to_string(needed) + " fields, got " + std::to_string(fields.size()));
    const std::string id = collapse_whitespace(fields[c_id]);
    const std::string name = collapse_whitespace(fields[c_name]);
    const std::string groups = collapse_whitespace(fields[c_groups]);
    std::string smiles = collapse_whitespace(fields[c_smiles]);
    if (id.empty()) fail(ErrorCode::invalid_argument, where + "empty DrugBank ID");
    if (name.empty()) fail(ErrorCode::invalid_argument, where + "empty Name for " + id);
    if (!seen.insert(id).second) fail(ErrorCode::invalid_argument, where + "repeated DrugBank ID " + id);

    std::string text = name + ".";
    if (!groups.empty()) text += " Groups: " + groups + ".";
    if (!smiles.empty()) text += " SMILES: " + smiles;
    json row = {{"id", id},
                {"text", std::move(text)},
                {"kb_name", options.kb_name},
                {"document_id", id},
                {"type", "text"},
                {"path", name},
                {"source_type", "compound"},
                {"year", nullptr},
                {"chunk_type", "compound"},
                {"parent_section", ""},
                {"source_chunk_id", id},
                {"file_name", file_name},
                {"document_name", name},
                {"source_uri", source},
                {"primary_drugs", json::array({ascii_lower(name)})},
                {"metadata", {{"drug_groups", groups}}},
                {"biomed_section", ""},
                {"content_summary", ""},
                {"connect_to", nullptr},
                {"level", nullptr},
                {"page", nullptr}};
    cards.push_back({std::move(row), std::move(smiles)});
  }
  return cards;
}

std::vector<CompoundCard> read_compound_cards_file(const std::filesystem::path& file,
                                                   const CompoundCardOptions& options) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(ErrorCode::not_found, "cannot open compound CSV " + file.string());
  return read_compound_cards(in, file.string(), options);
}

}  // namespace eagle::biomed
