// MCP and HTTP request bodies: the JSON-RPC message through the Streamable HTTP
// transport (both revisions' paths) and the stdio framing, and the POST /search body
// reader, over an Engine on an empty store. Every answer must be JSON-RPC shaped;
// nothing may escape.
#include <cstdlib>
#include <sstream>

#include "eagle/app/request_json.h"
#include "eagle/core/error.h"
#include "eagle/mcp/http_transport.h"
#include "eagle/mcp/stdio.h"
#include "fuzz_support.h"

using namespace eagle;
using nlohmann::json;

namespace {
app::Engine* engine = nullptr;
}

// The Engine is made before fuzzing starts, so that no input's time limit pays for its
// one-time set-up (converting the GloVe vectors takes seconds under ASan, more on a
// busy machine: CI fuzzes beside the test suite).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  app::Config cfg;
  cfg.data_dir = (fuzz::work_dir() / "store").string();
  engine = new app::Engine(cfg, app::StoreAccess::write, "fuzz");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static mcp::ToolSet tools(*engine, "core");
  static mcp::McpServer server(tools, mcp::eagle_server_info("core"), 1000);
  static mcp::HttpTransport http(server, 16, 60);
  const std::string body = fuzz::bytes(data, size);
  // The first byte picks the headers a client sent.
  const unsigned pick = size ? data[0] : 0;
  mcp::HttpRequest req;
  req.method = "POST";
  req.body = body;
  req.header = [pick](const std::string& name) -> std::string {
    if (name == "Content-Type") return "application/json";
    if (name == "MCP-Protocol-Version") return pick & 1 ? "2026-07-28" : (pick & 2 ? "2025-11-25" : "");
    if (name == "Mcp-Method") return pick & 4 ? "tools/call" : "";
    if (name == "Mcp-Name") return pick & 8 ? "core_retrieve_text" : "";
    if (name == "Mcp-Param-Kb-Name") return pick & 16 ? "=?base64?a2I=?=" : "";
    return "";
  };
  auto out = http.handle(req, {});
  if (!out.body.empty() && json::parse(out.body, nullptr, false).is_discarded()) std::abort();
  std::istringstream in(body);
  std::ostringstream replies;
  mcp::serve_stdio(server, in, replies, {});
  auto j = json::parse(body, nullptr, false);
  if (j.is_object()) {
    try {
      app::search_request_from_json(j, "core", {}, search::RetrievalRequest{}.top_k);
    } catch (const app::RequestError&) {
    }
  }
  return 0;
}
