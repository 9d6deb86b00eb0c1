#pragma once
// Image tiles: what the visual collection (eagle_visual) holds of a document, one row
// each (seed retrieval.txt §5.2, ImageNode): a PDF page rendered as an image, or an
// image file. A tile carries the text a text query finds it by (a page's text, an
// image file's name) and the encoded image the store keeps so a hit can be shown.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "eagle/ingest/article/article.h"
#include "eagle/ingest/image/image.h"

namespace eagle::ingest {

struct ImageTile {
  std::string image_id;        // the row id: "<document_id>#page-<n>" or the image file's document id
  std::string document_id;
  std::string chunk_type;      // "page" | "figure" | "tile" | "image" (an image file)
  int page = 0;                // 1-based; 0 when the source has no pages
  std::string position = "0,0,1,1";  // x0,y0,x1,y1 normalised to the page (a whole page: 0,0,1,1)
  std::string text;            // what the lexical leg indexes (page text, caption, file name)
  std::string parent_section;  // the section the tile starts in (the chunker's parent_section)
  std::string source_chunk_id; // the text chunk it belongs to (a page's first chunk)
  std::string encoded;         // the image bytes the store keeps (JPEG or PNG)
  std::string extension;       // "jpg" or "png", as `encoded` is
  uint32_t width = 0, height = 0;
};

struct TileOptions {
  double page_dpi = 72;      // PDF pages are rendered at this resolution
  int jpeg_quality = 85;     // a rendered page is kept as JPEG at this quality
  size_t max_text_chars = 8000;  // a page's indexed text is cut (at a word) beyond this
  ImageLimits limits;
};

// The tiles of a PDF whose text `article` holds (read by read_documents) and
// `chunk_rows` chunked (chunk_article), one page at a time through `fn`: each page
// rendered (its blocks' text, the section it starts in, its first chunk), then each
// figure the reader located on it (Block::box) cut out of the page, found by its
// label and caption, with the chunk holding its caption.
void pdf_page_tiles(std::string_view pdf_bytes, const Article& article, const std::vector<nlohmann::json>& chunk_rows,
                    const TileOptions& options, const std::function<void(ImageTile&&)>& fn);

// The figures of a JATS, HTML or Markdown document whose image files sit beside it
// (`source`): each figure chunk naming a graphic (JATS xlink:href, HTML img src,
// Markdown ![](...)) whose file is found
// in the document's folder, as named or with .jpg, .jpeg or .png in place of its
// extension (PMC packages ship "fig1.tif" named "fig1" and the file "fig1.jpg"), is a
// figure tile found by its label and caption, linked to that chunk. Only the file name
// of a graphic is used: a name cannot reach outside the folder. A figure without its
// file is left out (the usual case: an .nxml alone); a file that is not a readable PNG
// or JPEG is an error naming it.
void figure_file_tiles(const std::filesystem::path& source, const Article& article,
                       const std::vector<nlohmann::json>& chunk_rows, const TileOptions& options,
                       const std::function<void(ImageTile&&)>& fn);

// The file of a figure's graphic beside `source` (the rule of figure_file_tiles), or an
// empty path when there is none.
std::filesystem::path figure_file(const std::filesystem::path& source, const std::string& graphic);

// An image file as one tile: decoded to check it (errors name the file) and kept as
// its own bytes; its text is the file's name in words ("kaplan-meier_os.png" ->
// "kaplan meier os").
ImageTile image_file_tile(const std::filesystem::path& file, const std::string& document_id, const TileOptions& options);

// A tile's row for the visual collection (without its vector and stored image name),
// with the document's metadata: kb_name, source_type, year, file_name, document_name,
// source_uri.
nlohmann::json tile_row(const ImageTile& tile, const std::string& kb_name, const std::string& source_type,
                        const std::optional<int>& year, const std::string& file_name, const std::string& document_name,
                        const std::string& source_uri);

}  // namespace eagle::ingest
