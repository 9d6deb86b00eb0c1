#include "eagle/ingest/pdf/pdf_render.h"

#include "eagle/ingest/pdf/pdf_document.h"

#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-image.h>
#include <poppler-page-renderer.h>
#include <poppler-page.h>

#include <cmath>
#include <cstring>
#include <memory>

#include "eagle/core/error.h"

namespace eagle::ingest {

void for_each_pdf_page(std::string_view bytes, const std::string& source_name, double dpi, const ImageLimits& limits,
                       const std::function<void(RenderedPage&&)>& fn) {
  if (!(dpi >= 1 && dpi <= kMaxRenderDpi))
    fail(ErrorCode::invalid_argument, "render DPI must be in [1, " + std::to_string(static_cast<int>(kMaxRenderDpi)) + "]");
  if (!poppler::page_renderer::can_render())
    fail(ErrorCode::unavailable, "this poppler build cannot render pages (no Splash backend)");
  const std::unique_ptr<poppler::document> doc = open_pdf_document(bytes, source_name);

  poppler::page_renderer renderer;
  renderer.set_render_hint(poppler::page_renderer::antialiasing, true);
  renderer.set_render_hint(poppler::page_renderer::text_antialiasing, true);
  renderer.set_image_format(poppler::image::format_rgb24);
  for (int p = 0; p < doc->pages(); ++p) {
    std::unique_ptr<poppler::page> page(doc->create_page(p));
    if (!page) continue;
    // The size at this DPI, checked before poppler allocates it.
    const poppler::rectf r = page->page_rect();
    const double w = std::ceil(r.width() * dpi / 72.0), h = std::ceil(r.height() * dpi / 72.0);
    if (!(w >= 1 && h >= 1) || w * h > static_cast<double>(limits.max_pixels))
      fail(ErrorCode::invalid_argument, source_name + ": page " + std::to_string(p + 1) + " is " +
                                            std::to_string(static_cast<long long>(w)) + " x " +
                                            std::to_string(static_cast<long long>(h)) + " pixels at " +
                                            std::to_string(static_cast<int>(dpi)) + " DPI, more than " +
                                            std::to_string(limits.max_pixels) + " (ImageLimits::max_pixels)");
    const poppler::image img = renderer.render_page(page.get(), dpi, dpi);
    if (!img.is_valid() || img.format() != poppler::image::format_rgb24)
      fail(ErrorCode::invalid_argument, source_name + ": page " + std::to_string(p + 1) + " could not be rendered");
    RenderedPage rp;
    rp.page = p + 1;
    rp.image.width = static_cast<uint32_t>(img.width());
    rp.image.height = static_cast<uint32_t>(img.height());
    rp.image.pixels.resize(static_cast<size_t>(rp.image.width) * rp.image.height * 3);
    // Rows are padded to 4 bytes in poppler's buffer.
    for (uint32_t y = 0; y < rp.image.height; ++y)
      std::memcpy(rp.image.pixels.data() + static_cast<size_t>(y) * rp.image.width * 3,
                  img.const_data() + static_cast<size_t>(y) * img.bytes_per_row(), static_cast<size_t>(rp.image.width) * 3);
    fn(std::move(rp));
  }
}

std::vector<RenderedPage> render_pdf_pages(std::string_view bytes, const std::string& source_name, double dpi,
                                           const ImageLimits& limits) {
  std::vector<RenderedPage> out;
  for_each_pdf_page(bytes, source_name, dpi, limits, [&](RenderedPage&& p) { out.push_back(std::move(p)); });
  return out;
}

}  // namespace eagle::ingest
