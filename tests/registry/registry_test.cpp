// The document registry: one typed suite run against both
// backends (ARCHITECTURE.md "Tests parameterised over implementations"), plus a
// few backend-specific checks. The PostgreSQL half reads its server from
// EAGLE_TEST_POSTGRES and FAILS without it: run under scripts/with_postgres.sh.
#include "eagle/registry/registry.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "eagle/core/error.h"
#include "eagle/registry/postgres_registry.h"
#include "eagle/registry/sqlite_registry.h"

namespace fs = std::filesystem;
using eagle::Error;
using eagle::ErrorCode;
using namespace eagle::registry;
using Ids = std::vector<std::string>;

namespace {

std::atomic<int> g_counter{0};

// Builds "a1b2..." from pieces; GCC 12 raises a false -Wrestrict on `"lit" + std::to_string(n)`.
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  (out.append(parts), ...);
  return out;
}

std::string unique_suffix() {
  return cat(std::to_string(::getpid()), "_", std::to_string(g_counter++));
}

// The server the PostgreSQL half runs against; empty (and a test failure) when unset.
std::string postgres_conninfo() {
  const char* env = std::getenv("EAGLE_TEST_POSTGRES");
  if (env == nullptr || *env == '\0') {
    ADD_FAILURE()
        << "EAGLE_TEST_POSTGRES is unset, so the PostgreSQL registry tests cannot run.\n"
           "Run them with a throwaway server:  bash scripts/with_postgres.sh build/bin/test_registry\n"
           "or point them at one:  EAGLE_TEST_POSTGRES=\"host=127.0.0.1 port=5432 user=postgres "
           "dbname=postgres\" build/bin/test_registry";
    return {};
  }
  return env;
}

// Runs one statement on a separate connection (schema cleanup, catalog checks).
std::vector<std::vector<std::string>> pg_query(const std::string& conninfo, const std::string& sql) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  std::vector<std::vector<std::string>> rows;
  if (PQstatus(conn) != CONNECTION_OK) {
    ADD_FAILURE() << "pg_query connect: " << PQerrorMessage(conn);
    PQfinish(conn);
    return rows;
  }
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);  // "drop cascades to ..."
  PGresult* res = PQexec(conn, sql.c_str());
  ExecStatusType st = PQresultStatus(res);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    ADD_FAILURE() << "pg_query '" << sql << "': " << PQresultErrorMessage(res);
  } else {
    for (int i = 0; i < PQntuples(res); ++i) {
      rows.emplace_back();
      for (int j = 0; j < PQnfields(res); ++j) rows.back().push_back(PQgetvalue(res, i, j));
    }
  }
  PQclear(res);
  PQfinish(conn);
  return rows;
}

struct SqliteBackend {
  fs::path file;
  void prepare() { file = fs::temp_directory_path() / ("eagle_registry_" + unique_suffix() + ".db"); }
  // Opens (or re-opens) the same database file.
  std::unique_ptr<DocumentRegistry> open() { return std::make_unique<SqliteRegistry>(file.string()); }
  void cleanup() {
    for (const char* ext : {"", "-wal", "-shm"}) fs::remove(file.string() + ext);
  }
};

// Each test gets its own schema in the shared database, dropped afterwards.
struct PostgresBackend {
  std::string conninfo, schema;
  void prepare() {
    conninfo = postgres_conninfo();
    ASSERT_FALSE(conninfo.empty()) << "EAGLE_TEST_POSTGRES must name a PostgreSQL server";
    schema = "eagle_test_" + unique_suffix();
  }
  std::unique_ptr<DocumentRegistry> open() { return std::make_unique<PostgresRegistry>(conninfo, schema); }
  void cleanup() {
    if (!conninfo.empty()) pg_query(conninfo, "DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE");
  }
};

template <class Backend>
class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(backend_.prepare());
    reg_ = backend_.open();
  }
  void TearDown() override {
    reg_.reset();
    backend_.cleanup();
  }

  static DocumentRecord doc(std::string id, std::string name, std::string file_name = "",
                            std::string document_name = "", std::string kb = "kb1", std::string ns = "core") {
    DocumentRecord r;
    r.document_id = std::move(id);
    r.name = std::move(name);
    r.file_name = std::move(file_name);
    r.document_name = std::move(document_name);
    r.kb_name = std::move(kb);
    r.plugin_namespace = std::move(ns);
    return r;
  }

  std::vector<std::string> find(const std::vector<std::string>& terms, std::string_view ns = "core",
                                size_t limit = 100) {
    return reg_->find_by_name_terms(terms, ns, limit);
  }

  Backend backend_;
  std::unique_ptr<DocumentRegistry> reg_;
};

struct BackendNames {
  template <class T>
  static std::string GetName(int) {
    return std::is_same_v<T, SqliteBackend> ? "Sqlite" : "Postgres";
  }
};

using Backends = ::testing::Types<SqliteBackend, PostgresBackend>;
TYPED_TEST_SUITE(RegistryTest, Backends, BackendNames);

template <class F>
ErrorCode error_code_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "expected an eagle::Error";
  return ErrorCode::internal;
}

DocumentRecord record(std::string id, std::string name) {
  DocumentRecord r;
  r.document_id = std::move(id);
  r.name = std::move(name);
  return r;
}

const std::regex kIsoUtc(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");

}  // namespace

// ---- upsert / get / remove ----------------------------------------------------

TYPED_TEST(RegistryTest, UpsertThenGetRoundTripsEveryField) {
  DocumentRecord r = this->doc("doc-1", "Humira prescribing information", "HUMIRA_label.xml",
                               "Humira (adalimumab)", "pharma", "biomed");
  r.source_type = "spl";
  r.year = 2023;
  r.source_uri = "https://dailymed.nlm.nih.gov/x?setid=1&a=b";
  r.collections_used = {"eagle_text", "eagle_text_biomed", "eagle_chemical"};
  r.created_at = "ignored";
  this->reg_->upsert(r);
  auto got = this->reg_->get("doc-1");
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(std::regex_match(got->created_at, kIsoUtc)) << got->created_at;
  r.created_at = got->created_at;
  EXPECT_EQ(*got, r);
}

TYPED_TEST(RegistryTest, OptionalAndEmptyFieldsRoundTrip) {
  auto r = this->doc("doc-empty", "");
  r.kb_name = "";
  this->reg_->upsert(r);
  auto got = this->reg_->get("doc-empty");
  ASSERT_TRUE(got.has_value());
  EXPECT_FALSE(got->year.has_value());
  EXPECT_TRUE(got->collections_used.empty());
  EXPECT_EQ(got->name, "");
  EXPECT_EQ(got->kb_name, "");
  EXPECT_EQ(got->plugin_namespace, "core");
}

TYPED_TEST(RegistryTest, GetOfAMissingOrEmptyIdIsNullopt) {
  EXPECT_FALSE(this->reg_->get("nope").has_value());
  EXPECT_FALSE(this->reg_->get("").has_value());
}

TYPED_TEST(RegistryTest, UpsertReplacesEveryFieldButKeepsCreatedAt) {
  auto r = this->doc("doc-1", "old name", "old.pdf", "Old", "kb-old");
  r.year = 2001;
  r.collections_used = {"eagle_text"};
  this->reg_->upsert(r);
  std::string created = this->reg_->get("doc-1")->created_at;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a new insert would get a later time

  auto r2 = this->doc("doc-1", "new name", "new.pdf", "New", "kb-new", "biomed");
  r2.source_type = "pubmed";
  r2.source_uri = "file:///n";
  r2.collections_used = {"eagle_text_biomed"};
  this->reg_->upsert(r2);
  auto got = this->reg_->get("doc-1");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->created_at, created);
  r2.created_at = created;
  EXPECT_EQ(*got, r2);  // year 2001 -> unset: the row is replaced, not merged
  EXPECT_TRUE(this->find({"old"}).empty());
  EXPECT_EQ(this->reg_->find_by_name_terms({"new"}, "biomed", 10), Ids{"doc-1"});
}

