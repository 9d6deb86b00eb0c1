#include "eagle/registry/sqlite_registry.h"

#include <sqlite3.h>

#include <array>
#include <nlohmann/json.hpp>

#include "eagle/core/error.h"
#include "eagle/registry/detail.h"

namespace eagle::registry {

namespace {

// The seed's `documents` and `document_keywords` tables. The *_fold columns hold
// detail::fold_case of the three names: SQLite's lower() and LIKE fold ASCII only,
// so the case-insensitive substring match of lookup_document_ids_by_name_terms runs
// on copies folded in C++ (the same Unicode fold PostgreSQL's ILIKE applies under a
// UTF-8 locale). collections_used is a JSON array of strings.
constexpr const char* kSqliteSchema = R"sql(
CREATE TABLE IF NOT EXISTS documents (
  document_id        TEXT PRIMARY KEY NOT NULL,
  name               TEXT NOT NULL DEFAULT '',
  file_name          TEXT NOT NULL DEFAULT '',
  document_name      TEXT NOT NULL DEFAULT '',
  kb_name            TEXT NOT NULL DEFAULT '',
  plugin_namespace   TEXT NOT NULL DEFAULT 'core',
  source_type        TEXT NOT NULL DEFAULT '',
  year               INTEGER,
  source_uri         TEXT NOT NULL DEFAULT '',
  collections_used   TEXT NOT NULL DEFAULT '[]',
  created_at         TEXT NOT NULL,
  name_fold          TEXT NOT NULL DEFAULT '',
  file_name_fold     TEXT NOT NULL DEFAULT '',
  document_name_fold TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS documents_namespace_kb ON documents (plugin_namespace, kb_name);
CREATE INDEX IF NOT EXISTS documents_kb ON documents (kb_name);
CREATE TABLE IF NOT EXISTS document_keywords (
  document_id      TEXT NOT NULL REFERENCES documents (document_id) ON DELETE CASCADE,
  plugin_namespace TEXT NOT NULL,
  keyword          TEXT NOT NULL,
  PRIMARY KEY (document_id, plugin_namespace, keyword)
);
CREATE INDEX IF NOT EXISTS document_keywords_tag ON document_keywords (plugin_namespace, keyword);
CREATE TABLE IF NOT EXISTS drug_brands (
  document_id TEXT NOT NULL REFERENCES documents (document_id) ON DELETE CASCADE,
  brand       TEXT NOT NULL,
  generic     TEXT NOT NULL,
  PRIMARY KEY (document_id, brand, generic)
);
CREATE TABLE IF NOT EXISTS document_sources (
  document_id    TEXT PRIMARY KEY NOT NULL REFERENCES documents (document_id) ON DELETE CASCADE,
  content_sha256 TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS document_sources_hash ON document_sources (content_sha256);
CREATE TABLE IF NOT EXISTS sessions (
  session_id       TEXT PRIMARY KEY NOT NULL,
  owner            TEXT NOT NULL DEFAULT '',
  kb_scope         TEXT NOT NULL DEFAULT '[]',
  plugin_namespace TEXT NOT NULL,
  title            TEXT NOT NULL DEFAULT '',
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  used             INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sessions_owner ON sessions (owner, used);
CREATE INDEX IF NOT EXISTS sessions_used ON sessions (used);
CREATE TABLE IF NOT EXISTS session_turns (
  session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
  turn       INTEGER NOT NULL,
  question   TEXT NOT NULL,
  answer     TEXT NOT NULL,
  mode       TEXT NOT NULL,
  model      TEXT NOT NULL DEFAULT '',
  evidence   TEXT NOT NULL DEFAULT '',
  citations  TEXT NOT NULL DEFAULT '[]',
  created_at TEXT NOT NULL,
  PRIMARY KEY (session_id, turn)
);
)sql";

// PRAGMA user_version. 2 added drug_brands, 3 document_sources, 4 sessions; a reader
// of an older file (written by an older build, not upgraded yet) sees no brands /
// source hashes / sessions.
constexpr int kSchemaVersion = 4;
constexpr int kBrandsSchemaVersion = 2;
constexpr int kSourcesSchemaVersion = 3;
constexpr int kSessionsSchemaVersion = 4;

enum Query : size_t {
  q_upsert,
  q_remove,
  q_get,
  q_exists,
  q_delete_keywords,
  q_insert_keyword,
  q_keywords,
  q_find_names,
  q_ids_for_tags,
  q_names,
  q_collections,
  q_list,
  q_count_documents,
  q_knowledge_bases,
  q_tags,
  q_delete_brands,
  q_insert_brand,
  q_brands,
  q_set_source,
  q_find_source,
  q_forget_source,
  q_session_create,
  q_session_trim,
  q_session_get,
  q_session_list,
  q_session_count,
  q_session_last_turn,
  q_session_append,
  q_session_touch,
  q_session_turns,
  q_session_delete,
  q_count
};
constexpr size_t kFirstSessionQuery = q_session_create;

// List parameters are bound as one JSON array and expanded with json_each, so each
// statement has a fixed text (prepared once) whatever the list's length.
constexpr std::array<const char*, q_count> kSql = {
    // q_upsert: created_at only on first insert (ON CONFLICT leaves it alone).
    R"sql(INSERT INTO documents (document_id, name, file_name, document_name, kb_name, plugin_namespace,
            source_type, year, source_uri, collections_used, created_at, name_fold, file_name_fold,
            document_name_fold)
          VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?11, ?12, ?13)
          ON CONFLICT (document_id) DO UPDATE SET
            name = excluded.name, file_name = excluded.file_name, document_name = excluded.document_name,
            kb_name = excluded.kb_name, plugin_namespace = excluded.plugin_namespace,
            source_type = excluded.source_type, year = excluded.year, source_uri = excluded.source_uri,
            collections_used = excluded.collections_used, name_fold = excluded.name_fold,
            file_name_fold = excluded.file_name_fold, document_name_fold = excluded.document_name_fold)sql",
    // q_remove: document_keywords rows go by ON DELETE CASCADE.
    "DELETE FROM documents WHERE document_id = ?1",
    // q_get and q_list: the columns read_record() reads, in its order.
    R"sql(SELECT document_id, name, file_name, document_name, kb_name, plugin_namespace, source_type, year,
                 source_uri, collections_used, created_at
          FROM documents WHERE document_id = ?1)sql",
    "SELECT 1 FROM documents WHERE document_id = ?1",
    "DELETE FROM document_keywords WHERE document_id = ?1 AND plugin_namespace = ?2",
    "INSERT OR IGNORE INTO document_keywords (document_id, plugin_namespace, keyword) VALUES (?1, ?2, ?3)",
    "SELECT keyword FROM document_keywords WHERE document_id = ?1 AND plugin_namespace = ?2",
    // q_find_names: ?1 = JSON array of folded like_contains_pattern()s.
    // The patterns are materialised once: a correlated json_each would re-parse the
    // JSON for every document (2.5x slower on 20k documents).
    R"sql(WITH t(value) AS MATERIALIZED (SELECT value FROM json_each(?1))
          SELECT d.document_id FROM documents d
          WHERE d.plugin_namespace = ?2 AND (?3 IS NULL OR d.kb_name = ?3)
            AND (?5 IS NULL OR d.kb_name IN (SELECT value FROM json_each(?5)))
            AND EXISTS (SELECT 1 FROM t
                        WHERE d.name_fold LIKE t.value ESCAPE '\'
                           OR d.file_name_fold LIKE t.value ESCAPE '\'
                           OR d.document_name_fold LIKE t.value ESCAPE '\')
          ORDER BY d.document_id LIMIT ?4)sql",
    R"sql(SELECT DISTINCT k.document_id FROM document_keywords k
          WHERE k.plugin_namespace = ?2 AND k.keyword IN (SELECT value FROM json_each(?1))
            AND (?4 IS NULL OR k.document_id IN (SELECT d.document_id FROM documents d
                                                 WHERE d.kb_name IN (SELECT value FROM json_each(?4))))
          ORDER BY k.document_id LIMIT ?3)sql",
    R"sql(SELECT document_id, file_name, document_name FROM documents
          WHERE document_id IN (SELECT value FROM json_each(?1)))sql",
    R"sql(SELECT DISTINCT c.value FROM documents d, json_each(d.collections_used) c
          WHERE (d.document_id IN (SELECT value FROM json_each(?1))
                 OR d.kb_name IN (SELECT value FROM json_each(?2)))
            AND (?3 IS NULL OR d.kb_name IN (SELECT value FROM json_each(?3))))sql",
    // The listings: a NULL ?1 (kb_names) or namespace is no filter. ORDER BY uses
    // the BINARY collation, bytewise like PostgreSQL's COLLATE "C".
    R"sql(SELECT document_id, name, file_name, document_name, kb_name, plugin_namespace, source_type, year,
                 source_uri, collections_used, created_at
          FROM documents
          WHERE (?1 IS NULL OR kb_name IN (SELECT value FROM json_each(?1)))
            AND (?2 IS NULL OR plugin_namespace = ?2)
            AND (?5 IS NULL OR source_type = ?5) AND (?6 IS NULL OR COALESCE(source_type, '') <> ?6)
          ORDER BY document_id LIMIT ?3 OFFSET ?4)sql",
    R"sql(SELECT COUNT(*) FROM documents
          WHERE (?1 IS NULL OR kb_name IN (SELECT value FROM json_each(?1)))
            AND (?2 IS NULL OR plugin_namespace = ?2)
            AND (?5 IS NULL OR source_type = ?5) AND (?6 IS NULL OR COALESCE(source_type, '') <> ?6))sql",
    R"sql(SELECT kb_name, COUNT(*) FROM documents
          WHERE ?1 IS NULL OR kb_name IN (SELECT value FROM json_each(?1))
          GROUP BY kb_name ORDER BY kb_name)sql",
    // q_tags: COUNT(DISTINCT): a tag in two namespaces on one document counts it once.
    R"sql(SELECT k.keyword, COUNT(DISTINCT k.document_id) FROM document_keywords k
          WHERE (?1 IS NULL OR k.plugin_namespace = ?1)
            AND (?2 IS NULL OR k.document_id IN (SELECT d.document_id FROM documents d
                                                 WHERE d.kb_name IN (SELECT value FROM json_each(?2))))
          GROUP BY k.keyword ORDER BY k.keyword)sql",
    "DELETE FROM drug_brands WHERE document_id = ?1",
    "INSERT OR IGNORE INTO drug_brands (document_id, brand, generic) VALUES (?1, ?2, ?3)",
    R"sql(SELECT DISTINCT b.brand, b.generic FROM drug_brands b JOIN documents d ON d.document_id = b.document_id
          WHERE d.plugin_namespace = ?1 ORDER BY b.brand, b.generic)sql",
    R"sql(INSERT INTO document_sources (document_id, content_sha256) VALUES (?1, ?2)
          ON CONFLICT (document_id) DO UPDATE SET content_sha256 = excluded.content_sha256)sql",
    R"sql(SELECT s.document_id FROM document_sources s JOIN documents d ON d.document_id = s.document_id
          WHERE s.content_sha256 = ?1 AND d.kb_name = ?2 AND d.plugin_namespace = ?3 ORDER BY s.document_id)sql",
    // q_forget_source: removing a document forgets its file's hash for every document read
    // from that file into its KB and namespace, so the next ingest reads the file again.
    R"sql(DELETE FROM document_sources WHERE document_id IN (
            SELECT s.document_id FROM document_sources s JOIN documents d ON d.document_id = s.document_id
            JOIN document_sources me ON me.content_sha256 = s.content_sha256
            JOIN documents md ON md.document_id = me.document_id
            WHERE me.document_id = ?1 AND d.kb_name = md.kb_name AND d.plugin_namespace = md.plugin_namespace))sql",
    // Sessions. `used` is a store-wide counter, bumped on create and on every turn:
    // "least recently used" is exact even when two writes share a millisecond.
    R"sql(INSERT INTO sessions (session_id, owner, kb_scope, plugin_namespace, title, created_at, updated_at, used)
          VALUES (?1, ?2, ?3, ?4, ?5, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),
                  (SELECT COALESCE(MAX(used), 0) + 1 FROM sessions)))sql",
    R"sql(DELETE FROM sessions WHERE session_id IN (
            SELECT session_id FROM sessions WHERE owner = ?1 ORDER BY used DESC LIMIT -1 OFFSET ?2))sql",
    // q_session_get and q_session_list: the columns read_session() reads, in its order.
    R"sql(SELECT s.session_id, s.owner, s.kb_scope, s.plugin_namespace, s.title, s.created_at, s.updated_at,
                 (SELECT COUNT(*) FROM session_turns t WHERE t.session_id = s.session_id)
          FROM sessions s WHERE s.session_id = ?1 AND s.owner = ?2)sql",
    R"sql(SELECT s.session_id, s.owner, s.kb_scope, s.plugin_namespace, s.title, s.created_at, s.updated_at,
                 (SELECT COUNT(*) FROM session_turns t WHERE t.session_id = s.session_id)
          FROM sessions s WHERE s.owner = ?1 ORDER BY s.used DESC LIMIT ?2 OFFSET ?3)sql",
    "SELECT COUNT(*) FROM sessions WHERE owner = ?1",
    "SELECT COALESCE(MAX(turn), 0), COUNT(*) FROM session_turns WHERE session_id = ?1",
    R"sql(INSERT INTO session_turns (session_id, turn, question, answer, mode, model, evidence, citations, created_at)
          VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))sql",
    R"sql(UPDATE sessions SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),
                              used = (SELECT COALESCE(MAX(used), 0) + 1 FROM sessions)
          WHERE session_id = ?1)sql",
    R"sql(SELECT turn, question, answer, mode, model, evidence, citations, created_at FROM (
            SELECT * FROM session_turns WHERE session_id = ?1 ORDER BY turn DESC LIMIT ?2) ORDER BY turn)sql",
    "DELETE FROM sessions WHERE session_id = ?1 AND owner = ?2",
};

