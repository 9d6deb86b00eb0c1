#include "eagle/registry/postgres_registry.h"

#include <libpq-fe.h>

#include <array>
#include <charconv>
#include <nlohmann/json.hpp>

#include "eagle/core/error.h"

namespace eagle::registry {

namespace {

// The seed's `documents` and `document_keywords` tables. One transaction under an
// advisory lock: two engines starting together would otherwise race in CREATE
// TABLE IF NOT EXISTS (a known unique-violation on pg_type). Fixed text, no values:
// the only statement sent with PQexec (it holds several commands).
constexpr const char* kPostgresSchema = R"sql(
BEGIN;
SELECT pg_advisory_xact_lock(hashtext('eagle.registry.schema'));
CREATE TABLE IF NOT EXISTS documents (
  document_id      text PRIMARY KEY,
  name             text NOT NULL DEFAULT '',
  file_name        text NOT NULL DEFAULT '',
  document_name    text NOT NULL DEFAULT '',
  kb_name          text NOT NULL DEFAULT '',
  plugin_namespace text NOT NULL DEFAULT 'core',
  source_type      text NOT NULL DEFAULT '',
  year             bigint,
  source_uri       text NOT NULL DEFAULT '',
  collections_used text[] NOT NULL DEFAULT '{}',
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS documents_namespace_kb ON documents (plugin_namespace, kb_name);
CREATE INDEX IF NOT EXISTS documents_kb ON documents (kb_name);
CREATE TABLE IF NOT EXISTS document_keywords (
  document_id      text NOT NULL REFERENCES documents (document_id) ON DELETE CASCADE,
  plugin_namespace text NOT NULL,
  keyword          text NOT NULL,
  PRIMARY KEY (document_id, plugin_namespace, keyword)
);
CREATE INDEX IF NOT EXISTS document_keywords_tag ON document_keywords (plugin_namespace, keyword);
CREATE TABLE IF NOT EXISTS drug_brands (
  document_id text NOT NULL REFERENCES documents (document_id) ON DELETE CASCADE,
  brand       text NOT NULL,
  generic     text NOT NULL,
  PRIMARY KEY (document_id, brand, generic)
);
CREATE TABLE IF NOT EXISTS document_sources (
  document_id    text PRIMARY KEY REFERENCES documents (document_id) ON DELETE CASCADE,
  content_sha256 text NOT NULL
);
CREATE INDEX IF NOT EXISTS document_sources_hash ON document_sources (content_sha256);
CREATE SEQUENCE IF NOT EXISTS session_use;
CREATE TABLE IF NOT EXISTS sessions (
  session_id       text PRIMARY KEY,
  owner            text NOT NULL DEFAULT '',
  kb_scope         text[] NOT NULL DEFAULT '{}',
  plugin_namespace text NOT NULL,
  title            text NOT NULL DEFAULT '',
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  used             bigint NOT NULL DEFAULT nextval('session_use')
);
CREATE INDEX IF NOT EXISTS sessions_owner ON sessions (owner, used);
CREATE TABLE IF NOT EXISTS session_turns (
  session_id text NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
  turn       integer NOT NULL,
  question   text NOT NULL,
  answer     text NOT NULL,
  mode       text NOT NULL,
  model      text NOT NULL DEFAULT '',
  evidence   text NOT NULL DEFAULT '',
  citations  text NOT NULL DEFAULT '[]',  -- the JSON text as given, byte for byte as SQLite keeps it
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, turn)
);
COMMIT;
)sql";

// created_at in the same ISO-8601 UTC form as the SQLite backend's strftime.
// kGet and kList select the columns Impl::record() reads, in its order.
constexpr const char* kGet = R"sql(
SELECT document_id, name, file_name, document_name, kb_name, plugin_namespace, source_type, year, source_uri,
       array_to_json(collections_used)::text,
       to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM documents WHERE document_id = $1)sql";

// created_at is left out of DO UPDATE: a replace keeps the first insert's time.
constexpr const char* kUpsert = R"sql(
INSERT INTO documents (document_id, name, file_name, document_name, kb_name, plugin_namespace, source_type,
                       year, source_uri, collections_used)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8::bigint, $9, $10::text[])
ON CONFLICT (document_id) DO UPDATE SET
  name = EXCLUDED.name, file_name = EXCLUDED.file_name, document_name = EXCLUDED.document_name,
  kb_name = EXCLUDED.kb_name, plugin_namespace = EXCLUDED.plugin_namespace, source_type = EXCLUDED.source_type,
  year = EXCLUDED.year, source_uri = EXCLUDED.source_uri, collections_used = EXCLUDED.collections_used)sql";

