// One typed suite over every collection flavour: in-memory and persistent, flat
// and HNSW (recall-tolerant assertions for HNSW), as Xapian runs its API tests
// against every backend.
#include "eagle/store/collection.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <set>

#include "eagle/core/error.h"

namespace fs = std::filesystem;
using namespace eagle;
using namespace eagle::store;

namespace {

struct InMemoryFlat {
  static constexpr bool persistent = false;
  static constexpr VectorIndexKind kind = VectorIndexKind::flat;
};
struct InMemoryHnsw {
  static constexpr bool persistent = false;
  static constexpr VectorIndexKind kind = VectorIndexKind::hnsw;
};
struct PersistentFlat {
  static constexpr bool persistent = true;
  static constexpr VectorIndexKind kind = VectorIndexKind::flat;
};
struct PersistentHnsw {
  static constexpr bool persistent = true;
  static constexpr VectorIndexKind kind = VectorIndexKind::hnsw;
};

constexpr uint32_t kDim = 16;

template <typename Flavour>
class CollectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    dir_ = fs::temp_directory_path() /
           ("eagle_coll_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(dir_);
    schema_ = chunk_schema("chunks", kDim, Metric::cosine, {{"topics", FieldType::string_list, true}});
    schema_.vector.index = Flavour::kind;
    c_ = Flavour::persistent ? Collection::create(dir_, schema_) : Collection::in_memory(schema_);
  }
  void TearDown() override {
    c_.reset();
    fs::remove_all(dir_);
  }
  // Persistent flavours: close and reopen (what a restart does); others: no-op.
  void reopen() {
    if (!Flavour::persistent) return;
    c_.reset();
    c_ = Collection::open(dir_);
  }
  Record make(const std::string& id, std::mt19937& rng, const std::string& kb, int64_t year,
              const std::string& text = "") {
    Record r;
    r.id = id;
    r.text = text.empty() ? "passage " + id : text;
    std::normal_distribution<float> g;
    for (uint32_t d = 0; d < kDim; ++d) r.vector.push_back(g(rng));
    r.values.assign(schema_.fields.size(), std::monostate{});
    r.values[*schema_.field_index("kb_name")] = kb;
    r.values[*schema_.field_index("year")] = year;
    r.values[*schema_.field_index("document_id")] = "doc-" + id.substr(0, 2);
    r.values[*schema_.field_index("topics")] = StringList{year % 2 ? "imatinib" : "nilotinib"};
    return r;
  }
  std::vector<Record> batch(int n, std::mt19937& rng, const std::string& prefix = "r") {
    std::vector<Record> out;
    for (int i = 0; i < n; ++i)
      out.push_back(make(prefix + std::to_string(i), rng, i % 3 ? "kb_a" : "kb_b", 2015 + i % 10));
    return out;
  }
  double recall(const std::vector<CollectionHit>& got, const std::vector<std::string>& truth) {
    std::set<std::string> t(truth.begin(), truth.end());
    size_t hit = 0;
    for (const auto& h : got) hit += t.count(h.id);
    return truth.empty() ? 1.0 : static_cast<double>(hit) / truth.size();
  }
  // Exact top-k ids over `records` (cosine), restricted by `keep`.
  template <typename Keep>
  std::vector<std::string> exact(const std::vector<Record>& records, const std::vector<float>& q, size_t k,
                                 Keep keep) {
    std::vector<std::pair<double, std::string>> s;
    auto norm = [](const std::vector<float>& v) {
      double n = 0;
      for (float x : v) n += double(x) * x;
      return std::sqrt(n);
    };
    for (const auto& r : records) {
      if (!keep(r)) continue;
      double dot = 0;
      for (uint32_t d = 0; d < kDim; ++d) dot += double(r.vector[d]) * q[d];
      s.emplace_back(dot / (norm(r.vector) * norm(q)), r.id);
    }
    std::sort(s.begin(), s.end(), [](auto& a, auto& b) { return a.first > b.first; });
    std::vector<std::string> out;
    for (size_t i = 0; i < std::min(k, s.size()); ++i) out.push_back(s[i].second);
    return out;
  }
  bool is_hnsw() const { return Flavour::kind == VectorIndexKind::hnsw; }

  fs::path dir_;
  CollectionSchema schema_;
  std::unique_ptr<Collection> c_;
};

using Flavours = ::testing::Types<InMemoryFlat, InMemoryHnsw, PersistentFlat, PersistentHnsw>;
TYPED_TEST_SUITE(CollectionTest, Flavours);

}  // namespace

