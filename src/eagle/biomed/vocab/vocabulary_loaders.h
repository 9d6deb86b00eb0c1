#pragma once
// Internal to eagle_biomed_vocab: the source parsers and the builder they feed.
// A malformed line is an eagle::Error(invalid_argument) "FILE:LINE: what".
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "eagle/biomed/vocab/vocabulary.h"

namespace eagle::biomed::detail {

enum class Source : uint8_t { drugbank, genes, umls, obo, mesh };

class VocabularyBuilder {
 public:
  // Adds a record, merges it into the entity with the same key (one DOID term in
  // several slims), or into an entity of another source with the same normalised
  // preferred name and a compatible type (vocabulary.h "Merging"). Returns the id.
  EntityId add(Entity e, Source source);
  Entity* by_key(const std::string& key);

  std::vector<Entity> entities;
  std::vector<std::pair<std::string, EntityId>> merged_keys;
  VocabularyStats stats;

 private:
  std::vector<Source> sources_;
  std::unordered_map<std::string, EntityId> keys_;
  std::unordered_map<std::string, std::vector<EntityId>> names_;  // normalised preferred name -> ids
};

// Drops empty aliases, aliases equal to the name and repeats (compared normalised).
void clean_aliases(Entity& e);

void load_drugbank_vocabulary(const std::filesystem::path& file, VocabularyBuilder& b);
void load_drugbank_structures(const std::filesystem::path& file, VocabularyBuilder& b);
void load_genes(const std::filesystem::path& file, VocabularyBuilder& b);
void load_umls(const std::filesystem::path& mrconso, const std::optional<std::filesystem::path>& mrsty,
               VocabularyBuilder& b);
void load_obo(const std::filesystem::path& file, VocabularyBuilder& b);
void load_mesh_trees(const std::filesystem::path& file, VocabularyBuilder& b);

}  // namespace eagle::biomed::detail