// Busy, locked, I/O and open failures are the database being unavailable; a
// constraint is a conflict; anything else is a bug or a corrupt file.
ErrorCode code_for(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_READONLY:
    case SQLITE_NOMEM:
    case SQLITE_PROTOCOL: return ErrorCode::unavailable;
    case SQLITE_CONSTRAINT: return ErrorCode::conflict;
    case SQLITE_TOOBIG:
    case SQLITE_RANGE:
    case SQLITE_MISMATCH: return ErrorCode::invalid_argument;
    default: return ErrorCode::internal;
  }
}

std::string json_array(const std::vector<std::string>& values) {
  return nlohmann::json(values).dump();
}

// The connection and its prepared statements (SqliteRegistry::Impl); in the
// anonymous namespace so the helpers below can name it.
struct Database {
  sqlite3* db = nullptr;
  std::string path;
  std::array<sqlite3_stmt*, q_count> stmts{};

  Database() = default;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database() {
    for (auto* s : stmts) sqlite3_finalize(s);
    sqlite3_close_v2(db);
  }

  [[noreturn]] void raise(int rc, std::string_view what) const {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    fail(code_for(rc), "registry (sqlite " + path + "): " + std::string(what) + ": " + msg);
  }

  void exec(const char* sql, std::string_view what) {
    char* err = nullptr;
    int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
    if (rc != SQLITE_OK) {
      std::string msg = err ? err : sqlite3_errstr(rc);
      sqlite3_free(err);
      fail(code_for(rc), "registry (sqlite " + path + "): " + std::string(what) + ": " + msg);
    }
  }

