// The server's own request parsing (server/http_message.h) on arbitrary bytes: a
// request target (path and query, percent-decoded) and a multipart/form-data body. The
// input's first line is the target and its second the Content-Type; the rest is the
// body. Whatever arrives, parse_target answers true or false and parse_multipart fills
// parts or refuses with a RequestError (a 400); every part it keeps is a slice of the
// body, and no decoded path or parameter holds a NUL byte.
#include <cstdlib>
#include <string>

#include "eagle/app/request_json.h"
#include "eagle/server/http_message.h"
#include "fuzz_support.h"

using namespace eagle;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in = fuzz::bytes(data, size);
  const size_t first = in.find('\n');
  const size_t second = first == std::string::npos ? std::string::npos : in.find('\n', first + 1);
  server::HttpRequest req;
  const std::string target = in.substr(0, first);
  if (server::parse_target(target, req)) {
    if (req.path.empty() || req.path[0] != '/' || req.path.find('\0') != std::string::npos) std::abort();
    for (const auto& [k, v] : req.params)
      if (k.find('\0') != std::string::npos || v.find('\0') != std::string::npos) std::abort();
  }
  if (second == std::string::npos) return 0;
  req.headers.emplace_back("Content-Type", in.substr(first + 1, second - first - 1));
  req.body = in.substr(second + 1);
  try {
    server::parse_multipart(req, 64);
  } catch (const app::RequestError& e) {
    if (e.status != 400) std::abort();
    return 0;
  }
  if (req.files.size() > 64) std::abort();
  for (const auto& [name, part] : req.files)
    if (name.empty() || name != part.name || req.body.find(part.content) == std::string::npos) std::abort();
  return 0;
}
