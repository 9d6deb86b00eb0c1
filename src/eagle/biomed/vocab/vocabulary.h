#pragma once
// The biomedical vocabulary: UMLS (MRCONSO/MRSTY), DrugBank
// (vocabulary + structures), NCBI human genes, MeSH trees and OBO ontologies (DOID)
// loaded into one entity model, plus the compiled surface dictionary the matcher
// runs on. `load_cached` keeps both in one binary file so a restart parses nothing
// and builds nothing.
//
// Load order (which is also who keeps its key when records merge): DrugBank
// vocabulary, DrugBank structures, genes, UMLS, OBO files, MeSH.
//
// Merging: a record whose normalised preferred name equals the preferred name of an
// entity from another source, with the same type (drug and chemical count as the
// same), is merged into that entity (aliases joined, chemical promoted to drug); its
// key still resolves through find_key(). Everything else stays a separate entity:
// MeSH "Imatinib Mesylate" (chemical) is not DrugBank "Imatinib" (drug).
//
// Surface conflicts (several entities share a normalised surface) are resolved, in
// order, by
//   1. role: an all-capitals disease abbreviation ("HCC", "DMD": genes named after a
//      disease share it, and text mostly means the disease) beats a preferred name,
//      which beats an alias; a gene's symbol-like alias (a previous symbol or
//      synonym without spaces, the noisiest names there are) comes last;
//   2. type: drug > gene > disease > pathway > chemical > other;
//   3. load order (lower id).
// So "imatinib" is DrugBank's drug, "MET" the MET gene (not methionine's "Met"
// synonym) and "ALS" the disease synonym rather than a gene alias.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "eagle/biomed/vocab/entity.h"
#include "eagle/biomed/vocab/surface_automaton.h"

namespace eagle::biomed {

// The source files; each is optional, and a configured file that is missing is an
// eagle::Error(not_found) naming it.
struct VocabularyPaths {
  std::optional<std::filesystem::path> drugbank_vocabulary;  // drugbank_vocabulary.csv
  std::optional<std::filesystem::path> drugbank_structures;  // drugbank_structures.csv (fills smiles)
  std::optional<std::filesystem::path> genes;                // genes_human.tsv
  std::optional<std::filesystem::path> umls_mrconso;         // MRCONSO.RRF
  std::optional<std::filesystem::path> umls_mrsty;           // MRSTY.RRF (semantic types for MRCONSO)
  std::optional<std::filesystem::path> mesh_trees;           // mesh_trees_2019.txt ("Name;TreeNumber")
  std::vector<std::filesystem::path> obo_files;              // doid/*.obo

  // Every configured file in load order.
  std::vector<std::filesystem::path> files() const;
};

// The files of a vocabulary folder laid out like ../shared/data/vocab: the DrugBank
// CSVs, genes_human.tsv, mesh_trees*.txt, doid/*.obo (or *.obo), and MRCONSO/MRSTY
// from umls/, umls_sample/ or the folder itself. Only files that exist are set; a
// missing folder is eagle::Error(not_found).
VocabularyPaths default_vocabulary_paths(const std::string& vocab_dir);

// Seed rule "Drug-suffix regex" (umls._DRUG_SUFFIX): a name ending in
// mab / nib / tinib / rafenib / parib / stat / formin is a drug when its source gave no
// explicit drug, gene or disease type.
bool has_drug_suffix(std::string_view name);

// The UMLS semantic type (TUI) table; see vocabulary_loaders.cpp for the full list.
EntityType umls_semantic_type(std::string_view tui);

// What the loaders read (reported, never silently dropped).
struct VocabularyStats {
  uint64_t drugbank_drugs = 0;
  uint64_t structures = 0;
  uint64_t structures_added = 0;  // structures whose drug was not in the vocabulary CSV
  uint64_t genes = 0;
  uint64_t umls_concepts = 0;
  uint64_t umls_rows_skipped = 0;  // non-English or suppressed MRCONSO rows
  uint64_t mesh_terms = 0;
  uint64_t mesh_skipped = 0;  // names with no C, D or G02/G03 tree number
  uint64_t obo_terms = 0;
  uint64_t obo_obsolete = 0;
  uint64_t merged = 0;             // records merged into an entity of another source
  uint64_t surfaces = 0;           // distinct normalised surfaces in the dictionary
  uint64_t surfaces_dropped = 0;   // shorter than 2 bytes, longer than 255, or without a letter
  uint64_t surface_conflicts = 0;  // surfaces claimed by more than one entity
};

enum class CacheOutcome { loaded, built_missing, built_stale, built_corrupt };

// How load_cached went; `reason` names the stale source or the corruption found.
struct CacheReport {
  CacheOutcome outcome = CacheOutcome::loaded;
  std::string reason;
  double parse_seconds = 0;    // reading the sources (0 when loaded)
  double compile_seconds = 0;  // building the surface dictionary (0 when loaded)
  double cache_seconds = 0;    // reading or writing the cache file
};

class Vocabulary {
 public:
  Vocabulary();

  // Parses the sources and compiles the surface dictionary.
  static Vocabulary load(const VocabularyPaths& paths);

  // Uses `cache_file` when its stored format version and the sources' sizes and
  // modification times match; otherwise (missing, stale or corrupt) parses the
  // sources and rewrites the cache crash-safely (tmp, fsync, rename).
  static Vocabulary load_cached(const VocabularyPaths& paths, const std::filesystem::path& cache_file,
                                CacheReport* report = nullptr);
  // Writes this (compiled) vocabulary as the cache for `paths`.
  void save_cache(const VocabularyPaths& paths, const std::filesystem::path& cache_file) const;

  size_t size() const { return entities_.size(); }
  const Entity& entity(EntityId id) const;  // eagle::Error(not_found) on an unknown id

  // Normalised exact lookup of a surface (name, alias, symbol) with the precedence above.
  std::optional<EntityId> find(std::string_view surface) const;
  // Lookup by source key ("DRUGBANK:DB00619"), including keys of merged records.
  std::optional<EntityId> find_key(std::string_view key) const;

  // Adds an entity (tests, brand names from ingested labels). Its key must be new
  // (eagle::Error(conflict) otherwise). find() sees it at once; matchers see it after
  // compile().
  EntityId add(Entity e);
  // Rebuilds the surface dictionary when entities were added since the last build.
  void compile();
  bool compiled() const { return compiled_count_ == entities_.size(); }
  // The compiled dictionary; when entities were added since compile(), a fresh one
  // built for this call (as costly as compile()).
  std::shared_ptr<const SurfaceAutomaton> automaton() const;

  const VocabularyStats& stats() const { return stats_; }
  size_t memory_bytes() const;

 private:
  friend struct VocabularyCodec;

  std::vector<Entity> entities_;
  std::vector<EntityId> key_order_;                            // entity ids sorted by key
  std::vector<std::pair<std::string, EntityId>> merged_keys_;  // sorted by key
  std::shared_ptr<const SurfaceAutomaton> automaton_;
  size_t compiled_count_ = 0;
  // Surfaces of entities added after the last compile(), for find().
  std::unordered_map<std::string, std::vector<EntityId>> pending_;
  VocabularyStats stats_;
  double compile_seconds_ = 0;  // of the last compile(), for CacheReport
};

}  // namespace eagle::biomed