  int64_t pragma_int(const char* sql) {
    sqlite3_stmt* s = nullptr;
    int rc = sqlite3_prepare_v2(db, sql, -1, &s, nullptr);
    if (rc != SQLITE_OK) raise(rc, sql);
    int64_t v = 0;
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) raise(rc, sql);
    return v;
  }
};

// One execution of a prepared statement: binds, steps, reads, and resets the
// statement (and clears its bindings) when it goes out of scope, even on throw.
class Cursor {
 public:
  Cursor(const Database& impl, sqlite3_stmt* stmt) : impl_(impl), stmt_(stmt) {}
  ~Cursor() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;

  Cursor& bind(int i, std::string_view v) {
    check(sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
    return *this;
  }
  Cursor& bind(int i, int64_t v) {
    check(sqlite3_bind_int64(stmt_, i, v));
    return *this;
  }
  Cursor& bind_null(int i) {
    check(sqlite3_bind_null(stmt_, i));
    return *this;
  }
  // True while a row is available.
  bool step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    impl_.raise(rc, "statement failed");
  }
  void run() {
    while (step()) {
    }
  }
  std::string text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col))) : std::string();
  }
  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }

 private:
  void check(int rc) const {
    if (rc != SQLITE_OK) impl_.raise(rc, "bind failed");
  }
  const Database& impl_;
  sqlite3_stmt* stmt_;
};

