#pragma once
// The document registry: one row per ingested document in the
// seed's `documents` table and its tags in `document_keywords`, behind one
// interface with two backends, SQLite (embedded default) and PostgreSQL (libpq).
// The query path uses it for the seed's lookup_document_ids_by_name_terms (entity
// supplement), resolve_tags_to_document_ids (scope tags), lookup_documents_sync
// (enrich_file_names backfill) and the collections_used catalog (scope-aware union).
//
// Every value reaches the database as a bound parameter, never spliced into SQL.
// The public methods validate their inputs once, here, so both backends refuse the
// same things with the same eagle::Error; the backends implement the do_* hooks.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace eagle::registry {

// Bounds on one call, so a request can never ask the database for an unbounded
// scan result or an unbounded parameter list (invalid_argument beyond them).
inline constexpr size_t kMaxLimit = 10000;  // rows a lookup may return
inline constexpr size_t kMaxTerms = 256;    // name terms / tags per lookup
inline constexpr size_t kMaxIds = 10000;    // ids or kb names per call, keywords per document
// Bytes of a value that is indexed or matched (document_id, plugin_namespace,
// kb_name, a keyword or tag, a collection name, a name term): PostgreSQL refuses
// b-tree entries beyond ~2.7 kB and SQLite LIKE patterns beyond 50 kB, so both
// backends refuse the same long values up front.
inline constexpr size_t kMaxKeyBytes = 1024;
// Rows a listing may skip (DocumentQuery::offset): deeper pages are a scan the
// caller should narrow with filters instead.
inline constexpr size_t kMaxOffset = 10'000'000;

struct DocumentRecord {
  std::string document_id;  // primary key
  std::string name;
  std::string file_name;
  std::string document_name;
  std::string kb_name;
  std::string plugin_namespace = "core";
  std::string source_type;
  std::optional<int64_t> year;
  std::string source_uri;
  std::vector<std::string> collections_used;  // collections the ingest wrote this document to
  // ISO-8601 UTC with milliseconds ("2025-01-31T12:00:00.123Z"), set by the backend on
  // first insert and kept on replace; ignored on upsert.
  std::string created_at;

  bool operator==(const DocumentRecord&) const = default;
};

// A brand (proprietary) name and one generic name of the same product, as a drug
// label states them (SPL): the vocabularies know generics, labels teach the brands.
struct BrandName {
  std::string brand;
  std::string generic;

  bool operator==(const BrandName&) const = default;
  auto operator<=>(const BrandName&) const = default;
};

// What enrich_file_names backfills onto hits whose metadata lacks them.
struct DocumentNames {
  std::string file_name;
  std::string document_name;

  bool operator==(const DocumentNames&) const = default;
};

// A page of the document listing (GET /documents). Filters combine with AND.
struct DocumentQuery {
  std::vector<std::string> kb_names;            // empty = any KB; else kb_name IN (...): a token's scope
  std::optional<std::string> plugin_namespace;  // unset = any namespace; set = non-empty
  // source_type: set = only this kind (non-empty); exclude_source_type: all but this one
  // (a listing leaves the compound cards apart unless asked for them).
  std::optional<std::string> source_type;
  std::optional<std::string> exclude_source_type;
  size_t limit = 50;                            // 1..kMaxLimit
  size_t offset = 0;                            // <= kMaxOffset
};

// One distinct value (a KB, a tag) and how many documents carry it.
struct NameCount {
  std::string name;
  size_t count = 0;

  bool operator==(const NameCount&) const = default;
};

// A conversation with /query (Eagle-RAG's sessions): its turns are the history the
// next answer is written with. owner is the token's name ("" without auth): a
// session is seen, continued and deleted only by its owner.
struct SessionRecord {
  std::string session_id;  // "s-" + 32 hex digits, made by the caller
  std::string owner;
  std::vector<std::string> kb_scope;  // the owner's KBs when it was created ([] = unscoped)
  std::string plugin_namespace;
  std::string title;  // the first question, cut
  // Set by the backend (ISO-8601 UTC with milliseconds); ignored on create.
  std::string created_at;
  std::string updated_at;
  size_t turns = 0;  // filled on read

  bool operator==(const SessionRecord&) const = default;
};

