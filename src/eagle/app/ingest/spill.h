#pragma once
// The registry records of an ingest until its commit, in an unnamed temporary file:
// a million documents cost disk, not memory, and a killed ingest leaves nothing behind.
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "eagle/registry/registry.h"

namespace eagle::app {

class DocumentSpill {
 public:
  DocumentSpill();
  ~DocumentSpill();
  DocumentSpill(const DocumentSpill&) = delete;
  DocumentSpill& operator=(const DocumentSpill&) = delete;

  // `brands`: the brand / generic pairs a label states (null for other documents).
  // `source_sha256`: the SHA-256 of the file the document was read from ("" when none).
  void write(const registry::DocumentRecord& d, const std::vector<registry::BrandName>* brands = nullptr,
             const std::vector<std::string>* tags = nullptr, const std::string& source_sha256 = "");
  size_t count() const { return count_; }

  using Visit = std::function<void(registry::DocumentRecord& d, const std::vector<registry::BrandName>* brands,
                                   const std::vector<std::string>* tags, const std::string& source_sha256)>;
  // Calls fn(record, brands, tags, sha256) for each record written, in order (brands /
  // tags null when the record was written without; sha256 "" when none). The list is
  // read and parsed by a second thread a batch ahead, so the caller's registry writes
  // (the end of a bulk ingest, on one core) overlap the parsing.
  void for_each(const Visit& fn);

 private:
  std::FILE* file_;
  size_t count_ = 0;
};

}  // namespace eagle::app