// A row of q_get or q_list, as get() and list() return it.
DocumentRecord read_record(const Cursor& c, const std::string& path) {
  DocumentRecord r;
  r.document_id = c.text(0);
  r.name = c.text(1);
  r.file_name = c.text(2);
  r.document_name = c.text(3);
  r.kb_name = c.text(4);
  r.plugin_namespace = c.text(5);
  r.source_type = c.text(6);
  if (!c.is_null(7)) r.year = c.int64(7);
  r.source_uri = c.text(8);
  try {
    r.collections_used = nlohmann::json::parse(c.text(9)).get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    fail(ErrorCode::internal, "registry (sqlite " + path + "): collections_used of '" + r.document_id +
                                  "' is not a JSON array of strings: " + e.what());
  }
  r.created_at = c.text(10);
  return r;
}

// Binds a listing's KB filter: NULL (no filter) when empty, else a JSON array.
void bind_kb_names(Cursor& c, int i, const std::vector<std::string>& kb_names) {
  if (kb_names.empty()) {
    c.bind_null(i);
  } else {
    c.bind(i, json_array(kb_names));
  }
}

void bind_optional(Cursor& c, int i, const std::optional<std::string_view>& v) {
  if (v) {
    c.bind(i, *v);
  } else {
    c.bind_null(i);
  }
}

std::vector<NameCount> read_name_counts(Cursor& c) {
  std::vector<NameCount> out;
  while (c.step()) out.push_back(NameCount{c.text(0), static_cast<size_t>(c.int64(1))});
  return out;
}

// BEGIN IMMEDIATE takes the write lock up front, so a read-then-write transaction
// cannot fail half-way with SQLITE_BUSY; rolled back unless committed. Inside a
// batch (WriteBatch: a transaction is open) a savepoint instead, so the write is
// still all-or-nothing on its own.
class Transaction {
 public:
  explicit Transaction(Database& impl) : impl_(impl), nested_(sqlite3_get_autocommit(impl.db) == 0) {
    impl_.exec(nested_ ? "SAVEPOINT registry_write" : "BEGIN IMMEDIATE", "begin");
  }
  ~Transaction() {
    if (done_) return;
    if (nested_) {
      sqlite3_exec(impl_.db, "ROLLBACK TO registry_write; RELEASE registry_write", nullptr, nullptr, nullptr);
    } else {
      sqlite3_exec(impl_.db, "ROLLBACK", nullptr, nullptr, nullptr);
    }
  }
  void commit() {
    impl_.exec(nested_ ? "RELEASE registry_write" : "COMMIT", "commit");
    done_ = true;
  }

