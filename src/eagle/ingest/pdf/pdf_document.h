#pragma once
// Opening a PDF with poppler-cpp, shared by the text reader and the page renderer:
// the same checks and the same errors naming the file (not a PDF, unreadable,
// encrypted), and poppler's own error output silenced once per process.
#include <poppler-document.h>

#include <memory>
#include <string>
#include <string_view>

namespace eagle::ingest {

std::unique_ptr<poppler::document> open_pdf_document(std::string_view bytes, const std::string& source_name);

}  // namespace eagle::ingest