TYPED_TEST(CollectionTest, AcknowledgedWritesAreSearchableAtOnce) {
  std::mt19937 rng(1);
  auto recs = this->batch(300, rng);
  auto copy = recs;
  this->c_->insert(std::move(copy));
  EXPECT_EQ(this->c_->count(), 300u);
  // Vector: each record finds itself first.
  for (int i = 0; i < 300; i += 37) {
    auto hits = this->c_->search_vector(recs[i].vector, 1);
    ASSERT_EQ(hits.size(), 1u);
    EXPECT_EQ(hits[0].id, recs[i].id);
  }
  // Lexical and filter.
  auto t = this->c_->search_text("passage r42", 3);
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t[0].id, "r42");
  EXPECT_EQ(this->c_->filter("kb_name == \"kb_b\"").count(), 100u);
  EXPECT_EQ(this->c_->filter("2015 <= year < 2017").count(), 60u);
  EXPECT_EQ(this->c_->filter("array_contains(topics, \"imatinib\")").count(), 150u);
}

TYPED_TEST(CollectionTest, FilteredVectorSearchKeepsRecallAtEverySelectivity) {
  std::mt19937 rng(2);
  std::vector<Record> recs;
  for (int i = 0; i < 3000; ++i) recs.push_back(this->make("x" + std::to_string(i), rng, "kb" + std::to_string(i % 1000), 2000 + i % 50));
  auto copy = recs;
  this->c_->insert(std::move(copy));
  std::normal_distribution<float> g;
  struct Case { std::string expr; std::function<bool(const Record&)> keep; };
  auto kb = [&](const Record& r) { return std::get<std::string>(r.values[*this->schema_.field_index("kb_name")]); };
  auto year = [&](const Record& r) { return std::get<int64_t>(r.values[*this->schema_.field_index("year")]); };
  std::vector<Case> cases = {
      {"kb_name == \"kb7\"", [&](const Record& r) { return kb(r) == "kb7"; }},          // 0.1 %
      {"year == 2003", [&](const Record& r) { return year(r) == 2003; }},               // 2 %
      {"year < 2005", [&](const Record& r) { return year(r) < 2005; }},                 // 10 %
      {"year >= 2025", [&](const Record& r) { return year(r) >= 2025; }},               // 50 %
  };
  for (const auto& c : cases) {
    double total = 0;
    const int queries = 20;
    for (int q = 0; q < queries; ++q) {
      std::vector<float> v(kDim);
      for (auto& x : v) x = g(rng);
      auto hits = this->c_->search_vector(v, 10, c.expr);
      for (const auto& h : hits) {
        auto rec = std::find_if(recs.begin(), recs.end(), [&](const Record& r) { return r.id == h.id; });
        ASSERT_TRUE(c.keep(*rec)) << c.expr << " returned " << h.id;
      }
      total += this->recall(hits, this->exact(recs, v, 10, c.keep));
    }
    const double r = total / queries;
    if (this->is_hnsw()) EXPECT_GE(r, 0.95) << c.expr;
    else EXPECT_DOUBLE_EQ(r, 1.0) << c.expr;
  }
}

TYPED_TEST(CollectionTest, UpsertReplacesAndDeleteHides) {
  std::mt19937 rng(3);
  auto recs = this->batch(50, rng);
  auto copy = recs;
  this->c_->insert(std::move(copy));
  // Insert of an existing id is a conflict and changes nothing.
  auto dup = this->make("r1", rng, "kb_z", 1999);
  try {
    this->c_->insert({dup});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::conflict);
  }
  EXPECT_EQ(this->c_->filter("kb_name == \"kb_z\"").count(), 0u);
  // Upsert replaces: the new vector is found, the old one is gone.
  this->c_->upsert({dup});
  EXPECT_EQ(this->c_->count(), 50u);
  EXPECT_EQ(this->c_->search_vector(dup.vector, 1)[0].id, "r1");
  auto old_top = this->c_->search_vector(recs[1].vector, 1)[0];
  EXPECT_FALSE(old_top.id == "r1" && old_top.score > 0.999) << "the replaced vector is still indexed";
  EXPECT_EQ(std::get<std::string>(this->c_->get("r1")->values[*this->schema_.field_index("kb_name")]), "kb_z");
  // Delete by id and by filter: never returned again.
  EXPECT_EQ(this->c_->remove({"r2", "r3", "missing"}), 2u);
  EXPECT_EQ(this->c_->remove_where("kb_name == \"kb_b\""), 16u);  // r0, r6, ... except r3
  EXPECT_EQ(this->c_->count(), 32u);
  for (const auto& r : recs) {
    for (const auto& h : this->c_->search_vector(r.vector, 10)) {
      EXPECT_NE(h.id, "r2");
      EXPECT_NE(h.id, "r3");
      EXPECT_NE(this->c_->get(h.id), std::nullopt) << h.id;
    }
  }
  EXPECT_TRUE(this->c_->search_text("passage r2", 10, "id == \"r2\"").empty());
  EXPECT_FALSE(this->c_->get("r2").has_value());
  this->reopen();
  EXPECT_EQ(this->c_->count(), 32u);
  EXPECT_FALSE(this->c_->get("r2").has_value());
  EXPECT_EQ(std::get<std::string>(this->c_->get("r1")->values[*this->schema_.field_index("kb_name")]), "kb_z");
}

