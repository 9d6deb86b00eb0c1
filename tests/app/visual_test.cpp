// Visual retrieval through the path a user takes: `eagle ingest` of the
// sample PDFs makes one page tile per page in eagle_visual (ImageNode fields, the
// image kept in the image store), a page image rescaled and recompressed as JPEG q70
// finds its page first, a caption question finds the page holding the figure, filters
// by document, page and chunk_type hold on image queries, and fusion keeps the tiles'
// fields. Image files are tiles of their own; a file that is not an image is an error.
#include <gtest/gtest.h>
#include "support/build_paths.h"
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "eagle/app/engine.h"
#include "eagle/core/error.h"
#include "eagle/ingest/formats.h"
#include "eagle/ingest/image/descriptor.h"
#include "eagle/ingest/image/image.h"
#include "eagle/ingest/tiles/tiles.h"
#include "shared_data.h"
#include "support/engine_config.h"
#include "support/images.h"
#include "support/temp_engine.h"

namespace fs = std::filesystem;
using namespace eagle;
using namespace eagle::app;
using nlohmann::json;

namespace {

fs::path pdfs() { return eagle::testing::shared_data() / "docs" / "pdf"; }

// One store with the sample PDFs ingested, shared by the tests below (an ingest
// renders 68 pages).
class Visual : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    store_ = new eagle::test_support::TempEngine("visual");
    report_ = new IngestReport(store_->engine->ingest({pdfs().string()}, {}));
  }
  static void TearDownTestSuite() {
    delete report_;
    delete store_;
  }
  static Engine& engine() { return *store_->engine; }
  static store::Collection& visual() { return engine().catalog().get("eagle_visual"); }

  static search::RetrievalResponse ask(search::RetrievalRequest r) { return engine().search(r); }
  static search::RetrievalRequest image_query(std::string bytes, size_t k = 5) {
    search::RetrievalRequest r;
    r.image = std::move(bytes);
    r.has_image = true;
    r.top_k = k;
    return r;
  }

  static eagle::test_support::TempEngine* store_;
  static IngestReport* report_;
};
eagle::test_support::TempEngine* Visual::store_ = nullptr;
IngestReport* Visual::report_ = nullptr;

// Every page tile, by id.
std::map<std::string, store::Record> tiles(store::Collection& c) {
  std::map<std::string, store::Record> out;
  for (const auto& id : c.ids_where_equals("chunk_type", "page")) out.emplace(id, *c.get(id));
  return out;
}

// Reopens the engine of `s` with `encoders` configured (the visual slots' models).
void reopen_with_encoders(eagle::test_support::TempEngine& s, nlohmann::json encoders) {
  s.engine.reset();
  auto cfg = eagle::test_support::engine_test_config(s.dir / "store");
  cfg.encoders = std::move(encoders);
  s.engine = std::make_unique<Engine>(cfg, StoreAccess::write, "test");
}

}  // namespace

