// The ingest hook points a plugin subscribes to through Engine::hooks() (seed SPEC:
// PARSE, CHUNK (transform), CLASSIFY_CHUNK, EMBED_TEXT (first), UPSERT_VECTORS
// (transform), INGEST_ROUTE_SELECTORS (first)), each called at its point on a real
// ingest, and the rule that a FIRST subscriber that throws is skipped, never fatal.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "support/engine_config.h"
#include "eagle/app/engine.h"
#include "eagle/core/error.h"

namespace fs = std::filesystem;
using namespace eagle;
using namespace eagle::app;
using search::HookContext;
using search::HookPoint;
using nlohmann::json;

namespace {

struct HookedStore {
  fs::path dir = fs::temp_directory_path() / ("eagle_ingest_hooks_" + std::to_string(::getpid()));
  std::unique_ptr<Engine> engine;
  fs::path input;

  explicit HookedStore(const std::function<void(Config&)>& tune = {}) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    Config cfg = eagle::test_support::engine_test_config(dir / "store");
    if (tune) tune(cfg);
    engine = std::make_unique<Engine>(cfg, StoreAccess::write, "test");
    input = dir / "docs.jsonl";
    std::ofstream out(input);
    out << json{{"_id", "d1"}, {"title", "Warfarin"}, {"text", "warfarin bleeding risk   DRAFT"}}.dump() << "\n"
        << json{{"_id", "d2"}, {"title", "Metformin"}, {"text", "metformin lactic acidosis"}}.dump() << "\n";
  }
  ~HookedStore() {
    engine.reset();
    fs::remove_all(dir);
  }
  std::optional<search::ScoredHit> hit(const std::string& id, const std::string& query) {
    search::RetrievalRequest r;
    r.query = query;
    r.top_k = 10;
    for (auto& h : engine->search(r).hits)
      if (h.id == id) return h;
    return std::nullopt;
  }
};

IngestOptions options() {
  IngestOptions o;
  o.format = "jsonl";
  return o;
}

}  // namespace

TEST(IngestHooks, ParseClassifyChunkAndUpsertVectorsRunAtTheirPoints) {
  HookedStore s;
  auto& bus = s.engine->hooks();
  std::vector<std::string> order;
  // PARSE (TRANSFORM): the parsed document, before it becomes rows.
  bus.subscribe<HookPoint::PARSE>("core", 0, [&](HookContext&, const json& doc) {
    order.push_back("PARSE " + doc["id"].get<std::string>());
    json d = doc;
    std::string t = d["text"];
    if (auto p = t.find("   DRAFT"); p != std::string::npos) t.erase(p);  // a cleaning plugin
    d["text"] = t;
    return std::optional(d);
  });
  // CLASSIFY_CHUNK (ALL): fields fill gaps only; a throwing subscriber is skipped.
  bus.subscribe<HookPoint::CLASSIFY_CHUNK>("core", 0, [&](HookContext&, const json& chunk) {
    order.push_back("CLASSIFY_CHUNK " + chunk["id"].get<std::string>());
    return std::optional(json{{"source_type", "paper"}, {"document_id", "overridden?"}});
  });
  bus.subscribe<HookPoint::CLASSIFY_CHUNK>("core", 1, [&](HookContext&, const json&) -> std::optional<json> {
    throw Error(ErrorCode::internal, "broken classifier");
  });
  // UPSERT_VECTORS (TRANSFORM): the rows with their vectors, just before the write.
  size_t rows_with_vectors = 0;
  bus.subscribe<HookPoint::UPSERT_VECTORS>("core", 0, [&](HookContext&, const json& rows) {
    order.push_back("UPSERT_VECTORS " + std::to_string(rows.size()));
    json out = rows;
    for (auto& r : out) {
      rows_with_vectors += r.contains("vector") && r["vector"].size() == 100;
      r["year"] = 2024;
    }
    return std::optional(out);
  });
  auto rep = s.engine->ingest({s.input.string()}, options());
  EXPECT_EQ(rep.rows, 2u);
  EXPECT_EQ(order, (std::vector<std::string>{"PARSE d1", "PARSE d2", "CLASSIFY_CHUNK d1", "CLASSIFY_CHUNK d2",
                                             "UPSERT_VECTORS 2"}));
  EXPECT_EQ(rows_with_vectors, 2u);
  auto h = s.hit("d1", "warfarin bleeding");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->text.find("DRAFT"), std::string::npos);  // PARSE's cleaned text was indexed
  EXPECT_EQ(h->metadata.value("source_type", ""), "paper");
  EXPECT_EQ(h->metadata.value("document_id", ""), "d1");  // a gap filler never overrides
  EXPECT_EQ(h->metadata.value("year", 0), 2024);
}

