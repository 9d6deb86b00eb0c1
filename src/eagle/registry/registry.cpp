#include "eagle/registry/registry.h"

#include <spdlog/spdlog.h>

#include <utf8proc.h>

#include <algorithm>

#include "eagle/core/error.h"
#include "eagle/registry/detail.h"
#include "eagle/registry/postgres_registry.h"
#include "eagle/registry/sqlite_registry.h"

namespace eagle::registry {

namespace {

[[noreturn]] void invalid(const std::string& message) {
  fail(ErrorCode::invalid_argument, "registry: " + message);
}

// Both backends must see the same strings: PostgreSQL refuses NUL bytes and
// invalid UTF-8 in text, so SQLite must not silently accept them either.
void check_text(std::string_view value, std::string_view what) {
  if (value.find('\0') != std::string_view::npos) invalid(std::string(what) + " contains a NUL byte");
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(value.data());
  auto left = static_cast<utf8proc_ssize_t>(value.size());
  while (left > 0) {
    utf8proc_int32_t cp = 0;
    utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) invalid(std::string(what) + " is not valid UTF-8");
    p += n;
    left -= n;
  }
}

void check_key(std::string_view value, std::string_view what) {
  if (value.size() > kMaxKeyBytes) {
    invalid(std::string(what) + " is " + std::to_string(value.size()) + " bytes, at most " +
            std::to_string(kMaxKeyBytes));
  }
  check_text(value, what);
}

void check_non_empty(std::string_view value, std::string_view what) {
  if (value.empty()) invalid(std::string(what) + " must not be empty");
  check_key(value, what);
}

// A list of keys: at most `max` of them, each a valid key.
void check_list(const std::vector<std::string>& values, size_t max, std::string_view what) {
  if (values.size() > max) {
    invalid(std::string(what) + ": " + std::to_string(values.size()) + " given, at most " +
            std::to_string(max));
  }
  for (const auto& v : values) check_key(v, what);
}

void check_limit(size_t limit) {
  if (limit > kMaxLimit) invalid("limit " + std::to_string(limit) + " exceeds " + std::to_string(kMaxLimit));
}

// A listing's KB filter: at most kMaxIds valid keys ("" is a KB: the documents
// without one), sorted and distinct for the backend.
std::vector<std::string> checked_kb_names(const std::vector<std::string>& kb_names) {
  check_list(kb_names, kMaxIds, "kb_names");
  std::vector<std::string> out = kb_names;
  detail::sort_unique(out);
  return out;
}

// The filters of a DocumentQuery (count ignores limit and offset, list checks them
// besides); the copy has its kb_names sorted and distinct.
DocumentQuery checked_filters(const DocumentQuery& q) {
  DocumentQuery out;
  out.kb_names = checked_kb_names(q.kb_names);
  if (q.plugin_namespace) {
    check_non_empty(*q.plugin_namespace, "plugin_namespace");
    out.plugin_namespace = q.plugin_namespace;
  }
  if (q.source_type) {
    check_non_empty(*q.source_type, "source_type");
    out.source_type = q.source_type;
  }
  if (q.exclude_source_type) {
    check_non_empty(*q.exclude_source_type, "exclude_source_type");
    out.exclude_source_type = q.exclude_source_type;
  }
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

namespace detail {

std::string fold_case(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  auto left = static_cast<utf8proc_ssize_t>(text.size());
  while (left > 0) {
    utf8proc_int32_t cp = 0;
    utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) fail(ErrorCode::internal, "registry: fold_case on invalid UTF-8");
    utf8proc_uint8_t buf[4];
    utf8proc_ssize_t m = utf8proc_encode_char(utf8proc_tolower(cp), buf);
    out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(m));
    p += n;
    left -= n;
  }
  return out;
}

void sort_unique(std::vector<std::string>& values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
}

}  // namespace detail