TEST_F(Visual, EveryPdfPageIsAPageTileWithImageNodeFieldsAndAKeptImage) {
  ASSERT_TRUE(fs::is_directory(pdfs())) << pdfs();
  EXPECT_TRUE(report_->skipped.empty());
  // As many tiles as poppler counts pages, per document.
  std::map<std::string, int> pages;
  for (const auto& e : fs::directory_iterator(pdfs())) {
    auto articles = ingest::read_documents(e.path(), ingest::FileKind::pdf, e.path().filename().string());
    ASSERT_EQ(articles.size(), 1u);
    pages[articles[0].id] = articles[0].pages;
  }
  auto& c = visual();
  const auto& schema = c.schema();
  EXPECT_EQ(schema.vector.metric, Metric::ip);
  EXPECT_EQ(schema.vector.dim, 255u);  // dct-lowfreq-v1 standing in for qwen3-vl
  EXPECT_EQ(schema.vector.encoder, "qwen3-vl");
  EXPECT_NE(schema.vector.encoder_identity.find("dct-lowfreq-v1"), std::string::npos);
  EXPECT_EQ(schema.vector.hnsw.m, 16u);
  EXPECT_EQ(schema.vector.hnsw.ef_construction, 256u);
  EXPECT_EQ(schema.vector.hnsw.ef_search, 64u);

  int expected = 0;
  for (const auto& [doc, n] : pages) expected += n;
  const auto all = tiles(c);
  EXPECT_EQ(static_cast<int>(all.size()), expected);
  EXPECT_EQ(c.count(), all.size() + c.ids_where_equals("chunk_type", "figure").size());
  const auto images = engine().image_store();
  auto& text = engine().catalog().get("eagle_text");
  auto field = [&](const store::Record& r, const char* name) -> const Value& {
    return r.values[*schema.field_index(name)];
  };
  std::map<std::string, std::set<int64_t>> seen;
  for (const auto& [id, row] : all) {
    const auto doc = std::get<std::string>(field(row, "document_id"));
    const auto page = std::get<int64_t>(field(row, "page"));
    ASSERT_TRUE(pages.count(doc)) << doc;
    EXPECT_GE(page, 1);
    EXPECT_LE(page, pages[doc]);
    seen[doc].insert(page);
    EXPECT_EQ(id, doc + "#page-" + std::to_string(page));
    EXPECT_EQ(std::get<std::string>(field(row, "type")), "image");
    EXPECT_EQ(std::get<std::string>(field(row, "position")), "0,0,1,1");
    EXPECT_EQ(std::get<std::string>(field(row, "source_type")), "paper");
    // The kept image decodes to the size the row records.
    const auto name = std::get<std::string>(field(row, "image"));
    ASSERT_TRUE(ingest::ImageStore::valid_name(name)) << name;
    const auto img = ingest::decode_image(images.get(name), name);
    EXPECT_EQ(static_cast<int64_t>(img.width), std::get<int64_t>(field(row, "width")));
    EXPECT_EQ(static_cast<int64_t>(img.height), std::get<int64_t>(field(row, "height")));
    // Its text chunk: a row of the text collection, on the same page.
    if (const auto* chunk = std::get_if<std::string>(&field(row, "source_chunk_id"))) {
      auto t = text.get(*chunk);
      ASSERT_TRUE(t) << *chunk;
      EXPECT_EQ(std::get<int64_t>(t->values[*text.schema().field_index("page")]), page) << *chunk;
    }
  }
  for (const auto& [doc, n] : pages) EXPECT_EQ(static_cast<int>(seen[doc].size()), n) << doc;
  // The registry knows the documents live in both collections.
  auto rec = engine().registry().get(pages.begin()->first);
  ASSERT_TRUE(rec);
  EXPECT_NE(std::find(rec->collections_used.begin(), rec->collections_used.end(), "eagle_visual"),
            rec->collections_used.end());
}

// An image query made from a page tile re-encoded as JPEG at quality
// 70 returns that page first; here also shrunk to 60%, for every page.
TEST_F(Visual, EveryPageShrunkAndRecompressedAsJpegQ70FindsItsPageFirst) {
  const auto images = engine().image_store();
  const auto& schema = visual().schema();
  size_t checked = 0;
  const auto pages = tiles(visual());
  for (const auto& [id, row] : pages) {
    const auto name = std::get<std::string>(row.values[*schema.field_index("image")]);
    const auto page = ingest::decode_image(images.get(name), name);
    const auto small = ingest::resize_area(page, page.width * 3 / 5, page.height * 3 / 5);
    auto resp = ask(image_query(ingest::encode_jpeg(small, 70), 3));
    ASSERT_FALSE(resp.hits.empty()) << id;
    EXPECT_EQ(resp.hits[0].id, id);
    EXPECT_TRUE(resp.hits[0].is_image);
    EXPECT_EQ(resp.hits[0].collection, "eagle_visual");
    // Only the visual collection is asked: there are no words to search text with.
    ASSERT_EQ(resp.route.plans.size(), 1u);
    EXPECT_EQ(resp.route.plans[0].collection, "eagle_visual");
    ++checked;
  }
  EXPECT_EQ(checked, pages.size());
}

// A caption question returns its figure tile. Every figure the
// PDF reader located is a tile cut from its page, linked to the chunk holding its
// caption; that caption, asked in the visual route, finds the tile first.
TEST_F(Visual, ACaptionQuestionReturnsItsFigureTile) {
  auto& v = visual();
  const auto& vs = v.schema();
  auto& text = engine().catalog().get("eagle_text");
  size_t figures = 0, asked = 0, first = 0;
  std::string misses;
  for (const auto& id : v.ids_where_equals("chunk_type", "figure")) {
    const auto tile = *v.get(id);
    ++figures;
    // Its box lies on the page, and its page tile exists.
    const auto pos = std::get<std::string>(tile.values[*vs.field_index("position")]);
    double x0, y0, x1, y1;
    ASSERT_EQ(std::sscanf(pos.c_str(), "%lf,%lf,%lf,%lf", &x0, &y0, &x1, &y1), 4) << pos;
    EXPECT_TRUE(0 <= x0 && x0 < x1 && x1 <= 1 && 0 <= y0 && y0 < y1 && y1 <= 1) << id << " " << pos;
    const auto doc = std::get<std::string>(tile.values[*vs.field_index("document_id")]);
    const auto page = std::get<int64_t>(tile.values[*vs.field_index("page")]);
    EXPECT_TRUE(v.get(doc + "#page-" + std::to_string(page))) << id;
    const auto* chunk = std::get_if<std::string>(&tile.values[*vs.field_index("source_chunk_id")]);
    if (!chunk) continue;
    auto caption = text.get(*chunk);
    ASSERT_TRUE(caption) << *chunk;
    search::RetrievalRequest r;
    r.query = caption->text;
    r.route_mode = search::RouteMode::visual;
    r.top_k = 3;
    auto resp = ask(r);
    ++asked;
    if (!resp.hits.empty() && resp.hits[0].id == id) ++first;
    else misses += "\n  " + id + " <- " + caption->text.substr(0, 80) + " got " + (resp.hits.empty() ? "-" : resp.hits[0].id);
  }
  EXPECT_GT(figures, 5u);
  EXPECT_GT(asked, 5u);
  EXPECT_EQ(first, asked) << misses;
}

