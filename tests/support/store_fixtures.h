#pragma once
// Small helpers shared by the store tests: a fresh folder per test and a record of a
// chunk schema with a given text and vector.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "eagle/store/collection.h"

namespace eagle::testing {

// TMP/eagle_<suite>_<tag>_<pid>_<n>, removed first (n: a fresh folder per call).
inline std::filesystem::path fresh_temp_dir(const std::string& suite, const std::string& tag) {
  static int n = 0;
  auto d = std::filesystem::temp_directory_path() /
           ("eagle_" + suite + "_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
  std::filesystem::remove_all(d);
  return d;
}

// A record of `s` with every field null.
inline store::Record chunk_record(const CollectionSchema& s, const std::string& id, const std::string& text,
                                  std::vector<float> vector) {
  store::Record r;
  r.id = id;
  r.text = text;
  r.vector = std::move(vector);
  r.values.assign(s.fields.size(), std::monostate{});
  return r;
}

}  // namespace eagle::testing
