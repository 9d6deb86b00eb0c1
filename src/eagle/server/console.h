#pragma once
// The web console (src/eagle/server/console/): plain HTML, CSS and JavaScript with no
// build step, embedded in the binary at build time and served at GET / and
// GET /console/{file}.
#include <string_view>
#include <vector>

namespace eagle::server {

struct EmbeddedFile {
  std::string_view path;  // relative to the console folder, e.g. "app.js"
  std::string_view bytes;
  std::string_view content_type;
};

const std::vector<EmbeddedFile>& console_files();

}  // namespace eagle::server
