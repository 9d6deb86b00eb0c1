#pragma once
// Compound cards: one chunk row per compound of a DrugBank structures
// CSV (header "DrugBank ID,Name,Drug Groups,SMILES", columns found by name), for the
// chemical collection. The SMILES string comes back beside the row so the caller can
// hand it to the chemical encoder (MolFormer / fingerprints) without re-parsing text.
#include <filesystem>
#include <istream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace eagle::biomed {

// row: the chunk-schema fields (chunker.h): id = document_id = source_chunk_id = the
// DrugBank id, text "Name. Groups: approved; investigational. SMILES: CC(=O)...",
// type "text", chunk_type "compound", source_type "compound", path and document_name
// = the name, primary_drugs = [lower-cased name], file_name = the CSV's base name,
// year / connect_to null, other strings empty. A compound without SMILES still gets
// a card (text without the SMILES part, smiles empty).
struct CompoundCard {
  nlohmann::json row;
  std::string smiles;
};

struct CompoundCardOptions {
  std::string kb_name;
};

// Reads the CSV (core/csv.h). Throws eagle::Error (invalid_argument) naming the source
// and line for a missing column, a short record, an empty id or name, or a repeated id.
std::vector<CompoundCard> read_compound_cards(std::istream& in, std::string_view source_name,
                                              const CompoundCardOptions& options = {});

// A missing file is not_found.
std::vector<CompoundCard> read_compound_cards_file(const std::filesystem::path& file,
                                                   const CompoundCardOptions& options = {});

}  // namespace eagle::biomed
