#pragma once
// The binary form of a write: what a log record holds (and what replay decodes).
// A JSON payload spelled every float of a vector as ~19 bytes of text and was parsed
// back through a DOM; this form keeps a vector as its stored bytes (f32) and every
// string with a length, so a record costs about its data and decodes with copies.
//
//   u8  kBinaryWriteFormat
//   u64 transaction id (0: not a transaction part)
//   u32 delete count, then each id:      u32 length | bytes
//   u32 record count, then each record:
//       u32 id length | id | u32 text length | text | u32 dim | dim x f32 (little-endian)
//       u32 field count (the schema's), then per field: u8 kind | value
//         kind 0 null; 1 bool (u8); 2 int64; 3 float64; 4 string (u32 length | bytes);
//         5 string list (u32 count, then strings); 6 JSON (its text, as a string)
//
// Every length is checked against the bytes left, so a damaged payload is an error
// (invalid_argument naming what was being read), never a crash or a huge allocation.
// Payloads written before this form (JSON text) are told apart by their first byte,
// which JSON and the hex transaction prefix never use.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "eagle/core/schema.h"
#include "eagle/store/record.h"

namespace eagle::store {

inline constexpr uint8_t kBinaryWriteFormat = 0xB1;

struct WritePayload {
  uint64_t txn = 0;
  std::vector<std::string> deletes;
  std::vector<Record> records;
};

// Appends the encoding of (txn, deletes, records) to `out`.
void encode_write(uint64_t txn, const std::vector<std::string>& deletes, const std::vector<Record>& records,
                  const CollectionSchema& schema, std::string& out);
// Bytes encode_write would append for one record (to cut transaction parts).
size_t encoded_record_bytes(const Record& r, const CollectionSchema& schema);
size_t encoded_id_bytes(const std::string& id);
// Whether a payload is in the binary form (else it is the older JSON text).
inline bool is_binary_write(std::string_view payload) {
  return !payload.empty() && static_cast<uint8_t>(payload[0]) == kBinaryWriteFormat;
}
// The transaction id of a binary payload (0: not a transaction part) without decoding
// the rest; nullopt when the payload is too short to hold one.
std::optional<uint64_t> binary_write_txn(std::string_view payload);
// Decodes a binary payload, checking each record's vector dimension and field count
// against the schema.
WritePayload decode_write(std::string_view payload, const CollectionSchema& schema);

// A row's scalar values (schema field order) in the log's binary value form: a
// segment file's rows keep them so (no JSON to print at a checkpoint or parse at an
// open). decode_values refuses bytes that do not hold one value of each field's type.
void encode_values(const ValuesView& values, const CollectionSchema& schema, std::string& out);
std::vector<Value> decode_values(std::string_view bytes, const CollectionSchema& schema);
// What decode_values checks (one value of each field's type, no bytes after the
// last), decoding into `out` only the fields with `wanted` set (the others are left
// null, their JSON not parsed): an open checks every row this way and decodes only the
// fields it indexes.
void check_values(std::string_view bytes, const CollectionSchema& schema, const std::vector<bool>& wanted,
                  std::vector<Value>& out);
// Field `field`'s value alone from encode_values' bytes (the fields before it are
// passed over, not decoded).
Value decode_value_at(std::string_view bytes, const CollectionSchema& schema, size_t field);

}  // namespace eagle::store
