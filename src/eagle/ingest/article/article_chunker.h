#pragma once
// Chunk rows from a structured document (seed retrieval.txt §1.2, §1.4, §4.5): the
// rows Engine::ingest writes for JATS, PubMed, PDF and HTML documents, with every
// field of chunk_schema() it can fill.
//
//   id               "<document_id>#<section slug>:<kind><content hash>", so an edit
//                    elsewhere in the document keeps it (a repeat gets "~2");
//                    summaries "<document_id>#<section slug>:summary"
//   text             paragraphs: the heading path (" / ") then the packed paragraphs;
//                    tables: "<label>. <caption>" then the rows; figures: label and caption;
//                    summaries: heading path, content_summary, "Subsections: a; b"
//   type             text | table | figure | caption | section_summary
//   chunk_type       paragraph | table | figure | caption | references | section_summary
//   path             "<root>/<heading>/<heading>" ('/' inside a heading becomes '-'); the
//                    root is the document's short name (file stem or PMID)
//   level            depth of the chunk's section (1 = top-level section, 0 = no heading)
//   page             first page of the chunk's text (PDF), else absent
//   section          the top-level heading (an abstract's sub-heading under "Abstract"),
//                    which the biomed plugin maps onto biomed_section
//   parent_section   the top-level heading, lower case, '_' for blanks
//   content_summary  summaries: the first summary_chars of the section's text
//   connect_to       edges {target, relation[, ref]}: "cites" a table or figure a paragraph
//                    cites (xref or written "Table 2", "Fig. 1B"); "parent" to the section's
//                    summary; "previous" / "next" between consecutive chunks of a section;
//                    a summary's "child" edges to its own chunks, "subsection" edges to its
//                    sub-sections' summaries, and "parent" to its parent section's summary;
//                    a caption row's "caption_of" edge to its table or figure
//   document_id, document_name (title, else id), source_type, year, file_name,
//   source_uri, kb_name, source_chunk_id (= id), metadata {format, journal, authors,
//   doi, pmid, pmcid, label, graphic}
// Tables and figures are never split; a paragraph longer than max_chars is split at
// sentence, then word boundaries (split_text).
//
// Caption rows (captions weighted as a field of their own): a table, or a figure with
// text beyond its caption, also gets a row "<id>:caption" of type caption holding
// "<label>. <caption>" alone. Its rows' numbers no longer lengthen the caption away in
// BM25 nor dilute it in the dense leg; the search returns the table or figure itself
// in the caption row's place (search/orchestrator.cpp, resolve_captions), and document
// views leave caption rows out.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eagle/ingest/article/article.h"

namespace eagle::ingest {

struct ArticleChunkOptions {
  std::string kb_name;
  size_t max_chars = 1500;    // paragraphs packed into chunks of about this many bytes (heading line in front)
  size_t summary_chars = 200;  // content_summary length
};

// Throws eagle::Error (invalid_argument) when the article has no id.
std::vector<nlohmann::json> chunk_article(const Article& article, const ArticleChunkOptions& options = {});

// The tables and figures a text cites by writing them out: "Table 2", "Tables 1 and 3",
// "Fig. 1B", "Figures 2-4", "Table S1" -> keys "table:2", "table:1", "table:3",
// "figure:1", ... (a figure's panel letter dropped). Exposed for tests.
std::vector<std::string> written_citations(std::string_view text);

// A caption that starts with its label: "Table 2: Response by arm", "Fig. 1B. Flow",
// "Table S1 Doses" -> label "Table 2" / "Figure 1B" / "Table S1" (the kind word normal-
// ised, the number as written) and `caption` the rest after ". : -" and blanks. False,
// nothing set, when `text` does not start with the kind's word ("Table", or "Figure",
// "Fig.", "Fig"), a blank and a number (an optional letter, then digits): "Tablet
// formulations" is no label. Shared by the Markdown and HTML readers.
bool split_caption_label(std::string_view text, BlockKind kind, std::string& label, std::string& caption);

// The key of a table's or figure's label ("Table 2" -> "table:2", "Fig. 1" ->
// "figure:1"), "" when the label has no number.
std::string label_key(std::string_view label, BlockKind kind);

}  // namespace eagle::ingest
