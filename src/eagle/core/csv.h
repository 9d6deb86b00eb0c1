#pragma once
// RFC 4180 CSV reading: quoted fields with doubled quotes and embedded commas or
// newlines. Used for vocabularies and SMILES tables.
#include <istream>
#include <string>
#include <vector>

namespace eagle {

// Reads one record into `fields`; returns false at end of input. `line` is advanced
// by the number of physical lines consumed (for error messages).
bool read_csv_record(std::istream& in, std::vector<std::string>& fields, size_t& line, char sep = ',');

}  // namespace eagle