 private:
  Database& impl_;
  bool nested_;
  bool done_ = false;
};

}  // namespace

struct SqliteRegistry::Impl : Database {};

SqliteRegistry::SqliteRegistry(const std::string& path, bool read_only) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  const int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path.c_str(), &impl_->db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) impl_->raise(rc, "open");
  sqlite3_extended_result_codes(impl_->db, 1);
  // Another process (a second engine, an ingest job) may hold the write lock for a
  // moment; wait for it rather than fail the request.
  sqlite3_busy_timeout(impl_->db, 5000);
  impl_->exec("PRAGMA foreign_keys = ON", "enable foreign keys");
  int64_t version = impl_->pragma_int("PRAGMA user_version");
  if (version > kSchemaVersion) {
    fail(ErrorCode::unavailable, "registry (sqlite " + path + "): schema version " + std::to_string(version) +
                                     " is newer than this build's " + std::to_string(kSchemaVersion));
  }
  if (read_only) {
    // A reader beside the writer: the writer made the schema; nothing is written here.
    if (version < 1) fail(ErrorCode::unavailable, "registry (sqlite " + path + ") has no schema yet");
  } else {
    // WAL: readers never block the writer; ":memory:" stays in its own journal mode.
    impl_->exec("PRAGMA journal_mode = WAL", "enable WAL");
    impl_->exec("PRAGMA synchronous = NORMAL", "set synchronous");
  }
  // A file at this build's version is not written at open: a refused ingest (or a
  // reader-writer that writes nothing) leaves it byte for byte as it was.
  if (!read_only && version < kSchemaVersion) {
    Transaction tx(*impl_);
    impl_->exec(kSqliteSchema, "create schema");
    impl_->exec(("PRAGMA user_version = " + std::to_string(kSchemaVersion)).c_str(), "set schema version");
    tx.commit();
  }
  has_brands_ = !read_only || version >= kBrandsSchemaVersion;
  has_sources_ = !read_only || version >= kSourcesSchemaVersion;
  has_sessions_ = !read_only || version >= kSessionsSchemaVersion;
  for (size_t i = 0; i < q_count; ++i) {
    if (!has_sessions_ && i >= kFirstSessionQuery) continue;
    if (!has_brands_ && (i == q_delete_brands || i == q_insert_brand || i == q_brands)) continue;
    if (!has_sources_ && (i == q_set_source || i == q_find_source || i == q_forget_source)) continue;
    rc = sqlite3_prepare_v3(impl_->db, kSql[i], -1, SQLITE_PREPARE_PERSISTENT, &impl_->stmts[i], nullptr);
    if (rc != SQLITE_OK) impl_->raise(rc, "prepare");
  }
}

SqliteRegistry::~SqliteRegistry() = default;

void SqliteRegistry::do_begin_batch() {
  std::lock_guard lock(mutex_);
  if (sqlite3_get_autocommit(impl_->db) == 0)
    fail(ErrorCode::conflict, "registry (sqlite " + impl_->path + "): a batch of writes is already open");
  impl_->exec("BEGIN IMMEDIATE", "begin a batch");
}