struct SessionTurn {
  int64_t turn = 0;  // 1-based, set by append_turn
  std::string question;
  std::string answer;
  std::string mode;      // "extractive" or "generated"
  std::string model;     // the chat model, "" for extractive
  std::string evidence;  // the evidence level
  std::string citations = "[]";  // a JSON array, as the answer's citations
  std::string created_at;        // set by the backend

  bool operator==(const SessionTurn&) const = default;
};

// Bounds on sessions: bytes of a question or an answer, and of a turn's citations.
inline constexpr size_t kMaxSessionText = 1 << 20;
inline constexpr size_t kMaxSessionsPerOwner = 100000;
inline constexpr size_t kMaxTurnsPerSession = 100000;

class DocumentRegistry {
 public:
  virtual ~DocumentRegistry() = default;
  DocumentRegistry() = default;
  DocumentRegistry(const DocumentRegistry&) = delete;
  DocumentRegistry& operator=(const DocumentRegistry&) = delete;

  // Inserts the record or replaces every field of the row with its document_id,
  // except created_at, which keeps the first insert's time. document_id and
  // plugin_namespace must be non-empty.
  void upsert(const DocumentRecord& record);
  // Deletes the document and its keywords (all namespaces); false when absent.
  bool remove(std::string_view document_id);
  std::optional<DocumentRecord> get(std::string_view document_id) const;

  // Replaces the document's tags in one namespace (document_keywords rows); other
  // namespaces' tags are untouched. Duplicates collapse; an empty tag is refused;
  // an empty list clears. not_found when the document is absent.
  void set_keywords(std::string_view document_id, std::string_view plugin_namespace,
                    const std::vector<std::string>& tags);
  // The document's tags in one namespace, sorted bytewise.
  std::vector<std::string> keywords(std::string_view document_id, std::string_view plugin_namespace) const;

  // Replaces the brand / generic pairs a document (a drug label) states; they go with
  // the document when it is removed. Empty names are refused; an empty list clears.
  // not_found when the document is absent.
  void set_brands(std::string_view document_id, const std::vector<BrandName>& brands);
  // Every distinct pair of the namespace's documents, sorted (brand, then generic).
  std::vector<BrandName> brands(std::string_view plugin_namespace) const;

  // The SHA-256 (64 lower-case hex digits) of the source file a document was read from;
  // it goes with the document when it is removed. not_found when the document is absent.
  void set_source_hash(std::string_view document_id, std::string_view sha256);
  // Ingest dedup (Eagle-RAG's): the documents read from a file with these bytes into
  // this KB and namespace, sorted; empty when none.
  std::vector<std::string> find_by_source_hash(std::string_view sha256, std::string_view kb_name,
                                               std::string_view plugin_namespace) const;

  // lookup_document_ids_by_name_terms: ids of the namespace's documents whose name,
  // file_name or document_name contains ANY term as a case-insensitive substring
  // (the seed's `ILIKE '%term%'`; LIKE metacharacters in a term match literally).
  // Empty terms are ignored; `kb_name` narrows to one KB when given, `within_kbs`
  // (non-empty) to those (a scoped token's). Sorted by document_id (bytewise), at most
  // `limit` (<= kMaxLimit).
  std::vector<std::string> find_by_name_terms(const std::vector<std::string>& terms,
                                              std::string_view plugin_namespace, size_t limit,
                                              std::optional<std::string_view> kb_name = std::nullopt,
                                              const std::vector<std::string>& within_kbs = {}) const;

  // resolve_tags_to_document_ids: ids tagged with ANY of `tags` (exact match) in the
  // namespace, sorted by document_id (bytewise), at most `limit` (<= kMaxLimit).
  // The caller applies max_scope_documents by asking for one more than the cap.
  // within_kbs (non-empty): only documents of those knowledge bases (a scoped token's:
  // another tenant's documents must neither match nor be counted).
  std::vector<std::string> ids_for_tags(const std::vector<std::string>& tags,
                                        std::string_view plugin_namespace, size_t limit,
                                        const std::vector<std::string>& within_kbs = {}) const;

  // lookup_documents_sync for enrich_file_names: names of the ids that exist.
  std::map<std::string, DocumentNames> names_for_ids(const std::vector<std::string>& document_ids) const;

