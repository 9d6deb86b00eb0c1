#include "eagle/ingest/tiles/tiles.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "eagle/core/error.h"
#include "eagle/ingest/formats.h"
#include "eagle/ingest/pdf/pdf_render.h"
#include "eagle/ingest/text_util.h"

namespace eagle::ingest {
namespace {

// The chunker's parent_section of a section whose top heading is `heading`.
std::string section_key(const std::string& heading) {
  std::string key = ascii_lower(collapse_whitespace(heading));
  std::replace(key.begin(), key.end(), ' ', '_');
  return key;
}

std::string block_text(const Block& b) {
  switch (b.kind) {
    case BlockKind::table:
    case BlockKind::figure:
      return collapse_whitespace(b.label + " " + b.caption + (b.kind == BlockKind::table ? " " + b.text : ""));
    default:
      return b.text;
  }
}

}  // namespace

void pdf_page_tiles(std::string_view pdf_bytes, const Article& article, const std::vector<nlohmann::json>& chunk_rows,
                    const TileOptions& options, const std::function<void(ImageTile&&)>& fn) {
  // Each page's text, section and first chunk, from the reader's blocks and the chunks.
  struct PageText {
    std::string text, section;
    bool has_section = false;
  };
  std::map<int, PageText> pages;
  for (const auto& b : article.blocks) {
    // A located figure is a tile of its own, found by its caption; the page is found
    // by the rest of its text (a caption question then finds the figure, not the page).
    if (b.page <= 0 || (b.kind == BlockKind::figure && b.has_box)) continue;
    auto& p = pages[b.page];
    if (!p.has_section && !b.headings.empty()) {
      p.section = section_key(b.headings[0]);
      p.has_section = true;
    }
    if (p.text.size() >= options.max_text_chars) continue;
    const std::string t = block_text(b);
    if (!t.empty()) p.text += (p.text.empty() ? "" : "\n") + t;
  }
  std::map<int, std::string> first_chunk;
  // The chunk holding each figure's caption, by page and label.
  std::map<std::pair<int, std::string>, std::string> caption_chunk;
  for (const auto& row : chunk_rows) {
    const std::string type = row.value("type", std::string());
    if (type == "section_summary") continue;
    const int page = row.value("page", 0);
    if (page > 0 && !first_chunk.count(page)) first_chunk[page] = row.value("id", std::string());
    if (type == "figure" && row.contains("metadata") && row["metadata"].contains("label"))
      caption_chunk.emplace(std::make_pair(page, row["metadata"]["label"].get<std::string>()), row.value("id", std::string()));
  }
  // The figures the reader located, by page.
  std::map<int, std::vector<const Block*>> figures;
  for (const auto& b : article.blocks)
    if (b.kind == BlockKind::figure && b.has_box && b.page > 0) figures[b.page].push_back(&b);
  for_each_pdf_page(pdf_bytes, article.source_uri.empty() ? article.file_name : article.source_uri, options.page_dpi,
                    options.limits, [&](RenderedPage&& rp) {
                      ImageTile t;
                      t.document_id = article.id;
                      t.image_id = article.id + "#page-" + std::to_string(rp.page);
                      t.chunk_type = "page";
                      t.page = rp.page;
                      if (auto it = pages.find(rp.page); it != pages.end()) {
                        t.text = truncate_at_word(it->second.text, options.max_text_chars);
                        t.parent_section = it->second.section;
                      }
                      if (auto it = first_chunk.find(rp.page); it != first_chunk.end()) t.source_chunk_id = it->second;
                      // A page without text (a full-page figure) is still found by its document.
                      if (t.text.empty()) t.text = article.title;
                      t.width = rp.image.width;
                      t.height = rp.image.height;
                      t.encoded = encode_jpeg(rp.image, options.jpeg_quality);
                      t.extension = "jpg";
                      fn(std::move(t));
                      // The page's figures: the region of graphic and caption, found by
                      // its caption's words, so a caption question returns its figure
                      // tile.
                      auto it = figures.find(rp.page);
                      if (it == figures.end()) return;
                      size_t n = 0;
                      for (const Block* b : it->second) {
                        ImageTile f;
                        f.document_id = article.id;
                        f.image_id = article.id + "#page-" + std::to_string(rp.page) + "-figure-" + std::to_string(++n);
                        f.chunk_type = "figure";
                        f.page = rp.page;
                        char pos[96];
                        std::snprintf(pos, sizeof pos, "%.4f,%.4f,%.4f,%.4f", b->box[0], b->box[1], b->box[2], b->box[3]);
                        f.position = pos;
                        f.text = truncate_at_word(collapse_whitespace(b->label + " " + b->caption), options.max_text_chars);
                        if (!b->headings.empty()) f.parent_section = section_key(b->headings[0]);
                        if (auto c = caption_chunk.find({rp.page, b->label}); c != caption_chunk.end())
                          f.source_chunk_id = c->second;
                        const RgbImage region = crop(rp.image, b->box[0], b->box[1], b->box[2], b->box[3]);
                        f.width = region.width;
                        f.height = region.height;
                        f.encoded = encode_jpeg(region, options.jpeg_quality);
                        f.extension = "jpg";
                        fn(std::move(f));
                      }
                    });
}

namespace {

// The file of a figure's graphic in `folder`, or empty: the name as given, then with
// each image extension in place of (or after) its own.
std::filesystem::path graphic_file(const std::filesystem::path& folder, const std::string& graphic) {
  namespace fs = std::filesystem;
  const fs::path name = fs::path(graphic).filename();
  if (name.empty() || name == "." || name == "..") return {};
  std::vector<fs::path> candidates{folder / name};
  // The name with an extension added first: "pone.0046493.g001" is "pone.0046493.g001.jpg".
  for (const char* ext : {".jpg", ".jpeg", ".png", ".JPG", ".PNG"}) candidates.push_back(folder / (name.string() + ext));
  for (const char* ext : {".jpg", ".jpeg", ".png", ".JPG", ".PNG"})
    candidates.push_back(folder / fs::path(name).replace_extension(ext));
  std::error_code ec;
  for (const auto& c : candidates)
    // A file of the folder that is a link out of it (to another tenant's upload, or
    // out of server.ingest_root) is not the figure's file.
    if (fs::is_regular_file(c, ec) && !leads_out_of(fs::directory_entry(c, ec), folder)) {
      const auto ext = ascii_lower(c.extension().string());
      if (ext == ".jpg" || ext == ".jpeg" || ext == ".png") return c;
    }
  return {};
}

}  // namespace

void figure_file_tiles(const std::filesystem::path& source, const Article& article,
                       const std::vector<nlohmann::json>& chunk_rows, const TileOptions& options,
                       const std::function<void(ImageTile&&)>& fn) {
  size_t n = 0;
  for (const auto& row : chunk_rows) {
    if (row.value("type", std::string()) != "figure" || !row.contains("metadata")) continue;
    const auto& meta = row["metadata"];
    const std::string graphic = meta.value("graphic", std::string());
    if (graphic.empty()) continue;
    const auto file = figure_file(source, graphic);
    if (file.empty()) continue;
    ImageTile t = image_file_tile(file, article.id, options);
    t.image_id = article.id + "#figure-" + std::to_string(++n);
    t.chunk_type = "figure";
    t.page = row.value("page", 0);
    t.text = truncate_at_word(row.value("text", std::string()), options.max_text_chars);
    t.parent_section = row.value("parent_section", std::string());
    t.source_chunk_id = row.value("id", std::string());
    fn(std::move(t));
  }
}

std::filesystem::path figure_file(const std::filesystem::path& source, const std::string& graphic) {
  return graphic_file(source.parent_path(), graphic);
}

ImageTile image_file_tile(const std::filesystem::path& file, const std::string& document_id, const TileOptions& options) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(ErrorCode::not_found, "cannot read " + file.string());
  std::ostringstream buf;
  buf << in.rdbuf();
  ImageTile t;
  t.encoded = std::move(buf).str();
  const ImageFormat format = sniff_image_format(t.encoded);
  const RgbImage image = decode_image(t.encoded, file.string(), options.limits);  // errors name the file
  t.extension = format == ImageFormat::png ? "png" : "jpg";
  t.width = image.width;
  t.height = image.height;
  t.document_id = document_id;
  t.image_id = document_id;
  t.chunk_type = "image";
  std::string words = file.stem().string();
  for (char& c : words)
    if (c == '-' || c == '_' || c == '.') c = ' ';
  t.text = collapse_whitespace(words);
  return t;
}

nlohmann::json tile_row(const ImageTile& tile, const std::string& kb_name, const std::string& source_type,
                        const std::optional<int>& year, const std::string& file_name, const std::string& document_name,
                        const std::string& source_uri) {
  nlohmann::json row = {{"id", tile.image_id},
                        {"text", tile.text},
                        {"document_id", tile.document_id},
                        {"chunk_type", tile.chunk_type},
                        {"type", "image"},
                        {"position", tile.position},
                        {"width", static_cast<int64_t>(tile.width)},
                        {"height", static_cast<int64_t>(tile.height)}};
  if (tile.page > 0) row["page"] = tile.page;
  if (!tile.parent_section.empty()) row["parent_section"] = tile.parent_section;
  if (!tile.source_chunk_id.empty()) row["source_chunk_id"] = tile.source_chunk_id;
  if (!kb_name.empty()) row["kb_name"] = kb_name;
  if (!source_type.empty()) row["source_type"] = source_type;
  if (year) row["year"] = *year;
  if (!file_name.empty()) row["file_name"] = file_name;
  if (!document_name.empty()) row["document_name"] = document_name;
  if (!source_uri.empty()) row["source_uri"] = source_uri;
  return row;
}

}  // namespace eagle::ingest
