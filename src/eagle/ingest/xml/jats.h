#pragma once
// PMC JATS XML (.nxml) articles: front matter (title, authors, journal, year, DOI,
// PMID, PMCID, keywords), the abstract (structured or not; an author summary under
// its own title), body sections and subsections as heading paths, tables
// (<table-wrap>: label, caption, cells and footnotes, whole), figures (label, caption,
// the graphic's file name), the reference list, and each paragraph's
// <xref ref-type="fig|table"> citations. Floats kept apart (<floats-group>) are placed
// after the first paragraph that cites them.
#include <string>
#include <string_view>

#include "eagle/ingest/article/article.h"

namespace eagle::ingest {

// Throws eagle::Error (invalid_argument) naming `source` for malformed XML or a root
// other than <article>.
Article read_jats(std::string_view xml, std::string_view source, const std::string& document_id);

}  // namespace eagle::ingest
