#pragma once
// Rows for the store benchmarks: BioASQ-made passages (eval/synthetic_corpus.h,
// spliced to any count) with their GloVe vectors, computed once before anything is
// timed, and a document id every `rows_per_document` rows.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "eagle/core/schema.h"
#include "eagle/encode/encoder.h"
#include "eagle/eval/synthetic_corpus.h"
#include "eagle/ingest/corpus_reader.h"
#include "eagle/store/record.h"

namespace eagle::bench {

// A BEIR folder's passages (its corpus.jsonl).
inline std::vector<Document> read_passages(const std::string& beir) {
  ingest::ReadOptions ro;
  ro.format = ingest::InputFormat::beir;
  return ingest::read_corpus(beir, ro).documents;
}

// An empty folder for a benchmark's stores: `work` if given, else a temporary one
// named after the benchmark and the process.
inline std::filesystem::path fresh_work_folder(const std::string& work, const std::string& bench) {
  const auto root = work.empty() ? std::filesystem::temp_directory_path() /
                                       ("eagle_bench_" + bench + "_" + std::to_string(::getpid()))
                                 : std::filesystem::path(work);
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  return root;
}

inline std::vector<store::Record> passage_rows(const std::vector<Document>& passages, uint64_t rows,
                                               encode::Encoder& encoder, const CollectionSchema& schema,
                                               uint64_t rows_per_document = 1) {
  const auto doc_field = *schema.field_index("document_id");
  std::vector<store::Record> records(rows);
  for (uint64_t start = 0; start < rows; start += 1024) {
    const uint64_t end = std::min<uint64_t>(rows, start + 1024);
    std::vector<std::string> texts;
    for (uint64_t i = start; i < end; ++i) texts.push_back(eval::spliced_text(passages, i));
    auto vecs = encoder.encode(texts, encode::EncodeMode::document);
    for (uint64_t i = start; i < end; ++i) {
      auto& r = records[i];
      r.id = "r" + std::to_string(i);
      r.text = std::move(texts[i - start]);
      r.vector = std::move(vecs[i - start]);
      r.values.assign(schema.fields.size(), std::monostate{});
      r.values[doc_field] = rows_per_document == 1 ? r.id : "doc" + std::to_string(i / rows_per_document);
    }
  }
  return records;
}

}  // namespace eagle::bench
