#pragma once
// UTF-8 validity (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
// Text from outside is checked where it enters (ingest, the store's write path), so a
// bad byte is an error naming its file and offset instead of a JSON library's
// exception deep inside a write.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace eagle {

// The byte offset of the first invalid sequence, or nullopt when `s` is valid.
std::optional<size_t> first_invalid_utf8(std::string_view s);

// `s` with each maximal invalid subsequence replaced by U+FFFD (the Unicode
// standard's "substitution of maximal subparts", as browsers and ICU do).
std::string repair_utf8(std::string_view s);

}  // namespace eagle
