// A writer process for the crash test: inserts records one at a time into a
// persistent collection, checkpointing every 25 writes, and prints "ack <id>" after
// each write returns (i.e. is acknowledged). The test kills it with SIGKILL.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "eagle/store/collection.h"

using namespace eagle;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: eagle_crash_writer DIR FIRST COUNT\n");
    return 2;
  }
  const std::string dir = argv[1];
  const long first = std::atol(argv[2]), count = std::atol(argv[3]);
  CollectionSchema schema;
  schema.name = "crash";
  schema.vector.dim = 8;
  schema.vector.index = VectorIndexKind::hnsw;
  schema.fields = {{"kb_name", FieldType::string, true}, {"year", FieldType::int64, true}};
  store::CollectionOptions opts;
  opts.checkpoint_wal_bytes = 1ull << 40;  // checkpoints are explicit here
  auto c = std::filesystem::exists(std::filesystem::path(dir) / "schema.json")
               ? store::Collection::open(dir, opts)
               : store::Collection::create(dir, schema, opts);
  for (long i = first; i < first + count; ++i) {
    store::Record r;
    r.id = "r" + std::to_string(i);
    r.text = "record number " + std::to_string(i);
    for (int d = 0; d < 8; ++d) r.vector.push_back(static_cast<float>((i * 7 + d * 13) % 17) - 8.0f);
    r.vector[0] += 0.5f;  // never the zero vector
    r.values = {std::string(i % 2 ? "odd" : "even"), int64_t{2000 + i % 25}};
    if (i % 10 == 9) c->upsert({r});
    else c->insert({r});
    std::printf("ack %s\n", r.id.c_str());
    std::fflush(stdout);
    if (i % 25 == 24) c->checkpoint();
  }
  return 0;
}
