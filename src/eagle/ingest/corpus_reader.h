#pragma once
// Readers for the inputs `eagle ingest` accepts: BEIR corpus.jsonl, plain JSONL
// records, and folders of .md/.txt files. A malformed record is reported with its
// file and line number; with skip_bad it is skipped and counted, otherwise reading
// stops with an eagle::Error before anything is written.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "eagle/core/document.h"

namespace eagle::ingest {

enum class InputFormat { auto_detect, beir, jsonl, folder };
InputFormat parse_input_format(const std::string& name);

struct ReadOptions {
  InputFormat format = InputFormat::auto_detect;
  bool skip_bad = false;
  // Invalid UTF-8 (in a file's text, a JSONL line or a file name) is an error naming
  // the file and byte offset (skippable with skip_bad); with repair_utf8 each invalid
  // sequence becomes U+FFFD instead.
  bool repair_utf8 = false;
  // A folder's .md files; false when the caller reads them itself (Engine::ingest reads
  // Markdown as a structured document: sections, summaries, tables).
  bool markdown_files = true;
  // Called every `progress_every` records read (0 = never).
  std::function<void(uint64_t records, uint64_t bytes, uint64_t total_bytes)> progress;
  uint64_t progress_every = 2000;
};

struct BadRecord {
  std::string file;
  uint64_t line;  // 1-based; 0 for a whole file
  std::string message;
};

struct ReadResult {
  std::vector<Document> documents;
  std::vector<BadRecord> skipped;
};

// Every document of `input` in memory, duplicate ids reported (or skipped).
ReadResult read_corpus(const std::filesystem::path& input, const ReadOptions& options);

// The same documents handed to `on_document` one at a time as they are read: memory
// stays bounded by one record (one file for .md/.txt) whatever the input's size. Bad
// records go to `skipped` (with skip_bad) or stop the read with an eagle::Error, as in
// read_corpus; duplicate ids are the caller's to find.
using DocumentFn = std::function<void(Document&&)>;
void stream_corpus(const std::filesystem::path& input, const ReadOptions& options, const DocumentFn& on_document,
                   std::vector<BadRecord>& skipped);

// The bytes stream_corpus will read from `input` (for progress; 0 when unknown).
uint64_t input_bytes(const std::filesystem::path& input);

// One JSONL record -> Document. Accepts "_id" or "id" (string or integer), "title",
// and "text" (or "contents"); other fields go to metadata. Throws eagle::Error.
Document parse_json_record(const std::string& line);

// Splits a Markdown file into one passage per heading section; the title carries
// the heading path ("Results / Efficacy").
std::vector<Document> split_markdown(const std::string& doc_id, const std::string& content);

}  // namespace eagle::ingest