TEST_F(Visual, FiltersByDocumentPageAndChunkTypeHoldOnImageQueries) {
  const auto images = engine().image_store();
  const auto& schema = visual().schema();
  const auto all = tiles(visual());
  const auto& [id, row] = *all.begin();
  const auto name = std::get<std::string>(row.values[*schema.field_index("image")]);
  const auto doc = std::get<std::string>(row.values[*schema.field_index("document_id")]);
  const std::string bytes = images.get(name);
  const auto figure_ids = visual().ids_where_equals("chunk_type", "figure");

  auto by_doc = image_query(bytes, 50);
  by_doc.scope_filter.document_ids = {"vespa-peerj.pdf"};
  auto resp = ask(by_doc);
  ASSERT_FALSE(resp.hits.empty());
  for (const auto& h : resp.hits) EXPECT_EQ(h.document_id(), "vespa-peerj.pdf") << h.id;

  auto by_page = image_query(bytes, 50);
  by_page.filter = "page == 2";
  resp = ask(by_page);
  size_t on_page_2 = 0;
  for (const auto& [tid, t] : all) on_page_2 += std::get<int64_t>(t.values[*schema.field_index("page")]) == 2;
  on_page_2 += static_cast<size_t>(std::count_if(
      figure_ids.begin(), figure_ids.end(), [&](const std::string& f) { return f.find("#page-2-figure-") != std::string::npos; }));
  EXPECT_EQ(resp.hits.size(), on_page_2);
  for (const auto& h : resp.hits) EXPECT_EQ(h.metadata.value("page", 0), 2) << h.id;

  auto pages_only = image_query(bytes, 5);
  pages_only.facets["chunk_type"] = "page";
  resp = ask(pages_only);
  ASSERT_FALSE(resp.hits.empty());
  EXPECT_EQ(resp.hits[0].id, id);
  for (const auto& h : resp.hits) EXPECT_EQ(h.field("chunk_type"), "page") << h.id;
  // Words in the visual route with a document scope: still the image collections only
  // (the scope's catalog union adds no text collection).
  search::RetrievalRequest scoped;
  scoped.query = "positive selection";
  scoped.route_mode = search::RouteMode::visual;
  scoped.scope_filter.document_ids = {"vespa-peerj.pdf"};
  resp = ask(scoped);
  for (const auto& p : resp.route.plans) EXPECT_EQ(p.collection, "eagle_visual");
  for (const auto& h : resp.hits) EXPECT_TRUE(h.is_image) << h.id;

  auto figures_only = image_query(bytes, 50);
  figures_only.facets["chunk_type"] = "figure";
  resp = ask(figures_only);
  EXPECT_EQ(resp.hits.size(), figure_ids.size());
  for (const auto& h : resp.hits) EXPECT_EQ(h.field("chunk_type"), "figure") << h.id;
  auto tiles_only = image_query(bytes, 5);
  tiles_only.facets["chunk_type"] = "tile";  // no free tiles in this store
  EXPECT_TRUE(ask(tiles_only).hits.empty());
  (void)doc;
}

// seed §11: "ImageNode metadata: fusion anchor fields preserved". A hybrid question
// (text and visual plans fused by RRF) keeps every tile's fields.
TEST_F(Visual, FusionKeepsTheImageNodeFields) {
  search::RetrievalRequest r;
  r.query = "positive selection codeml model";
  r.route_mode = search::RouteMode::hybrid;
  r.top_k = 10;
  auto resp = ask(r);
  ASSERT_EQ(resp.route.plans.size(), 2u);
  size_t image_hits = 0;
  for (const auto& h : resp.hits) {
    if (h.collection != "eagle_visual") continue;
    ++image_hits;
    EXPECT_TRUE(h.is_image) << h.id;
    for (const char* f : {"image", "position", "document_id", "chunk_type", "source_type"})
      EXPECT_FALSE(h.field(f).empty()) << h.id << " lost " << f;
    EXPECT_TRUE(h.metadata.contains("page")) << h.id;
  }
  EXPECT_GT(image_hits, 0u);
  EXPECT_EQ(resp.metadata.value("visual_count", size_t{0}) > 0, true);
}