// A scoped request's lookups are bounded by its knowledge bases: another tenant's
// document neither matches a tag nor adds its collections (an existence oracle).
TYPED_TEST(RegistryTest, TagsAndCollectionsUsedStayWithinTheGivenKnowledgeBases) {
  auto a = this->doc("doc-a", "a", "a.pdf", "A", "kb-a");
  a.collections_used = {"eagle_text"};
  auto b = this->doc("doc-b", "b", "b.pdf", "B", "kb-b");
  b.collections_used = {"eagle_text_biomed"};
  this->reg_->upsert(a);
  this->reg_->upsert(b);
  this->reg_->set_keywords("doc-a", "core", {"shared"});
  this->reg_->set_keywords("doc-b", "core", {"shared", "only-b"});
  EXPECT_EQ(this->reg_->ids_for_tags({"shared"}, "core", 10), (Ids{"doc-a", "doc-b"}));
  EXPECT_EQ(this->reg_->ids_for_tags({"shared"}, "core", 10, {"kb-a"}), Ids{"doc-a"});
  EXPECT_TRUE(this->reg_->ids_for_tags({"only-b"}, "core", 10, {"kb-a"}).empty());
  EXPECT_EQ(this->reg_->ids_for_tags({"only-b"}, "core", 10, {"kb-a", "kb-b"}), Ids{"doc-b"});
  EXPECT_EQ(this->reg_->collections_used({"doc-a", "doc-b"}), (Ids{"eagle_text", "eagle_text_biomed"}));
  EXPECT_EQ(this->reg_->collections_used({"doc-a", "doc-b"}, {}, {"kb-a"}), Ids{"eagle_text"});
  EXPECT_TRUE(this->reg_->collections_used({"doc-b"}, {}, {"kb-a"}).empty());
  EXPECT_TRUE(this->reg_->collections_used({}, {"kb-b"}, {"kb-a"}).empty());
  EXPECT_EQ(this->reg_->collections_used({}, {"kb-b"}, {"kb-b"}), Ids{"eagle_text_biomed"});
  // The biomed supplement's lookup by name.
  EXPECT_EQ(this->reg_->find_by_name_terms({"a", "b"}, "core", 10), (Ids{"doc-a", "doc-b"}));
  EXPECT_EQ(this->reg_->find_by_name_terms({"a", "b"}, "core", 10, std::nullopt, {"kb-a"}), Ids{"doc-a"});
  EXPECT_TRUE(this->reg_->find_by_name_terms({"b"}, "core", 10, std::nullopt, {"kb-a"}).empty());
  EXPECT_TRUE(this->reg_->find_by_name_terms({"a"}, "core", 10, "kb-a", {"kb-b"}).empty());
}

TYPED_TEST(RegistryTest, RemoveReportsWhetherTheDocumentExisted) {
  this->reg_->upsert(this->doc("doc-1", "a"));
  this->reg_->upsert(this->doc("doc-2", "a"));
  EXPECT_TRUE(this->reg_->remove("doc-1"));
  EXPECT_FALSE(this->reg_->get("doc-1").has_value());
  EXPECT_FALSE(this->reg_->remove("doc-1"));
  EXPECT_FALSE(this->reg_->remove(""));
  EXPECT_FALSE(this->reg_->remove("never"));
  EXPECT_EQ(this->find({"a"}), Ids{"doc-2"});
}

TYPED_TEST(RegistryTest, RemoveDropsTheKeywordsOfEveryNamespace) {
  this->reg_->upsert(this->doc("doc-1", "a"));
  this->reg_->set_keywords("doc-1", "core", {"t"});
  this->reg_->set_keywords("doc-1", "biomed", {"t"});
  ASSERT_TRUE(this->reg_->remove("doc-1"));
  EXPECT_TRUE(this->reg_->ids_for_tags({"t"}, "core", 10).empty());
  EXPECT_TRUE(this->reg_->ids_for_tags({"t"}, "biomed", 10).empty());
  // Re-inserting the id does not resurrect old tags.
  this->reg_->upsert(this->doc("doc-1", "a"));
  EXPECT_TRUE(this->reg_->keywords("doc-1", "core").empty());
}

// Brand names taught by drug labels: replaced per document,
// namespace-scoped, distinct, gone with their document.
TYPED_TEST(RegistryTest, BrandNamesAreReplacedPerDocumentAndGoWithIt) {
  this->reg_->upsert(this->doc("humira", "Humira | adalimumab", "", "", "", "biomed"));
  this->reg_->upsert(this->doc("lipitor", "Lipitor | atorvastatin", "", "", "", "biomed"));
  this->reg_->upsert(this->doc("core-doc", "x", "", "", "", "core"));
  this->reg_->set_brands("humira", {{"HUMIRA", "adalimumab"}, {"HUMIRA", "adalimumab"}, {"Old", "x"}});
  this->reg_->set_brands("humira", {{"HUMIRA", "adalimumab"}});  // replaces
  this->reg_->set_brands("lipitor", {{"LIPITOR", "atorvastatin calcium"}, {"LIPITOR", "atorvastatin"}});
  this->reg_->set_brands("core-doc", {{"Other", "y"}});
  using B = std::vector<BrandName>;
  EXPECT_EQ(this->reg_->brands("biomed"),
            (B{{"HUMIRA", "adalimumab"}, {"LIPITOR", "atorvastatin"}, {"LIPITOR", "atorvastatin calcium"}}));
  EXPECT_EQ(this->reg_->brands("core"), (B{{"Other", "y"}}));
  EXPECT_EQ(error_code_of([&] { this->reg_->set_brands("absent", {{"A", "a"}}); }), ErrorCode::not_found);
  EXPECT_EQ(error_code_of([&] { this->reg_->set_brands("humira", {{"", "a"}}); }), ErrorCode::invalid_argument);
  ASSERT_TRUE(this->reg_->remove("lipitor"));
  EXPECT_EQ(this->reg_->brands("biomed"), (B{{"HUMIRA", "adalimumab"}}));
  this->reg_->set_brands("humira", {});
  EXPECT_TRUE(this->reg_->brands("biomed").empty());
}

TYPED_TEST(RegistryTest, SourceHashesFindDocumentsByBytesKbAndNamespaceAndGoWithThem) {
  const std::string a(64, 'a'), b(64, 'b');
  this->reg_->upsert(this->doc("pubmed-1", "x", "set.xml", "", "kb1", "core"));
  this->reg_->upsert(this->doc("pubmed-2", "y", "set.xml", "", "kb1", "core"));
  this->reg_->upsert(this->doc("other-kb", "z", "set.xml", "", "kb2", "core"));
  this->reg_->upsert(this->doc("biomed", "w", "set.xml", "", "kb1", "biomed"));
  for (const char* id : {"pubmed-2", "pubmed-1", "other-kb", "biomed"}) this->reg_->set_source_hash(id, a);
  using V = std::vector<std::string>;
  EXPECT_EQ(this->reg_->find_by_source_hash(a, "kb1", "core"), (V{"pubmed-1", "pubmed-2"}));
  EXPECT_EQ(this->reg_->find_by_source_hash(a, "kb2", "core"), (V{"other-kb"}));
  EXPECT_EQ(this->reg_->find_by_source_hash(a, "kb1", "biomed"), (V{"biomed"}));
  EXPECT_TRUE(this->reg_->find_by_source_hash(b, "kb1", "core").empty());
  this->reg_->set_source_hash("pubmed-2", b);  // replaced: the file changed
  EXPECT_EQ(this->reg_->find_by_source_hash(a, "kb1", "core"), (V{"pubmed-1"}));
  // Removing one document of a file forgets the file's hash for its KB and namespace:
  // the next ingest reads the file again (and brings the removed document back).
  this->reg_->set_source_hash("pubmed-2", a);
  ASSERT_TRUE(this->reg_->remove("pubmed-1"));
  EXPECT_TRUE(this->reg_->find_by_source_hash(a, "kb1", "core").empty());
  EXPECT_TRUE(this->reg_->get("pubmed-2"));  // the other document stays, without the hash
  EXPECT_EQ(this->reg_->find_by_source_hash(a, "kb2", "core"), (V{"other-kb"}));  // other KBs keep theirs
  EXPECT_EQ(this->reg_->find_by_source_hash(a, "kb1", "biomed"), (V{"biomed"}));
  this->reg_->upsert(this->doc("pubmed-1", "x", "set.xml", "", "kb1", "core"));  // back, without its hash
  EXPECT_TRUE(this->reg_->find_by_source_hash(a, "kb1", "core").empty());
  EXPECT_EQ(error_code_of([&] { this->reg_->set_source_hash("absent", a); }), ErrorCode::not_found);
  EXPECT_EQ(error_code_of([&] { this->reg_->set_source_hash("biomed", "ABC"); }), ErrorCode::invalid_argument);
  EXPECT_EQ(error_code_of([&] { this->reg_->find_by_source_hash(std::string(64, 'G'), "kb1", "core"); }),
            ErrorCode::invalid_argument);
}

TYPED_TEST(RegistryTest, UpsertRefusesAnEmptyIdOrNamespace) {
  EXPECT_EQ(error_code_of([&] { this->reg_->upsert(this->doc("", "x")); }), ErrorCode::invalid_argument);
  EXPECT_EQ(error_code_of([&] { this->reg_->upsert(this->doc("d", "x", "", "", "kb", "")); }),
            ErrorCode::invalid_argument);
}

TYPED_TEST(RegistryTest, ReopeningKeepsTheData) {
  auto r = this->doc("doc-1", "persisted");
  r.collections_used = {"eagle_text"};
  this->reg_->upsert(r);
  this->reg_->set_keywords("doc-1", "core", {"kept"});
  std::string created = this->reg_->get("doc-1")->created_at;
  this->reg_.reset();
  this->reg_ = this->backend_.open();  // schema creation is idempotent
  auto got = this->reg_->get("doc-1");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->created_at, created);
  EXPECT_EQ(this->reg_->keywords("doc-1", "core"), Ids{"kept"});
}

// ---- batches of writes -------------------------------------------------------