TYPED_TEST(CollectionTest, SurvivesRestartWithAndWithoutCheckpoint) {
  std::mt19937 rng(4);
  auto a = this->batch(120, rng, "a");
  auto b = this->batch(80, rng, "b");
  this->c_->insert(std::vector<Record>(a));
  this->c_->checkpoint();
  this->c_->insert(std::vector<Record>(b));
  this->c_->remove({"a5"});
  this->reopen();
  EXPECT_EQ(this->c_->count(), 199u);
  EXPECT_EQ(this->c_->search_vector(b[7].vector, 1)[0].id, "b7");
  EXPECT_EQ(this->c_->search_vector(a[9].vector, 1)[0].id, "a9");
  EXPECT_FALSE(this->c_->get("a5"));
  EXPECT_EQ(this->c_->search_text("passage b12", 1)[0].id, "b12");
  // Keeps accepting writes after the restart.
  this->c_->insert({this->make("c1", rng, "kb_c", 2024)});
  this->reopen();
  EXPECT_TRUE(this->c_->get("c1").has_value());
}

TYPED_TEST(CollectionTest, BadInputIsAClearErrorAndChangesNothing) {
  std::mt19937 rng(5);
  auto r = this->make("ok", rng, "kb", 2020);
  auto bad = r;
  bad.id = "bad";
  bad.vector.pop_back();
  EXPECT_THROW(this->c_->insert({r, bad}), Error);
  EXPECT_EQ(this->c_->count(), 0u);  // all-or-nothing
  EXPECT_THROW(this->c_->insert({r, r}), Error);
  EXPECT_THROW(this->c_->search_vector(std::vector<float>(3), 5), Error);
  this->c_->insert({r});
  EXPECT_THROW(this->c_->search_vector(r.vector, 0), Error);
  EXPECT_THROW(this->c_->search_vector(r.vector, kMaxSearchK + 1), Error);
  EXPECT_THROW(this->c_->filter("yeer == 2020"), Error);
  EXPECT_THROW(this->c_->search_text("x", 5, "year == \"2020\""), Error);
  // Record JSON: unknown field, wrong type, wrong dimension.
  nlohmann::json j = {{"id", "j1"}, {"text", "t"}, {"vector", std::vector<float>(kDim, 0.5f)}, {"year", 2020}};
  EXPECT_NO_THROW(record_from_json(j, this->schema_));
  auto j2 = j;
  j2["colour"] = "red";
  EXPECT_THROW(record_from_json(j2, this->schema_), Error);
  j2 = j;
  j2["year"] = "2020";
  EXPECT_THROW(record_from_json(j2, this->schema_), Error);
  j2 = j;
  j2["vector"] = std::vector<float>(kDim + 1, 0.5f);
  EXPECT_THROW(record_from_json(j2, this->schema_), Error);
}

TYPED_TEST(CollectionTest, InjectionShapedValuesAreLiterals) {
  std::mt19937 rng(6);
  this->c_->insert(this->batch(30, rng));
  // A kb_name that would widen a spliced filter string matches nothing here.
  store::TemplateParams p = {{"kb", "a\" or kb_name != \""}};
  EXPECT_EQ(this->c_->filter("kb_name == {kb}", p).count(), 0u);
  EXPECT_EQ(this->c_->filter("kb_name == \"kb_a\"").count(), 20u);
}

TEST(Catalog, CreateDescribeListDrop) {
  auto root = fs::temp_directory_path() / ("eagle_catalog_" + std::to_string(::getpid()));
  fs::remove_all(root);
  {
    Catalog cat(root);
    cat.create(chunk_schema("papers", 8));
    cat.create(chunk_schema("labels", 8));
    EXPECT_THROW(cat.create(chunk_schema("papers", 8)), Error);
    EXPECT_EQ(cat.list(), (std::vector<std::string>{"labels", "papers"}));
    EXPECT_EQ(cat.describe("papers")["schema"]["vector"]["dim"], 8);
  }
  Catalog again(root);
  EXPECT_EQ(again.get("labels").schema().name, "labels");
  again.drop("labels");
  EXPECT_EQ(again.list(), (std::vector<std::string>{"papers"}));
  EXPECT_THROW(again.get("labels"), Error);
  EXPECT_THROW(again.get("../etc"), Error);
  fs::remove_all(root);
}
