// The production EntityKnowledge: the Vocabulary from its binary cache (rebuilt when
// a source changes) and the Aho-Corasick EntityMatcher over it.
#include <chrono>
#include <cstdio>

#include "eagle/app/engine.h"
#include "eagle/biomed/vocab/entity_matcher.h"
#include "eagle/biomed/vocab/vocabulary.h"

namespace eagle::app {
namespace {

class VocabularyKnowledge : public biomed::EntityKnowledge {
 public:
  explicit VocabularyKnowledge(biomed::Vocabulary vocab) : vocab_(std::move(vocab)), matcher_(vocab_) {}
  std::vector<biomed::EntityMatch> match_entities(std::string_view text) const override {
    return matcher_.match_entities(text);
  }
  std::vector<biomed::EntityMatch> match_drug_entities(std::string_view text) const override {
    return matcher_.match_drug_entities(text);
  }
  const biomed::Entity& entity(biomed::EntityId id) const override { return vocab_.entity(id); }

 private:
  biomed::Vocabulary vocab_;
  biomed::EntityMatcher matcher_;
};

}  // namespace

std::unique_ptr<biomed::EntityKnowledge> load_knowledge(const Config& cfg, std::string* report) {
  const auto dir = resolve_vocab_dir(cfg);
  const auto paths = biomed::default_vocabulary_paths(dir);
  biomed::CacheReport rep;
  auto t0 = std::chrono::steady_clock::now();
  const std::string cache = vocab_cache_of(cfg);
  auto vocab = biomed::Vocabulary::load_cached(paths, cache, &rep);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const size_t n = vocab.size();
  if (rep.outcome != biomed::CacheOutcome::loaded)
    std::fprintf(stderr, "biomed vocabulary: built %s from %s in %.2f s (%s)\n", cache.c_str(),
                 dir.c_str(), s, rep.reason.c_str());
  if (report)
    *report = std::to_string(n) + " entities from " + dir +
              (rep.outcome == biomed::CacheOutcome::loaded ? " (cache)" : " (parsed)");
  return std::make_unique<VocabularyKnowledge>(std::move(vocab));
}

}  // namespace eagle::app
