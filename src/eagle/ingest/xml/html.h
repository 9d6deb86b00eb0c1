#pragma once
// HTML pages with the structure rules of the other formats: <h1>..<h6> make the
// heading path, <p>/<li>/<blockquote>/<pre> paragraphs, <table> a whole table (its
// <caption>, or a preceding "Table N" line, as caption), <figure> a figure (its
// <figcaption>; the <img> file name), links to "#id" of a table or figure its
// citations. Navigation, scripts, styles, headers, footers and forms are skipped.
#include <string>
#include <string_view>

#include "eagle/ingest/article/article.h"

namespace eagle::ingest {

Article read_html(std::string_view html, std::string_view source, const std::string& document_id);

}  // namespace eagle::ingest