TEST_F(Visual, AnImageQueryThatIsNotAnImageIsAnErrorNotZeroHits) {
  try {
    ask(image_query("not an image at all"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("the query image"), std::string::npos) << e.what();
  }
  // A query image is bounded to 16 million pixels (a small file can decode to much).
  ingest::RgbImage huge;
  huge.width = 5000;
  huge.height = 3300;
  huge.pixels.assign(static_cast<size_t>(huge.width) * huge.height * 3, 255);
  try {
    ask(image_query(ingest::encode_png(huge)));
    FAIL() << "a 16.5-megapixel query image was decoded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("16000000"), std::string::npos) << e.what();
  }
  // Words and an image: both plans, and the image's page can still lead.
  const auto images = engine().image_store();
  const auto& schema = visual().schema();
  const auto all = tiles(visual());
  const auto& row = all.begin()->second;
  auto both = image_query(images.get(std::get<std::string>(row.values[*schema.field_index("image")])), 5);
  both.query = "phylogenetic analysis";
  auto resp = ask(both);
  EXPECT_EQ(resp.route.plans.size(), 2u);
}

// An image file is a document of its own: one tile of chunk_type image, found by its
// file name's words and by its pixels; the same bytes again are not re-read; deleting
// the document removes the tile.
TEST(VisualFiles, AnImageFileIsATileFoundByItsNameAndItsPixels) {
  eagle::test_support::TempEngine s("visual_files");
  const fs::path dir = s.dir / "figures";
  fs::create_directories(dir);
  const auto img = eagle::test_support::patterned_image(120, 80);
  const std::string png = ingest::encode_png(img);
  std::ofstream(dir / "kaplan-meier_overall-survival.png", std::ios::binary) << png;
  std::ofstream(dir / "broken.jpg", std::ios::binary) << "\xFF\xD8\xFF not really";

  IngestOptions opts;
  EXPECT_THROW(s.engine->ingest({dir.string()}, opts), Error);  // the broken one, named
  EXPECT_FALSE(s.engine->catalog().exists("eagle_visual"));   // nothing was kept
  opts.skip_bad = true;
  auto rep = s.engine->ingest({dir.string()}, opts);
  EXPECT_EQ(rep.documents, 1u);
  ASSERT_EQ(rep.skipped.size(), 1u);
  EXPECT_NE(rep.skipped[0].find("broken.jpg"), std::string::npos) << rep.skipped[0];

  search::RetrievalRequest r;
  r.query = "overall survival";
  r.route_mode = search::RouteMode::visual;
  auto resp = s.engine->search(r);
  ASSERT_EQ(resp.hits.size(), 1u);
  EXPECT_EQ(resp.hits[0].id, "kaplan-meier_overall-survival.png");
  EXPECT_EQ(resp.hits[0].field("chunk_type"), "image");
  EXPECT_EQ(resp.hits[0].field("source_type"), "image");

  search::RetrievalRequest q;
  q.image = ingest::encode_jpeg(img, 70);
  q.has_image = true;
  resp = s.engine->search(q);
  ASSERT_FALSE(resp.hits.empty());
  EXPECT_EQ(resp.hits[0].id, "kaplan-meier_overall-survival.png");
  EXPECT_GT(resp.hits[0].score, 0.99);

  // The same bytes again: not read again.
  rep = s.engine->ingest({dir.string()}, opts);
  EXPECT_EQ(rep.documents, 0u);
  EXPECT_EQ(rep.unchanged.size(), 1u);

  // Re-embedded from the kept images under the descriptor's own label: the plans
  // follow, and the image still finds itself.
  auto re = s.engine->reembed("eagle_visual", "dct-lowfreq");
  EXPECT_EQ(re.rows, 1u);
  EXPECT_EQ(re.encoder_before, "qwen3-vl");
  EXPECT_EQ(s.engine->catalog().get("eagle_visual").schema().vector.encoder, "dct-lowfreq");
  resp = s.engine->search(q);
  ASSERT_FALSE(resp.hits.empty());
  EXPECT_EQ(resp.hits[0].id, "kaplan-meier_overall-survival.png");
  EXPECT_EQ(resp.route.plans[0].encoder, "dct-lowfreq");
  // A text encoder cannot re-embed image tiles.
  EXPECT_THROW(s.engine->reembed("eagle_visual", "glove"), Error);

  const auto kept = s.engine->image_store().path_of(
      std::get<std::string>(s.engine->catalog().get("eagle_visual").get("kaplan-meier_overall-survival.png")->values
                                [*s.engine->catalog().get("eagle_visual").schema().field_index("image")]));
  EXPECT_TRUE(fs::exists(kept));
  EXPECT_EQ(s.engine->delete_document("kaplan-meier_overall-survival.png"), 1u);
  EXPECT_EQ(s.engine->catalog().get("eagle_visual").count(), 0u);
  // Its kept image goes at the next compaction, not before (a reader may be showing it).
  EXPECT_TRUE(fs::exists(kept));
  EXPECT_EQ(s.engine->compact(), 1u);
  EXPECT_FALSE(fs::exists(kept));
  EXPECT_EQ(s.engine->compact(), 0u);
}

#if EAGLE_TEST_WITH_BIOMED  // the biomed plugin's
// The seed's hard rule (biomed-retrieval.txt): a medical image goes to its medical
// slot (biomed's CLASSIFY_VISUAL subscriber, by caption or name) and is never embedded
// by the general visual encoder; without the slot's model it is left out, said in the
// report, and a question for it abstains with an audit event.
TEST(VisualHooks, AMedicalImageGoesToItsSlotOrIsLeftOutNeverToTheGeneralEncoder) {
  eagle::test_support::TempEngine s("visual_medical");
  const fs::path dir = s.dir / "figures";
  fs::create_directories(dir);
  std::ofstream(dir / "ct_scan_of_the_liver.png", std::ios::binary)
      << ingest::encode_png(eagle::test_support::patterned_image(64, 48));
  std::ofstream(dir / "enrolment_bar_chart.png", std::ios::binary)
      << ingest::encode_png(eagle::test_support::patterned_image(50, 90));
  IngestOptions biomed;
  biomed.plugin_namespace = "biomed";
  auto rep = s.engine->ingest({dir.string()}, biomed);
  ASSERT_EQ(rep.skipped.size(), 1u);
  EXPECT_NE(rep.skipped[0].find("ct_scan_of_the_liver.png: a radiology image needs encoder 'medimageinsight'"),
            std::string::npos)
      << rep.skipped[0];
  auto& general = s.engine->catalog().get("eagle_visual");
  EXPECT_EQ(general.count(), 1u);
  EXPECT_TRUE(general.get("enrolment_bar_chart.png"));
  EXPECT_FALSE(s.engine->catalog().exists("eagle_medical_radiology"));

  search::RetrievalRequest r;
  r.query = "ct scan of the liver";
  r.plugin_namespace = "biomed";
  r.route_mode = search::RouteMode::visual;
  r.explain = true;
  auto resp = s.engine->search(r);
  for (const auto& p : resp.route.plans) EXPECT_NE(p.collection, "eagle_medical_radiology");
  EXPECT_NE(resp.metadata["audits"].dump().find("medical_imaging_abstained"), std::string::npos)
      << resp.metadata["audits"].dump();

  // With a model for the slot (here the descriptor, configured under the slot's
  // label), the image lands in the medical collection and is found there.
  reopen_with_encoders(s, {{"medimageinsight", {{"type", "descriptor"}}}});
  biomed.reindex = true;
  rep = s.engine->ingest({dir.string()}, biomed);
  EXPECT_TRUE(rep.skipped.empty()) << rep.skipped[0];
  auto& medical = s.engine->catalog().get("eagle_medical_radiology");
  EXPECT_EQ(medical.schema().vector.encoder, "medimageinsight");
  EXPECT_TRUE(medical.get("ct_scan_of_the_liver.png"));
  EXPECT_FALSE(s.engine->catalog().get("eagle_visual").get("ct_scan_of_the_liver.png"));
  resp = s.engine->search(r);
  ASSERT_FALSE(resp.hits.empty());
  EXPECT_EQ(resp.hits[0].id, "ct_scan_of_the_liver.png");
  EXPECT_EQ(resp.hits[0].collection, "eagle_medical_radiology");
}
#endif

// EMBED_VISUAL (FIRST) embeds images in place of the encoder, at ingest and for a
// query image; a wrong dimension is refused before anything is written.
TEST(VisualHooks, EmbedVisualReplacesTheEncoderAtIngestAndQuery) {
  eagle::test_support::TempEngine s("visual_embed_hook");
  const fs::path dir = s.dir / "figures";
  fs::create_directories(dir);
  const auto img = eagle::test_support::patterned_image(40, 40);
  std::ofstream(dir / "figure.png", std::ios::binary) << ingest::encode_png(img);
  size_t calls = 0, images_seen = 0;
  uint32_t dim = ingest::kDescriptorDim + 1;  // first wrong, then right
  s.engine->hooks().subscribe<search::HookPoint::EMBED_VISUAL>(
      "core", 10,
      [&](search::HookContext&, const std::vector<std::string_view>& images, const std::string& encoder) {
        ++calls;
        images_seen += images.size();
        EXPECT_EQ(encoder, "qwen3-vl");
        std::vector<std::vector<float>> out(images.size(), std::vector<float>(dim, 0.0f));
        for (auto& v : out) v[1] = 1.0f;
        return std::optional(out);
      },
      "test_embed_visual");
  EXPECT_THROW(s.engine->ingest({dir.string()}, {}), Error);
  EXPECT_FALSE(s.engine->catalog().exists("eagle_visual"));
  dim = ingest::kDescriptorDim;
  auto rep = s.engine->ingest({dir.string()}, {});
  EXPECT_EQ(rep.rows, 1u);
  ASSERT_TRUE(s.engine->catalog().get("eagle_visual").get("figure.png"));
  const size_t before = calls;
  search::RetrievalRequest q;
  q.image = ingest::encode_jpeg(img, 90);
  q.has_image = true;
  auto resp = s.engine->search(q);
  EXPECT_EQ(calls, before + 1);
  ASSERT_EQ(resp.hits.size(), 1u);
  // Both vectors are the hook's (e1 . e1); the descriptor's would not give exactly 1.
  EXPECT_NEAR(resp.hits[0].score, 1.0, 1e-6);
  EXPECT_EQ(images_seen, 3u);
}

// A configured image encoder with a text tower (here DashScope's multimodal API on a
// local server): tiles are embedded by it, and a text query reaches them through the
// dense leg too, fused with the lexical one.
TEST(VisualRemote, AConfiguredMultimodalEncoderEmbedsTilesAndTextQueries) {
  httplib::Server server;
  std::atomic<int> images{0}, texts{0};
  server.Post("/api/v1/services/embeddings/multimodal-embedding/multimodal-embedding",
              [&](const httplib::Request& req, httplib::Response& res) {
                auto body = nlohmann::json::parse(req.body);
                nlohmann::json embs = nlohmann::json::array();
                size_t i = 0;
                for (const auto& c : body["input"]["contents"]) {
                  (c.contains("image") ? images : texts)++;
                  embs.push_back({{"index", i++}, {"embedding", {0.6, 0.8, 0.0}}});
                }
                res.set_content(nlohmann::json{{"output", {{"embeddings", embs}}}}.dump(), "application/json");
              });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread listener([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  eagle::test_support::TempEngine s("visual_remote");
  reopen_with_encoders(s, {{"qwen3-vl",
                               {{"type", "dashscope-multimodal"},
                                {"base_url", "http://127.0.0.1:" + std::to_string(port)},
                                {"model", "qwen3-vl-embedding"},
                                {"dim", 3}}}});
  const fs::path dir = s.dir / "figures";
  fs::create_directories(dir);
  std::ofstream(dir / "survival_curve.png", std::ios::binary)
      << ingest::encode_png(eagle::test_support::patterned_image(30, 20));
  auto rep = s.engine->ingest({dir.string()}, {});
  EXPECT_EQ(rep.rows, 1u);
  EXPECT_EQ(images.load(), 1);
  EXPECT_EQ(s.engine->catalog().get("eagle_visual").schema().vector.dim, 3u);

  search::RetrievalRequest r;
  r.query = "survival curve";
  r.route_mode = search::RouteMode::visual;
  r.explain = true;
  auto resp = s.engine->search(r);
  EXPECT_EQ(texts.load(), 1);  // the query, embedded in the images' space
  ASSERT_EQ(resp.hits.size(), 1u);
  EXPECT_TRUE(resp.hits[0].explain.legs.contains("dense:eagle_visual")) << resp.hits[0].explain.legs.dump();
  EXPECT_TRUE(resp.hits[0].explain.legs.contains("bm25:eagle_visual")) << resp.hits[0].explain.legs.dump();
  s.engine.reset();
  server.stop();
  listener.join();
}

// An image the encoder refuses at embedding time (here its own pixel bound, below the
// reader's) fails the ingest, or with --skip-bad is reported and left out while the
// other images are kept.
TEST(VisualFiles, AnImageTheEncoderRefusesIsSkippedWithSkipBad) {
  eagle::test_support::TempEngine s("visual_refused");
  reopen_with_encoders(s, {{"qwen3-vl", {{"type", "descriptor"}, {"max_pixels", 1000}}}});
  const fs::path dir = s.dir / "figures";
  fs::create_directories(dir);
  std::ofstream(dir / "large.png", std::ios::binary) << ingest::encode_png(eagle::test_support::patterned_image(50, 50));
  std::ofstream(dir / "small.png", std::ios::binary) << ingest::encode_png(eagle::test_support::patterned_image(20, 20));
  EXPECT_THROW(s.engine->ingest({dir.string()}, {}), Error);
  IngestOptions skip;
  skip.skip_bad = true;
  auto rep = s.engine->ingest({dir.string()}, skip);
  EXPECT_EQ(rep.rows, 1u);
  ASSERT_EQ(rep.skipped.size(), 1u);
  EXPECT_NE(rep.skipped[0].find("large.png"), std::string::npos) << rep.skipped[0];
  EXPECT_NE(rep.skipped[0].find("max_pixels"), std::string::npos) << rep.skipped[0];
  EXPECT_TRUE(s.engine->catalog().get("eagle_visual").get("small.png"));
  EXPECT_FALSE(s.engine->catalog().get("eagle_visual").get("large.png"));
}

#if EAGLE_TEST_WITH_BIOMED  // the biomed plugin's
// The native CLIP runtime as the visual encoders (tiny random-weight fixtures of
// tests/fixtures/clip): the general slot on a BiomedCLIP-shaped model (image and text
// towers), the pathology slot on a UNI2-shaped image-only ViT. Tiles are embedded by
// them; a text query reaches a tile through the text tower's dense leg; an image query
// finds its own image first; a text query on the image-only slot is answered by the
// lexical leg, not an error.
TEST(VisualNative, ClipAndVitTowersEmbedTilesTextAndImageQueries) {
  const fs::path models = fs::path(EAGLE_SOURCE_DIR) / "tests/fixtures/clip";
  eagle::test_support::TempEngine s("visual_native");
  reopen_with_encoders(s, {{"qwen3-vl", {{"type", "clip"}, {"path", (models / "openclip-timm").string()}}},
                              {"uni2", {{"type", "clip"}, {"path", (models / "timm-reg").string()}}}});
  const fs::path dir = s.dir / "figures";
  fs::create_directories(dir);
  const auto curve = eagle::test_support::patterned_image(120, 80);
  std::ofstream(dir / "survival_curve.png", std::ios::binary) << ingest::encode_png(curve);
  std::ofstream(dir / "forest_plot.png", std::ios::binary)
      << ingest::encode_png(eagle::test_support::patterned_image(64, 200));
  std::ofstream(dir / "histology_of_the_tumour.png", std::ios::binary)
      << ingest::encode_png(eagle::test_support::patterned_image(90, 90));
  IngestOptions biomed;
  biomed.plugin_namespace = "biomed";
  auto rep = s.engine->ingest({dir.string()}, biomed);
  EXPECT_TRUE(rep.skipped.empty());
  auto& general = s.engine->catalog().get("eagle_visual");
  EXPECT_EQ(general.count(), 2u);
  EXPECT_EQ(general.schema().vector.dim, 16u);
  EXPECT_EQ(general.schema().vector.metric, Metric::ip);  // seed §6.2, on L2-normalised embeddings
  auto& pathology = s.engine->catalog().get("eagle_medical_pathology");
  EXPECT_EQ(pathology.schema().vector.encoder, "uni2");
  EXPECT_EQ(pathology.schema().vector.dim, 32u);
  EXPECT_TRUE(pathology.get("histology_of_the_tumour.png"));

  search::RetrievalRequest text;
  text.query = "survival curve";
  text.route_mode = search::RouteMode::visual;
  text.explain = true;
  auto resp = s.engine->search(text);
  ASSERT_FALSE(resp.hits.empty());
  EXPECT_EQ(resp.hits[0].id, "survival_curve.png");
  EXPECT_TRUE(resp.hits[0].explain.legs.contains("dense:eagle_visual")) << resp.hits[0].explain.legs.dump();

  search::RetrievalRequest image;
  image.image = ingest::encode_jpeg(curve, 90);
  image.has_image = true;
  resp = s.engine->search(image);
  ASSERT_FALSE(resp.hits.empty());
  EXPECT_EQ(resp.hits[0].id, "survival_curve.png");
  EXPECT_GT(resp.hits[0].score, 0.0);

  search::RetrievalRequest slide;
  slide.query = "histology of the tumour";
  slide.plugin_namespace = "biomed";
  slide.route_mode = search::RouteMode::visual;
  slide.explain = true;
  resp = s.engine->search(slide);
  // The pathology plan answers by its lexical leg alone (the image-only tower embeds
  // no text); where it ranks against the general plan's dense leg depends on the
  // random weights, so the test asks that it is found there, not where.
  const auto found = std::find_if(resp.hits.begin(), resp.hits.end(),
                                  [](const auto& h) { return h.id == "histology_of_the_tumour.png"; });
  ASSERT_NE(found, resp.hits.end());
  EXPECT_EQ(found->collection, "eagle_medical_pathology");
  EXPECT_TRUE(found->explain.legs.contains("bm25:eagle_medical_pathology")) << found->explain.legs.dump();
  EXPECT_FALSE(found->explain.legs.contains("dense:eagle_medical_pathology")) << found->explain.legs.dump();
}
#endif

// A JATS article's figures become figure tiles when their image files sit beside the
// .nxml (as in a PMC package): found by their captions, linked to the caption chunk;
// a figure without its file is left out, and a graphic's name cannot reach outside
// the folder.
TEST(VisualFiles, JatsFiguresWithTheirImageFilesBecomeFigureTiles) {
  eagle::test_support::TempEngine s("visual_jats_figures");
  const fs::path dir = s.dir / "package";
  fs::create_directories(dir);
  fs::copy_file(eagle::testing::shared_data() / "docs/jats/ehp-116-1694.nxml", dir / "ehp-116-1694.nxml");
  std::ofstream(dir / "ehp-116-1694f1.jpg", std::ios::binary)
      << ingest::encode_jpeg(eagle::test_support::patterned_image(80, 60), 90);
  std::ofstream(dir / "ehp-116-1694f2.png", std::ios::binary)
      << ingest::encode_png(eagle::test_support::patterned_image(60, 80));
  // A figure file outside the package must not be reached by a crafted name.
  std::ofstream(s.dir / "ehp-116-1694f3.png", std::ios::binary)
      << ingest::encode_png(eagle::test_support::patterned_image(10, 10));
  auto rep = s.engine->ingest({dir.string()}, {});
  EXPECT_TRUE(rep.skipped.empty());
  auto& visual = s.engine->catalog().get("eagle_visual");
  const auto figures = visual.ids_where_equals("chunk_type", "figure");
  ASSERT_EQ(figures.size(), 2u);
  // The figure files are the article's figures, not image documents of their own.
  EXPECT_EQ(visual.count(), 2u);
  EXPECT_TRUE(visual.ids_where_equals("chunk_type", "image").empty());
  auto& text = s.engine->catalog().get("eagle_text");
  std::set<std::string> graphics;
  auto as_json = [](store::Collection& c, const std::string& id) {
    const auto r = c.get(id);
    return r ? store::record_to_json(*r, c.schema(), false) : json();
  };
  for (const auto& id : figures) {
    const auto row = as_json(visual, id);
    const auto chunk = as_json(text, row.at("source_chunk_id").get<std::string>());
    ASSERT_FALSE(chunk.is_null()) << row.dump();
    EXPECT_EQ(chunk.at("type"), "figure");
    EXPECT_EQ(row.at("text"), chunk.at("text"));
    const auto meta = chunk.at("metadata").is_string() ? json::parse(chunk.at("metadata").get<std::string>()) : chunk.at("metadata");
    graphics.insert(meta.at("graphic").get<std::string>());
    EXPECT_TRUE(s.engine->tile_image(id).has_value());
  }
  EXPECT_EQ(graphics, (std::set<std::string>{"ehp-116-1694f1", "ehp-116-1694f2"}));

  // Asked by its caption's words, the figure tile comes first in the visual route.
  search::RetrievalRequest r;
  r.query = as_json(visual, *figures.begin()).at("text").get<std::string>().substr(0, 120);
  r.route_mode = search::RouteMode::visual;
  auto resp = s.engine->search(r);
  ASSERT_FALSE(resp.hits.empty());
  EXPECT_EQ(resp.hits[0].id, *figures.begin());

  // A Markdown note's image (--format markdown) is its figure tile, once.
  const fs::path notes = s.dir / "notes";
  fs::create_directories(notes);
  std::ofstream(notes / "trial.md") << "# Trial\n\nEnrolment grew each month.\n\n![Figure 1. Enrolment by month](enrolment.png)\n";
  std::ofstream(notes / "enrolment.png", std::ios::binary) << ingest::encode_png(eagle::test_support::patterned_image(40, 30));
  IngestOptions markdown;
  markdown.format = "markdown";
  rep = s.engine->ingest({notes.string()}, markdown);
  EXPECT_TRUE(rep.skipped.empty());
  const auto note_tiles = visual.ids_where_equals("document_id", "trial.md");
  ASSERT_EQ(note_tiles.size(), 1u);
  EXPECT_EQ(as_json(visual, note_tiles[0]).at("chunk_type"), "figure");
  EXPECT_TRUE(visual.ids_where_equals("document_id", "enrolment.png").empty());

  // The graphic's file name only: "../ehp-116-1694f3" finds nothing outside the folder.
  ingest::Article article;
  article.id = "x";
  std::vector<nlohmann::json> rows{{{"id", "x#c1"}, {"type", "figure"}, {"text", "Figure 3"},
                                    {"metadata", {{"graphic", "../ehp-116-1694f3"}}}}};
  size_t found = 0;
  ingest::figure_file_tiles(dir / "ehp-116-1694.nxml", article, rows, {}, [&](ingest::ImageTile&&) { ++found; });
  EXPECT_EQ(found, 0u);
}
