// A collection's segment loader on arbitrary bytes: the manifest names the fuzzed
// file as a format-1 segment (no checksum, so the parser itself is exercised), and
// the collection is opened read-only. Only eagle::Error may escape.
#include <filesystem>
#include <fstream>

#include "eagle/core/error.h"
#include "eagle/store/checked_file.h"
#include "eagle/store/collection.h"
#include "fuzz_support.h"

using namespace eagle;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path dir = [] {
    auto d = fuzz::work_dir() / "collection";
    std::filesystem::create_directories(d);
    // The layout `eagle ingest` gives eagle_text (the seed segment is one of those).
    auto schema = chunk_schema("c", 100);
    schema.vector.index = VectorIndexKind::hnsw;
    std::ofstream(d / "schema.json") << schema.to_json().dump();
    std::ofstream(d / "MANIFEST") << R"({"format":1,"segment":"seg-00000000000000000001.eagle","last_lsn":1})";
    return d;
  }();
  fuzz::as_file("collection/seg-00000000000000000001.eagle", data, size);
  store::CollectionOptions opts;
  opts.read_only = true;
  try {
    auto c = store::Collection::open(dir, opts);
    c->count();
    c->search_text("text", 3);
  } catch (const Error&) {
  }
  return 0;
}