// lookup_document_ids_by_name_terms: the seed's `ILIKE '%term%'`, over the three
// names, with $1 the like_contains_pattern()s. E'\\' is one backslash whatever
// standard_conforming_strings says. COLLATE "C" orders bytewise like SQLite.
constexpr const char* kFindNames = R"sql(
SELECT d.document_id FROM documents d
WHERE d.plugin_namespace = $2 AND ($3::text IS NULL OR d.kb_name = $3::text)
  AND ($5::text[] IS NULL OR d.kb_name = ANY ($5::text[]))
  AND EXISTS (SELECT 1 FROM unnest($1::text[]) AS t(pattern)
              WHERE d.name ILIKE t.pattern ESCAPE E'\\'
                 OR d.file_name ILIKE t.pattern ESCAPE E'\\'
                 OR d.document_name ILIKE t.pattern ESCAPE E'\\')
ORDER BY d.document_id COLLATE "C" LIMIT $4::bigint)sql";

constexpr const char* kIdsForTags = R"sql(
SELECT k.document_id FROM document_keywords k
WHERE k.plugin_namespace = $2 AND k.keyword = ANY ($1::text[])
  AND ($4::text[] IS NULL OR k.document_id IN (SELECT d.document_id FROM documents d WHERE d.kb_name = ANY ($4::text[])))
GROUP BY k.document_id ORDER BY k.document_id COLLATE "C" LIMIT $3::bigint)sql";

constexpr const char* kNames = R"sql(
SELECT document_id, file_name, document_name FROM documents WHERE document_id = ANY ($1::text[]))sql";

constexpr const char* kCollections = R"sql(
SELECT DISTINCT c FROM documents d CROSS JOIN LATERAL unnest(d.collections_used) AS c
WHERE (d.document_id = ANY ($1::text[]) OR d.kb_name = ANY ($2::text[]))
  AND ($3::text[] IS NULL OR d.kb_name = ANY ($3::text[])))sql";

// The listings: a NULL $1 (kb_names) or namespace is no filter. COLLATE "C"
// orders bytewise like SQLite's BINARY, so LIMIT/OFFSET pages cut the same rows.
constexpr const char* kList = R"sql(
SELECT document_id, name, file_name, document_name, kb_name, plugin_namespace, source_type, year, source_uri,
       array_to_json(collections_used)::text,
       to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM documents
WHERE ($1::text[] IS NULL OR kb_name = ANY ($1::text[])) AND ($2::text IS NULL OR plugin_namespace = $2::text)
  AND ($5::text IS NULL OR source_type = $5::text) AND ($6::text IS NULL OR COALESCE(source_type, '') <> $6::text)
ORDER BY document_id COLLATE "C" LIMIT $3::bigint OFFSET $4::bigint)sql";

constexpr const char* kCountDocuments = R"sql(
SELECT count(*) FROM documents
WHERE ($1::text[] IS NULL OR kb_name = ANY ($1::text[])) AND ($2::text IS NULL OR plugin_namespace = $2::text)
  AND ($3::text IS NULL OR source_type = $3::text) AND ($4::text IS NULL OR COALESCE(source_type, '') <> $4::text))sql";

constexpr const char* kKnowledgeBases = R"sql(
SELECT kb_name, count(*) FROM documents
WHERE $1::text[] IS NULL OR kb_name = ANY ($1::text[])
GROUP BY kb_name ORDER BY kb_name COLLATE "C")sql";

// count(DISTINCT): a tag in two namespaces on one document counts it once.
constexpr const char* kTags = R"sql(
SELECT k.keyword, count(DISTINCT k.document_id) FROM document_keywords k
WHERE ($1::text IS NULL OR k.plugin_namespace = $1::text)
  AND ($2::text[] IS NULL OR k.document_id IN (SELECT d.document_id FROM documents d
                                               WHERE d.kb_name = ANY ($2::text[])))
GROUP BY k.keyword ORDER BY k.keyword COLLATE "C")sql";

constexpr const char* kExistsForUpdate = "SELECT 1 FROM documents WHERE document_id = $1 FOR UPDATE";
constexpr const char* kDeleteKeywords =
    "DELETE FROM document_keywords WHERE document_id = $1 AND plugin_namespace = $2";
constexpr const char* kInsertKeywords = R"sql(
INSERT INTO document_keywords (document_id, plugin_namespace, keyword)
SELECT $1, $2, k FROM unnest($3::text[]) AS k ON CONFLICT DO NOTHING)sql";
constexpr const char* kKeywords =
    "SELECT keyword FROM document_keywords WHERE document_id = $1 AND plugin_namespace = $2";
