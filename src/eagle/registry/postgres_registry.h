#pragma once
// The PostgreSQL registry backend (libpq): the seed's registry lives in PostgreSQL
// ("PG registry name lookup"), so a deployment can share one with other tools.
// Tables are created when absent (CREATE TABLE IF NOT EXISTS); every statement is
// a PQexecParams with bound parameters; one connection behind a mutex, re-opened
// on the next call after the server dropped it.
#include <memory>
#include <mutex>
#include <string>

#include "eagle/registry/registry.h"

namespace eagle::registry {

class PostgresRegistry final : public DocumentRegistry {
 public:
  // `conninfo`: a libpq key=value string or a postgresql:// URI. `schema`, when
  // given ([a-z0-9_], at most 63 bytes), is created if absent and becomes the
  // connection's search_path, so tenants (or test runs) can share one database.
  // unavailable (with libpq's message) when the server cannot be reached.
  explicit PostgresRegistry(const std::string& conninfo, const std::string& schema = "");
  ~PostgresRegistry() override;

  std::string_view backend() const override { return "postgresql"; }

 protected:
  void do_begin_batch() override;
  void do_commit_batch() override;
  void do_upsert(const DocumentRecord& record) override;
  bool do_remove(std::string_view document_id) override;
  std::optional<DocumentRecord> do_get(std::string_view document_id) const override;
  void do_set_keywords(std::string_view document_id, std::string_view plugin_namespace,
                       const std::vector<std::string>& tags) override;
  void do_set_brands(std::string_view document_id, const std::vector<BrandName>& brands) override;
  std::vector<BrandName> do_brands(std::string_view plugin_namespace) const override;
  void do_set_source_hash(std::string_view document_id, std::string_view sha256) override;
  std::vector<std::string> do_find_by_source_hash(std::string_view sha256, std::string_view kb_name,
                                                  std::string_view plugin_namespace) const override;
  std::vector<std::string> do_keywords(std::string_view document_id,
                                       std::string_view plugin_namespace) const override;
  std::vector<std::string> do_find_by_name_terms(const std::vector<std::string>& terms,
                                                 std::string_view plugin_namespace, size_t limit,
                                                 std::optional<std::string_view> kb_name,
                                                 const std::vector<std::string>& within_kbs) const override;
  std::vector<std::string> do_ids_for_tags(const std::vector<std::string>& tags,
                                           std::string_view plugin_namespace, size_t limit,
                                           const std::vector<std::string>& within_kbs) const override;
  std::map<std::string, DocumentNames> do_names_for_ids(
      const std::vector<std::string>& document_ids) const override;
  std::vector<std::string> do_collections_used(const std::vector<std::string>& document_ids,
                                               const std::vector<std::string>& kb_names,
                                               const std::vector<std::string>& within_kbs) const override;
  std::vector<DocumentRecord> do_list(const DocumentQuery& q) const override;
  size_t do_count(const DocumentQuery& q) const override;
  std::vector<NameCount> do_knowledge_bases(const std::vector<std::string>& kb_names) const override;
  std::vector<NameCount> do_tags(std::optional<std::string_view> plugin_namespace,
                                 const std::vector<std::string>& kb_names) const override;
  void do_create_session(const SessionRecord& session, size_t max_per_owner) override;
  int64_t do_append_turn(std::string_view session_id, std::string_view owner, const SessionTurn& turn,
                         size_t max_turns) override;
  std::optional<SessionRecord> do_get_session(std::string_view session_id, std::string_view owner) const override;
  std::vector<SessionTurn> do_session_turns(std::string_view session_id, std::string_view owner,
                                            size_t last) const override;
  std::vector<SessionRecord> do_list_sessions(std::string_view owner, size_t limit, size_t offset) const override;
  size_t do_count_sessions(std::string_view owner) const override;
  std::optional<size_t> do_delete_session(std::string_view session_id, std::string_view owner) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  mutable std::mutex mutex_;
};

// libpq's text-array literal for `$n::text[]`: every element double-quoted with `\`
// and `"` backslash-escaped, so commas, braces, quotes, spaces and the word NULL
// stay literal strings. Public for its tests.
std::string pg_text_array(const std::vector<std::string>& values);

}  // namespace eagle::registry
