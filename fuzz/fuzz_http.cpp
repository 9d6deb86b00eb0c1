// The HTTP layer: a connection's raw bytes (request lines, headers, Content-Length and
// chunked bodies, multipart uploads, several requests kept alive) through the server's
// whole path in memory (Server::answer_bytes: Beast's request parser, then Host/Origin, the
// route, the token, the body limits and the handlers) over an Engine on an empty
// store. Whatever arrives, every answer is an HTTP/1.1 status line and none is a 500:
// bad input is the client's error, said as a 4xx.
#include <cstdlib>
#include <string>

#include "eagle/app/engine.h"
#include "eagle/server/http_server.h"
#include "fuzz_support.h"

using namespace eagle;

namespace {
app::Engine* engine = nullptr;
server::Server* http = nullptr;
}  // namespace

// Made before fuzzing starts, so no input's time limit pays for the Engine's set-up.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  app::Config cfg;
  cfg.data_dir = (fuzz::work_dir() / "store").string();
  engine = new app::Engine(cfg, app::StoreAccess::write, "fuzz");
  server::ServerOptions opts;
  opts.max_body_bytes = 64 << 10;  // small bodies: an ingest a fuzzer finds stays small
  opts.allowed_hosts = {"localhost", "127.0.0.1"};
  // An admin token and a scoped one (the seeds carry both, so the fuzzer starts past
  // the 401s); the ingest root is unset, so no input names a file to read.
  opts.tokens.push_back({"admin", "fuzz-admin-token", {}});
  opts.tokens.push_back({"tenant", "fuzz-tenant-token", {"ka"}});
  http = new server::Server(*engine, opts);
  http->set_ready(true);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string out = http->answer_bytes(fuzz::bytes(data, size));
  // Each answer in turn: its status line, then its body by Content-Length (a body may
  // quote the request, status-line look-alikes included). A streamed answer (no
  // length) is the connection's last.
  size_t at = 0;
  while (at < out.size()) {
    if (out.compare(at, 9, "HTTP/1.1 ") != 0) std::abort();
    const std::string status = out.substr(at + 9, 3);
    if (status[0] == '5' && status != "503") std::abort();  // 503: not ready, never a 500
    const size_t head_end = out.find("\r\n\r\n", at);
    if (head_end == std::string::npos) break;
    const std::string head = out.substr(at, head_end - at);
    const size_t cl = head.find("\r\nContent-Length: ");
    if (cl == std::string::npos) break;
    const size_t with_body = head_end + 4 + std::strtoull(head.c_str() + cl + 18, nullptr, 10);
    // An answer to HEAD has the length of the GET's body and no body.
    at = with_body >= out.size() || out.compare(with_body, 9, "HTTP/1.1 ") == 0 ? with_body : head_end + 4;
  }
  return 0;
}
