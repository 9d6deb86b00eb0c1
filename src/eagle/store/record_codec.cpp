#include "eagle/store/record_codec.h"

#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>

#include "eagle/core/error.h"

namespace eagle::store {

static_assert(std::endian::native == std::endian::little, "the log is little-endian; a big-endian port must swap");

namespace {

enum ValueKind : uint8_t { kNull = 0, kBool = 1, kInt = 2, kFloat = 3, kString = 4, kList = 5, kJson = 6 };

template <typename T>
void put(std::string& out, T v) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

void put_str(std::string& out, std::string_view s) {
  if (s.size() > UINT32_MAX) fail(ErrorCode::invalid_argument, "a string of a write is longer than 4 GiB");
  put<uint32_t>(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}

// What one value takes and how it is written; the JSON kind as MessagePack.
void put_value(std::string& out, const Value& v) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          put<uint8_t>(out, kNull);
        } else if constexpr (std::is_same_v<T, bool>) {
          put<uint8_t>(out, kBool);
          put<uint8_t>(out, x ? 1 : 0);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          put<uint8_t>(out, kInt);
          put<int64_t>(out, x);
        } else if constexpr (std::is_same_v<T, double>) {
          put<uint8_t>(out, kFloat);
          put<double>(out, x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          put<uint8_t>(out, kString);
          put_str(out, x);
        } else if constexpr (std::is_same_v<T, StringList>) {
          put<uint8_t>(out, kList);
          put<uint32_t>(out, static_cast<uint32_t>(x.size()));
          for (const auto& s : x) put_str(out, s);
        } else {
          put<uint8_t>(out, kJson);
          const auto packed = nlohmann::json::to_msgpack(x);
          put_str(out, std::string_view(reinterpret_cast<const char*>(packed.data()), packed.size()));
        }
      },
      v);
}

size_t value_bytes(const Value& v) {
  return std::visit(
      [](const auto& x) -> size_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) return 1;
        else if constexpr (std::is_same_v<T, bool>) return 2;
        else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>) return 9;
        else if constexpr (std::is_same_v<T, std::string>) return 5 + x.size();
        else if constexpr (std::is_same_v<T, StringList>) {
          size_t n = 5;
          for (const auto& s : x) n += 4 + s.size();
          return n;
        } else {
          return 5 + nlohmann::json::to_msgpack(x).size();
        }
      },
      v);
}

