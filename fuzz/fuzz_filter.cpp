// Filter expressions (Milvus grammar): parse against the chunk schema, then compile
// and evaluate against a small in-memory collection. Only eagle::Error may escape.
#include "eagle/core/error.h"
#include "eagle/filter/parser.h"
#include "eagle/store/collection.h"
#include "fuzz_support.h"

using namespace eagle;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const CollectionSchema schema = chunk_schema("c", 4);
  static auto coll = [] {
    auto c = store::Collection::in_memory(schema);
    std::vector<store::Record> rows;
    for (int i = 0; i < 8; ++i) {
      store::Record r;
      r.id = "r" + std::to_string(i);
      r.text = "text " + std::to_string(i);
      r.vector = {1.0f + i, 2, 3, 4};
      r.values.assign(schema.fields.size(), std::monostate{});
      r.values[*schema.field_index("year")] = int64_t{2015 + i};
      r.values[*schema.field_index("kb_name")] = std::string(i % 2 ? "a" : "b");
      rows.push_back(std::move(r));
    }
    c->insert(std::move(rows));
    return c;
  }();
  const std::string expr = fuzz::bytes(data, size);
  try {
    filter::parse(expr, schema);
  } catch (const Error&) {
  }
  try {
    coll->filter(expr);
  } catch (const Error&) {
  }
  return 0;
}
