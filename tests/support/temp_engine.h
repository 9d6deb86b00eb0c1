#pragma once
// A writer Engine on a fresh store in a temporary folder, removed at the end: the
// fixture of the Engine-level ingest tests.
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "eagle/app/engine.h"
#include "support/engine_config.h"

namespace eagle::test_support {

struct TempEngine {
  std::filesystem::path dir;
  std::unique_ptr<app::Engine> engine;
  explicit TempEngine(const std::string& name)
      : dir(std::filesystem::temp_directory_path() / ("eagle_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    engine = std::make_unique<app::Engine>(engine_test_config(dir / "store"), app::StoreAccess::write, "test");
  }
  ~TempEngine() {
    engine.reset();
    std::filesystem::remove_all(dir);
  }
  TempEngine(const TempEngine&) = delete;
  TempEngine& operator=(const TempEngine&) = delete;

  search::RetrievalResponse search(const std::string& query, size_t top_k, bool explain = false) {
    search::RetrievalRequest r;
    r.query = query;
    r.top_k = top_k;
    r.explain = explain;
    return engine->search(r);
  }
};

}  // namespace eagle::test_support
