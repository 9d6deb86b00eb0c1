// Core fusion primitives and the HookBus, each test named for the seed's rule.
#include <gtest/gtest.h>

#include "eagle/core/error.h"

#include <stdexcept>
#include <cctype>
#include <set>
#include <random>

#include "eagle/search/fusion.h"
#include "eagle/search/hookbus.h"

using namespace eagle::search;

namespace {
ScoredHit hit(std::string id, double score, std::string coll = "c", std::string scid = "", std::string doc = "",
              std::string path = "") {
  ScoredHit h;
  h.id = std::move(id);
  h.score = score;
  h.collection = std::move(coll);
  if (!scid.empty()) h.metadata["source_chunk_id"] = scid;
  if (!doc.empty()) h.metadata["document_id"] = doc;
  if (!path.empty()) h.metadata["path"] = path;
  return h;
}
std::vector<std::string> ids(const HitList& l) {
  std::vector<std::string> out;
  for (const auto& h : l) out.push_back(h.id);
  return out;
}
}  // namespace

TEST(MergeRrf, ScoresAreSumsOfReciprocalRanksWithK60) {
  HitList a = {hit("x", 0.9), hit("y", 0.8)};
  HitList b = {hit("y", 12.0), hit("z", 11.0)};
  auto m = merge_rrf({a, b}, 60);
  ASSERT_EQ(ids(m), (std::vector<std::string>{"y", "x", "z"}));
  EXPECT_DOUBLE_EQ(m[0].score, 1.0 / 62 + 1.0 / 61);
  EXPECT_DOUBLE_EQ(m[1].score, 1.0 / 61);
  EXPECT_DOUBLE_EQ(m[2].score, 1.0 / 62);
}

TEST(MergeRrf, G8EmptyListsContributeNothingAndASingleListPassesThrough) {
  HitList a = {hit("x", 0.9), hit("y", 0.8)};
  auto m = merge_rrf({HitList{}, a, HitList{}}, 60);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_DOUBLE_EQ(m[0].score, 0.9);  // unchanged: no fusion math on one list
  EXPECT_TRUE(merge_rrf({HitList{}, HitList{}}).empty());
}

TEST(DedupeCrossCollection, G32CollapsesBySourceChunkIdThenDocumentPathKeepingTheBetterRank) {
  HitList merged = {hit("a1", 3, "text", "chunk-1"), hit("b1", 2, "biomed", "chunk-1"),
                    hit("a2", 1.5, "text", "", "doc", "p/1"), hit("b2", 1, "biomed", "", "doc", "p/1"),
                    hit("a3", 0.5, "text")};
  MemorySink* sink = new MemorySink;
  std::shared_ptr<TelemetrySink> owner(sink);
  Telemetry tel(owner, "q");
  auto out = dedupe_cross_collection(merged, 2, &tel);
  EXPECT_EQ(ids(out), (std::vector<std::string>{"a1", "a2", "a3"}));
  ASSERT_EQ(tel.audits().size(), 1u);
  EXPECT_EQ(tel.audits()[0]["audit"], "rrf_dedupe");
  EXPECT_EQ(tel.audits()[0]["removed"], 2);
  // One plan succeeded: nothing to dedupe across.
  EXPECT_EQ(dedupe_cross_collection(merged, 1, nullptr).size(), 5u);
}