// Removing a document forgets its file's hash for every document read from that file
// into its KB and namespace (the next ingest reads the file again), then the document.
constexpr const char* kRemove = R"sql(
WITH forgotten AS (
  DELETE FROM document_sources WHERE document_id IN (
    SELECT s.document_id FROM document_sources s JOIN documents d ON d.document_id = s.document_id
    JOIN document_sources me ON me.content_sha256 = s.content_sha256
    JOIN documents md ON md.document_id = me.document_id
    WHERE me.document_id = $1 AND d.kb_name = md.kb_name AND d.plugin_namespace = md.plugin_namespace))
DELETE FROM documents WHERE document_id = $1)sql";
constexpr const char* kDeleteBrands = "DELETE FROM drug_brands WHERE document_id = $1";
constexpr const char* kInsertBrands = R"sql(
INSERT INTO drug_brands (document_id, brand, generic)
SELECT $1, b, g FROM unnest($2::text[], $3::text[]) AS t(b, g) ON CONFLICT DO NOTHING)sql";
constexpr const char* kBrands = R"sql(
SELECT DISTINCT b.brand, b.generic FROM drug_brands b JOIN documents d ON d.document_id = b.document_id
WHERE d.plugin_namespace = $1)sql";  // sorted by the caller
constexpr const char* kSetSource = R"sql(
INSERT INTO document_sources (document_id, content_sha256) VALUES ($1, $2)
ON CONFLICT (document_id) DO UPDATE SET content_sha256 = excluded.content_sha256)sql";
constexpr const char* kFindSource = R"sql(
SELECT s.document_id FROM document_sources s JOIN documents d ON d.document_id = s.document_id
WHERE s.content_sha256 = $1 AND d.kb_name = $2 AND d.plugin_namespace = $3)sql";  // sorted by the caller

// Sessions. `used` comes from a sequence, bumped on create and on every turn: "least
// recently used" is exact even when two writes share a timestamp. kSessionColumns
// are what Impl::session() reads, in its order.
#define EAGLE_SESSION_COLUMNS                                                                          \
  "s.session_id, s.owner, array_to_json(s.kb_scope)::text, s.plugin_namespace, s.title, "             \
  "to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), "                  \
  "to_char(s.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), "                  \
  "(SELECT count(*) FROM session_turns t WHERE t.session_id = s.session_id)"
constexpr const char* kSessionCreate = R"sql(
INSERT INTO sessions (session_id, owner, kb_scope, plugin_namespace, title) VALUES ($1, $2, $3::text[], $4, $5))sql";
constexpr const char* kSessionTrim = R"sql(
DELETE FROM sessions WHERE session_id IN (
  SELECT session_id FROM sessions WHERE owner = $1 ORDER BY used DESC OFFSET $2::bigint))sql";
constexpr const char* kSessionGet =
    "SELECT " EAGLE_SESSION_COLUMNS " FROM sessions s WHERE s.session_id = $1 AND s.owner = $2";
constexpr const char* kSessionGetForUpdate =
    "SELECT " EAGLE_SESSION_COLUMNS " FROM sessions s WHERE s.session_id = $1 AND s.owner = $2 FOR UPDATE";
constexpr const char* kSessionList = "SELECT " EAGLE_SESSION_COLUMNS
                                     " FROM sessions s WHERE s.owner = $1 ORDER BY s.used DESC "
                                     "LIMIT $2::bigint OFFSET $3::bigint";
#undef EAGLE_SESSION_COLUMNS
constexpr const char* kSessionCount = "SELECT count(*) FROM sessions WHERE owner = $1";
constexpr const char* kSessionLastTurn =
    "SELECT COALESCE(max(turn), 0), count(*) FROM session_turns WHERE session_id = $1";
constexpr const char* kSessionAppend = R"sql(
INSERT INTO session_turns (session_id, turn, question, answer, mode, model, evidence, citations)
VALUES ($1, $2::integer, $3, $4, $5, $6, $7, $8))sql";
constexpr const char* kSessionTouch =
    "UPDATE sessions SET updated_at = now(), used = nextval('session_use') WHERE session_id = $1";
constexpr const char* kSessionTurns = R"sql(
SELECT turn, question, answer, mode, model, evidence, citations,
       to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM (SELECT * FROM session_turns WHERE session_id = $1 ORDER BY turn DESC LIMIT $2::bigint) t ORDER BY turn)sql";
constexpr const char* kSessionDelete = "DELETE FROM sessions WHERE session_id = $1 AND owner = $2";

using Param = std::optional<std::string>;  // nullopt = SQL NULL
using Result = std::unique_ptr<PGresult, decltype(&PQclear)>;

