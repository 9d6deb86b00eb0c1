#pragma once
// The biomedical chunker (seed biomed_chunk_transform): turns a parsed
// SPL label or a paper into chunk rows, nlohmann::json objects with every field of
// chunk_schema() (src/eagle/core/schema.cpp). Every chunk carries primary_drugs (seed
// chunker._primary_drugs_for_node: the zero-rescan entity boost at query time) and
// biomed_section (seed _SECTION_ALIASES: the regulatory rerank's section cues).
//
// Row fields:
//   id              deterministic, so re-ingest upserts: labels "<document_id>:s<section index>",
//                   split pieces "...#2", "#3"...; section summaries "<document_id>:s<i>:summary";
//                   papers "<id>:p<span index>" (+ "#2"...)
//   text            the section title (papers: paper title and heading) then the body piece;
//                   summaries: the section title, content_summary, then "Subsections: a; b; ..."
//   kb_name         ChunkOptions::kb_name
//   document_id     label document/id/@root; paper id
//   type            "text", or "section_summary" (the orchestrator's parent-document drill-down key)
//   level           label sections: depth + 1 (summaries: 1); papers: 1
//   page            null (labels and papers have no pages)
//   path            label section path ("5 WARNINGS AND PRECAUTIONS/5.1 Serious Infections");
//                   paper: the heading as written, else the section name
//   source_type     "label" / "paper"
//   year            effective-time year / the paper's year; null when unknown
//   chunk_type      "section", "section_summary"
//   parent_section  biomed_section of the top-level section the chunk belongs to (papers: the section)
//   source_chunk_id the chunk's own id (kept across collections for G32 cross-collection dedupe)
//   file_name       base name of the source file
//   document_name   label display title (title, else product name); paper title (else id)
//   source_uri      the label's path as parsed; the paper's source_uri
//   primary_drugs   list of lower-cased drug names (may be empty, never absent)
//   biomed_section  the section's canonical name
//   content_summary summaries: the first ~summary_chars of the section's Highlights excerpt,
//                   else of its text (own and nested); "" on other chunks
//   connect_to      summaries: the ids of every chunk under the section; null on other chunks
#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "eagle/biomed/ingest/spl.h"
#include "eagle/ingest/text_util.h"

namespace eagle::biomed {

// The caller's entity matcher: the drug names found in `text`, one entry per
// occurrence in text order (repeats are how frequency is counted).
using FindDrugs = std::function<std::vector<std::string>(std::string_view text)>;

struct ChunkOptions {
  std::string kb_name;
  size_t max_chars =
      1500;  // sections longer than this are split (bytes, at paragraph/sentence/word boundaries)
  size_t summary_chars = 200;  // content_summary length
  size_t max_paper_drugs = 3;  // primary_drugs of a paper
};

struct PaperInput {
  std::string id;  // document id (PMID, DOI, corpus _id); required
  std::string title;
  std::string text;  // abstract or body; split by split_paper_sections
  std::optional<int> year;
  std::string file_name;
  std::string source_uri;
  std::string default_section = "body";  // biomed_section of text under no known heading
};

// Label primary_drugs: lower-cased product names then generic names, de-duplicated,
// order kept.
std::vector<std::string> label_primary_drugs(const SplLabel& label);

// Paper primary_drugs: the drugs find_drugs finds in the title; when it finds none,
// the most frequent ones in the text (ties: first occurrence first). Lower-cased,
// de-duplicated, at most max_drugs. An empty find_drugs gives no drugs.
std::vector<std::string> paper_primary_drugs(const PaperInput& paper, const FindDrugs& find_drugs,
                                             size_t max_drugs = 3);

// One chunk per section with text (split pieces share its path and biomed_section),
// plus one section_summary per top-level section with any chunk under it, whose path
// is a prefix of its children's and whose connect_to lists them.
std::vector<nlohmann::json> chunk_label(const SplLabel& label, const ChunkOptions& options = {});

// One chunk per section span (split_paper_sections), long spans split like label
// sections. Throws eagle::Error (invalid_argument) when paper.id is empty.
std::vector<nlohmann::json> chunk_paper(const PaperInput& paper, const FindDrugs& find_drugs,
                                        const ChunkOptions& options = {});

}  // namespace eagle::biomed
