#pragma once
// The pipeline's view of the document registry (SQLite or PostgreSQL).
#include "eagle/registry/registry.h"
#include "eagle/search/orchestrator.h"

namespace eagle::search {

class RegistryCatalog : public DocumentCatalog {
 public:
  explicit RegistryCatalog(registry::DocumentRegistry& reg) : reg_(reg) {}
  std::vector<std::string> ids_for_tags(const std::vector<std::string>& tags, const std::string& ns, size_t limit,
                                        const std::vector<std::string>& within_kbs) override;
  std::vector<std::string> collections_used(const std::vector<std::string>& kb_names,
                                            const std::vector<std::string>& document_ids, const std::string& ns,
                                            const std::vector<std::string>& within_kbs) override;

 private:
  registry::DocumentRegistry& reg_;
};

}  // namespace eagle::search
