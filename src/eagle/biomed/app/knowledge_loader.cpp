// The production EntityKnowledge: the Vocabulary from its binary cache (rebuilt when
// a source changes) and the Aho-Corasick EntityMatcher over it.
#include <chrono>
#include <cstdio>

#include <filesystem>

#include "eagle/app/build_paths.h"
#include "eagle/biomed/app/biomed_app.h"
#include "eagle/core/error.h"
#include "eagle/biomed/vocab/entity_matcher.h"
#include "eagle/biomed/vocab/vocabulary.h"

namespace eagle::biomed {
namespace {

class VocabularyKnowledge : public EntityKnowledge {
 public:
  explicit VocabularyKnowledge(Vocabulary vocab) : vocab_(std::move(vocab)), matcher_(vocab_) {}
  std::vector<EntityMatch> match_entities(std::string_view text) const override {
    return matcher_.match_entities(text);
  }
  std::vector<EntityMatch> match_drug_entities(std::string_view text) const override {
    return matcher_.match_drug_entities(text);
  }
  const Entity& entity(EntityId id) const override { return vocab_.entity(id); }

 private:
  Vocabulary vocab_;
  EntityMatcher matcher_;
};

}  // namespace

std::string resolve_vocab_dir(const app::Config& cfg) {
  const auto& dir = biomed_settings(cfg).vocab_dir;
  if (!dir.empty()) {
    if (!std::filesystem::is_directory(dir))
      fail(ErrorCode::not_found, "biomed.vocab_dir '" + dir + "' is not a folder");
    return dir;
  }
  for (const auto& p : {std::filesystem::path("../shared/data/vocab"), std::filesystem::path(app::build_source_dir()) / "../shared/data/vocab"})
    if (std::filesystem::is_directory(p)) return p.lexically_normal().string();
  fail(ErrorCode::not_found,
       "no vocabulary folder: set biomed.vocab_dir (DrugBank CSVs, genes_human.tsv, MeSH, DOID, UMLS RRF)");
}

std::unique_ptr<EntityKnowledge> load_knowledge(const app::Config& cfg, std::string* report) {
  const auto dir = resolve_vocab_dir(cfg);
  const auto paths = default_vocabulary_paths(dir);
  CacheReport rep;
  auto t0 = std::chrono::steady_clock::now();
  const std::string cache = vocab_cache_of(cfg);
  auto vocab = Vocabulary::load_cached(paths, cache, &rep);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const size_t n = vocab.size();
  if (rep.outcome != CacheOutcome::loaded)
    std::fprintf(stderr, "biomed vocabulary: built %s from %s in %.2f s (%s)\n", cache.c_str(),
                 dir.c_str(), s, rep.reason.c_str());
  if (report)
    *report = std::to_string(n) + " entities from " + dir +
              (rep.outcome == CacheOutcome::loaded ? " (cache)" : " (parsed)");
  return std::make_unique<VocabularyKnowledge>(std::move(vocab));
}

}  // namespace eagle::biomed
