#pragma once
// A document with its structure, as the format readers (JATS, PubMed, PDF, HTML)
// produce it and the article chunker (article_chunker.h) turns into chunk rows:
// metadata from the format, then blocks in reading order, each under a heading path.
#include <array>
#include <optional>
#include <string>
#include <vector>

namespace eagle::ingest {

enum class BlockKind {
  paragraph,  // body text (a list or quote counts as one paragraph)
  table,      // a whole table: label, caption, cells, footnotes; never split
  figure,     // a figure's label and caption (the image itself is not text)
  reference,  // one entry of the reference list
};

struct Block {
  BlockKind kind = BlockKind::paragraph;
  // Section titles from the top ("Results", "Efficacy"); empty for text under no
  // heading. The chunker prefixes the document's root segment.
  std::vector<std::string> headings;
  std::string text;   // paragraph text; table rows (cells joined " | "); caption of a figure
  std::string label;  // tables and figures: "Table 2", "Figure 1" (as printed)
  std::string caption;  // tables and figures: the caption's title and text
  std::string anchor;   // tables and figures: the format's id for them (JATS @id), else ""
  // Paragraphs: the anchors of the tables and figures they cite (JATS xref rid); the
  // chunker also finds citations written out ("Table 2", "Fig. 1B") by label.
  std::vector<std::string> cites;
  std::string graphic;  // figures: the image file the format names (JATS xlink:href)
  int page = 0;         // 1-based page of a PDF; 0 when the format has no pages
  // Figures of a PDF: the region of graphic and caption on the page, as shares of
  // its width and height (x0, y0, x1, y1; y down), when the reader found it.
  std::array<double, 4> box{};
  bool has_box = false;
};

struct Article {
  std::string id;         // document_id: shared by every chunk of the document
  std::string title;
  std::vector<std::string> authors;  // "Given Surname", document order
  std::string journal;
  std::optional<int> year;
  std::string doi, pmid, pmcid;
  std::vector<std::string> tags;  // MeSH headings, keywords
  std::string source_type = "paper";
  std::string format;  // "jats", "pubmed", "pdf", "html", "markdown"
  std::string file_name;   // base name of the source file
  std::string source_uri;  // the path as given
  int pages = 0;           // PDF page count; 0 otherwise
  std::vector<Block> blocks;
};

}  // namespace eagle::ingest