std::string like_contains_pattern(std::string_view term) {
  std::string out = "%";
  out.reserve(term.size() + 8);
  for (char c : term) {
    if (c == '\\' || c == '%' || c == '_') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('%');
  return out;
}

DocumentRegistry::WriteBatch::WriteBatch(DocumentRegistry& registry) : registry_(registry) {
  registry_.do_begin_batch();
}

DocumentRegistry::WriteBatch::~WriteBatch() {
  if (!open_) return;
  try {
    commit();
  } catch (const std::exception& e) {
    spdlog::error("registry ({}): a batch of writes could not be committed: {}", registry_.backend(), e.what());
  }
}

void DocumentRegistry::WriteBatch::commit() {
  if (!open_) return;
  open_ = false;
  registry_.do_commit_batch();
}

void DocumentRegistry::upsert(const DocumentRecord& r) {
  check_non_empty(r.document_id, "document_id");
  check_non_empty(r.plugin_namespace, "plugin_namespace");
  check_key(r.kb_name, "kb_name");
  check_text(r.name, "name");
  check_text(r.file_name, "file_name");
  check_text(r.document_name, "document_name");
  check_text(r.source_type, "source_type");
  check_text(r.source_uri, "source_uri");
  check_list(r.collections_used, kMaxIds, "collections_used");
  do_upsert(r);
}

bool DocumentRegistry::remove(std::string_view document_id) {
  if (document_id.empty()) return false;
  check_key(document_id, "document_id");
  return do_remove(document_id);
}

std::optional<DocumentRecord> DocumentRegistry::get(std::string_view document_id) const {
  if (document_id.empty()) return std::nullopt;
  check_key(document_id, "document_id");
  return do_get(document_id);
}

void DocumentRegistry::set_keywords(std::string_view document_id, std::string_view plugin_namespace,
                                    const std::vector<std::string>& tags) {
  check_non_empty(document_id, "document_id");
  check_non_empty(plugin_namespace, "plugin_namespace");
  check_list(tags, kMaxIds, "keywords");
  for (const auto& t : tags) {
    if (t.empty()) invalid("a keyword must not be empty");
  }
  std::vector<std::string> unique = tags;
  detail::sort_unique(unique);
  do_set_keywords(document_id, plugin_namespace, unique);
}

std::vector<std::string> DocumentRegistry::keywords(std::string_view document_id,
                                                    std::string_view plugin_namespace) const {
  if (document_id.empty() || plugin_namespace.empty()) return {};
  check_key(document_id, "document_id");
  check_key(plugin_namespace, "plugin_namespace");
  auto out = do_keywords(document_id, plugin_namespace);
  detail::sort_unique(out);
  return out;
}

void DocumentRegistry::set_brands(std::string_view document_id, const std::vector<BrandName>& brands) {
  check_non_empty(document_id, "document_id");
  if (brands.size() > kMaxIds) invalid("at most " + std::to_string(kMaxIds) + " brand names per document");
  for (const auto& b : brands)
    if (b.brand.empty() || b.generic.empty()) invalid("a brand name and its generic name must not be empty");
  std::vector<BrandName> unique = brands;
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  do_set_brands(document_id, unique);
}

namespace {
void check_sha256(std::string_view sha256) {
  if (sha256.size() != 64 ||
      !std::all_of(sha256.begin(), sha256.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }))
    fail(ErrorCode::invalid_argument, "registry: a source hash must be 64 lower-case hex digits (SHA-256)");
}
}  // namespace

void DocumentRegistry::set_source_hash(std::string_view document_id, std::string_view sha256) {
  check_non_empty(document_id, "document_id");
  check_sha256(sha256);
  do_set_source_hash(document_id, sha256);
}

std::vector<std::string> DocumentRegistry::find_by_source_hash(std::string_view sha256, std::string_view kb_name,
                                                               std::string_view plugin_namespace) const {
  check_sha256(sha256);
  check_key(kb_name, "kb_name");
  check_non_empty(plugin_namespace, "plugin_namespace");
  auto out = do_find_by_source_hash(sha256, kb_name, plugin_namespace);
  detail::sort_unique(out);
  return out;
}

