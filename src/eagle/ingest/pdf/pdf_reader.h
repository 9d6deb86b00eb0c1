#pragma once
// PDF papers -> Article (article.h), read with poppler-cpp's word boxes
// (page::text_list with fonts). A PDF has no structure, only positioned words, so
// the reader rebuilds it with layout heuristics, in this order:
//
// 1. Words -> fragments. Poppler lists words line by line; consecutive words on one
//    baseline with a gap under `cell_gap_em` font sizes form a fragment (a run of
//    text; in a table, one cell). Rotated words (margin stamps) are skipped.
// 2. Running headers and footers. Fragments in the top/bottom band of the page
//    (`header_band`, `footer_band`) are dropped when they are a page number
//    ("7", "Page 3 of 10", "- 7 -", "iv") or when the same text, digits ignored,
//    appears in that band on at least `repeated_min_fraction` of the pages.
// 3. Columns. Per page, the gutter is the x (searched in the middle band of the
//    page) crossed by the fewest fragments; the page is two-column when each side
//    holds at least `min_column_lines` fragments that fill most of their column and
//    at most `max_crossing_fraction` of the fragments cross the gutter. Fragments
//    are grouped into physical rows; a row is full-width when a fragment crosses the
//    gutter or when it looks like a table row spanning the page (3+ cells on both
//    sides, none of them wide, the right side not at the right column's edge).
//    Runs of full-width rows are read top down; between them the left column is
//    read before the right one, so a title and abstract spanning the page come
//    before the two columns below them.
//    Before that, a sidebar (affiliations, correspondence set in a narrow strip at
//    the left edge: the fragments up to the first vertical gap no fragment crosses,
//    `min_sidebar_em` font sizes to `max_sidebar_ratio` of the text width wide, at
//    least `min_column_lines` of them, set smaller than the text `sidebar_gap_em`
//    font sizes to their right) is taken apart and read first, on its own.
// 4. Lines: the fragments of a row on one side, left to right; the fragments are
//    the line's cells (used for tables).
// 5. Body font size: the most common size weighted by characters; the usual line
//    spacing: the median baseline step divided by the font size.
// 6. Title: the largest text on page 1 (outside the header band) when it is at
//    least `title_size_ratio` times the body size, else the info dictionary's Title
//    when it looks like a title (several words, not a file name).
// 7. Each line, in reading order, is classified:
//    - figure caption: starts "Figure N" / "Fig. N" and starts a block (gap before,
//      top of a column) or the label is followed by punctuation or set apart by font;
//      continuation lines are those that follow a full-width caption line, or, for
//      a caption set in a narrow box beside its figure, the narrow lines starting
//      where the caption starts;
//    - table caption: the same with "Table N"; the table body is the lines after the
//      caption that look like a table (several cells, short, or smaller than body
//      text) until prose (a wide body-size line of one cell), a heading, a caption
//      or a new page (a section word set smaller than the body, "Summary" over
//      "estimate" in a header, is a cell). Rows are cells joined " | ". A caption set in a column over a
//      table spanning the page finds its body in the full-width rows right below it.
//    - heading: a short line (`max_heading_words`) that is numbered ("2.1 Methods",
//      level = depth of the number), larger than body text (level 1), a known
//      section word on its own line (Abstract, Methods, Results, ..., level 1), or
//      bold (level 2 under the current level-1 heading, level 1 before any).
//      Consecutive heading lines of one style are one heading.
//    - after a References / Bibliography / Literature Cited heading everything goes
//      under {"References"}, split into entries by numbering ("1.", "[1]", "1 ") or
//      by hanging indent; when neither is found the paragraphs are kept as paragraphs.
//    - otherwise body text, grouped into paragraphs: a new paragraph starts after a
//      vertical gap over `paragraph_gap_ratio` times the usual spacing, at an
//      indented line (`indent_em`), after a short line ending a sentence, at a font
//      size change, or at a column/page change after a line ending a sentence.
// 8. Text: words joined with single spaces, ligatures (ﬁ ﬂ ﬀ ﬃ ﬄ ﬅ ﬆ) expanded,
//    whitespace collapsed. Hyphenation at a line end is repaired: "treat-" + "ment"
//    -> "treatment" when a letter precedes the hyphen and the next line starts with
//    a lower-case letter, unless the hyphenated word also occurs unbroken in the
//    document ("long-term"); before an upper-case letter or a digit the hyphen is
//    kept ("non-" + "Hodgkin" -> "non-Hodgkin", "COVID-" + "19" -> "COVID-19").
//
// Best effort: scanned PDFs (no text layer) give an article without blocks; tables
// whose cells are not separated by wide gaps come out as plain lines; figures' inner
// text (axis labels) may appear as short paragraphs.
#include <filesystem>
#include <string>
#include <string_view>