TYPED_TEST(RegistryTest, ABatchIsOneTransactionOthersSeeWhole) {
  auto other = this->backend_.open();  // another connection to the same database
  {
    DocumentRegistry::WriteBatch batch(*this->reg_);
    this->reg_->upsert(this->doc("b-1", "first"));
    this->reg_->set_keywords("b-1", "core", {"t"});
    this->reg_->upsert(this->doc("b-2", "second"));
    EXPECT_TRUE(this->reg_->get("b-2").has_value());  // the batch's own connection sees it
    EXPECT_FALSE(other->get("b-1").has_value());      // not committed yet
    batch.commit();
  }
  EXPECT_TRUE(other->get("b-1").has_value());
  EXPECT_TRUE(other->get("b-2").has_value());
  EXPECT_EQ(other->keywords("b-1", "core"), Ids{"t"});
}

TYPED_TEST(RegistryTest, AFailedWriteInABatchLeavesTheOthers) {
  DocumentRegistry::WriteBatch batch(*this->reg_);
  this->reg_->upsert(this->doc("b-1", "kept"));
  EXPECT_EQ(error_code_of([&] { this->reg_->set_keywords("absent", "core", {"t"}); }), ErrorCode::not_found);
  EXPECT_EQ(error_code_of([&] { this->reg_->set_source_hash("absent", std::string(64, 'a')); }),
            ErrorCode::not_found);
  this->reg_->upsert(this->doc("b-2", "also kept"));
  batch.commit();
  this->reg_ = this->backend_.open();
  EXPECT_TRUE(this->reg_->get("b-1").has_value());
  EXPECT_TRUE(this->reg_->get("b-2").has_value());
}

TYPED_TEST(RegistryTest, ABatchUnwoundByAnErrorKeepsWhatSucceeded) {
  try {
    DocumentRegistry::WriteBatch batch(*this->reg_);
    this->reg_->upsert(this->doc("b-1", "kept"));
    throw std::runtime_error("the caller failed");
  } catch (const std::runtime_error&) {
  }
  this->reg_ = this->backend_.open();
  EXPECT_TRUE(this->reg_->get("b-1").has_value());
  // And the registry takes writes (and batches) again.
  DocumentRegistry::WriteBatch again(*this->reg_);
  this->reg_->upsert(this->doc("b-2", "next"));
  again.commit();
  EXPECT_TRUE(this->reg_->get("b-2").has_value());
}

TYPED_TEST(RegistryTest, OneBatchAtATime) {
  DocumentRegistry::WriteBatch batch(*this->reg_);
  EXPECT_EQ(error_code_of([&] { DocumentRegistry::WriteBatch second(*this->reg_); }), ErrorCode::conflict);
  this->reg_->upsert(this->doc("b-1", "still in the first"));
  batch.commit();
  EXPECT_TRUE(this->backend_.open()->get("b-1").has_value());
}

// ---- lookup_document_ids_by_name_terms --------------------------------------

TYPED_TEST(RegistryTest, NameTermsMatchCaseInsensitiveSubstringsOfTheThreeNames) {
  this->reg_->upsert(this->doc("label-1", "", "HUMIRA_label.xml", ""));                    // file_name
  this->reg_->upsert(this->doc("label-2", "adalimumab (HUMIRA) injection", "x.pdf", ""));  // name
  this->reg_->upsert(this->doc("label-3", "", "", "Keytruda pembrolizumab"));              // document_name
  this->reg_->upsert(this->doc("label-4", "aspirin", "aspirin.xml", "Aspirin"));
  EXPECT_EQ(this->find({"Humira"}), (Ids{"label-1", "label-2"}));
  EXPECT_EQ(this->find({"humira"}), (Ids{"label-1", "label-2"}));
  EXPECT_EQ(this->find({"LABEL.XML"}), Ids{"label-1"});
  EXPECT_EQ(this->find({"PEMBRO"}), Ids{"label-3"});
  EXPECT_EQ(this->find({"mab"}), (Ids{"label-2", "label-3"}));
  // ANY term matches; a document matched by two terms is listed once.
  EXPECT_EQ(this->find({"keytruda", "aspirin", "KEYTRUDA"}), (Ids{"label-3", "label-4"}));
  EXPECT_TRUE(this->find({"ibuprofen"}).empty());
}

TYPED_TEST(RegistryTest, NameTermsReturnIdsSortedBytewiseUpToTheLimit) {
  for (const char* id : {"b", "a", "C", "B", "c", "A"}) this->reg_->upsert(this->doc(id, "common"));
  EXPECT_EQ(this->find({"common"}), (Ids{"A", "B", "C", "a", "b", "c"}));
  EXPECT_EQ(this->find({"common"}, "core", 2), (Ids{"A", "B"}));
  EXPECT_TRUE(this->find({"common"}, "core", 0).empty());
}

TYPED_TEST(RegistryTest, PercentInATermMatchesOnlyALiteralPercent) {
  this->reg_->upsert(this->doc("pct", "dose 50% solution"));
  this->reg_->upsert(this->doc("num", "dose 500 mg"));
  this->reg_->upsert(this->doc("gap", "50 then %"));
  EXPECT_EQ(this->find({"50%"}), Ids{"pct"});
  EXPECT_EQ(this->find({"%"}), (Ids{"gap", "pct"}));
  EXPECT_TRUE(this->find({"dose%mg"}).empty());
}

TYPED_TEST(RegistryTest, UnderscoreInATermMatchesOnlyALiteralUnderscore) {
  this->reg_->upsert(this->doc("under", "", "label_1.xml"));
  this->reg_->upsert(this->doc("other", "", "labelX1.xml"));
  EXPECT_EQ(this->find({"label_1"}), Ids{"under"});
  EXPECT_EQ(this->find({"_"}), Ids{"under"});
}

TYPED_TEST(RegistryTest, BackslashInATermMatchesOnlyALiteralBackslash) {
  this->reg_->upsert(this->doc("win", "", R"(C:\labels\50%_x)"));
  this->reg_->upsert(this->doc("unix", "", "C:/labels/50%_x"));
  EXPECT_EQ(this->find({"\\"}), Ids{"win"});
  EXPECT_EQ(this->find({R"(\50%_)"}), Ids{"win"});
  EXPECT_EQ(this->find({R"(labels\)"}), Ids{"win"});
  EXPECT_EQ(this->find({"/50%_x"}), Ids{"unix"});
  EXPECT_TRUE(this->find({R"(\_)"}).empty());  // not an escaped underscore: backslash then underscore
}

TYPED_TEST(RegistryTest, NameTermsFoldNonAsciiCase) {
  // PostgreSQL's ILIKE folds with the database's LC_CTYPE (UTF-8 in the test
  // server); SQLite matches on copies folded by utf8proc.
  this->reg_->upsert(this->doc("fr", "ÉPINÉPHRINE injectable"));
  this->reg_->upsert(this->doc("ru", "", "аспирин.pdf"));
  EXPECT_EQ(this->find({"épinéphrine"}), Ids{"fr"});
  EXPECT_EQ(this->find({"АСПИРИН"}), Ids{"ru"});
  EXPECT_EQ(this->find({"Épi"}), Ids{"fr"});
}

TYPED_TEST(RegistryTest, NameTermsAreScopedToTheNamespaceAndOptionallyAKb) {
  this->reg_->upsert(this->doc("core-1", "Humira", "", "", "kb-a", "core"));
  this->reg_->upsert(this->doc("bio-1", "Humira", "", "", "kb-a", "biomed"));
  this->reg_->upsert(this->doc("bio-2", "Humira", "", "", "kb-b", "biomed"));
  EXPECT_EQ(this->find({"humira"}, "core"), Ids{"core-1"});
  EXPECT_EQ(this->find({"humira"}, "biomed"), (Ids{"bio-1", "bio-2"}));
  EXPECT_TRUE(this->find({"humira"}, "other").empty());
  EXPECT_EQ(this->reg_->find_by_name_terms({"humira"}, "biomed", 10, "kb-b"), Ids{"bio-2"});
  EXPECT_TRUE(this->reg_->find_by_name_terms({"humira"}, "biomed", 10, "kb-c").empty());
}

TYPED_TEST(RegistryTest, EmptyNameTermsFindNothing) {
  this->reg_->upsert(this->doc("d", "anything"));
  EXPECT_TRUE(this->find({}).empty());
  EXPECT_TRUE(this->find({""}).empty());  // never `ILIKE '%%'` = every document
  EXPECT_EQ(this->find({"", "any"}), Ids{"d"});
}

TYPED_TEST(RegistryTest, NameTermLimitsAreEnforced) {
  this->reg_->upsert(this->doc("d", "x"));
  EXPECT_EQ(error_code_of([&] { this->find({"x"}, "core", kMaxLimit + 1); }), ErrorCode::invalid_argument);
  EXPECT_EQ(this->find({"x"}, "core", kMaxLimit), Ids{"d"});
  Ids many(kMaxTerms, "x");
  EXPECT_EQ(this->find(many), Ids{"d"});
  many.push_back("x");
  EXPECT_EQ(error_code_of([&] { this->find(many); }), ErrorCode::invalid_argument);
  EXPECT_EQ(error_code_of([&] { this->find({std::string(kMaxKeyBytes + 1, 'x')}); }),
            ErrorCode::invalid_argument);
  EXPECT_EQ(error_code_of([&] { this->find({"x"}, ""); }), ErrorCode::invalid_argument);
}

// ---- injection-shaped values are literals ------------------------------------

