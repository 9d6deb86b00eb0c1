#pragma once
// JSON that comes from outside the process (a request body, a JSONL record, an MCP
// message, a configuration value) is parsed here, and only here:
// - nesting is bounded (kMaxJsonDepth) and checked before anything is built: a
//   document's copy, dump, comparison and MessagePack encoding recurse a level at a
//   time, and a record whose metadata nested 100,000 levels (a 200 KB body)
//   overflowed a server thread's stack;
// - an error names what was being read and the byte where it went wrong, and never
//   quotes the input (nlohmann's own messages do: a file read by mistake would be
//   echoed back to whoever asked).
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

namespace eagle {

// Objects and arrays nested deeper than this are refused. Biomedical records and
// JSON-RPC messages nest a handful of levels; 128 leaves room and keeps every
// recursive walk of a parsed document a few kilobytes of stack.
inline constexpr size_t kMaxJsonDepth = 128;

// The byte offset of the first '[' or '{' that opens a level deeper than `max_depth`
// (strings skipped, escapes honoured); nullopt when the text stays within it.
std::optional<size_t> json_too_deep(std::string_view text, size_t max_depth = kMaxJsonDepth);

// Parses `text`; throws eagle::Error (invalid_argument) naming `what` and the byte
// offset (from 0) for invalid JSON (a raw NUL byte included), nesting past kMaxJsonDepth, or a number out of range.
nlohmann::json parse_json_input(std::string_view text, std::string_view what);

}  // namespace eagle