TEST(CollapseNearDuplicates, FoldsCopiesAndASummaryThatRestatesItsChunkKeepingTheBetterRank) {
  auto text_hit = [](std::string id, double score, std::string text, std::string doc = "", std::string path = "",
                     std::string type = "text") {
    auto h = hit(std::move(id), score, "c", "", std::move(doc), std::move(path));
    h.text = std::move(text);
    h.metadata["type"] = std::move(type);
    return h;
  };
  const std::string warning = "Serious infections leading to hospitalization or death have occurred in patients.";
  HitList hits = {
      text_hit("label1:s25", 0.9, warning),
      text_hit("other", 0.8, "Dosage for adults is 40 mg every other week."),
      text_hit("label2:s25", 0.7, "  SERIOUS infections leading to hospitalization, or death have occurred in patients"),
      text_hit("d:s2:summary", 0.6, "1 INDICATIONS AND USAGE\nVIAGRA is indicated for the treatment of erectile dysfunction.",
               "d", "1 INDICATIONS", "section_summary"),
      text_hit("d:s2", 0.5, "1 INDICATIONS AND USAGE\nVIAGRA is indicated for the treatment of erectile dysfunction.", "d",
               "1 INDICATIONS/1.1"),
      // Same words, another document: not restated by d's summary, and its text is
      // its own (Jaccard 1.0 would fold it, so it says something else).
      text_hit("e:s2", 0.4, "1 INDICATIONS AND USAGE\nCIALIS is indicated for benign prostatic hyperplasia.", "e",
               "1 INDICATIONS/1.1"),
      text_hit("tail", 0.3, warning),
  };
  auto out = collapse_near_duplicates(hits, 4, 0.9);
  EXPECT_EQ(ids(out), (std::vector<std::string>{"label1:s25", "other", "d:s2:summary", "e:s2", "tail"}));
  ASSERT_TRUE(out[0].duplicates.is_array());
  EXPECT_EQ(out[0].duplicates.size(), 1u);
  EXPECT_EQ(out[0].duplicates[0]["id"], "label2:s25");
  EXPECT_DOUBLE_EQ(out[0].duplicates[0]["score"].get<double>(), 0.7);
  EXPECT_EQ(out[2].duplicates[0]["id"], "d:s2");
  EXPECT_TRUE(out[1].duplicates.is_null());
  // Past the kept hits nothing is folded ("tail" repeats the first hit).
  EXPECT_TRUE(out[4].duplicates.is_null());
  // A threshold of 1 folds equal shingle sets only: label2 (it differs in case and
  // punctuation), d:s2 (the summary's very text) and, with room to keep 10, tail.
  EXPECT_EQ(ids(collapse_near_duplicates(hits, 10, 1.0)), (std::vector<std::string>{"label1:s25", "other", "d:s2:summary", "e:s2"}));
}

namespace {
// The pairwise rule as written in fusion.h, on word 3-shingles kept as strings: the
// oracle for the indexed collapse.
std::set<std::string> oracle_shingles(const std::string& text) {
  std::vector<std::string> words;
  std::string w;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c >= 0x80) {
      w += static_cast<char>(std::tolower(c));
    } else if (!w.empty()) {
      words.push_back(w);
      w.clear();
    }
  }
  if (!w.empty()) words.push_back(w);
  std::set<std::string> out;
  if (words.size() < 3) {
    std::string all;
    for (const auto& x : words) all += x + " ";
    if (!words.empty()) out.insert(all);
  } else {
    for (size_t i = 0; i + 2 < words.size(); ++i) out.insert(words[i] + " " + words[i + 1] + " " + words[i + 2]);
  }
  return out;
}

size_t shared(const std::set<std::string>& a, const std::set<std::string>& b) {
  size_t n = 0;
  for (const auto& x : a) n += b.count(x);
  return n;
}

bool oracle_restates(const ScoredHit& summary, const std::set<std::string>& ss, const ScoredHit& chunk,
                     const std::set<std::string>& cs, double t) {
  if (summary.field("type") != "section_summary" || chunk.field("type") == "section_summary") return false;
  const std::string doc = summary.document_id(), path = summary.path(), sub = chunk.path();
  if (doc.empty() || doc != chunk.document_id() || path.empty() || sub.compare(0, path.size(), path) != 0 ||
      (sub.size() != path.size() && sub[path.size()] != '/'))
    return false;
  const double c = static_cast<double>(shared(ss, cs));
  return (ss.empty() ? 0.0 : c / ss.size()) >= t || (cs.empty() ? 0.0 : c / cs.size()) >= t;
}