std::string trimmed(const char* message) {
  std::string s = message ? message : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// By SQLSTATE class: connection, resources, operator intervention and transaction
// rollbacks are transient (unavailable); integrity is a conflict; data exceptions
// are bad input; anything else (syntax, missing table) is a bug.
ErrorCode code_for(std::string_view sqlstate) {
  std::string_view cls = sqlstate.substr(0, 2);
  if (cls == "08" || cls == "53" || cls == "57" || cls == "40") return ErrorCode::unavailable;
  if (cls == "23") return ErrorCode::conflict;
  if (cls == "22") return ErrorCode::invalid_argument;
  return ErrorCode::internal;
}

bool valid_schema_name(const std::string& s) {
  if (s.empty() || s.size() > 63 || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

}  // namespace

std::string pg_text_array(const std::vector<std::string>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out.push_back(',');
    out.push_back('"');
    for (char c : values[i]) {
      if (c == '"' || c == '\\') out.push_back('\\');
      out.push_back(c);
    }
    out.push_back('"');
  }
  out.push_back('}');
  return out;
}

struct PostgresRegistry::Impl {
  PGconn* conn = nullptr;
  bool in_batch = false;  // a WriteBatch's transaction is open

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (conn) PQfinish(conn);
  }

  [[noreturn]] void raise(ErrorCode code, std::string_view what, const std::string& message) const {
    fail(code, "registry (postgresql): " + std::string(what) + ": " + message);
  }

  // A connection the server dropped (restart, idle timeout) is re-opened once per
  // call; a transaction left failed by an earlier error is rolled back.
  void ensure_ready() {
    // A batch lives in the connection's transaction: a lost connection or a failed
    // transaction lost its writes, which is said, never papered over by a reconnect.
    if (in_batch && (PQstatus(conn) != CONNECTION_OK || PQtransactionStatus(conn) != PQTRANS_INTRANS)) {
      in_batch = false;
      raise(ErrorCode::unavailable, "batch of writes",
            "the connection or its transaction failed; the batch's writes were rolled back");
    }
    if (PQstatus(conn) != CONNECTION_OK) {
      PQreset(conn);
      if (PQstatus(conn) != CONNECTION_OK)
        raise(ErrorCode::unavailable, "reconnect", trimmed(PQerrorMessage(conn)));
    }
    if (PQtransactionStatus(conn) == PQTRANS_INERROR) PQclear(PQexec(conn, "ROLLBACK"));
  }

  [[noreturn]] void raise_result(const PGresult* res, std::string_view what) const {
    if (!res || PQstatus(conn) != CONNECTION_OK) {
      raise(ErrorCode::unavailable, what, trimmed(res ? PQresultErrorMessage(res) : PQerrorMessage(conn)));
    }
    const char* state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
    raise(code_for(state ? state : ""), what, trimmed(PQresultErrorMessage(res)));
  }

  Result run(const char* sql, const std::vector<Param>& params, std::string_view what) {
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
    // Text-format parameters, types inferred from the statement's casts.
    Result res(
        PQexecParams(conn, sql, static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr, 0),
        &PQclear);
    ExecStatusType st = res ? PQresultStatus(res.get()) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) raise_result(res.get(), what);
    return res;
  }

  // A row of kGet or kList, as get() and list() return it.
  DocumentRecord record(const PGresult* res, int row, std::string_view what) const;
  // A bigint column (year, count(*)), which arrives as decimal text.
  int64_t integer(const PGresult* res, int row, int col, std::string_view what) const;
  // A row of kSessionGet or kSessionList.
  SessionRecord session(const PGresult* res, int row, std::string_view what) const;
  // (name, count(*)) rows: kKnowledgeBases, kTags.
  std::vector<NameCount> name_counts(const PGresult* res, std::string_view what) const;

  void command(const char* sql, std::string_view what) {
    Result res(PQexec(conn, sql), &PQclear);
    ExecStatusType st = res ? PQresultStatus(res.get()) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
      if (PQstatus(conn) == CONNECTION_OK && PQtransactionStatus(conn) != PQTRANS_IDLE) {
        PQclear(PQexec(conn, "ROLLBACK"));
      }
      raise_result(res.get(), what);
    }
  }

  // One write: BEGIN ... COMMIT, or inside a batch (WriteBatch: a transaction is
  // open) a savepoint, so the write is all-or-nothing on its own and a failure leaves
  // the batch usable; rolled back unless committed. A single statement outside a
  // batch needs neither (single_statement: autocommit).
  class Write {
   public:
    explicit Write(Impl& impl, bool single_statement = false)
        : impl_(impl), nested_(PQtransactionStatus(impl.conn) == PQTRANS_INTRANS) {
      active_ = nested_ || !single_statement;
      if (active_) impl_.command(nested_ ? "SAVEPOINT registry_write" : "BEGIN", "begin");
    }
    ~Write() {
      if (!active_ || done_ || PQstatus(impl_.conn) != CONNECTION_OK) return;
      if (nested_) {
        PQclear(PQexec(impl_.conn, "ROLLBACK TO SAVEPOINT registry_write"));
        PQclear(PQexec(impl_.conn, "RELEASE SAVEPOINT registry_write"));
      } else if (PQtransactionStatus(impl_.conn) != PQTRANS_IDLE) {
        PQclear(PQexec(impl_.conn, "ROLLBACK"));
      }
    }
    Write(const Write&) = delete;
    Write& operator=(const Write&) = delete;
    void commit() {
      if (active_) impl_.command(nested_ ? "RELEASE SAVEPOINT registry_write" : "COMMIT", "commit");
      done_ = true;
    }

   private:
    Impl& impl_;
    bool nested_;
    bool active_ = true;
    bool done_ = false;
  };
};