  // The collections_used catalog for the scope-aware union: the distinct collections
  // used at ingest by the documents in `document_ids` OR in a KB of `kb_names` (the
  // scope's OR semantics), sorted. Both empty = no scope = no union, so {}: without a
  // scope no specialised collection joins the route (G4).
  // within_kbs (non-empty): only documents of those knowledge bases.
  std::vector<std::string> collections_used(const std::vector<std::string>& document_ids,
                                            const std::vector<std::string>& kb_names = {},
                                            const std::vector<std::string>& within_kbs = {}) const;

  // Listings for the HTTP server (GET /documents, /knowledge_bases, /tags).
  // Documents matching q, sorted by document_id (bytewise), q.offset skipped, at
  // most q.limit; each record filled as get() fills it.
  std::vector<DocumentRecord> list(const DocumentQuery& q) const;
  // How many documents match q's kb_names/plugin_namespace (limit/offset ignored).
  size_t count(const DocumentQuery& q) const;
  // Distinct kb_name values with their document counts, sorted by kb_name bytewise;
  // documents without a KB count under "". kb_names non-empty restricts to those KBs
  // (a KB without documents is not listed).
  std::vector<NameCount> knowledge_bases(const std::vector<std::string>& kb_names = {}) const;
  // Distinct tags (document_keywords.keyword) with the number of documents carrying
  // each, sorted by tag bytewise. plugin_namespace unset = every namespace (a tag in
  // two namespaces on one document counts that document once); kb_names non-empty =
  // only tags of documents in those KBs.
  std::vector<NameCount> tags(std::optional<std::string_view> plugin_namespace = std::nullopt,
                              const std::vector<std::string>& kb_names = {}) const;

  // Sessions. create_session stores a new session (session_id unique: conflict when
  // taken) and then drops the owner's least recently used sessions beyond
  // max_per_owner (>= 1), turns and all.
  void create_session(const SessionRecord& session, size_t max_per_owner);
  // Appends a turn to the owner's session and returns its number (1-based); the
  // session becomes the most recently used. not_found when the owner has no such
  // session (another owner's is absent too); conflict when it holds max_turns already.
  int64_t append_turn(std::string_view session_id, std::string_view owner, const SessionTurn& turn,
                      size_t max_turns);
  std::optional<SessionRecord> get_session(std::string_view session_id, std::string_view owner) const;
  // The session's last `last` turns (0 = all), oldest first; empty when the owner has
  // no such session.
  std::vector<SessionTurn> session_turns(std::string_view session_id, std::string_view owner,
                                         size_t last = 0) const;
  // The owner's sessions, most recently used first.
  std::vector<SessionRecord> list_sessions(std::string_view owner, size_t limit, size_t offset) const;
  size_t count_sessions(std::string_view owner) const;
  // Deletes the owner's session and its turns; the number of turns deleted, nullopt
  // when the owner has no such session.
  std::optional<size_t> delete_session(std::string_view session_id, std::string_view owner);

  // "sqlite" or "postgresql".
  virtual std::string_view backend() const = 0;

  // Groups the writes made until commit() into one database transaction: an ingest's
  // thousands of documents cost one commit instead of one (and its locks and WAL
  // frames) each. Each write stays all-or-nothing on its own (a savepoint inside the
  // batch), so a write that fails leaves the others, and a batch unwound by that error
  // still commits what succeeded: grouping changes the cost, not what is kept. One
  // batch at a time per registry (the caller serialises its writers); a read meanwhile
  // sees the batch's writes.
  class WriteBatch {
   public:
    explicit WriteBatch(DocumentRegistry& registry);
    ~WriteBatch();  // commits when commit() was not called (an error is logged)
    WriteBatch(const WriteBatch&) = delete;
    WriteBatch& operator=(const WriteBatch&) = delete;
    void commit();

   private:
    DocumentRegistry& registry_;
    bool open_ = true;
  };

 protected:
  // A batch's transaction (WriteBatch); the backend's own writes become savepoints
  // while it is open.
  virtual void do_begin_batch() = 0;
  virtual void do_commit_batch() = 0;

