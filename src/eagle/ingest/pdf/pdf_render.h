#pragma once
// A PDF's pages as images (poppler's Splash renderer through poppler-cpp), what the
// visual collection keeps as page tiles.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "eagle/ingest/image/image.h"

namespace eagle::ingest {

struct RenderedPage {
  int page = 0;  // 1-based, as chunk rows record it
  RgbImage image;
};

inline constexpr double kMaxRenderDpi = 600;

// Every page at `dpi` (1..600), antialiased, on white. Errors name the file: not a
// PDF, unreadable, encrypted, a page larger than `limits` at that DPI.
// The same, one page at a time: only one page image is held at once (an ingest of a
// long PDF keeps what it needs of each page and lets the pixels go).
void for_each_pdf_page(std::string_view bytes, const std::string& source_name, double dpi, const ImageLimits& limits,
                       const std::function<void(RenderedPage&&)>& fn);
std::vector<RenderedPage> render_pdf_pages(std::string_view bytes, const std::string& source_name, double dpi,
                                           const ImageLimits& limits = {});

}  // namespace eagle::ingest