namespace {

std::string value(const PGresult* res, int row, int col) {
  return std::string(PQgetvalue(res, row, col), static_cast<size_t>(PQgetlength(res, row, col)));
}

std::vector<std::string> column(const PGresult* res, int col) {
  std::vector<std::string> out;
  int n = PQntuples(res);
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out.push_back(value(res, i, col));
  return out;
}

std::string str(std::string_view v) {
  return std::string(v);
}

// A listing's KB filter: NULL (no filter) when empty, else a text[] literal.
Param kb_param(const std::vector<std::string>& kb_names) {
  return kb_names.empty() ? std::nullopt : Param(pg_text_array(kb_names));
}

}  // namespace

int64_t PostgresRegistry::Impl::integer(const PGresult* res, int row, int col, std::string_view what) const {
  std::string v = value(res, row, col);
  int64_t out = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size()) {
    raise(ErrorCode::internal, what, "'" + v + "' is not an integer");
  }
  return out;
}

DocumentRecord PostgresRegistry::Impl::record(const PGresult* p, int row, std::string_view what) const {
  DocumentRecord r;
  r.document_id = value(p, row, 0);
  r.name = value(p, row, 1);
  r.file_name = value(p, row, 2);
  r.document_name = value(p, row, 3);
  r.kb_name = value(p, row, 4);
  r.plugin_namespace = value(p, row, 5);
  r.source_type = value(p, row, 6);
  if (!PQgetisnull(p, row, 7)) r.year = integer(p, row, 7, what);
  r.source_uri = value(p, row, 8);
  try {
    r.collections_used = nlohmann::json::parse(value(p, row, 9)).get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    raise(ErrorCode::internal, what, std::string("collections_used: ") + e.what());
  }
  r.created_at = value(p, row, 10);
  return r;
}

std::vector<NameCount> PostgresRegistry::Impl::name_counts(const PGresult* res, std::string_view what) const {
  std::vector<NameCount> out;
  int n = PQntuples(res);
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    out.push_back(NameCount{value(res, i, 0), static_cast<size_t>(integer(res, i, 1, what))});
  }
  return out;
}