TYPED_TEST(RegistryTest, InjectionShapedValuesAreStoredAndMatchedAsLiterals) {
  const std::string sq = "a' OR '1'='1";
  const std::string dq = "a\" or kb_name != \"";
  const std::string drop = "x'); DROP TABLE documents; --";
  auto r = this->doc(drop, sq, dq, "$1 $2 ?1 :name", sq);
  r.collections_used = {"coll'; --"};
  this->reg_->upsert(r);
  this->reg_->upsert(this->doc("plain", "plain", "", "", "finance"));
  this->reg_->set_keywords(drop, "core", {sq, dq});

  auto got = this->reg_->get(drop);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->name, sq);
  EXPECT_EQ(got->file_name, dq);
  EXPECT_EQ(got->document_name, "$1 $2 ?1 :name");
  EXPECT_EQ(got->kb_name, sq);
  ASSERT_TRUE(this->reg_->get("plain").has_value());  // the table survived

  // A kb_name filter of `a" or kb_name != "` matches nothing: values are bound, never spliced.
  EXPECT_TRUE(this->reg_->find_by_name_terms({"plain"}, "core", 10, dq).empty());
  EXPECT_TRUE(this->reg_->find_by_name_terms({"plain"}, "core", 10, sq).empty());
  EXPECT_EQ(this->reg_->find_by_name_terms({"a"}, "core", 10, sq), Ids{drop});
  EXPECT_TRUE(this->find({"' OR '1'='1' --x"}).empty());
  EXPECT_TRUE(this->find({"%' OR '1'='1"}).empty());
  EXPECT_EQ(this->find({"' OR '1'='1"}), Ids{drop});  // literally in its name
  EXPECT_EQ(this->find({"kb_name != \""}), Ids{drop});

  EXPECT_TRUE(this->reg_->ids_for_tags({"x' OR 'a'='a"}, "core", 10).empty());
  EXPECT_EQ(this->reg_->ids_for_tags({dq}, "core", 10), Ids{drop});
  EXPECT_EQ(this->reg_->collections_used({}, {dq}), Ids{});
  EXPECT_EQ(this->reg_->collections_used({}, {sq}), Ids{"coll'; --"});
  EXPECT_EQ(this->reg_->names_for_ids({drop, "' OR 1=1 --"}).size(), 1u);
}

TYPED_TEST(RegistryTest, ArraySyntaxInValuesRoundTrips) {
  // Characters with meaning in a PostgreSQL array literal or JSON stay literal.
  Ids odd = {"{a,b}", "\"quoted\"", "back\\slash", "NULL", " spaced ", ",", "}", "{", "[\"json\"]", "é€"};
  auto r = this->doc("odd", "n");
  r.collections_used = odd;
  this->reg_->upsert(r);
  EXPECT_EQ(this->reg_->get("odd")->collections_used, odd);
  this->reg_->set_keywords("odd", "core", odd);
  Ids sorted = odd;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(this->reg_->keywords("odd", "core"), sorted);
  for (const auto& v : odd) {
    EXPECT_EQ(this->reg_->ids_for_tags({v}, "core", 10), Ids{"odd"}) << v;
    EXPECT_EQ(this->reg_->collections_used({"odd"}).size(), odd.size());
  }
  EXPECT_TRUE(this->reg_->ids_for_tags({"a"}, "core", 10).empty());
  EXPECT_TRUE(this->reg_->ids_for_tags({"NULL "}, "core", 10).empty());
}

// ---- document_keywords: set_keywords / ids_for_tags --------------------------

TYPED_TEST(RegistryTest, TagsAreNamespaceScoped) {
  this->reg_->upsert(this->doc("d1", "a"));
  this->reg_->set_keywords("d1", "biomed", {"oncology", "2025"});
  this->reg_->set_keywords("d1", "core", {"finance"});
  EXPECT_TRUE(this->reg_->ids_for_tags({"oncology"}, "core", 10).empty());
  EXPECT_EQ(this->reg_->ids_for_tags({"oncology"}, "biomed", 10), Ids{"d1"});
  EXPECT_EQ(this->reg_->ids_for_tags({"finance"}, "core", 10), Ids{"d1"});
  EXPECT_EQ(this->reg_->keywords("d1", "biomed"), (Ids{"2025", "oncology"}));
  // Replacing one namespace's tags leaves the other's alone.
  this->reg_->set_keywords("d1", "biomed", {"cardiology"});
  EXPECT_EQ(this->reg_->keywords("d1", "biomed"), Ids{"cardiology"});
  EXPECT_EQ(this->reg_->keywords("d1", "core"), Ids{"finance"});
  EXPECT_TRUE(this->reg_->ids_for_tags({"oncology"}, "biomed", 10).empty());
  this->reg_->set_keywords("d1", "biomed", {});
  EXPECT_TRUE(this->reg_->keywords("d1", "biomed").empty());
  EXPECT_EQ(this->reg_->keywords("d1", "core"), Ids{"finance"});
}

TYPED_TEST(RegistryTest, TagsResolveToDistinctSortedIdsUpToTheLimit) {
  for (const char* id : {"d3", "d1", "d2", "d4"}) this->reg_->upsert(this->doc(id, "x"));
  this->reg_->set_keywords("d1", "core", {"增值税", "2025", "2025"});  // duplicates collapse
  this->reg_->set_keywords("d2", "core", {"2025"});
  this->reg_->set_keywords("d3", "core", {"增值税"});
  this->reg_->set_keywords("d4", "core", {"Tax"});
  EXPECT_EQ(this->reg_->keywords("d1", "core"), (Ids{"2025", "增值税"}));
  EXPECT_EQ(this->reg_->ids_for_tags({"增值税", "2025"}, "core", 10), (Ids{"d1", "d2", "d3"}));
  EXPECT_EQ(this->reg_->ids_for_tags({"2025", "2025"}, "core", 10), (Ids{"d1", "d2"}));
  // max_scope_documents: the caller asks for cap + 1 to learn it was capped.
  EXPECT_EQ(this->reg_->ids_for_tags({"增值税", "2025"}, "core", 2), (Ids{"d1", "d2"}));
  EXPECT_TRUE(this->reg_->ids_for_tags({"tax"}, "core", 10).empty());  // tags match exactly
  EXPECT_EQ(this->reg_->ids_for_tags({"Tax"}, "core", 10), Ids{"d4"});
  EXPECT_TRUE(this->reg_->ids_for_tags({}, "core", 10).empty());
  EXPECT_TRUE(this->reg_->ids_for_tags({""}, "core", 10).empty());
  EXPECT_TRUE(this->reg_->ids_for_tags({"2025"}, "core", 0).empty());
}

TYPED_TEST(RegistryTest, SetKeywordsChecksTheDocumentAndTheTags) {
  EXPECT_EQ(error_code_of([&] { this->reg_->set_keywords("missing", "core", {"t"}); }), ErrorCode::not_found);
  this->reg_->upsert(this->doc("d", "x"));
  EXPECT_EQ(error_code_of([&] {
              this->reg_->set_keywords("d", "core", {"ok", ""});
            }),
            ErrorCode::invalid_argument);
  EXPECT_EQ(error_code_of([&] { this->reg_->set_keywords("d", "", {"ok"}); }), ErrorCode::invalid_argument);
  EXPECT_TRUE(this->reg_->keywords("d", "core").empty());  // a refused call changed nothing
  this->reg_->set_keywords("d", "core", {"ok"});
  EXPECT_EQ(error_code_of([&] { this->reg_->set_keywords("missing", "core", {"t"}); }), ErrorCode::not_found);
  EXPECT_EQ(this->reg_->keywords("d", "core"), Ids{"ok"});
}

TYPED_TEST(RegistryTest, TagLimitsAreEnforced) {
  EXPECT_EQ(error_code_of([&] { this->reg_->ids_for_tags({"t"}, "core", kMaxLimit + 1); }),
            ErrorCode::invalid_argument);
  EXPECT_EQ(error_code_of([&] { this->reg_->ids_for_tags(Ids(kMaxTerms + 1, "t"), "core", 10); }),
            ErrorCode::invalid_argument);
  EXPECT_EQ(error_code_of([&] { this->reg_->ids_for_tags({"t"}, "", 10); }), ErrorCode::invalid_argument);
  this->reg_->upsert(this->doc("d", "x"));
  EXPECT_EQ(error_code_of([&] { this->reg_->set_keywords("d", "core", Ids(kMaxIds + 1, "t")); }),
            ErrorCode::invalid_argument);
}

// ---- lookup_documents_sync (enrich_file_names backfill) ----------------------

TYPED_TEST(RegistryTest, IdsResolveToFileAndDocumentNames) {
  this->reg_->upsert(this->doc("d1", "n1", "HUMIRA_label.xml", "Humira"));
  this->reg_->upsert(this->doc("d2", "n2", "", "Keytruda"));
  this->reg_->upsert(this->doc("d3", "n3", "c.xml", "C"));
  auto names = this->reg_->names_for_ids({"d2", "d1", "missing", "d1", ""});
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names["d1"], (DocumentNames{"HUMIRA_label.xml", "Humira"}));
  EXPECT_EQ(names["d2"], (DocumentNames{"", "Keytruda"}));
  EXPECT_TRUE(this->reg_->names_for_ids({}).empty());
  EXPECT_EQ(error_code_of([&] { this->reg_->names_for_ids(Ids(kMaxIds + 1, "d1")); }),
            ErrorCode::invalid_argument);
}