// Reads a payload front to back; every read is bounded by the bytes left.
class PayloadReader {
 public:
  explicit PayloadReader(std::string_view in) : in_(in) {}
  template <typename T>
  T get(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, in_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  std::string_view bytes(size_t n, const char* what) {
    need(n, what);
    auto s = in_.substr(at_, n);
    at_ += n;
    return s;
  }
  std::string str(const char* what) { return std::string(bytes(get<uint32_t>(what), what)); }
  // A count of items of at least `min_item` bytes each: one the payload cannot hold
  // is damage, found before anything is allocated for it.
  uint32_t count(size_t min_item, const char* what) {
    const auto n = get<uint32_t>(what);
    if (static_cast<uint64_t>(n) * min_item > in_.size() - at_) damaged(what);
    return n;
  }
  bool done() const { return at_ == in_.size(); }
  [[noreturn]] void damaged(const char* what) const {
    fail(ErrorCode::invalid_argument,
         std::string("damaged log record: ") + what + " at byte " + std::to_string(at_) + " of " +
             std::to_string(in_.size()));
  }

 private:
  void need(size_t n, const char* what) const {
    if (n > in_.size() - at_) damaged(what);
  }
  std::string_view in_;
  size_t at_ = 0;
};

Value get_value(PayloadReader& in, FieldType type, const std::string& field) {
  const auto kind = in.get<uint8_t>("value kind");
  auto expect = [&](bool ok) {
    if (!ok)
      fail(ErrorCode::invalid_argument, "damaged log record: field '" + field + "' holds a value of kind " +
                                            std::to_string(kind) + ", its type is " +
                                            std::string(field_type_name(type)));
  };
  switch (kind) {
    case kNull: return std::monostate{};
    case kBool: expect(type == FieldType::boolean); return in.get<uint8_t>("bool") != 0;
    case kInt: expect(type == FieldType::int64); return in.get<int64_t>("int64");
    case kFloat: expect(type == FieldType::float64); return in.get<double>("float64");
    case kString: expect(type == FieldType::string); return in.str("string");
    case kList: {
      expect(type == FieldType::string_list);
      StringList list(in.count(4, "string list"));
      for (auto& s : list) s = in.str("string list item");
      return list;
    }
    case kJson: {
      expect(type == FieldType::json);
      const auto packed = in.bytes(in.get<uint32_t>("json length"), "json");
      auto j = nlohmann::json::from_msgpack(packed.begin(), packed.end(), true, false);
      if (j.is_discarded()) in.damaged("json value");
      return j;
    }
    default: in.damaged("value kind");
  }
}

// The error for a value of another kind than its field's type.
void expect_kind(bool ok, uint8_t kind, FieldType type, const std::string& field) {
  if (!ok)
    fail(ErrorCode::invalid_argument, "damaged log record: field '" + field + "' holds a value of kind " +
                                          std::to_string(kind) + ", its type is " + std::string(field_type_name(type)));
}

// Passes over one value of encode_values' form without decoding it.
void skip_value(PayloadReader& in, uint8_t kind) {
  switch (kind) {
    case kNull: return;
    case kBool: in.bytes(1, "bool"); return;
    case kInt:
    case kFloat: in.bytes(8, "number"); return;
    case kString:
    case kJson: in.bytes(in.get<uint32_t>("string length"), "string"); return;
    case kList:
      for (uint32_t n = in.count(4, "string list"); n > 0; --n) in.bytes(in.get<uint32_t>("item length"), "item");
      return;
    default: in.damaged("value kind");
  }
}
void skip_value(PayloadReader& in) { skip_value(in, in.get<uint8_t>("value kind")); }

// Whether a value of `kind` may stand in a field of `type` (null fits every type).
bool kind_fits(uint8_t kind, FieldType type) {
  switch (kind) {
    case kNull: return true;
    case kBool: return type == FieldType::boolean;
    case kInt: return type == FieldType::int64;
    case kFloat: return type == FieldType::float64;
    case kString: return type == FieldType::string;
    case kList: return type == FieldType::string_list;
    case kJson: return type == FieldType::json;
    default: return true;  // skip_value reports an unknown kind
  }
}

}  // namespace

size_t encoded_id_bytes(const std::string& id) { return 4 + id.size(); }

std::optional<uint64_t> binary_write_txn(std::string_view payload) {
  if (!is_binary_write(payload) || payload.size() < 9) return std::nullopt;
  uint64_t txn;
  std::memcpy(&txn, payload.data() + 1, sizeof(txn));
  return txn;
}

size_t encoded_record_bytes(const Record& r, const CollectionSchema& schema) {
  size_t n = 4 + r.id.size() + 4 + r.text.size() + 4 + 4 * r.vector.size() + 4;
  for (size_t i = 0; i < schema.fields.size(); ++i) n += i < r.values.size() ? value_bytes(r.values[i]) : 1;
  return n;
}