HitList oracle_collapse(HitList hits, size_t keep, double t) {
  HitList out;
  std::vector<std::set<std::string>> kept;
  size_t i = 0;
  for (; i < hits.size() && out.size() < keep; ++i) {
    auto& h = hits[i];
    auto sh = h.is_image ? std::set<std::string>{} : oracle_shingles(h.text);
    size_t into = out.size();
    for (size_t k = 0; k < out.size() && into == out.size() && !h.is_image; ++k) {
      if (out[k].is_image) continue;
      const double c = static_cast<double>(shared(kept[k], sh));
      const double jac = kept[k].empty() || sh.empty() ? 0.0 : c / (kept[k].size() + sh.size() - c);
      if (jac >= t || oracle_restates(out[k], kept[k], h, sh, t) || oracle_restates(h, sh, out[k], kept[k], t)) into = k;
    }
    if (into == out.size()) {
      out.push_back(h);
      kept.push_back(sh);
      continue;
    }
    if (!out[into].duplicates.is_array()) out[into].duplicates = nlohmann::json::array();
    out[into].duplicates.push_back({{"id", h.id}, {"collection", h.collection}, {"score", h.score}});
  }
  for (; i < hits.size(); ++i) out.push_back(hits[i]);
  return out;
}
}  // namespace

// The collapse compares only hits that share a shingle (from an index of the kept
// hits' shingles); on random lists of overlapping texts, summaries and image tiles it
// gives exactly what the pairwise rule gives, for every threshold and keep.
TEST(CollapseNearDuplicates, IndexedComparisonEqualsThePairwiseOracle) {
  std::mt19937 rng(1234);
  const std::vector<std::string> vocab = {"serious", "infection", "risk", "dose", "Adalimumab", "mg", "week"};
  size_t folds = 0;
  for (int round = 0; round < 300; ++round) {
    HitList hits;
    const size_t n = 1 + rng() % 40;
    for (size_t i = 0; i < n; ++i) {
      std::string text;
      const size_t words = rng() % 9;
      for (size_t w = 0; w < words; ++w) text += vocab[rng() % vocab.size()] + (rng() % 5 ? " " : ", ");
      const std::string doc = "d" + std::to_string(rng() % 3);
      const bool summary = rng() % 4 == 0;
      const std::string path = summary ? "s" + std::to_string(rng() % 2) : "s" + std::to_string(rng() % 2) + "/c";
      auto h = hit("h" + std::to_string(i), 1.0 - 0.01 * i, "c", "", doc, path);
      h.text = text;
      h.metadata["type"] = summary ? "section_summary" : "text";
      h.is_image = rng() % 10 == 0;
      hits.push_back(h);
    }
    for (double t : {0.0, 0.3, 0.5, 0.9, 1.0}) {
      const size_t keep = 1 + rng() % (n + 2);
      auto got = collapse_near_duplicates(hits, keep, t);
      auto want = oracle_collapse(hits, keep, t);
      ASSERT_EQ(ids(got), ids(want)) << "round " << round << " t " << t << " keep " << keep;
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i].duplicates, want[i].duplicates) << "round " << round << " hit " << i;
        folds += got[i].duplicates.is_array() ? got[i].duplicates.size() : 0;
      }
    }
  }
  EXPECT_GT(folds, 100u);  // the lists do fold, so the comparison means something
}

// An image tile links its caption's chunk in source_chunk_id; the tile and the chunk
// are two answers, not one chunk twice (the G32 cross-collection dedupe keeps both),
// and tiles with the same text (pages without text carry the title) are told apart by
// their pixels, not folded.
TEST(DedupeCrossCollection, AnImageTileIsNotTheTextChunkItLinks) {
  HitList merged = {hit("fig-1", 3, "eagle_visual", "chunk-1"), hit("chunk-1", 2, "eagle_text", "chunk-1")};
  merged[0].is_image = true;
  EXPECT_EQ(ids(dedupe_cross_collection(merged, 2, nullptr)), (std::vector<std::string>{"fig-1", "chunk-1"}));
  HitList pages = {hit("doc#page-1", 0.9, "eagle_visual"), hit("doc#page-2", 0.8, "eagle_visual"),
                   hit("doc#caption", 0.7, "eagle_text")};
  for (auto& h : pages) h.text = "A Study Of Something Important In Medicine Today";
  pages[0].is_image = pages[1].is_image = true;
  auto out = collapse_near_duplicates(pages, 10, 0.9);
  EXPECT_EQ(ids(out), (std::vector<std::string>{"doc#page-1", "doc#page-2", "doc#caption"}));
  for (const auto& h : out) EXPECT_TRUE(h.duplicates.is_null()) << h.id;
}

