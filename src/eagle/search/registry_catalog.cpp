#include "eagle/search/registry_catalog.h"

#include <algorithm>

namespace eagle::search {

std::vector<std::string> RegistryCatalog::ids_for_tags(const std::vector<std::string>& tags, const std::string& ns,
                                                       size_t limit, const std::vector<std::string>& within_kbs) {
  return reg_.ids_for_tags(tags, ns, std::min(limit, registry::kMaxLimit), within_kbs);
}

// The catalog is not namespace-scoped: the scope filter itself is not.
std::vector<std::string> RegistryCatalog::collections_used(const std::vector<std::string>& kb_names,
                                                           const std::vector<std::string>& document_ids,
                                                           const std::string&,
                                                           const std::vector<std::string>& within_kbs) {
  return reg_.collections_used(document_ids, kb_names, within_kbs);
}

}  // namespace eagle::search