TYPED_TEST(RegistryTest, ListsAtTheirBoundsWork) {
  for (int i = 0; i < 300; ++i) {
    auto r = this->doc(cat("doc-", std::to_string(1000 + i)), "bulk");
    r.collections_used = {cat("c", std::to_string(i % 7))};
    this->reg_->upsert(r);
  }
  Ids ids;
  for (size_t i = 0; i < kMaxIds; ++i) ids.push_back(cat("doc-", std::to_string(i)));
  EXPECT_EQ(this->reg_->names_for_ids(ids).size(), 300u);
  EXPECT_EQ(this->reg_->collections_used(ids).size(), 7u);
  EXPECT_EQ(this->find({"BULK"}, "core", kMaxLimit).size(), 300u);
  EXPECT_EQ(this->find({"bulk"}, "core", 5),
            (Ids{"doc-1000", "doc-1001", "doc-1002", "doc-1003", "doc-1004"}));
}

// ---- collections_used catalog (scope-aware union) ----------------------------

TYPED_TEST(RegistryTest, CollectionsUsedIsTheUnionOverIdsOrKbs) {
  auto a = this->doc("a", "x", "", "", "kb-fin");
  a.collections_used = {"eagle_text", "eagle_visual"};
  auto b = this->doc("b", "x", "", "", "kb-pharma", "biomed");
  b.collections_used = {"eagle_text", "eagle_text_biomed", "eagle_chemical"};
  auto c = this->doc("c", "x", "", "", "kb-pharma", "biomed");
  c.collections_used = {"eagle_text_medcpt"};
  auto d = this->doc("d", "x", "", "", "kb-other");
  for (const auto& r : {a, b, c, d}) this->reg_->upsert(r);

  EXPECT_EQ(this->reg_->collections_used({"a"}), (Ids{"eagle_text", "eagle_visual"}));
  EXPECT_EQ(this->reg_->collections_used({"a", "b"}),
            (Ids{"eagle_chemical", "eagle_text", "eagle_text_biomed", "eagle_visual"}));
  EXPECT_EQ(this->reg_->collections_used({}, {"kb-pharma"}),
            (Ids{"eagle_chemical", "eagle_text", "eagle_text_biomed", "eagle_text_medcpt"}));
  // kb_names OR document_ids, as the scope filter.
  EXPECT_EQ(this->reg_->collections_used({"a"}, {"kb-pharma"}),
            (Ids{"eagle_chemical", "eagle_text", "eagle_text_biomed", "eagle_text_medcpt", "eagle_visual"}));
  EXPECT_TRUE(this->reg_->collections_used({"d"}).empty());
  EXPECT_TRUE(this->reg_->collections_used({"missing"}, {"kb-none"}).empty());
  EXPECT_TRUE(this->reg_->collections_used({}, {}).empty());  // no scope, no union (G4)
  EXPECT_EQ(error_code_of([&] { this->reg_->collections_used({}, Ids(kMaxIds + 1, "k")); }),
            ErrorCode::invalid_argument);
}

// ---- listings: GET /documents, /knowledge_bases, /tags -------------------------

namespace {

std::vector<std::string> ids_of(const std::vector<DocumentRecord>& records) {
  std::vector<std::string> out;
  for (const auto& r : records) out.push_back(r.document_id);
  return out;
}

DocumentQuery query(std::vector<std::string> kb_names = {}, std::optional<std::string> ns = std::nullopt,
                    size_t limit = kMaxLimit, size_t offset = 0) {
  DocumentQuery q;
  q.kb_names = std::move(kb_names);
  q.plugin_namespace = std::move(ns);
  q.limit = limit;
  q.offset = offset;
  return q;
}

}  // namespace

TYPED_TEST(RegistryTest, ListPagesCoverEveryDocumentOnceInBytewiseOrder) {
  Ids ids = {"b", "a", "C", "B", "c", "A", "_x", "10", "9", "Z", "é", "z", "a-b", "a_b", "a b", "ä"};
  for (const auto& id : ids) this->reg_->upsert(this->doc(id, "x"));
  Ids sorted = ids;
  std::sort(sorted.begin(), sorted.end());  // bytewise: char_traits<char> compares as unsigned char
  EXPECT_EQ(ids_of(this->reg_->list(query())), sorted);
  EXPECT_EQ(this->reg_->count(query()), ids.size());
  for (size_t page : {1u, 3u, 5u, 16u, 17u}) {
    Ids seen;
    for (size_t offset = 0; offset < ids.size() + page; offset += page) {
      auto got = ids_of(this->reg_->list(query({}, std::nullopt, page, offset)));
      EXPECT_LE(got.size(), page);
      seen.insert(seen.end(), got.begin(), got.end());
    }
    EXPECT_EQ(seen, sorted) << "page size " << page;
  }
  EXPECT_TRUE(this->reg_->list(query({}, std::nullopt, 10, ids.size())).empty());
  EXPECT_TRUE(this->reg_->list(query({}, std::nullopt, 10, kMaxOffset)).empty());
  EXPECT_EQ(ids_of(this->reg_->list(query({}, std::nullopt, 2, 14))), (Ids{sorted[14], sorted[15]}));
  // The default query: the first 50.
  EXPECT_EQ(this->reg_->list(DocumentQuery{}).size(), ids.size());
}

TYPED_TEST(RegistryTest, ListReturnsRecordsAsGetDoes) {
  auto a = this->doc("a", "Humira", "HUMIRA_label.xml", "Humira (adalimumab)", "pharma", "biomed");
  a.source_type = "spl";
  a.year = 2023;
  a.source_uri = "https://dailymed.nlm.nih.gov/x?setid=1";
  a.collections_used = {"eagle_text", "eagle_chemical"};
  auto b = this->doc("b", "", "", "", "");  // year unset, no collections, no KB
  this->reg_->upsert(a);
  this->reg_->upsert(b);
  auto listed = this->reg_->list(query());
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0], *this->reg_->get("a"));
  EXPECT_EQ(listed[1], *this->reg_->get("b"));
  EXPECT_TRUE(std::regex_match(listed[0].created_at, kIsoUtc)) << listed[0].created_at;
  EXPECT_EQ(listed[0].year, std::optional<int64_t>(2023));
  EXPECT_FALSE(listed[1].year.has_value());
  EXPECT_EQ(listed[0].collections_used, (Ids{"eagle_text", "eagle_chemical"}));
}

TYPED_TEST(RegistryTest, ListFiltersByKbsAndNamespaceAndCountAgrees) {
  this->reg_->upsert(this->doc("a1", "x", "", "", "kb-a", "core"));
  this->reg_->upsert(this->doc("a2", "x", "", "", "kb-a", "biomed"));
  this->reg_->upsert(this->doc("b1", "x", "", "", "kb-b", "biomed"));
  this->reg_->upsert(this->doc("c1", "x", "", "", "kb-c", "core"));
  this->reg_->upsert(this->doc("n1", "x", "", "", "", "core"));
  auto check = [&](const DocumentQuery& q, const Ids& want) {
    EXPECT_EQ(ids_of(this->reg_->list(q)), want);
    EXPECT_EQ(this->reg_->count(q), want.size());
  };
  check(query(), (Ids{"a1", "a2", "b1", "c1", "n1"}));
  check(query({"kb-a"}), (Ids{"a1", "a2"}));
  check(query({"kb-b", "kb-a", "kb-a"}), (Ids{"a1", "a2", "b1"}));  // order and duplicates do not matter
  check(query({""}), Ids{"n1"});                                    // the documents without a KB
  check(query({"kb-none"}), Ids{});
  check(query({}, "biomed"), (Ids{"a2", "b1"}));
  check(query({}, "core"), (Ids{"a1", "c1", "n1"}));
  check(query({}, "other"), Ids{});
  check(query({"kb-a", "kb-c"}, "core"), (Ids{"a1", "c1"}));
  check(query({"kb-c"}, "biomed"), Ids{});
  // count ignores limit and offset; list pages the same filtered set.
  EXPECT_EQ(this->reg_->count(query({}, "core", 1, 2)), 3u);
  EXPECT_EQ(ids_of(this->reg_->list(query({}, "core", 1, 1))), Ids{"c1"});
  EXPECT_EQ(this->reg_->count(query({}, std::nullopt, 0, kMaxOffset + 1)), 5u);
}

