#pragma once
// PubMed XML (<PubmedArticleSet>, as efetch and the baseline files give it): one
// document per <PubmedArticle>, its id the PMID; title, abstract sections (the
// AbstractText labels as headings), journal, year, DOI, PMCID, authors, and the MeSH
// descriptors and keywords as tags. source_type "abstract".
#include <string_view>
#include <vector>

#include "eagle/ingest/article/article.h"

namespace eagle::ingest {

// Throws eagle::Error (invalid_argument) naming `source` for malformed XML, a root
// other than <PubmedArticleSet>, or an article without a PMID.
std::vector<Article> read_pubmed(std::string_view xml, std::string_view source);

}  // namespace eagle::ingest