std::vector<BrandName> DocumentRegistry::brands(std::string_view plugin_namespace) const {
  if (plugin_namespace.empty()) return {};
  check_key(plugin_namespace, "plugin_namespace");
  auto out = do_brands(plugin_namespace);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> DocumentRegistry::find_by_name_terms(const std::vector<std::string>& terms,
                                                              std::string_view plugin_namespace, size_t limit,
                                                              std::optional<std::string_view> kb_name,
                                                              const std::vector<std::string>& within_kbs) const {
  check_limit(limit);
  check_list(within_kbs, kMaxIds, "within_kbs");
  check_list(terms, kMaxTerms, "name terms");
  check_non_empty(plugin_namespace, "plugin_namespace");
  if (kb_name) check_key(*kb_name, "kb_name");
  // An empty term would be `ILIKE '%%'`, i.e. every document: never what a caller
  // with an empty entity string means.
  std::vector<std::string> non_empty;
  for (const auto& t : terms) {
    if (!t.empty()) non_empty.push_back(t);
  }
  if (non_empty.empty() || limit == 0) return {};
  std::vector<std::string> within = within_kbs;
  detail::sort_unique(within);
  return do_find_by_name_terms(non_empty, plugin_namespace, limit, kb_name, within);
}

std::vector<std::string> DocumentRegistry::ids_for_tags(const std::vector<std::string>& tags,
                                                        std::string_view plugin_namespace, size_t limit,
                                                        const std::vector<std::string>& within_kbs) const {
  check_limit(limit);
  check_list(tags, kMaxTerms, "tags");
  check_non_empty(plugin_namespace, "plugin_namespace");
  std::vector<std::string> unique;
  for (const auto& t : tags) {
    if (!t.empty()) unique.push_back(t);
  }
  detail::sort_unique(unique);
  if (unique.empty() || limit == 0) return {};
  check_list(within_kbs, kMaxIds, "within_kbs");
  std::vector<std::string> within = within_kbs;
  detail::sort_unique(within);
  return do_ids_for_tags(unique, plugin_namespace, limit, within);
}

std::map<std::string, DocumentNames> DocumentRegistry::names_for_ids(
    const std::vector<std::string>& document_ids) const {
  check_list(document_ids, kMaxIds, "document_ids");
  std::vector<std::string> unique = document_ids;
  detail::sort_unique(unique);
  if (!unique.empty() && unique.front().empty()) unique.erase(unique.begin());
  if (unique.empty()) return {};
  return do_names_for_ids(unique);
}

std::vector<std::string> DocumentRegistry::collections_used(const std::vector<std::string>& document_ids,
                                                            const std::vector<std::string>& kb_names,
                                                            const std::vector<std::string>& within_kbs) const {
  check_list(document_ids, kMaxIds, "document_ids");
  check_list(kb_names, kMaxIds, "kb_names");
  check_list(within_kbs, kMaxIds, "within_kbs");
  std::vector<std::string> ids = document_ids, kbs = kb_names, within = within_kbs;
  detail::sort_unique(ids);
  detail::sort_unique(kbs);
  detail::sort_unique(within);
  if (ids.empty() && kbs.empty()) return {};
  auto out = do_collections_used(ids, kbs, within);
  detail::sort_unique(out);
  return out;
}

std::vector<DocumentRecord> DocumentRegistry::list(const DocumentQuery& q) const {
  if (q.limit == 0) invalid("limit must be at least 1");
  check_limit(q.limit);
  if (q.offset > kMaxOffset) {
    invalid("offset " + std::to_string(q.offset) + " exceeds " + std::to_string(kMaxOffset));
  }
  DocumentQuery checked = checked_filters(q);
  checked.limit = q.limit;
  checked.offset = q.offset;
  return do_list(checked);
}

size_t DocumentRegistry::count(const DocumentQuery& q) const {
  return do_count(checked_filters(q));
}

std::vector<NameCount> DocumentRegistry::knowledge_bases(const std::vector<std::string>& kb_names) const {
  return do_knowledge_bases(checked_kb_names(kb_names));
}

std::vector<NameCount> DocumentRegistry::tags(std::optional<std::string_view> plugin_namespace,
                                              const std::vector<std::string>& kb_names) const {
  if (plugin_namespace) check_non_empty(*plugin_namespace, "plugin_namespace");
  return do_tags(plugin_namespace, checked_kb_names(kb_names));
}

namespace {
void check_session_text(std::string_view value, std::string_view what) {
  if (value.size() > kMaxSessionText)
    invalid(std::string(what) + " is " + std::to_string(value.size()) + " bytes, at most " +
            std::to_string(kMaxSessionText));
  check_text(value, what);
}
}  // namespace

void DocumentRegistry::create_session(const SessionRecord& s, size_t max_per_owner) {
  check_non_empty(s.session_id, "session_id");
  check_key(s.owner, "owner");
  check_non_empty(s.plugin_namespace, "plugin_namespace");
  check_list(s.kb_scope, kMaxIds, "kb_scope");
  check_session_text(s.title, "title");
  if (max_per_owner == 0 || max_per_owner > kMaxSessionsPerOwner)
    invalid("sessions per owner must be 1.." + std::to_string(kMaxSessionsPerOwner));
  do_create_session(s, max_per_owner);
}

int64_t DocumentRegistry::append_turn(std::string_view session_id, std::string_view owner, const SessionTurn& t,
                                      size_t max_turns) {
  check_non_empty(session_id, "session_id");
  check_key(owner, "owner");
  check_session_text(t.question, "question");
  check_session_text(t.answer, "answer");
  check_key(t.mode, "mode");
  check_key(t.model, "model");
  check_key(t.evidence, "evidence");
  check_session_text(t.citations, "citations");
  if (max_turns == 0 || max_turns > kMaxTurnsPerSession)
    invalid("turns per session must be 1.." + std::to_string(kMaxTurnsPerSession));
  return do_append_turn(session_id, owner, t, max_turns);
}

std::optional<SessionRecord> DocumentRegistry::get_session(std::string_view session_id,
                                                           std::string_view owner) const {
  if (session_id.empty()) return std::nullopt;
  check_key(session_id, "session_id");
  check_key(owner, "owner");
  return do_get_session(session_id, owner);
}

std::vector<SessionTurn> DocumentRegistry::session_turns(std::string_view session_id, std::string_view owner,
                                                         size_t last) const {
  if (session_id.empty()) return {};
  check_key(session_id, "session_id");
  check_key(owner, "owner");
  if (last == 0 || last > kMaxTurnsPerSession) last = kMaxTurnsPerSession;
  return do_session_turns(session_id, owner, last);
}

std::vector<SessionRecord> DocumentRegistry::list_sessions(std::string_view owner, size_t limit,
                                                           size_t offset) const {
  check_key(owner, "owner");
  if (limit == 0) invalid("limit must be at least 1");
  check_limit(limit);
  if (offset > kMaxOffset) invalid("offset " + std::to_string(offset) + " exceeds " + std::to_string(kMaxOffset));
  return do_list_sessions(owner, limit, offset);
}

size_t DocumentRegistry::count_sessions(std::string_view owner) const {
  check_key(owner, "owner");
  return do_count_sessions(owner);
}

std::optional<size_t> DocumentRegistry::delete_session(std::string_view session_id, std::string_view owner) {
  if (session_id.empty()) return std::nullopt;
  check_key(session_id, "session_id");
  check_key(owner, "owner");
  return do_delete_session(session_id, owner);
}

std::unique_ptr<DocumentRegistry> open_registry(std::string_view url, bool read_only) {
  if (url == "sqlite::memory:") return std::make_unique<SqliteRegistry>(":memory:");
  if (starts_with(url, "sqlite:")) {
    std::string_view path = url.substr(7);
    if (starts_with(path, "//")) path = path.substr(2);  // sqlite:///abs/path, sqlite://rel/path
    if (path.empty()) invalid("registry URL '" + std::string(url) + "' names no database file");
    return std::make_unique<SqliteRegistry>(std::string(path), read_only);
  }
  // libpq reads both URI schemes itself; the key=value form comes after the colon.
  if (starts_with(url, "postgresql://") || starts_with(url, "postgres://")) {
    return std::make_unique<PostgresRegistry>(std::string(url));
  }
  for (std::string_view scheme : {"postgresql:", "postgres:"}) {
    if (starts_with(url, scheme)) {
      std::string_view conninfo = url.substr(scheme.size());
      if (conninfo.empty()) invalid("registry URL '" + std::string(url) + "' has an empty connection string");
      return std::make_unique<PostgresRegistry>(std::string(conninfo));
    }
  }
  // Only the scheme is echoed: a mistyped PostgreSQL URL may carry a password.
  std::string_view scheme = url.substr(0, url.find(':'));
  invalid("registry URL scheme '" + std::string(scheme) +
          "' is none of sqlite:PATH, sqlite::memory:, postgresql://... or postgres:CONNINFO");
}

}  // namespace eagle::registry