#include "eagle/ingest/article/article.h"

namespace eagle::ingest {

struct PdfOptions {
  // Top / bottom share of the page height where running headers, footers and page
  // numbers are looked for.
  double header_band = 0.08;
  double footer_band = 0.08;
  // A header/footer text (digits ignored) repeated on at least this share of the
  // pages (and on 2 pages at least) is dropped.
  double repeated_min_fraction = 0.3;
  // A gap between words wider than this many font sizes separates fragments (table
  // cells, the two columns when poppler runs them together).
  double cell_gap_em = 1.0;
  // Gutter search range, as shares of the page width.
  double gutter_search_from = 0.3;
  double gutter_search_to = 0.7;
  // Two-column page: each side has at least this many fragments ...
  int min_column_lines = 5;
  // ... at least this share of the column's width wide ...
  double column_fill_ratio = 0.6;
  // ... and at most this share of the page's fragments crosses the gutter.
  double max_crossing_fraction = 0.5;
  // A sidebar (step 3): a strip at the left edge at most this share of the text
  // width, set apart from the text by at least this many font sizes.
  double max_sidebar_ratio = 0.25;
  double sidebar_gap_em = 1.0;
  double min_sidebar_em = 6.0;  // ... and at least this many font sizes wide
  // A fragment at least this share of its column's width is "wide" (text, not a cell).
  double wide_fragment_ratio = 0.6;
  // Headings: a line at least this many times the body size is a (level-1) heading.
  double heading_size_ratio = 1.12;
  // Headings are at most this many words.
  int max_heading_words = 15;
  // A line is bold when at least this share of its characters is in a bold font
  // (name containing Bold, Black, Heavy, Semibold, Demi, or ending ".B").
  double bold_char_fraction = 0.8;
  // A short line in another font than the body text's, followed by body text, is a
  // (bold-like) heading when its size is at least this share of the body size.
  double other_font_min_size_ratio = 0.85;
  // Title: the largest text on page 1 when at least this many times the body size.
  double title_size_ratio = 1.15;
  // New paragraph after a baseline step over this many times the usual step.
  double paragraph_gap_ratio = 1.35;
  // A line starting this many font sizes right of its column's left edge is indented.
  double indent_em = 0.8;
  // A line ending this many font sizes before the column's right edge is short (the
  // last line of a paragraph, when it ends a sentence; a caption line that wraps
  // reaches the edge).
  double short_line_em = 2.0;
  // Two lines differ in size when their sizes differ by more than this share.
  double size_tolerance = 0.08;
  // Tables: a body-size line of one cell at least this share of the column width is
  // prose and ends the table.
  double table_prose_width_ratio = 0.75;
  // Tables end at a vertical gap over this many usual line steps.
  double table_max_gap_ratio = 4.0;
  // A figure's graphic (between its caption and the prose above or below it) is at
  // least this share of the page's height; less above the caption, it is looked for
  // below (a caption set above its figure).
  double figure_min_height = 0.05;
  // Reference lists: numbered when at least this share of the lines starts with a
  // number; hanging indent when the share of indented lines is between these.
  double numbered_refs_min_fraction = 0.12;
  double hanging_indent_min_fraction = 0.2;
  double hanging_indent_max_fraction = 0.9;
};

// Reads the PDF at `file`. Throws eagle::Error: not_found when the file does not
// exist, invalid_argument (naming the file) for an unreadable, encrypted or non-PDF
// input.
Article read_pdf(const std::filesystem::path& file, const std::string& document_id,
                 const PdfOptions& options = {});

// The same for PDF bytes in memory; `source_name` names the input in errors and
// becomes source_uri (its base name file_name).
Article read_pdf_bytes(std::string_view bytes, const std::string& source_name,
                       const std::string& document_id, const PdfOptions& options = {});

}  // namespace eagle::ingest