TEST(InjectSupplementCandidates, AddsAtMostMinNewUnseenHitsOnTopWithBoost) {
  HitList merged = {hit("m1", 0.03), hit("m2", 0.02)};
  HitList supp = {hit("m1", 5), hit("s1", 4), hit("s2", 3), hit("s3", 2)};
  auto out = inject_supplement_candidates(merged, supp, 2, 100.0);
  EXPECT_EQ(ids(out), (std::vector<std::string>{"s1", "s2", "m1", "m2"}));
  EXPECT_DOUBLE_EQ(out[0].score, 104.0);
  EXPECT_DOUBLE_EQ(out[1].score, 103.0);
}

TEST(SparseScore, FractionOfQueryTermsAndExtraTermsFoundInText) {
  EXPECT_EQ(sparse_terms_of("PD-1 blockade, PD-1!", {"Nivolumab"}),
            (std::vector<std::string>{"pd-1", "blockade", "nivolumab"}));
  EXPECT_DOUBLE_EQ(sparse_score("PD-1 blockade", "Anti-PD-1 therapy", {}), 0.5);
  EXPECT_DOUBLE_EQ(sparse_score("PD-1 blockade", "pd-1 blockade", {"nivolumab"}), 2.0 / 3);
  EXPECT_DOUBLE_EQ(sparse_score("", "", {}), 0.0);
}

TEST(AlphaHybrid, SeedParityFormula) {
  HitList dense = {hit("a", 0.8), hit("b", 0.6)};
  dense[0].text = "nothing relevant";
  dense[1].text = "egfr mutation";
  auto out = alpha_hybrid(dense, "EGFR mutation", {}, 0.6);
  // a: 0.6 * 0.9 + 0.4 * 0 = 0.54; b: 0.6 * 0.8 + 0.4 * 1 = 0.88
  EXPECT_EQ(out[0].id, "b");
  EXPECT_DOUBLE_EQ(out[0].score, 0.6 * 0.8 + 0.4);
  EXPECT_DOUBLE_EQ(out[1].score, 0.6 * 0.9);
}

TEST(FuseHybrid, WeightedMinMaxAndRrf) {
  HitList dense = {hit("a", 0.9), hit("b", 0.5)};
  HitList lex = {hit("b", 20), hit("c", 10)};
  HybridOptions o;
  o.dense_weight = 0.4;
  auto w = fuse_hybrid(dense, lex, o, false);
  // min-max: a = 0.4 * 1, b = 0.4 * 0 + 0.6 * 1, c = 0.6 * 0
  ASSERT_EQ(ids(w), (std::vector<std::string>{"b", "a", "c"}));
  EXPECT_DOUBLE_EQ(w[0].score, 0.6);
  EXPECT_DOUBLE_EQ(w[1].score, 0.4);
  o.fusion = HybridFusion::rrf;
  auto r = fuse_hybrid(dense, lex, o, false);
  EXPECT_EQ(r[0].id, "b");
  EXPECT_EQ(fuse_hybrid({}, lex, o, false).size(), 2u);
}

TEST(HookBus, FirstReturnsTheFirstNonEmptyResultInPriorityOrder) {
  HookBus bus;
  std::vector<std::string> calls;
  bus.subscribe<HookPoint::RERANK_MERGED>("biomed", 20, [&](HookContext&, const std::string&, const HitList&) {
    calls.push_back("late");
    return std::optional<HitList>(HitList{hit("late", 1)});
  });
  bus.subscribe<HookPoint::RERANK_MERGED>("biomed", 10, [&](HookContext&, const std::string&, const HitList&) {
    calls.push_back("abstain");
    return std::optional<HitList>();
  });
  HookContext ctx;
  ctx.plugin_namespace = "biomed";
  auto r = bus.first<HookPoint::RERANK_MERGED>(ctx, std::string("q"), HitList{});
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)[0].id, "late");
  EXPECT_EQ(calls, (std::vector<std::string>{"abstain", "late"}));
  // Namespace filter: core requests do not see biomed subscribers.
  HookContext core;
  EXPECT_FALSE(bus.first<HookPoint::RERANK_MERGED>(core, std::string("q"), HitList{}));
  EXPECT_FALSE(bus.has_subscribers(HookPoint::RERANK_MERGED, "core"));
}