TYPED_TEST(RegistryTest, KnowledgeBasesCountTheirDocumentsIncludingTheEmptyKb) {
  EXPECT_TRUE(this->reg_->knowledge_bases().empty());
  for (const char* id : {"f1", "f2", "f3"}) this->reg_->upsert(this->doc(id, "x", "", "", "finance"));
  this->reg_->upsert(this->doc("p1", "x", "", "", "Pharma", "biomed"));
  this->reg_->upsert(this->doc("p2", "x", "", "", "pharma", "biomed"));
  this->reg_->upsert(this->doc("p3", "x", "", "", "pharma", "core"));
  this->reg_->upsert(this->doc("n1", "x", "", "", ""));
  this->reg_->upsert(this->doc("n2", "x", "", "", ""));
  this->reg_->upsert(this->doc("u1", "x", "", "", "增值税"));
  EXPECT_EQ(this->reg_->knowledge_bases(),
            (std::vector<NameCount>{{"", 2}, {"Pharma", 1}, {"finance", 3}, {"pharma", 2}, {"增值税", 1}}));
  EXPECT_EQ(this->reg_->knowledge_bases({"pharma", "finance", "pharma", "kb-none"}),
            (std::vector<NameCount>{{"finance", 3}, {"pharma", 2}}));
  EXPECT_EQ(this->reg_->knowledge_bases({""}), (std::vector<NameCount>{{"", 2}}));
  EXPECT_TRUE(this->reg_->knowledge_bases({"kb-none"}).empty());
  // Moving and removing documents moves the counts.
  this->reg_->upsert(this->doc("f1", "x", "", "", "pharma"));
  ASSERT_TRUE(this->reg_->remove("u1"));
  EXPECT_EQ(this->reg_->knowledge_bases(),
            (std::vector<NameCount>{{"", 2}, {"Pharma", 1}, {"finance", 2}, {"pharma", 3}}));
}

TYPED_TEST(RegistryTest, TagsCountTheirDocumentsByNamespaceAndKb) {
  this->reg_->upsert(this->doc("d1", "x", "", "", "kb-a"));
  this->reg_->upsert(this->doc("d2", "x", "", "", "kb-a"));
  this->reg_->upsert(this->doc("d3", "x", "", "", "kb-b", "biomed"));
  this->reg_->upsert(this->doc("d4", "x", "", "", ""));
  this->reg_->set_keywords("d1", "core", {"2025", "tax", "Tax"});
  this->reg_->set_keywords("d1", "biomed", {"2025", "oncology"});  // "2025" in two namespaces on d1
  this->reg_->set_keywords("d2", "core", {"tax"});
  this->reg_->set_keywords("d3", "biomed", {"oncology", "增值税"});
  this->reg_->set_keywords("d4", "core", {"2025"});
  using Counts = std::vector<NameCount>;
  EXPECT_EQ(this->reg_->tags(),
            (Counts{{"2025", 2}, {"Tax", 1}, {"oncology", 2}, {"tax", 2}, {"增值税", 1}}));
  EXPECT_EQ(this->reg_->tags("core"), (Counts{{"2025", 2}, {"Tax", 1}, {"tax", 2}}));
  EXPECT_EQ(this->reg_->tags("biomed"), (Counts{{"2025", 1}, {"oncology", 2}, {"增值税", 1}}));
  EXPECT_TRUE(this->reg_->tags("other").empty());
  EXPECT_EQ(this->reg_->tags(std::nullopt, {"kb-a"}),
            (Counts{{"2025", 1}, {"Tax", 1}, {"oncology", 1}, {"tax", 2}}));
  EXPECT_EQ(this->reg_->tags("biomed", {"kb-b", "kb-a"}),
            (Counts{{"2025", 1}, {"oncology", 2}, {"增值税", 1}}));
  EXPECT_EQ(this->reg_->tags(std::nullopt, {""}), (Counts{{"2025", 1}}));
  EXPECT_TRUE(this->reg_->tags(std::nullopt, {"kb-none"}).empty());
  EXPECT_TRUE(this->reg_->tags("core", {"kb-b"}).empty());
  // Removing a document takes its tags out of the counts.
  ASSERT_TRUE(this->reg_->remove("d1"));
  EXPECT_EQ(this->reg_->tags(), (Counts{{"2025", 1}, {"oncology", 1}, {"tax", 1}, {"增值税", 1}}));
}

TYPED_TEST(RegistryTest, ListingBoundsAreEnforced) {
  this->reg_->upsert(this->doc("d", "x"));
  auto code = [&](const DocumentQuery& q) { return error_code_of([&] { this->reg_->list(q); }); };
  EXPECT_EQ(code(query({}, std::nullopt, 0)), ErrorCode::invalid_argument);
  EXPECT_EQ(code(query({}, std::nullopt, kMaxLimit + 1)), ErrorCode::invalid_argument);
  EXPECT_EQ(code(query({}, std::nullopt, 10, kMaxOffset + 1)), ErrorCode::invalid_argument);
  EXPECT_EQ(ids_of(this->reg_->list(query({}, std::nullopt, kMaxLimit, 0))), Ids{"d"});
  EXPECT_EQ(ids_of(this->reg_->list(query({}, std::nullopt, 1, 0))), Ids{"d"});

  Ids kbs(kMaxIds, "kb1");
  EXPECT_EQ(this->reg_->count(query(kbs)), 1u);
  EXPECT_EQ(this->reg_->knowledge_bases(kbs), (std::vector<NameCount>{{"kb1", 1}}));
  kbs.push_back("kb1");
  EXPECT_EQ(code(query(kbs)), ErrorCode::invalid_argument);
  EXPECT_EQ(error_code_of([&] { this->reg_->count(query(kbs)); }), ErrorCode::invalid_argument);
  EXPECT_EQ(error_code_of([&] { this->reg_->knowledge_bases(kbs); }), ErrorCode::invalid_argument);
  EXPECT_EQ(error_code_of([&] { this->reg_->tags(std::nullopt, kbs); }), ErrorCode::invalid_argument);

  const std::string too_long(kMaxKeyBytes + 1, 'k'), bad_utf8 = "kb\xff", nul("kb\0x", 4);
  for (const auto& bad : {too_long, bad_utf8, nul}) {
    EXPECT_EQ(code(query({bad})), ErrorCode::invalid_argument);
    EXPECT_EQ(code(query({}, bad)), ErrorCode::invalid_argument);
    EXPECT_EQ(error_code_of([&] { this->reg_->count(query({}, bad)); }), ErrorCode::invalid_argument);
    EXPECT_EQ(error_code_of([&] { this->reg_->knowledge_bases({"ok", bad}); }), ErrorCode::invalid_argument);
    EXPECT_EQ(error_code_of([&] { this->reg_->tags(bad); }), ErrorCode::invalid_argument);
    EXPECT_EQ(error_code_of([&] { this->reg_->tags(std::nullopt, {bad}); }), ErrorCode::invalid_argument);
  }
  // A set namespace must name one: "" is refused, not read as "any".
  EXPECT_EQ(code(query({}, "")), ErrorCode::invalid_argument);
  EXPECT_EQ(error_code_of([&] { this->reg_->count(query({}, "")); }), ErrorCode::invalid_argument);
  EXPECT_EQ(error_code_of([&] { this->reg_->tags(""); }), ErrorCode::invalid_argument);
  // At the key bound is fine.
  EXPECT_TRUE(
      this->reg_->list(query({std::string(kMaxKeyBytes, 'k')}, std::string(kMaxKeyBytes, 'n'))).empty());
}

TYPED_TEST(RegistryTest, ListingFiltersTreatInjectionShapedValuesAsLiterals) {
  const std::string sq = "a' OR '1'='1";
  const std::string dq = "a\" or kb_name != \"";
  const std::string arr = "{kb1,kb2}";
  const std::string json = "[\"kb1\"]";
  this->reg_->upsert(this->doc("plain", "x", "", "", "kb1"));
  this->reg_->upsert(this->doc("other", "x", "", "", "kb2"));
  this->reg_->upsert(this->doc("inj", "x", "", "", sq, sq));
  this->reg_->set_keywords("plain", "core", {"t"});
  this->reg_->set_keywords("inj", sq, {dq});
  for (const auto& v :
       {dq, arr, json, std::string("kb1' OR '1'='1"), std::string("%"), std::string("NULL")}) {
    EXPECT_TRUE(this->reg_->list(query({v})).empty()) << v;
    EXPECT_EQ(this->reg_->count(query({v})), 0u) << v;
    EXPECT_TRUE(this->reg_->list(query({}, v)).empty()) << v;
    EXPECT_TRUE(this->reg_->knowledge_bases({v}).empty()) << v;
    EXPECT_TRUE(this->reg_->tags(v).empty()) << v;
    EXPECT_TRUE(this->reg_->tags(std::nullopt, {v}).empty()) << v;
  }
  EXPECT_EQ(ids_of(this->reg_->list(query({sq}))), Ids{"inj"});
  EXPECT_EQ(ids_of(this->reg_->list(query({}, sq))), Ids{"inj"});
  EXPECT_EQ(this->reg_->count(query({sq}, sq)), 1u);
  EXPECT_EQ(this->reg_->knowledge_bases({sq}), (std::vector<NameCount>{{sq, 1}}));
  EXPECT_EQ(this->reg_->tags(sq), (std::vector<NameCount>{{dq, 1}}));
  EXPECT_EQ(this->reg_->tags(std::nullopt, {sq}), (std::vector<NameCount>{{dq, 1}}));
  EXPECT_EQ(this->reg_->count(query()), 3u);  // the table survived
}

// ---- input checks shared by both backends ------------------------------------

