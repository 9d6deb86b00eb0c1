#pragma once
// Shared-data access for the biomedical ingest tests: a missing ../shared/data file
// fails the test with a message saying what is missing and how to point at it.
#include <gtest/gtest.h>
#include "support/build_paths.h"

#include <filesystem>
#include <string>
#include <vector>

#include "shared_data.h"

namespace eagle::biomed::testing {

inline std::filesystem::path shared_file(const std::string& relative) {
  return eagle::testing::shared_data() / relative;
}

inline ::testing::AssertionResult present(const std::filesystem::path& p) {
  if (std::filesystem::exists(p)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "shared data missing: " << p.string()
         << " (the tests read ../shared/data; set EAGLE_SHARED_DATA to its path)";
}

// The real SPL labels of shared/data/spl (the *_otc-bars.xml files there are barcode
// scans, not labels; SplParser.NonLabelXmlIsRejected covers them).
inline const std::vector<std::string>& spl_label_files() {
  static const std::vector<std::string> files = {"humira.xml",
                                                 "lipitor-orig.xml",
                                                 "lipitor-repack.xml",
                                                 "cough.xml",
                                                 "METHOXSALEN.xml",
                                                 "no-title.xml",
                                                 "64f8040f-938d-4236-8e22-c838c9b5f8da.xml"};
  return files;
}

}  // namespace eagle::biomed::testing