TEST(HookBus, AllRunsEverySubscriberAndAuditsAndSkipsOneThatThrows) {
  HookBus bus;
  bus.subscribe<HookPoint::RETRIEVE_SUPPLEMENT>("*", 1, [](HookContext&, const std::string&) -> std::optional<HitList> {
    throw std::runtime_error("registry down");
  }, "broken");
  bus.subscribe<HookPoint::RETRIEVE_SUPPLEMENT>("*", 2, [](HookContext&, const std::string&) {
    return std::optional<HitList>(HitList{hit("s", 1)});
  });
  auto sink = std::make_shared<MemorySink>();
  Telemetry tel(sink, "q");
  HookContext ctx;
  ctx.telemetry = &tel;
  auto all = bus.all<HookPoint::RETRIEVE_SUPPLEMENT>(ctx, std::string("q"));
  ASSERT_EQ(all.size(), 1u);
  ASSERT_EQ(tel.audits().size(), 1u);
  EXPECT_EQ(tel.audits()[0]["audit"], "hook_failed");
  EXPECT_EQ(tel.audits()[0]["subscriber"], "broken");
}

// A FIRST subscriber that throws is skipped and audited, never fatal;
// corrupt stored data (data_loss) is not a failure to skip, in any mode.
TEST(HookBus, FirstSkipsAThrowingSubscriberButNotDataLoss) {
  HookBus bus;
  bool corrupt = false;
  bus.subscribe<HookPoint::RERANK_MERGED>("*", 1, [&](HookContext&, const std::string&, const HitList&) -> std::optional<HitList> {
    if (corrupt) throw eagle::Error(eagle::ErrorCode::data_loss, "segment checksum mismatch");
    throw std::runtime_error("model server down");
  }, "broken");
  bus.subscribe<HookPoint::RERANK_MERGED>("*", 2, [](HookContext&, const std::string&, const HitList&) {
    return std::optional<HitList>(HitList{hit("ok", 1)});
  });
  auto sink = std::make_shared<MemorySink>();
  Telemetry tel(sink, "q");
  HookContext ctx;
  ctx.telemetry = &tel;
  auto r = bus.first<HookPoint::RERANK_MERGED>(ctx, std::string("q"), HitList{});
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)[0].id, "ok");
  ASSERT_EQ(tel.audits().size(), 1u);
  EXPECT_EQ(tel.audits()[0]["audit"], "hook_failed");
  corrupt = true;
  try {
    bus.first<HookPoint::RERANK_MERGED>(ctx, std::string("q"), HitList{});
    ADD_FAILURE() << "data_loss was swallowed";
  } catch (const eagle::Error& e) {
    EXPECT_EQ(e.code(), eagle::ErrorCode::data_loss);
  }
}

TEST(HookBus, TransformChainsTheValue) {
  HookBus bus;
  bus.subscribe<HookPoint::CHUNK>("*", 2, [](HookContext&, const nlohmann::json& v) {
    auto o = v;
    o.push_back("second");
    return std::optional<nlohmann::json>(o);
  });
  bus.subscribe<HookPoint::CHUNK>("*", 1, [](HookContext&, const nlohmann::json& v) {
    auto o = v;
    o.push_back("first");
    return std::optional<nlohmann::json>(o);
  });
  HookContext ctx;
  auto out = bus.transform<HookPoint::CHUNK>(ctx, nlohmann::json::array());
  EXPECT_EQ(out, nlohmann::json({"first", "second"}));
  EXPECT_EQ(hook_mode(HookPoint::CHUNK), HookMode::transform);
  EXPECT_EQ(hook_mode(HookPoint::QUERY_ASSEMBLE), HookMode::all);
  EXPECT_EQ(hook_mode(HookPoint::CLASSIFY_QUERY), HookMode::first);
}
