// A log record's binary payload (record_codec.h) on arbitrary bytes: it decodes or it
// is invalid_argument, never a crash or a huge allocation; what decodes encodes back
// to bytes that decode and encode to themselves.
#include <cstdlib>

#include "eagle/core/error.h"
#include "eagle/store/record_codec.h"

namespace {
eagle::CollectionSchema fuzz_schema() {
  eagle::CollectionSchema s;
  s.name = "fuzz";
  s.vector.name = "vector";
  s.vector.dim = 2;
  using eagle::FieldType;
  for (auto [name, type] : {std::pair{"s", FieldType::string}, {"i", FieldType::int64}, {"f", FieldType::float64},
                            {"b", FieldType::boolean}, {"l", FieldType::string_list}, {"j", FieldType::json}}) {
    eagle::FieldSchema f;
    f.name = name;
    f.type = type;
    s.fields.push_back(f);
  }
  return s;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto schema = fuzz_schema();
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  try {
    const auto w = eagle::store::decode_write(in, schema);
    std::string again;
    eagle::store::encode_write(w.txn, w.deletes, w.records, schema, again);
    // Once decoded, the bytes are canonical (MessagePack has several spellings of a
    // value, and a NaN never equals itself): encoding the decoded form again is stable.
    const auto back = eagle::store::decode_write(again, schema);
    std::string third;
    eagle::store::encode_write(back.txn, back.deletes, back.records, schema, third);
    if (third != again) std::abort();
  } catch (const eagle::Error& e) {
    if (e.code() != eagle::ErrorCode::invalid_argument) std::abort();
  }
  return 0;
}
