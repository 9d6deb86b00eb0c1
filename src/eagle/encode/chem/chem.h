#pragma once
// Chemistry on RDKit: SMILES parsing and canonical SMILES, Morgan
// fingerprints (radius 2, 2048 bits by default), Tanimoto similarity, SMARTS
// substructure match, and an exact compound index: the default implementation of
// the `molformer` encoder slot (true structural similarity).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace eagle::encode::chem {

struct FingerprintParams {
  uint32_t radius = 2;
  uint32_t bits = 2048;
};

struct Fingerprint {
  std::vector<uint64_t> words;
  uint32_t popcount = 0;
};

double tanimoto(const Fingerprint& a, const Fingerprint& b);

class Molecule {
 public:
  // Throws eagle::Error(invalid_argument) "invalid SMILES '<text>'".
  static Molecule from_smiles(std::string_view smiles);
  static Molecule from_smarts(std::string_view smarts);
  Molecule(Molecule&&) noexcept;
  Molecule& operator=(Molecule&&) noexcept;
  ~Molecule();

  std::string canonical_smiles() const;
  Fingerprint morgan(const FingerprintParams& p = {}) const;
  bool has_substructure(const Molecule& pattern) const;
  unsigned atoms() const;

 private:
  struct Impl;
  explicit Molecule(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct Compound {
  std::string id;
  std::string name;
  std::string smiles;  // canonical
  Fingerprint fingerprint;
};

struct CompoundHit {
  uint32_t index;
  double similarity;
};

struct CompoundLoadReport {
  size_t rows = 0;
  size_t parsed = 0;
  std::vector<std::string> failed;  // "<id> <name>: <reason>"
};

// Exact Tanimoto search over every compound (compound sets are small: a linear scan
// of 2048-bit fingerprints is a few microseconds per thousand compounds).
class CompoundIndex {
 public:
  explicit CompoundIndex(FingerprintParams p = {}) : params_(p) {}
  // Adds a compound; throws on invalid SMILES.
  void add(std::string id, std::string name, std::string_view smiles);
  // Reads a CSV with a header naming the id, name and SMILES columns (DrugBank's
  // "DrugBank ID,Name,...,SMILES" works); rows whose SMILES fail are counted and
  // reported by name, not fatal. Rows without a SMILES are skipped.
  CompoundLoadReport load_csv(const std::filesystem::path& file);

  std::vector<CompoundHit> similar(const Fingerprint& query, size_t k) const;
  // Indices of compounds containing the SMARTS pattern, in index order, up to limit.
  std::vector<uint32_t> substructure(const Molecule& pattern, size_t limit) const;
  const Compound* find_by_name(std::string_view name) const;  // case-insensitive
  const Compound& at(uint32_t i) const { return compounds_.at(i); }
  size_t size() const { return compounds_.size(); }
  const FingerprintParams& params() const { return params_; }

 private:
  FingerprintParams params_;
  std::vector<Compound> compounds_;
  std::vector<Molecule> molecules_;  // parsed once, for substructure matching
};

}  // namespace eagle::encode::chem
