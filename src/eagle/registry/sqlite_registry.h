#pragma once
// The embedded registry backend (the default): one SQLite file, or ":memory:".
// The schema is created when absent; WAL journal so readers in other processes do
// not block the writer; every statement prepared once and bound; one connection
// behind a mutex, so an instance is safe to share between threads.
#include <memory>
#include <mutex>
#include <string>

#include "eagle/registry/registry.h"

namespace eagle::registry {

class SqliteRegistry final : public DocumentRegistry {
 public:
  // `path` is a file path or ":memory:". unavailable when the file cannot be
  // opened or its schema created.
  // read_only: opens an existing file without writing anything (no schema creation,
  // no journal-mode change); every write then fails with unavailable.
  explicit SqliteRegistry(const std::string& path, bool read_only = false);
  ~SqliteRegistry() override;

  std::string_view backend() const override { return "sqlite"; }

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
  bool has_brands_ = true;   // false for a read-only file of schema version 1
  bool has_sources_ = true;  // false for a read-only file of schema version 1 or 2
  bool has_sessions_ = true;  // false for a read-only file older than schema version 4
};

}  // namespace eagle::registry