void SqliteRegistry::do_commit_batch() {
  std::lock_guard lock(mutex_);
  if (sqlite3_get_autocommit(impl_->db) != 0) return;  // rolled back by SQLite itself (out of memory, disk full)
  try {
    impl_->exec("COMMIT", "commit a batch");
  } catch (...) {
    sqlite3_exec(impl_->db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

void SqliteRegistry::do_upsert(const DocumentRecord& r) {
  std::lock_guard lock(mutex_);
  Cursor c(*impl_, impl_->stmts[q_upsert]);
  c.bind(1, r.document_id).bind(2, r.name).bind(3, r.file_name).bind(4, r.document_name);
  c.bind(5, r.kb_name).bind(6, r.plugin_namespace).bind(7, r.source_type);
  if (r.year) {
    c.bind(8, *r.year);
  } else {
    c.bind_null(8);
  }
  c.bind(9, r.source_uri).bind(10, json_array(r.collections_used));
  c.bind(11, detail::fold_case(r.name)).bind(12, detail::fold_case(r.file_name));
  c.bind(13, detail::fold_case(r.document_name));
  c.run();
}

bool SqliteRegistry::do_remove(std::string_view document_id) {
  std::lock_guard lock(mutex_);
  Transaction tx(*impl_);
  if (has_sources_) {
    Cursor f(*impl_, impl_->stmts[q_forget_source]);
    f.bind(1, document_id).run();
  }
  Cursor c(*impl_, impl_->stmts[q_remove]);
  c.bind(1, document_id).run();
  const bool removed = sqlite3_changes(impl_->db) > 0;
  tx.commit();
  return removed;
}

std::optional<DocumentRecord> SqliteRegistry::do_get(std::string_view document_id) const {
  std::lock_guard lock(mutex_);
  Cursor c(*impl_, impl_->stmts[q_get]);
  c.bind(1, document_id);
  if (!c.step()) return std::nullopt;
  return read_record(c, impl_->path);
}

void SqliteRegistry::do_set_keywords(std::string_view document_id, std::string_view plugin_namespace,
                                     const std::vector<std::string>& tags) {
  std::lock_guard lock(mutex_);
  Transaction tx(*impl_);
  {
    Cursor c(*impl_, impl_->stmts[q_exists]);
    if (!c.bind(1, document_id).step()) {
      fail(ErrorCode::not_found, "registry: no document '" + std::string(document_id) + "' to tag");
    }
  }
  {
    Cursor c(*impl_, impl_->stmts[q_delete_keywords]);
    c.bind(1, document_id).bind(2, plugin_namespace).run();
  }
  for (const auto& tag : tags) {
    Cursor c(*impl_, impl_->stmts[q_insert_keyword]);
    c.bind(1, document_id).bind(2, plugin_namespace).bind(3, tag).run();
  }
  tx.commit();
}

void SqliteRegistry::do_set_brands(std::string_view document_id, const std::vector<BrandName>& brands) {
  std::lock_guard lock(mutex_);
  Transaction tx(*impl_);
  {
    Cursor c(*impl_, impl_->stmts[q_exists]);
    if (!c.bind(1, document_id).step())
      fail(ErrorCode::not_found, "registry: no document '" + std::string(document_id) + "' for brand names");
  }
  {
    Cursor c(*impl_, impl_->stmts[q_delete_brands]);
    c.bind(1, document_id).run();
  }
  for (const auto& b : brands) {
    Cursor c(*impl_, impl_->stmts[q_insert_brand]);
    c.bind(1, document_id).bind(2, b.brand).bind(3, b.generic).run();
  }
  tx.commit();
}

void SqliteRegistry::do_set_source_hash(std::string_view document_id, std::string_view sha256) {
  std::lock_guard lock(mutex_);
  Transaction tx(*impl_);
  {
    Cursor c(*impl_, impl_->stmts[q_exists]);
    if (!c.bind(1, document_id).step())
      fail(ErrorCode::not_found, "registry: no document '" + std::string(document_id) + "' for a source hash");
  }
  Cursor c(*impl_, impl_->stmts[q_set_source]);
  c.bind(1, document_id).bind(2, sha256).run();
  tx.commit();
}

std::vector<std::string> SqliteRegistry::do_find_by_source_hash(std::string_view sha256, std::string_view kb_name,
                                                                std::string_view plugin_namespace) const {
  if (!has_sources_) return {};
  std::lock_guard lock(mutex_);
  Cursor c(*impl_, impl_->stmts[q_find_source]);
  c.bind(1, sha256).bind(2, kb_name).bind(3, plugin_namespace);
  std::vector<std::string> out;
  while (c.step()) out.push_back(c.text(0));
  return out;
}

std::vector<BrandName> SqliteRegistry::do_brands(std::string_view plugin_namespace) const {
  if (!has_brands_) return {};
  std::lock_guard lock(mutex_);
  Cursor c(*impl_, impl_->stmts[q_brands]);
  c.bind(1, plugin_namespace);
  std::vector<BrandName> out;
  while (c.step()) out.push_back({c.text(0), c.text(1)});
  return out;
}

std::vector<std::string> SqliteRegistry::do_keywords(std::string_view document_id,
                                                     std::string_view plugin_namespace) const {
  std::lock_guard lock(mutex_);
  Cursor c(*impl_, impl_->stmts[q_keywords]);
  c.bind(1, document_id).bind(2, plugin_namespace);
  std::vector<std::string> out;
  while (c.step()) out.push_back(c.text(0));
  return out;
}

std::vector<std::string> SqliteRegistry::do_find_by_name_terms(
    const std::vector<std::string>& terms, std::string_view plugin_namespace, size_t limit,
    std::optional<std::string_view> kb_name, const std::vector<std::string>& within_kbs) const {
  std::vector<std::string> patterns;
  patterns.reserve(terms.size());
  // Folding after escaping is safe: the escape and metacharacters are ASCII
  // punctuation, which fold_case leaves alone.
  for (const auto& t : terms) patterns.push_back(detail::fold_case(like_contains_pattern(t)));
  std::lock_guard lock(mutex_);
  Cursor c(*impl_, impl_->stmts[q_find_names]);
  c.bind(1, json_array(patterns)).bind(2, plugin_namespace);
  if (kb_name) {
    c.bind(3, *kb_name);
  } else {
    c.bind_null(3);
  }
  c.bind(4, static_cast<int64_t>(limit));
  bind_kb_names(c, 5, within_kbs);
  std::vector<std::string> out;
  while (c.step()) out.push_back(c.text(0));
  return out;
}

std::vector<std::string> SqliteRegistry::do_ids_for_tags(const std::vector<std::string>& tags,
                                                         std::string_view plugin_namespace, size_t limit,
                                                         const std::vector<std::string>& within_kbs) const {
  std::lock_guard lock(mutex_);
  Cursor c(*impl_, impl_->stmts[q_ids_for_tags]);
  c.bind(1, json_array(tags)).bind(2, plugin_namespace).bind(3, static_cast<int64_t>(limit));
  bind_kb_names(c, 4, within_kbs);
  std::vector<std::string> out;
  while (c.step()) out.push_back(c.text(0));
  return out;
}

std::map<std::string, DocumentNames> SqliteRegistry::do_names_for_ids(
    const std::vector<std::string>& document_ids) const {
  std::lock_guard lock(mutex_);
  Cursor c(*impl_, impl_->stmts[q_names]);
  c.bind(1, json_array(document_ids));
  std::map<std::string, DocumentNames> out;
  while (c.step()) out[c.text(0)] = DocumentNames{c.text(1), c.text(2)};
  return out;
}

std::vector<std::string> SqliteRegistry::do_collections_used(const std::vector<std::string>& document_ids,
                                                             const std::vector<std::string>& kb_names,
                                                             const std::vector<std::string>& within_kbs) const {
  std::lock_guard lock(mutex_);
  Cursor c(*impl_, impl_->stmts[q_collections]);
  c.bind(1, json_array(document_ids)).bind(2, json_array(kb_names));
  bind_kb_names(c, 3, within_kbs);
  std::vector<std::string> out;
  while (c.step()) out.push_back(c.text(0));
  return out;
}

namespace {
// ?1 = the KB filter (NULL: any), ?2 = the namespace (NULL: any): list and count
// share them.
void bind_query_filter(Cursor& c, const DocumentQuery& q) {
  std::optional<std::string_view> ns;
  if (q.plugin_namespace) ns = *q.plugin_namespace;
  bind_kb_names(c, 1, q.kb_names);
  bind_optional(c, 2, ns);
  // ?3 and ?4 are the listing's page; the kind filters come after them in both statements.
  std::optional<std::string_view> kind, not_kind;
  if (q.source_type) kind = *q.source_type;
  if (q.exclude_source_type) not_kind = *q.exclude_source_type;
  bind_optional(c, 5, kind);
  bind_optional(c, 6, not_kind);
}
}  // namespace

std::vector<DocumentRecord> SqliteRegistry::do_list(const DocumentQuery& q) const {
  std::lock_guard lock(mutex_);
  Cursor c(*impl_, impl_->stmts[q_list]);
  bind_query_filter(c, q);
  c.bind(3, static_cast<int64_t>(q.limit)).bind(4, static_cast<int64_t>(q.offset));
  std::vector<DocumentRecord> out;
  while (c.step()) out.push_back(read_record(c, impl_->path));
  return out;
}

size_t SqliteRegistry::do_count(const DocumentQuery& q) const {
  std::lock_guard lock(mutex_);
  Cursor c(*impl_, impl_->stmts[q_count_documents]);
  bind_query_filter(c, q);
  return c.step() ? static_cast<size_t>(c.int64(0)) : 0;
}

std::vector<NameCount> SqliteRegistry::do_knowledge_bases(const std::vector<std::string>& kb_names) const {
  std::lock_guard lock(mutex_);
  Cursor c(*impl_, impl_->stmts[q_knowledge_bases]);
  bind_kb_names(c, 1, kb_names);
  return read_name_counts(c);
}

std::vector<NameCount> SqliteRegistry::do_tags(std::optional<std::string_view> plugin_namespace,
                                               const std::vector<std::string>& kb_names) const {
  std::lock_guard lock(mutex_);
  Cursor c(*impl_, impl_->stmts[q_tags]);
  bind_optional(c, 1, plugin_namespace);
  bind_kb_names(c, 2, kb_names);
  return read_name_counts(c);
}

namespace {
// A row of q_session_get or q_session_list.
SessionRecord read_session(const Cursor& c, const std::string& path) {
  SessionRecord r;
  r.session_id = c.text(0);
  r.owner = c.text(1);
  try {
    r.kb_scope = nlohmann::json::parse(c.text(2)).get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    fail(ErrorCode::internal, "registry (sqlite " + path + "): kb_scope of session '" + r.session_id +
                                  "' is not a JSON array of strings: " + e.what());
  }
  r.plugin_namespace = c.text(3);
  r.title = c.text(4);
  r.created_at = c.text(5);
  r.updated_at = c.text(6);
  r.turns = static_cast<size_t>(c.int64(7));
  return r;
}

[[noreturn]] void no_sessions_table(const std::string& path) {
  fail(ErrorCode::unavailable, "registry (sqlite " + path +
                                   "): this file predates sessions and is open read-only; a writer upgrades it");
}
}  // namespace

void SqliteRegistry::do_create_session(const SessionRecord& s, size_t max_per_owner) {
  if (!has_sessions_) no_sessions_table(impl_->path);
  std::lock_guard lock(mutex_);
  Transaction tx(*impl_);
  {
    Cursor c(*impl_, impl_->stmts[q_session_create]);
    c.bind(1, s.session_id).bind(2, s.owner).bind(3, json_array(s.kb_scope)).bind(4, s.plugin_namespace);
    c.bind(5, s.title).run();
  }
  {
    Cursor c(*impl_, impl_->stmts[q_session_trim]);
    c.bind(1, s.owner).bind(2, static_cast<int64_t>(max_per_owner)).run();
  }
  tx.commit();
}

int64_t SqliteRegistry::do_append_turn(std::string_view session_id, std::string_view owner, const SessionTurn& t,
                                       size_t max_turns) {
  if (!has_sessions_) no_sessions_table(impl_->path);
  std::lock_guard lock(mutex_);
  Transaction tx(*impl_);
  {
    Cursor c(*impl_, impl_->stmts[q_session_get]);
    if (!c.bind(1, session_id).bind(2, owner).step())
      fail(ErrorCode::not_found, "no session '" + std::string(session_id) + "'");
  }
  int64_t last = 0, count = 0;
  {
    Cursor c(*impl_, impl_->stmts[q_session_last_turn]);
    c.bind(1, session_id);
    if (c.step()) {
      last = c.int64(0);
      count = c.int64(1);
    }
  }
  if (static_cast<size_t>(count) >= max_turns)
    fail(ErrorCode::conflict, "session '" + std::string(session_id) + "' holds " + std::to_string(count) +
                                  " turns, the most a session keeps; start a new session");
  {
    Cursor c(*impl_, impl_->stmts[q_session_append]);
    c.bind(1, session_id).bind(2, last + 1).bind(3, t.question).bind(4, t.answer).bind(5, t.mode);
    c.bind(6, t.model).bind(7, t.evidence).bind(8, t.citations).run();
  }
  {
    Cursor c(*impl_, impl_->stmts[q_session_touch]);
    c.bind(1, session_id).run();
  }
  tx.commit();
  return last + 1;
}

std::optional<SessionRecord> SqliteRegistry::do_get_session(std::string_view session_id,
                                                            std::string_view owner) const {
  if (!has_sessions_) return std::nullopt;
  std::lock_guard lock(mutex_);
  Cursor c(*impl_, impl_->stmts[q_session_get]);
  if (!c.bind(1, session_id).bind(2, owner).step()) return std::nullopt;
  return read_session(c, impl_->path);
}

std::vector<SessionTurn> SqliteRegistry::do_session_turns(std::string_view session_id, std::string_view owner,
                                                          size_t last) const {
  if (!has_sessions_) return {};
  std::lock_guard lock(mutex_);
  {
    Cursor c(*impl_, impl_->stmts[q_session_get]);
    if (!c.bind(1, session_id).bind(2, owner).step()) return {};
  }
  Cursor c(*impl_, impl_->stmts[q_session_turns]);
  c.bind(1, session_id).bind(2, static_cast<int64_t>(last));
  std::vector<SessionTurn> out;
  while (c.step()) {
    SessionTurn t;
    t.turn = c.int64(0);
    t.question = c.text(1);
    t.answer = c.text(2);
    t.mode = c.text(3);
    t.model = c.text(4);
    t.evidence = c.text(5);
    t.citations = c.text(6);
    t.created_at = c.text(7);
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<SessionRecord> SqliteRegistry::do_list_sessions(std::string_view owner, size_t limit,
                                                            size_t offset) const {
  if (!has_sessions_) return {};
  std::lock_guard lock(mutex_);
  Cursor c(*impl_, impl_->stmts[q_session_list]);
  c.bind(1, owner).bind(2, static_cast<int64_t>(limit)).bind(3, static_cast<int64_t>(offset));
  std::vector<SessionRecord> out;
  while (c.step()) out.push_back(read_session(c, impl_->path));
  return out;
}

size_t SqliteRegistry::do_count_sessions(std::string_view owner) const {
  if (!has_sessions_) return 0;
  std::lock_guard lock(mutex_);
  Cursor c(*impl_, impl_->stmts[q_session_count]);
  c.bind(1, owner);
  return c.step() ? static_cast<size_t>(c.int64(0)) : 0;
}

std::optional<size_t> SqliteRegistry::do_delete_session(std::string_view session_id, std::string_view owner) {
  if (!has_sessions_) no_sessions_table(impl_->path);
  std::lock_guard lock(mutex_);
  Transaction tx(*impl_);
  size_t turns = 0;
  {
    Cursor c(*impl_, impl_->stmts[q_session_get]);
    if (!c.bind(1, session_id).bind(2, owner).step()) return std::nullopt;
    turns = static_cast<size_t>(c.int64(7));
  }
  Cursor c(*impl_, impl_->stmts[q_session_delete]);
  c.bind(1, session_id).bind(2, owner).run();
  tx.commit();
  return turns;
}

}  // namespace eagle::registry
