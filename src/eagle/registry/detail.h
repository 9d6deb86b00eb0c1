#pragma once
// Helpers the two registry backends share; not part of the registry's interface.
#include <string>
#include <string_view>
#include <vector>

namespace eagle::registry::detail {

// Unicode simple lower-casing, code point by code point (utf8proc): the fold the
// SQLite backend stores beside each name so its LIKE matches like PostgreSQL's
// ILIKE under a UTF-8 locale (SQLite's own lower()/LIKE fold ASCII only).
// Input must be valid UTF-8 (the public methods check it).
std::string fold_case(std::string_view text);

// Sorts bytewise and drops duplicates (both backends return ids and collections in
// this order: SQLite's BINARY collation and PostgreSQL's COLLATE "C").
void sort_unique(std::vector<std::string>& values);

}  // namespace eagle::registry::detail
