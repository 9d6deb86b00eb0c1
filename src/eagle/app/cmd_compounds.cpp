// `eagle similar-compounds`: a compound CSV loaded into an in-memory index, then its
// nearest neighbours by Tanimoto on Morgan fingerprints, or a SMARTS substructure
// search. It reads no store and no configuration.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "eagle/app/cli.h"
#include "eagle/app/config.h"
#include "eagle/core/error.h"
#include "eagle/encode/chem/chem.h"

namespace eagle::app {
namespace {

struct CompoundFlags {
  std::string smiles_csv, name, smiles, smarts;
  size_t k = 10;
};

int cmd_compounds(const std::string& csv, const std::string& name, const std::string& smiles,
                  const std::string& smarts, size_t k) {
  namespace chem = eagle::encode::chem;
  if (k == 0 || k > eagle::app::kMaxTopK)
    eagle::fail(ErrorCode::invalid_argument, "--k must be in [1, " + std::to_string(eagle::app::kMaxTopK) + "]");
  auto t0 = std::chrono::steady_clock::now();
  chem::CompoundIndex idx;
  auto rep = idx.load_csv(csv);
  std::fprintf(stderr, "loaded %zu of %zu compounds from %s in %.2f s (%zu failed to parse)\n", rep.parsed,
               rep.rows, csv.c_str(), seconds_since(t0), rep.failed.size());
  for (const auto& f : rep.failed) std::fprintf(stderr, "  unparsed: %s\n", f.c_str());
  if (!smarts.empty()) {
    auto pattern = chem::Molecule::from_smarts(smarts);
    auto found = idx.substructure(pattern, k);
    std::printf("substructure %s: %zu matches (limit %zu)\n", smarts.c_str(), found.size(), k);
    for (auto i : found) std::printf("  %-10s %-30s %s\n", idx.at(i).id.c_str(), idx.at(i).name.c_str(), idx.at(i).smiles.c_str());
    return 0;
  }
  chem::Fingerprint query;
  std::string label;
  if (!name.empty()) {
    const auto* c = idx.find_by_name(name);
    if (!c) eagle::fail(ErrorCode::not_found, "no compound named '" + name + "' in " + csv);
    query = c->fingerprint;
    label = c->name;
  } else if (!smiles.empty()) {
    query = chem::Molecule::from_smiles(smiles).morgan(idx.params());
    label = smiles;
  } else {
    eagle::fail(ErrorCode::invalid_argument, "give --name, --smiles or --smarts");
  }
  std::printf("compounds similar to %s (Morgan r=2, 2048 bits, Tanimoto)\n", label.c_str());
  int rank = 1;
  for (const auto& h : idx.similar(query, k))
    std::printf("%3d. %.4f  %-10s %s\n", rank++, h.similarity, idx.at(h.index).id.c_str(), idx.at(h.index).name.c_str());
  return 0;
}

}  // namespace

void add_compounds_command(CLI::App& app, const GlobalFlags&, std::vector<Command>& out) {
  auto f = std::make_shared<CompoundFlags>();
  auto* compounds = app.add_subcommand(
      "similar-compounds", "nearest compounds by Tanimoto on Morgan fingerprints, or a SMARTS substructure search");
  compounds->add_option("--smiles-csv", f->smiles_csv, "CSV with a header naming id, name and SMILES columns")->required();
  compounds->add_option("--name", f->name, "query compound by name (case-insensitive)");
  compounds->add_option("--smiles", f->smiles, "query compound by SMILES");
  compounds->add_option("--smarts", f->smarts, "list compounds containing this SMARTS pattern instead");
  compounds->add_option("--k", f->k, "hits to print (limit for --smarts)")->capture_default_str();
  out.push_back({compounds, [f] { return cmd_compounds(f->smiles_csv, f->name, f->smiles, f->smarts, f->k); }});
}

}  // namespace eagle::app