TEST(IngestHooks, RouteSelectorsAndEmbedTextAreFirstAndAThrowingSubscriberIsSkipped) {
  HookedStore s;
  auto& bus = s.engine->hooks();
  // INGEST_ROUTE_SELECTORS (FIRST): the first subscriber throws (skipped), the second
  // sends metformin chunks to their own collection; the rest go the default way.
  bus.subscribe<HookPoint::INGEST_ROUTE_SELECTORS>("core", 0, [](HookContext&, const json&) -> std::optional<json> {
    throw Error(ErrorCode::internal, "broken selector");
  });
  bus.subscribe<HookPoint::INGEST_ROUTE_SELECTORS>("core", 1, [](HookContext&, const json& chunk) -> std::optional<json> {
    if (chunk["text"].get<std::string>().find("metformin") == std::string::npos) return std::nullopt;
    return json{{"collection", "diabetes_text"}};
  });
  // EMBED_TEXT (FIRST): vectors for the texts, in place of the encoder's.
  size_t embedded = 0;
  bus.subscribe<HookPoint::EMBED_TEXT>("core", 0, [&](HookContext&, const std::vector<std::string>& texts,
                                                      const std::string& encoder) {
    EXPECT_EQ(encoder, "glove");
    embedded += texts.size();
    return std::optional(std::vector<std::vector<float>>(texts.size(), std::vector<float>(100, 0.1f)));
  });
  auto rep = s.engine->ingest({s.input.string()}, options());
  EXPECT_EQ(embedded, 2u);
  std::map<std::string, size_t> per(rep.per_collection.begin(), rep.per_collection.end());
  EXPECT_EQ(per["eagle_text"], 1u);
  EXPECT_EQ(per["diabetes_text"], 1u);
  // A subscriber's vectors of the wrong size are refused before anything is written.
  search::HookBus& b = s.engine->hooks();
  b.subscribe<HookPoint::EMBED_TEXT>("core", -1, [](HookContext&, const std::vector<std::string>& texts,
                                                    const std::string&) {
    return std::optional(std::vector<std::vector<float>>(texts.size(), std::vector<float>(3, 0.f)));
  });
  auto again = s.dir / "more.jsonl";
  std::ofstream(again) << json{{"_id", "d3"}, {"text", "insulin"}}.dump() << "\n";
  EXPECT_THROW(s.engine->ingest({again.string()}, options()), Error);
  EXPECT_FALSE(s.hit("d3", "insulin"));
}

// retrieval.txt: "HNSW (default) M=16, efConstruction=256, search ef=64", as keys
// (store.hnsw_*) that the collections an ingest creates take.
TEST(IngestSettings, ACreatedCollectionTakesTheConfiguredHnswSettings) {
  HookedStore s([](Config& c) {
    c.hnsw.m = 8;
    c.hnsw.ef_construction = 100;
    c.hnsw.ef_search = 40;
  });
  s.engine->ingest({s.input.string()}, options());
  const auto& h = s.engine->catalog().get("eagle_text").schema().vector.hnsw;
  EXPECT_EQ(h.m, 8u);
  EXPECT_EQ(h.ef_construction, 100u);
  EXPECT_EQ(h.ef_search, 40u);
  EXPECT_EQ(Config{}.hnsw.m, 16u);
  EXPECT_EQ(Config{}.hnsw.ef_construction, 256u);
  EXPECT_EQ(Config{}.hnsw.ef_search, 64u);
}
