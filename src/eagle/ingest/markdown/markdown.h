#pragma once
// Markdown files with the structure rules of the other formats (article_chunker.h):
// ATX headings ("#".."######", outside code fences) make the heading path, the
// file's first heading is its title when it is a level-1 heading before any text;
// blank-line separated blocks are paragraphs (a fenced code block is one); a GitHub
// pipe table is a whole table, its caption the "Table N..." line just before or after
// it; an image on its own line (![caption](file)) is a figure.
#include <string>
#include <string_view>

#include "eagle/ingest/article/article.h"

namespace eagle::ingest {

Article read_markdown(std::string_view text, std::string_view source, const std::string& document_id);

}  // namespace eagle::ingest