PostgresRegistry::PostgresRegistry(const std::string& conninfo, const std::string& schema)
    : impl_(std::make_unique<Impl>()) {
  if (!schema.empty() && !valid_schema_name(schema)) {
    fail(ErrorCode::invalid_argument, "registry (postgresql): schema '" + schema +
                                          "' must be 1-63 of [a-z0-9_], not starting with a digit");
  }
  // Keywords after "dbname" override what its expanded conninfo says: we always
  // talk UTF-8 and, with a schema, pin search_path; before it, defaults the
  // caller's string may override.
  std::string options = "-c search_path=" + schema;
  std::vector<const char*> keys = {"connect_timeout", "application_name", "dbname", "client_encoding"};
  std::vector<const char*> values = {"10", "eagle-registry", conninfo.c_str(), "UTF8"};
  if (!schema.empty()) {
    keys.push_back("options");
    values.push_back(options.c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  impl_->conn = PQconnectdbParams(keys.data(), values.data(), /*expand_dbname=*/1);
  if (!impl_->conn) fail(ErrorCode::unavailable, "registry (postgresql): connect: out of memory");
  if (PQstatus(impl_->conn) != CONNECTION_OK) {
    impl_->raise(ErrorCode::unavailable, "connect", trimmed(PQerrorMessage(impl_->conn)));
  }
  // libpq prints server NOTICEs to stderr by default; "relation already exists,
  // skipping" on every start is noise, and errors arrive as results anyway.
  PQsetNoticeProcessor(
      impl_->conn, [](void*, const char*) {}, nullptr);
  if (!schema.empty()) {
    // An identifier cannot be a bound parameter; the name is validated above and
    // quoted by libpq besides.
    char* quoted = PQescapeIdentifier(impl_->conn, schema.c_str(), schema.size());
    if (!quoted) impl_->raise(ErrorCode::internal, "quote schema", trimmed(PQerrorMessage(impl_->conn)));
    std::string sql = std::string("CREATE SCHEMA IF NOT EXISTS ") + quoted;
    PQfreemem(quoted);
    // Concurrent CREATE SCHEMA IF NOT EXISTS can still collide; the loser finds it.
    try {
      impl_->command(sql.c_str(), "create schema");
    } catch (const Error& e) {
      if (e.code() != ErrorCode::conflict) throw;
    }
  }
  impl_->command(kPostgresSchema, "create tables");
}

PostgresRegistry::~PostgresRegistry() = default;

void PostgresRegistry::do_begin_batch() {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  if (PQtransactionStatus(impl_->conn) != PQTRANS_IDLE)
    impl_->raise(ErrorCode::conflict, "begin a batch", "a batch of writes is already open");
  impl_->command("BEGIN", "begin a batch");
  impl_->in_batch = true;
}

void PostgresRegistry::do_commit_batch() {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();  // the batch's transaction must still be there
  impl_->in_batch = false;
  impl_->command("COMMIT", "commit a batch");
}

void PostgresRegistry::do_upsert(const DocumentRecord& r) {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  Param year = r.year ? Param(std::to_string(*r.year)) : std::nullopt;
  Impl::Write write(*impl_, /*single_statement=*/true);
  impl_->run(kUpsert,
             {r.document_id, r.name, r.file_name, r.document_name, r.kb_name, r.plugin_namespace,
              r.source_type, year, r.source_uri, pg_text_array(r.collections_used)},
             "upsert");
  write.commit();
}

bool PostgresRegistry::do_remove(std::string_view document_id) {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  Impl::Write write(*impl_, /*single_statement=*/true);
  auto res = impl_->run(kRemove, {str(document_id)}, "remove");
  write.commit();
  return std::string_view(PQcmdTuples(res.get())) != "0";
}

std::optional<DocumentRecord> PostgresRegistry::do_get(std::string_view document_id) const {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  auto res = impl_->run(kGet, {str(document_id)}, "get");
  const PGresult* p = res.get();
  if (PQntuples(p) == 0) return std::nullopt;
  return impl_->record(p, 0, "get");
}

void PostgresRegistry::do_set_keywords(std::string_view document_id, std::string_view plugin_namespace,
                                       const std::vector<std::string>& tags) {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  Impl::Write write(*impl_);
  // FOR UPDATE: a concurrent remove cannot slip between the check and the insert.
  auto found = impl_->run(kExistsForUpdate, {str(document_id)}, "set_keywords");
  if (PQntuples(found.get()) == 0) {
    fail(ErrorCode::not_found, "registry: no document '" + std::string(document_id) + "' to tag");
  }
  impl_->run(kDeleteKeywords, {str(document_id), str(plugin_namespace)}, "set_keywords");
  if (!tags.empty()) {
    impl_->run(kInsertKeywords, {str(document_id), str(plugin_namespace), pg_text_array(tags)},
               "set_keywords");
  }
  write.commit();
}

void PostgresRegistry::do_set_brands(std::string_view document_id, const std::vector<BrandName>& brands) {
  std::vector<std::string> names, generics;
  for (const auto& b : brands) {
    names.push_back(b.brand);
    generics.push_back(b.generic);
  }
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  Impl::Write write(*impl_);
  auto found = impl_->run(kExistsForUpdate, {str(document_id)}, "set_brands");
  if (PQntuples(found.get()) == 0)
    fail(ErrorCode::not_found, "registry: no document '" + std::string(document_id) + "' for brand names");
  impl_->run(kDeleteBrands, {str(document_id)}, "set_brands");
  if (!brands.empty())
    impl_->run(kInsertBrands, {str(document_id), pg_text_array(names), pg_text_array(generics)}, "set_brands");
  write.commit();
}

void PostgresRegistry::do_set_source_hash(std::string_view document_id, std::string_view sha256) {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  Impl::Write write(*impl_);
  auto found = impl_->run(kExistsForUpdate, {str(document_id)}, "set_source_hash");
  if (PQntuples(found.get()) == 0)
    fail(ErrorCode::not_found, "registry: no document '" + std::string(document_id) + "' for a source hash");
  impl_->run(kSetSource, {str(document_id), str(sha256)}, "set_source_hash");
  write.commit();
}

std::vector<std::string> PostgresRegistry::do_find_by_source_hash(std::string_view sha256, std::string_view kb_name,
                                                                  std::string_view plugin_namespace) const {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  auto res = impl_->run(kFindSource, {str(sha256), str(kb_name), str(plugin_namespace)}, "find_by_source_hash");
  return column(res.get(), 0);
}

std::vector<BrandName> PostgresRegistry::do_brands(std::string_view plugin_namespace) const {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  auto res = impl_->run(kBrands, {str(plugin_namespace)}, "brands");
  auto brand = column(res.get(), 0), generic = column(res.get(), 1);
  std::vector<BrandName> out;
  for (size_t i = 0; i < brand.size() && i < generic.size(); ++i) out.push_back({brand[i], generic[i]});
  return out;
}

std::vector<std::string> PostgresRegistry::do_keywords(std::string_view document_id,
                                                       std::string_view plugin_namespace) const {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  auto res = impl_->run(kKeywords, {str(document_id), str(plugin_namespace)}, "keywords");
  return column(res.get(), 0);
}

std::vector<std::string> PostgresRegistry::do_find_by_name_terms(
    const std::vector<std::string>& terms, std::string_view plugin_namespace, size_t limit,
    std::optional<std::string_view> kb_name, const std::vector<std::string>& within_kbs) const {
  std::vector<std::string> patterns;
  patterns.reserve(terms.size());
  for (const auto& t : terms) patterns.push_back(like_contains_pattern(t));
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  Param kb = kb_name ? Param(std::string(*kb_name)) : std::nullopt;
  auto res =
      impl_->run(kFindNames,
                 {pg_text_array(patterns), str(plugin_namespace), kb, std::to_string(limit), kb_param(within_kbs)},
                 "find_by_name_terms");
  return column(res.get(), 0);
}

std::vector<std::string> PostgresRegistry::do_ids_for_tags(const std::vector<std::string>& tags,
                                                           std::string_view plugin_namespace, size_t limit,
                                                           const std::vector<std::string>& within_kbs) const {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  auto res = impl_->run(kIdsForTags,
                        {pg_text_array(tags), str(plugin_namespace), std::to_string(limit), kb_param(within_kbs)},
                        "ids_for_tags");
  return column(res.get(), 0);
}

std::map<std::string, DocumentNames> PostgresRegistry::do_names_for_ids(
    const std::vector<std::string>& document_ids) const {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  auto res = impl_->run(kNames, {pg_text_array(document_ids)}, "names_for_ids");
  std::map<std::string, DocumentNames> out;
  for (int i = 0; i < PQntuples(res.get()); ++i) {
    out[value(res.get(), i, 0)] = DocumentNames{value(res.get(), i, 1), value(res.get(), i, 2)};
  }
  return out;
}

std::vector<std::string> PostgresRegistry::do_collections_used(const std::vector<std::string>& document_ids,
                                                               const std::vector<std::string>& kb_names,
                                                               const std::vector<std::string>& within_kbs) const {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  auto res = impl_->run(kCollections, {pg_text_array(document_ids), pg_text_array(kb_names), kb_param(within_kbs)},
                        "collections_used");
  return column(res.get(), 0);
}

std::vector<DocumentRecord> PostgresRegistry::do_list(const DocumentQuery& q) const {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  auto res = impl_->run(
      kList,
      {kb_param(q.kb_names), q.plugin_namespace, std::to_string(q.limit), std::to_string(q.offset), q.source_type,
       q.exclude_source_type},
      "list");
  std::vector<DocumentRecord> out;
  int n = PQntuples(res.get());
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out.push_back(impl_->record(res.get(), i, "list"));
  return out;
}

size_t PostgresRegistry::do_count(const DocumentQuery& q) const {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  auto res = impl_->run(kCountDocuments, {kb_param(q.kb_names), q.plugin_namespace, q.source_type, q.exclude_source_type},
                        "count");
  return PQntuples(res.get()) ? static_cast<size_t>(impl_->integer(res.get(), 0, 0, "count")) : 0;
}

std::vector<NameCount> PostgresRegistry::do_knowledge_bases(const std::vector<std::string>& kb_names) const {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  auto res = impl_->run(kKnowledgeBases, {kb_param(kb_names)}, "knowledge_bases");
  return impl_->name_counts(res.get(), "knowledge_bases");
}

std::vector<NameCount> PostgresRegistry::do_tags(std::optional<std::string_view> plugin_namespace,
                                                 const std::vector<std::string>& kb_names) const {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  Param ns = plugin_namespace ? Param(std::string(*plugin_namespace)) : std::nullopt;
  auto res = impl_->run(kTags, {ns, kb_param(kb_names)}, "tags");
  return impl_->name_counts(res.get(), "tags");
}

SessionRecord PostgresRegistry::Impl::session(const PGresult* p, int row, std::string_view what) const {
  SessionRecord r;
  r.session_id = value(p, row, 0);
  r.owner = value(p, row, 1);
  try {
    r.kb_scope = nlohmann::json::parse(value(p, row, 2)).get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    raise(ErrorCode::internal, what, std::string("kb_scope: ") + e.what());
  }
  r.plugin_namespace = value(p, row, 3);
  r.title = value(p, row, 4);
  r.created_at = value(p, row, 5);
  r.updated_at = value(p, row, 6);
  r.turns = static_cast<size_t>(integer(p, row, 7, what));
  return r;
}

void PostgresRegistry::do_create_session(const SessionRecord& s, size_t max_per_owner) {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  Impl::Write write(*impl_);
  impl_->run(kSessionCreate, {s.session_id, s.owner, pg_text_array(s.kb_scope), s.plugin_namespace, s.title},
             "create_session");
  impl_->run(kSessionTrim, {s.owner, std::to_string(max_per_owner)}, "create_session");
  write.commit();
}

int64_t PostgresRegistry::do_append_turn(std::string_view session_id, std::string_view owner,
                                         const SessionTurn& t, size_t max_turns) {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  Impl::Write write(*impl_);
  // FOR UPDATE: two turns of one session take their numbers one after the other.
  auto found = impl_->run(kSessionGetForUpdate, {str(session_id), str(owner)}, "append_turn");
  if (PQntuples(found.get()) == 0) fail(ErrorCode::not_found, "no session '" + std::string(session_id) + "'");
  auto last = impl_->run(kSessionLastTurn, {str(session_id)}, "append_turn");
  const int64_t top = impl_->integer(last.get(), 0, 0, "append_turn");
  const int64_t count = impl_->integer(last.get(), 0, 1, "append_turn");
  if (static_cast<size_t>(count) >= max_turns)
    fail(ErrorCode::conflict, "session '" + std::string(session_id) + "' holds " + std::to_string(count) +
                                  " turns, the most a session keeps; start a new session");
  impl_->run(kSessionAppend,
             {str(session_id), std::to_string(top + 1), t.question, t.answer, t.mode, t.model, t.evidence,
              t.citations},
             "append_turn");
  impl_->run(kSessionTouch, {str(session_id)}, "append_turn");
  write.commit();
  return top + 1;
}

std::optional<SessionRecord> PostgresRegistry::do_get_session(std::string_view session_id,
                                                              std::string_view owner) const {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  auto res = impl_->run(kSessionGet, {str(session_id), str(owner)}, "get_session");
  if (PQntuples(res.get()) == 0) return std::nullopt;
  return impl_->session(res.get(), 0, "get_session");
}

std::vector<SessionTurn> PostgresRegistry::do_session_turns(std::string_view session_id, std::string_view owner,
                                                            size_t last) const {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  auto found = impl_->run(kSessionGet, {str(session_id), str(owner)}, "session_turns");
  if (PQntuples(found.get()) == 0) return {};
  auto res = impl_->run(kSessionTurns, {str(session_id), std::to_string(last)}, "session_turns");
  std::vector<SessionTurn> out;
  const PGresult* p = res.get();
  for (int i = 0; i < PQntuples(p); ++i) {
    SessionTurn t;
    t.turn = impl_->integer(p, i, 0, "session_turns");
    t.question = value(p, i, 1);
    t.answer = value(p, i, 2);
    t.mode = value(p, i, 3);
    t.model = value(p, i, 4);
    t.evidence = value(p, i, 5);
    t.citations = value(p, i, 6);
    t.created_at = value(p, i, 7);
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<SessionRecord> PostgresRegistry::do_list_sessions(std::string_view owner, size_t limit,
                                                              size_t offset) const {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  auto res = impl_->run(kSessionList, {str(owner), std::to_string(limit), std::to_string(offset)}, "list_sessions");
  std::vector<SessionRecord> out;
  for (int i = 0; i < PQntuples(res.get()); ++i) out.push_back(impl_->session(res.get(), i, "list_sessions"));
  return out;
}

size_t PostgresRegistry::do_count_sessions(std::string_view owner) const {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  auto res = impl_->run(kSessionCount, {str(owner)}, "count_sessions");
  return PQntuples(res.get()) ? static_cast<size_t>(impl_->integer(res.get(), 0, 0, "count_sessions")) : 0;
}

std::optional<size_t> PostgresRegistry::do_delete_session(std::string_view session_id, std::string_view owner) {
  std::lock_guard lock(mutex_);
  impl_->ensure_ready();
  Impl::Write write(*impl_);
  auto found = impl_->run(kSessionGetForUpdate, {str(session_id), str(owner)}, "delete_session");
  if (PQntuples(found.get()) == 0) return std::nullopt;
  const size_t turns = static_cast<size_t>(impl_->integer(found.get(), 0, 7, "delete_session"));
  impl_->run(kSessionDelete, {str(session_id), str(owner)}, "delete_session");
  write.commit();
  return turns;
}

}  // namespace eagle::registry