TYPED_TEST(RegistryTest, InvalidTextIsRefusedAlike) {
  EXPECT_EQ(error_code_of([&] { this->reg_->upsert(this->doc("d", "bad \xff utf8")); }),
            ErrorCode::invalid_argument);
  EXPECT_EQ(error_code_of([&] { this->reg_->upsert(this->doc("d", std::string("nul\0byte", 8))); }),
            ErrorCode::invalid_argument);
  EXPECT_EQ(error_code_of([&] { this->reg_->upsert(this->doc(std::string(kMaxKeyBytes + 1, 'd'), "x")); }),
            ErrorCode::invalid_argument);
  EXPECT_EQ(error_code_of([&] { this->find({"\xc3"}); }), ErrorCode::invalid_argument);
  EXPECT_FALSE(this->reg_->get("d").has_value());
  // At the bound is fine.
  this->reg_->upsert(this->doc(std::string(kMaxKeyBytes, 'd'), "x"));
  EXPECT_TRUE(this->reg_->get(std::string(kMaxKeyBytes, 'd')).has_value());
}

TYPED_TEST(RegistryTest, ConcurrentCallsFromThreadsAreSafe) {
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      try {
        for (int i = 0; i < 25; ++i) {
          std::string id = cat("t", std::to_string(t), "-", std::to_string(i));
          this->reg_->upsert(this->doc(id, "threaded"));
          this->reg_->set_keywords(id, "core", {cat("tag", std::to_string(t))});
          if (!this->reg_->get(id)) ++errors;
          this->reg_->find_by_name_terms({"threaded"}, "core", 10);
        }
      } catch (const std::exception& e) {
        ++errors;
        ADD_FAILURE() << e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(this->find({"threaded"}, "core", 1000).size(), 100u);
  EXPECT_EQ(this->reg_->ids_for_tags({"tag2"}, "core", 1000).size(), 25u);
}

// ---- helpers, URLs and backend specifics --------------------------------------

TEST(Registry, LikeContainsPatternEscapesTheMetacharacters) {
  EXPECT_EQ(like_contains_pattern("Humira"), "%Humira%");
  EXPECT_EQ(like_contains_pattern("50%"), "%50\\%%");
  EXPECT_EQ(like_contains_pattern("a_b"), "%a\\_b%");
  EXPECT_EQ(like_contains_pattern("c:\\x"), "%c:\\\\x%");
  EXPECT_EQ(like_contains_pattern("it's"), "%it's%");
}

TEST(Registry, PgTextArrayQuotesEveryElement) {
  EXPECT_EQ(pg_text_array({}), "{}");
  EXPECT_EQ(pg_text_array({"a", ""}), "{\"a\",\"\"}");
  EXPECT_EQ(pg_text_array({"a\"b", "c\\d", "NULL", "{x,y}"}), R"({"a\"b","c\\d","NULL","{x,y}"})");
}

TEST(Registry, OpenRegistryUnderstandsSqliteUrls) {
  auto mem = open_registry("sqlite::memory:");
  EXPECT_EQ(mem->backend(), "sqlite");
  mem->upsert(record("m", "mem"));
  EXPECT_TRUE(mem->get("m").has_value());
  EXPECT_FALSE(open_registry("sqlite::memory:")->get("m").has_value());  // private per open

  fs::path file = fs::temp_directory_path() / ("eagle_registry_url_" + unique_suffix() + ".db");
  open_registry("sqlite:" + file.string())->upsert(record("f", "file"));
  EXPECT_TRUE(open_registry("sqlite://" + file.string())->get("f").has_value());
  for (const char* ext : {"", "-wal", "-shm"}) fs::remove(file.string() + ext);
}

TEST(Registry, OpenRegistryRefusesUnknownOrEmptyUrls) {
  for (const char* url : {"", "sqlite:", "sqlite://", "postgres:", "mysql://u:secret@h/db", "eagle.db"}) {
    try {
      open_registry(url);
      ADD_FAILURE() << "accepted '" << url << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << url;
      EXPECT_EQ(std::string(e.what()).find("secret"), std::string::npos) << e.what();
    }
  }
}

TEST(Registry, AnUnreachablePostgresIsUnavailableWithLibpqsMessage) {
  for (const char* url : {"postgresql://postgres@127.0.0.1:1/eagle?connect_timeout=3",
                          "postgres:host=127.0.0.1 port=1 dbname=eagle connect_timeout=3"}) {
    try {
      open_registry(url);
      ADD_FAILURE() << "connected to " << url;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::unavailable) << e.what();
      EXPECT_NE(std::string(e.what()).find("127.0.0.1"), std::string::npos) << e.what();
    }
  }
}

TEST(PostgresRegistry, OpenRegistryReachesPostgres) {
  std::string conninfo = postgres_conninfo();
  ASSERT_FALSE(conninfo.empty());
  auto reg = open_registry("postgres:" + conninfo);
  EXPECT_EQ(reg->backend(), "postgresql");
  EXPECT_FALSE(reg->get("eagle-registry-test-never-inserted").has_value());
}

TEST(SqliteRegistry, UsesWalAndSharesTheFileBetweenConnections) {
  fs::path file = fs::temp_directory_path() / ("eagle_registry_wal_" + unique_suffix() + ".db");
  {
    SqliteRegistry a(file.string()), b(file.string());
    a.upsert(record("d", "shared"));
    EXPECT_TRUE(fs::exists(file.string() + "-wal"));
    EXPECT_EQ(b.find_by_name_terms({"SHARED"}, "core", 10), Ids{"d"});
  }
  for (const char* ext : {"", "-wal", "-shm"}) fs::remove(file.string() + ext);
}

TEST(SqliteRegistry, AnUnopenableFileIsUnavailable) {
  try {
    SqliteRegistry r("/nonexistent-dir-eagle/x/registry.db");
    ADD_FAILURE() << "opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unavailable) << e.what();
  }
}

TEST(PostgresRegistry, CreatesTheSeedTablesWithATextArrayCatalog) {
  std::string conninfo = postgres_conninfo();
  ASSERT_FALSE(conninfo.empty());
  std::string schema = "eagle_test_" + unique_suffix();
  { PostgresRegistry reg(conninfo, schema); }
  auto rows = pg_query(
      conninfo, "SELECT table_name, data_type FROM information_schema.columns WHERE table_schema = '" +
                    schema +
                    "' AND column_name IN ('collections_used', 'keyword', 'created_at') ORDER BY 1, 2");
  std::vector<std::string> got;
  for (const auto& r : rows) got.push_back(r[0] + ":" + r[1]);
  EXPECT_EQ(got, (Ids{"document_keywords:text", "documents:ARRAY", "documents:timestamp with time zone",
                      "session_turns:timestamp with time zone", "sessions:timestamp with time zone"}));
  pg_query(conninfo, "DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE");
}

TEST(PostgresRegistry, RefusesASchemaNameThatIsNotAnIdentifier) {
  for (const char* bad : {"Bad", "a b", "x\"; DROP SCHEMA public; --", "1abc"}) {
    try {
      PostgresRegistry reg("host=127.0.0.1 port=1", bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
    }
  }
}

TEST(PostgresRegistry, ReconnectsAfterTheServerDroppedTheConnection) {
  std::string conninfo = postgres_conninfo();
  ASSERT_FALSE(conninfo.empty());
  std::string schema = "eagle_test_" + unique_suffix();
  {
    PostgresRegistry reg(conninfo, schema);
    reg.upsert(record("d", "before"));
    auto killed = pg_query(conninfo,
                           "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                           "WHERE application_name = 'eagle-registry' AND pid <> pg_backend_pid()");
    ASSERT_FALSE(killed.empty()) << "no registry connection to terminate";
    // The first call may learn of the drop (unavailable); the next one reconnects.
    try {
      reg.get("d");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::unavailable) << e.what();
    }
    auto got = reg.get("d");
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->name, "before");  // search_path survived the reconnect
  }
  pg_query(conninfo, "DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE");
}

// A listing by kind (source_type), or of every kind but one: what `documents list
// --kind` and GET /documents?kind= ask (compound cards are listed apart).
TYPED_TEST(RegistryTest, ListingsFilterByKindOrLeaveOneKindOut) {
  auto label = this->doc("doc-l", "l", "l.xml", "L", "kb");
  label.source_type = "label";
  auto c1 = this->doc("DB001", "imatinib", "", "imatinib", "kb");
  c1.source_type = "compound";
  auto c2 = this->doc("DB002", "nilotinib", "", "nilotinib", "kb");
  c2.source_type = "compound";
  auto plain = this->doc("doc-p", "p", "p.md", "P", "kb");  // no source_type
  for (const auto& r : {label, c1, c2, plain}) this->reg_->upsert(r);
  auto ids = [&](const DocumentQuery& q) {
    Ids out;
    for (const auto& r : this->reg_->list(q)) out.push_back(r.document_id);
    EXPECT_EQ(this->reg_->count(q), out.size());
    return out;
  };
  DocumentQuery only;
  only.source_type = "compound";
  EXPECT_EQ(ids(only), (Ids{"DB001", "DB002"}));
  DocumentQuery apart;
  apart.exclude_source_type = "compound";
  EXPECT_EQ(ids(apart), (Ids{"doc-l", "doc-p"}));  // a record without a kind is listed
  EXPECT_EQ(ids({}).size(), 4u);
  DocumentQuery empty;
  empty.source_type = "";
  EXPECT_EQ(error_code_of([&] { this->reg_->list(empty); }), ErrorCode::invalid_argument);
}

