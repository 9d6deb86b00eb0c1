#pragma once
// Scale corpora made from real passages, for tests and benchmarks that need more
// rows than a dataset has (a million-row ingest from the 20k BioASQ snippets).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "eagle/core/document.h"

namespace eagle::eval {

// Writes `rows` JSONL records ({"_id": "r<i>", "title": "", "text": ...}) to `file`.
// Rows below passages.size() are the passages themselves; each later row splices the
// first half of one passage's words onto the second half of another's (chosen by a
// fixed hash of the row number), so every row is a passage-sized text of the same
// vocabulary with its own vector: no row repeats another, and runs are reproducible.
// Returns the bytes written.
uint64_t write_spliced_corpus(const std::vector<Document>& passages, uint64_t rows,
                              const std::filesystem::path& file);

// The text of row `row` of that corpus (a test's oracle for what a row holds).
std::string spliced_text(const std::vector<Document>& passages, uint64_t row);

}  // namespace eagle::eval