  // Called with validated input: non-empty ids/namespaces, valid UTF-8 without NUL,
  // sizes within the bounds above, no empty terms, non-empty lists, limit >= 1.
  virtual void do_upsert(const DocumentRecord& record) = 0;
  virtual bool do_remove(std::string_view document_id) = 0;
  virtual std::optional<DocumentRecord> do_get(std::string_view document_id) const = 0;
  virtual void do_set_keywords(std::string_view document_id, std::string_view plugin_namespace,
                               const std::vector<std::string>& tags) = 0;
  virtual void do_set_brands(std::string_view document_id, const std::vector<BrandName>& brands) = 0;
  virtual std::vector<BrandName> do_brands(std::string_view plugin_namespace) const = 0;
  virtual void do_set_source_hash(std::string_view document_id, std::string_view sha256) = 0;
  virtual std::vector<std::string> do_find_by_source_hash(std::string_view sha256, std::string_view kb_name,
                                                          std::string_view plugin_namespace) const = 0;
  virtual std::vector<std::string> do_keywords(std::string_view document_id,
                                               std::string_view plugin_namespace) const = 0;
  virtual std::vector<std::string> do_find_by_name_terms(const std::vector<std::string>& terms,
                                                         std::string_view plugin_namespace, size_t limit,
                                                         std::optional<std::string_view> kb_name,
                                                         const std::vector<std::string>& within_kbs) const = 0;
  virtual std::vector<std::string> do_ids_for_tags(const std::vector<std::string>& tags,
                                                   std::string_view plugin_namespace, size_t limit,
                                                   const std::vector<std::string>& within_kbs) const = 0;
  virtual std::map<std::string, DocumentNames> do_names_for_ids(
      const std::vector<std::string>& document_ids) const = 0;
  // Either list may be empty (not both); the result need not be sorted or distinct.
  // within_kbs: sorted and distinct, empty = any KB.
  virtual std::vector<std::string> do_collections_used(const std::vector<std::string>& document_ids,
                                                       const std::vector<std::string>& kb_names,
                                                       const std::vector<std::string>& within_kbs) const = 0;
  // The listings: kb_names sorted and distinct, empty = no KB filter; a namespace,
  // when set, non-empty; 1 <= limit <= kMaxLimit, offset <= kMaxOffset. Results
  // sorted bytewise as the public methods promise.
  virtual std::vector<DocumentRecord> do_list(const DocumentQuery& q) const = 0;
  virtual size_t do_count(const DocumentQuery& q) const = 0;
  virtual std::vector<NameCount> do_knowledge_bases(const std::vector<std::string>& kb_names) const = 0;
  virtual std::vector<NameCount> do_tags(std::optional<std::string_view> plugin_namespace,
                                         const std::vector<std::string>& kb_names) const = 0;
  // Sessions, with validated input (ids and owner keys, texts within kMaxSessionText).
  virtual void do_create_session(const SessionRecord& session, size_t max_per_owner) = 0;
  virtual int64_t do_append_turn(std::string_view session_id, std::string_view owner, const SessionTurn& turn,
                                 size_t max_turns) = 0;
  virtual std::optional<SessionRecord> do_get_session(std::string_view session_id,
                                                      std::string_view owner) const = 0;
  virtual std::vector<SessionTurn> do_session_turns(std::string_view session_id, std::string_view owner,
                                                    size_t last) const = 0;
  virtual std::vector<SessionRecord> do_list_sessions(std::string_view owner, size_t limit,
                                                      size_t offset) const = 0;
  virtual size_t do_count_sessions(std::string_view owner) const = 0;
  virtual std::optional<size_t> do_delete_session(std::string_view session_id, std::string_view owner) = 0;
};

// Opens a registry from a URL:
//   sqlite::memory:            private in-memory database (tests, throwaway runs)
//   sqlite:PATH, sqlite://PATH file database, created with its schema when absent
//   postgresql://... postgres://...   a libpq URI
//   postgres:CONNINFO, postgresql:CONNINFO   a libpq key=value string
// Anything else is invalid_argument; a server that cannot be reached, unavailable.
// read_only (a reader beside the store's writer): an SQLite file is opened without
// writing anything; PostgreSQL is opened as usual (its server arbitrates).
std::unique_ptr<DocumentRegistry> open_registry(std::string_view url, bool read_only = false);

// `%` + term with `\`, `%` and `_` escaped by `\` + `%`: the pattern for
// `x LIKE/ILIKE pattern ESCAPE '\'` that matches any x containing term literally.
std::string like_contains_pattern(std::string_view term);

}  // namespace eagle::registry