// ---- sessions ------------------------------------------------------------------

namespace {
SessionRecord session(std::string id, std::string owner, std::string title = "t") {
  SessionRecord s;
  s.session_id = std::move(id);
  s.owner = std::move(owner);
  s.plugin_namespace = "biomed";
  s.kb_scope = {"kb-a", "kb b"};
  s.title = std::move(title);
  return s;
}
SessionTurn turn(std::string q, std::string a) {
  SessionTurn t;
  t.question = std::move(q);
  t.answer = std::move(a);
  t.mode = "extractive";
  t.evidence = "strong";
  t.citations = R"([{"n":1,"id":"c1","quote":"\"x\" – ü"}])";
  return t;
}
}  // namespace

TYPED_TEST(RegistryTest, ASessionRoundTripsWithItsTurnsInOrder) {
  this->reg_->create_session(session("s-1", "alice", "What is X?"), 10);
  EXPECT_EQ(this->reg_->append_turn("s-1", "alice", turn("What is X?", "X is [1]."), 10), 1);
  EXPECT_EQ(this->reg_->append_turn("s-1", "alice", turn("And Y?", "Y [1]."), 10), 2);
  auto got = this->reg_->get_session("s-1", "alice");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->title, "What is X?");
  EXPECT_EQ(got->kb_scope, (Ids{"kb-a", "kb b"}));
  EXPECT_EQ(got->plugin_namespace, "biomed");
  EXPECT_EQ(got->turns, 2u);
  EXPECT_TRUE(std::regex_match(got->created_at, kIsoUtc)) << got->created_at;
  EXPECT_GE(got->updated_at, got->created_at);
  auto turns = this->reg_->session_turns("s-1", "alice");
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0].turn, 1);
  EXPECT_EQ(turns[0].question, "What is X?");
  EXPECT_EQ(turns[1].answer, "Y [1].");
  EXPECT_EQ(turns[1].citations, turn("", "").citations);  // the JSON text byte for byte
  EXPECT_EQ(turns[1].evidence, "strong");
  auto last = this->reg_->session_turns("s-1", "alice", 1);
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].turn, 2);  // the last turns, oldest first
  // A taken id is a conflict.
  EXPECT_EQ(error_code_of([&] { this->reg_->create_session(session("s-1", "bob"), 10); }), ErrorCode::conflict);
}

TYPED_TEST(RegistryTest, ASessionIsOnlyItsOwners) {
  this->reg_->create_session(session("s-a", "alice"), 10);
  this->reg_->append_turn("s-a", "alice", turn("q", "a"), 10);
  EXPECT_FALSE(this->reg_->get_session("s-a", "bob"));
  EXPECT_FALSE(this->reg_->get_session("s-a", ""));  // no token is an owner too, not a master key
  EXPECT_TRUE(this->reg_->session_turns("s-a", "bob").empty());
  EXPECT_EQ(error_code_of([&] { this->reg_->append_turn("s-a", "bob", turn("q", "a"), 10); }),
            ErrorCode::not_found);
  EXPECT_FALSE(this->reg_->delete_session("s-a", "bob"));
  EXPECT_TRUE(this->reg_->list_sessions("bob", 10, 0).empty());
  EXPECT_EQ(this->reg_->count_sessions("bob"), 0u);
  EXPECT_EQ(this->reg_->count_sessions("alice"), 1u);
  ASSERT_TRUE(this->reg_->get_session("s-a", "alice"));
  EXPECT_EQ(this->reg_->get_session("s-a", "alice")->turns, 1u);  // bob's attempts wrote nothing
}

TYPED_TEST(RegistryTest, DeletingASessionTakesItsTurns) {
  this->reg_->create_session(session("s-d", "alice"), 10);
  for (int i = 0; i < 3; ++i) this->reg_->append_turn("s-d", "alice", turn("q", "a"), 10);
  EXPECT_EQ(this->reg_->delete_session("s-d", "alice"), std::optional<size_t>(3));
  EXPECT_FALSE(this->reg_->get_session("s-d", "alice"));
  EXPECT_FALSE(this->reg_->delete_session("s-d", "alice"));
  // The id is free again, with no turns left behind.
  this->reg_->create_session(session("s-d", "alice"), 10);
  EXPECT_TRUE(this->reg_->session_turns("s-d", "alice").empty());
  EXPECT_EQ(this->reg_->append_turn("s-d", "alice", turn("q", "a"), 10), 1);
}

TYPED_TEST(RegistryTest, SessionsAreListedByLastUseAndTheLeastRecentGoBeyondTheCap) {
  for (const char* id : {"s-1", "s-2", "s-3"}) this->reg_->create_session(session(id, "alice"), 3);
  this->reg_->create_session(session("s-x", "bob"), 3);
  this->reg_->append_turn("s-1", "alice", turn("q", "a"), 10);  // s-1 becomes the most recent
  auto ids = [&](size_t limit, size_t offset) {
    Ids out;
    for (const auto& s : this->reg_->list_sessions("alice", limit, offset)) out.push_back(s.session_id);
    return out;
  };
  EXPECT_EQ(ids(10, 0), (Ids{"s-1", "s-3", "s-2"}));
  EXPECT_EQ(ids(1, 1), (Ids{"s-3"}));
  this->reg_->create_session(session("s-4", "alice"), 3);  // s-2, least recently used, goes
  EXPECT_EQ(ids(10, 0), (Ids{"s-4", "s-1", "s-3"}));
  EXPECT_TRUE(this->reg_->get_session("s-x", "bob"));  // another owner's count is its own
  EXPECT_EQ(this->reg_->count_sessions("alice"), 3u);
}

TYPED_TEST(RegistryTest, ASessionKeepsAtMostMaxTurns) {
  this->reg_->create_session(session("s-m", "alice"), 10);
  this->reg_->append_turn("s-m", "alice", turn("q1", "a1"), 2);
  this->reg_->append_turn("s-m", "alice", turn("q2", "a2"), 2);
  EXPECT_EQ(error_code_of([&] { this->reg_->append_turn("s-m", "alice", turn("q3", "a3"), 2); }),
            ErrorCode::conflict);
  EXPECT_EQ(this->reg_->get_session("s-m", "alice")->turns, 2u);
}

TYPED_TEST(RegistryTest, SessionInputIsValidatedTheSameOnBothBackends) {
  EXPECT_EQ(error_code_of([&] { this->reg_->create_session(session("", "alice"), 10); }),
            ErrorCode::invalid_argument);
  EXPECT_EQ(error_code_of([&] { this->reg_->create_session(session("s-z", "alice"), 0); }),
            ErrorCode::invalid_argument);
  this->reg_->create_session(session("s-z", "alice"), 10);
  EXPECT_EQ(error_code_of([&] { this->reg_->append_turn("s-z", "alice", turn("bad \xff utf-8", "a"), 10); }),
            ErrorCode::invalid_argument);
  EXPECT_EQ(error_code_of([&] {
              this->reg_->append_turn("s-z", "alice", turn(std::string(kMaxSessionText + 1, 'q'), "a"), 10);
            }),
            ErrorCode::invalid_argument);
  EXPECT_EQ(error_code_of([&] { this->reg_->list_sessions("alice", 0, 0); }), ErrorCode::invalid_argument);
  EXPECT_EQ(this->reg_->get_session("s-z", "alice")->turns, 0u);
}

// A file written by a build before sessions (schema version 3) and opened read-only
// beside its writer lists no sessions, refuses to write one, and is left as it was.
TEST(SqliteRegistrySessions, AVersion3FileOpenedReadOnlyHasNoSessionsAndStaysUnchanged) {
  const fs::path file = fs::temp_directory_path() / ("eagle_registry_v3_" + unique_suffix() + ".db");
  {
    SqliteRegistry writer(file.string());
    DocumentRecord r;
    r.document_id = "doc-1";
    writer.upsert(r);
  }
  {
    // Make it what a version-3 build left: no session tables, user_version 3.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "DROP TABLE session_turns; DROP TABLE sessions; PRAGMA user_version = 3; "
                               "PRAGMA journal_mode = DELETE;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  auto read_bytes = [&] {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string before = read_bytes();
  {
    SqliteRegistry reader(file.string(), /*read_only=*/true);
    EXPECT_TRUE(reader.get("doc-1"));
    EXPECT_TRUE(reader.list_sessions("", 10, 0).empty());
    EXPECT_EQ(reader.count_sessions(""), 0u);
    EXPECT_FALSE(reader.get_session("s-1", ""));
    EXPECT_EQ(error_code_of([&] { reader.create_session(session("s-1", ""), 10); }), ErrorCode::unavailable);
  }
  EXPECT_EQ(read_bytes(), before);
  {
    SqliteRegistry writer(file.string());  // a writer upgrades the file
    writer.create_session(session("s-1", ""), 10);
    EXPECT_EQ(writer.count_sessions(""), 1u);
  }
  for (const char* ext : {"", "-wal", "-shm"}) fs::remove(file.string() + ext);
}