void encode_write(uint64_t txn, const std::vector<std::string>& deletes, const std::vector<Record>& records,
                  const CollectionSchema& schema, std::string& out) {
  size_t bytes = 1 + 8 + 4 + 4;
  for (const auto& id : deletes) bytes += encoded_id_bytes(id);
  for (const auto& r : records) bytes += encoded_record_bytes(r, schema);
  out.reserve(out.size() + bytes);
  put<uint8_t>(out, kBinaryWriteFormat);
  put<uint64_t>(out, txn);
  put<uint32_t>(out, static_cast<uint32_t>(deletes.size()));
  for (const auto& id : deletes) put_str(out, id);
  put<uint32_t>(out, static_cast<uint32_t>(records.size()));
  for (const auto& r : records) {
    put_str(out, r.id);
    put_str(out, r.text);
    put<uint32_t>(out, static_cast<uint32_t>(r.vector.size()));
    out.append(reinterpret_cast<const char*>(r.vector.data()), r.vector.size() * sizeof(float));
    put<uint32_t>(out, static_cast<uint32_t>(schema.fields.size()));
    for (size_t i = 0; i < schema.fields.size(); ++i) put_value(out, i < r.values.size() ? r.values[i] : Value{});
  }
}

void encode_values(const ValuesView& values, const CollectionSchema& schema, std::string& out) {
  for (size_t i = 0; i < schema.fields.size(); ++i) put_value(out, values[i]);
}

std::vector<Value> decode_values(std::string_view bytes, const CollectionSchema& schema) {
  PayloadReader in(bytes);
  std::vector<Value> values;
  values.reserve(schema.fields.size());
  for (const auto& f : schema.fields) values.push_back(get_value(in, f.type, f.name));
  if (!in.done()) in.damaged("row values: bytes after the last field");
  return values;
}

WritePayload decode_write(std::string_view payload, const CollectionSchema& schema) {
  PayloadReader in(payload);
  if (in.get<uint8_t>("format") != kBinaryWriteFormat) in.damaged("format byte");
  WritePayload w;
  w.txn = in.get<uint64_t>("transaction id");
  w.deletes.resize(in.count(4, "delete count"));
  for (auto& id : w.deletes) id = in.str("deleted id");
  w.records.resize(in.count(16, "record count"));
  for (auto& r : w.records) {
    r.id = in.str("record id");
    r.text = in.str("record text");
    const auto dim = in.get<uint32_t>("vector dimension");
    if (dim != schema.vector.dim)
      fail(ErrorCode::invalid_argument, "damaged log record: record '" + r.id + "' has a vector of dimension " +
                                            std::to_string(dim) + ", the collection " +
                                            std::to_string(schema.vector.dim));
    const auto raw = in.bytes(size_t{dim} * sizeof(float), "vector");
    r.vector.resize(dim);
    std::memcpy(r.vector.data(), raw.data(), raw.size());
    if (in.get<uint32_t>("field count") != schema.fields.size()) in.damaged("field count (not the schema's)");
    r.values.resize(schema.fields.size());
    for (size_t i = 0; i < schema.fields.size(); ++i)
      r.values[i] = get_value(in, schema.fields[i].type, schema.fields[i].name);
  }
  if (!in.done()) in.damaged("bytes after the last record");
  return w;
}

void check_values(std::string_view bytes, const CollectionSchema& schema, const std::vector<bool>& wanted,
                  std::vector<Value>& out) {
  out.resize(schema.fields.size());
  PayloadReader in(bytes);
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    const auto& f = schema.fields[i];
    if (i < wanted.size() && wanted[i]) {
      out[i] = get_value(in, f.type, f.name);
      continue;
    }
    out[i] = std::monostate{};
    const auto kind = in.get<uint8_t>("value kind");
    expect_kind(kind_fits(kind, f.type), kind, f.type, f.name);
    skip_value(in, kind);
  }
  if (!in.done()) in.damaged("row values: bytes after the last field");
}

Value decode_value_at(std::string_view bytes, const CollectionSchema& schema, size_t field) {
  if (field >= schema.fields.size()) fail(ErrorCode::internal, "decode_value_at: no field " + std::to_string(field));
  PayloadReader in(bytes);
  for (size_t i = 0; i < field; ++i) skip_value(in);
  return get_value(in, schema.fields[field].type, schema.fields[field].name);
}

}  // namespace eagle::store
