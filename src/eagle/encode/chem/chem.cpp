#include "eagle/encode/chem/chem.h"

#include <DataStructs/ExplicitBitVect.h>
#include <GraphMol/Fingerprints/MorganFingerprints.h>
#include <GraphMol/GraphMol.h>
#include <GraphMol/SmilesParse/SmilesParse.h>
#include <GraphMol/SmilesParse/SmilesWrite.h>
#include <GraphMol/Substruct/SubstructMatch.h>
#include <RDGeneral/RDLog.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <fstream>
#include <mutex>

#include "eagle/core/csv.h"
#include "eagle/core/error.h"

namespace eagle::encode::chem {
namespace {

// RDKit prints parse errors to stderr; Eagle reports them itself.
void quiet_rdkit() {
  static std::once_flag once;
  std::call_once(once, [] { RDLog::InitLogs(); boost::logging::disable_logs("rdApp.*"); });
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

}  // namespace

struct Molecule::Impl {
  std::unique_ptr<RDKit::ROMol> mol;
};

Molecule::Molecule(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Molecule::Molecule(Molecule&&) noexcept = default;
Molecule& Molecule::operator=(Molecule&&) noexcept = default;
Molecule::~Molecule() = default;

Molecule Molecule::from_smiles(std::string_view smiles) {
  quiet_rdkit();
  if (smiles.empty()) fail(ErrorCode::invalid_argument, "invalid SMILES '': empty");
  std::unique_ptr<RDKit::RWMol> m;
  try {
    m.reset(RDKit::SmilesToMol(std::string(smiles)));
  } catch (const std::exception& e) {
    fail(ErrorCode::invalid_argument, "invalid SMILES '" + std::string(smiles) + "': " + e.what());
  }
  if (!m) fail(ErrorCode::invalid_argument, "invalid SMILES '" + std::string(smiles) + "'");
  auto impl = std::make_unique<Impl>();
  impl->mol = std::move(m);
  return Molecule(std::move(impl));
}

Molecule Molecule::from_smarts(std::string_view smarts) {
  quiet_rdkit();
  std::unique_ptr<RDKit::RWMol> m;
  try {
    m.reset(RDKit::SmartsToMol(std::string(smarts)));
  } catch (const std::exception& e) {
    fail(ErrorCode::invalid_argument, "invalid SMARTS '" + std::string(smarts) + "': " + e.what());
  }
  if (!m) fail(ErrorCode::invalid_argument, "invalid SMARTS '" + std::string(smarts) + "'");
  auto impl = std::make_unique<Impl>();
  impl->mol = std::move(m);
  return Molecule(std::move(impl));
}

std::string Molecule::canonical_smiles() const { return RDKit::MolToSmiles(*impl_->mol); }

unsigned Molecule::atoms() const { return impl_->mol->getNumAtoms(); }

Fingerprint Molecule::morgan(const FingerprintParams& p) const {
  std::unique_ptr<ExplicitBitVect> bv(
      RDKit::MorganFingerprints::getFingerprintAsBitVect(*impl_->mol, p.radius, p.bits));
  Fingerprint fp;
  fp.words.assign((p.bits + 63) / 64, 0);
  std::vector<int> on;
  bv->getOnBits(on);
  for (int b : on) fp.words[static_cast<size_t>(b) >> 6] |= uint64_t{1} << (b & 63);
  fp.popcount = static_cast<uint32_t>(on.size());
  return fp;
}

bool Molecule::has_substructure(const Molecule& pattern) const {
  RDKit::MatchVectType match;
  return RDKit::SubstructMatch(*impl_->mol, *pattern.impl_->mol, match);
}

double tanimoto(const Fingerprint& a, const Fingerprint& b) {
  if (a.words.size() != b.words.size())
    fail(ErrorCode::invalid_argument, "fingerprints of different lengths");
  uint32_t common = 0;
  for (size_t i = 0; i < a.words.size(); ++i) common += static_cast<uint32_t>(std::popcount(a.words[i] & b.words[i]));
  const uint32_t uni = a.popcount + b.popcount - common;
  return uni == 0 ? 0.0 : static_cast<double>(common) / uni;
}

void CompoundIndex::add(std::string id, std::string name, std::string_view smiles) {
  auto mol = Molecule::from_smiles(smiles);
  Compound c{std::move(id), std::move(name), mol.canonical_smiles(), mol.morgan(params_)};
  compounds_.push_back(std::move(c));
  molecules_.push_back(std::move(mol));
}

CompoundLoadReport CompoundIndex::load_csv(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(ErrorCode::not_found, "cannot read " + file.string());
  CompoundLoadReport rep;
  std::vector<std::string> f;
  size_t line = 0;
  if (!read_csv_record(in, f, line)) fail(ErrorCode::invalid_argument, file.string() + ": empty file");
  int id_col = -1, name_col = -1, smiles_col = -1;
  for (size_t i = 0; i < f.size(); ++i) {
    auto h = lower(f[i]);
    if (smiles_col < 0 && h.find("smiles") != std::string::npos) smiles_col = static_cast<int>(i);
    else if (name_col < 0 && h == "name") name_col = static_cast<int>(i);
    else if (id_col < 0 && (h == "id" || h.find(" id") != std::string::npos || h == "drugbank_id"))
      id_col = static_cast<int>(i);
  }
  if (smiles_col < 0)
    fail(ErrorCode::invalid_argument, file.string() + ": the header has no SMILES column");
  while (read_csv_record(in, f, line)) {
    if (f.size() == 1 && f[0].empty()) continue;
    ++rep.rows;
    auto col = [&](int c) { return c >= 0 && static_cast<size_t>(c) < f.size() ? f[static_cast<size_t>(c)] : std::string(); };
    std::string id = col(id_col), name = col(name_col), smiles = col(smiles_col);
    if (id.empty()) id = "row" + std::to_string(line);
    if (smiles.empty()) {
      rep.failed.push_back(id + " " + name + ": no SMILES");
      continue;
    }
    try {
      add(id, name, smiles);
      ++rep.parsed;
    } catch (const Error& e) {
      rep.failed.push_back(id + " " + name + ": " + e.what());
    }
  }
  return rep;
}

std::vector<CompoundHit> CompoundIndex::similar(const Fingerprint& q, size_t k) const {
  std::vector<CompoundHit> all;
  all.reserve(compounds_.size());
  for (uint32_t i = 0; i < compounds_.size(); ++i) all.push_back({i, tanimoto(q, compounds_[i].fingerprint)});
  const size_t m = std::min(k, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(m), all.end(),
                    [](const CompoundHit& a, const CompoundHit& b) {
                      return a.similarity > b.similarity || (a.similarity == b.similarity && a.index < b.index);
                    });
  all.resize(m);
  return all;
}

std::vector<uint32_t> CompoundIndex::substructure(const Molecule& pattern, size_t limit) const {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < molecules_.size() && out.size() < limit; ++i)
    if (molecules_[i].has_substructure(pattern)) out.push_back(i);
  return out;
}

const Compound* CompoundIndex::find_by_name(std::string_view name) const {
  auto n = lower(name);
  for (const auto& c : compounds_)
    if (lower(c.name) == n) return &c;
  return nullptr;
}

}  // namespace eagle::encode::chem
