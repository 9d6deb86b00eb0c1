#include "eagle/mcp/stdio.h"

#include <spdlog/spdlog.h>

#include <istream>
#include <ostream>

#include "eagle/core/json_input.h"

namespace eagle::mcp {
using nlohmann::json;

namespace {

// Reads one line into `line`; false at end of input. A line past the limit is
// consumed to its end and reported as too long.
bool read_line(std::istream& in, std::string& line, bool& too_long) {
  line.clear();
  too_long = false;
  std::istream::sentry ok(in, true);
  if (!ok) return false;
  std::streambuf* buf = in.rdbuf();
  bool any = false;
  for (;;) {
    int c = buf->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      return any;
    }
    any = true;
    if (c == '\n') return true;
    if (line.size() < kMaxStdioLineBytes) line.push_back(static_cast<char>(c));
    else too_long = true;
  }
}

}  // namespace

size_t serve_stdio(const McpServer& server, std::istream& in, std::ostream& out, const ToolContext& ctx) {
  Session session;
  std::string line;
  bool too_long = false;
  size_t handled = 0;
  while (read_line(in, line, too_long)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    ++handled;
    json reply;
    if (too_long) {
      reply = McpServer::error(nullptr, kInvalidRequest,
                               "message longer than " + std::to_string(kMaxStdioLineBytes) + " bytes");
    } else {
      json msg = json_too_deep(line) ? json(json::value_t::discarded) : json::parse(line, nullptr, false);
      if (msg.is_discarded()) {
        reply = McpServer::error(nullptr, kParseError, "Parse error: not valid JSON");
      } else if (msg.is_array()) {
        reply = McpServer::error(nullptr, kInvalidRequest, "JSON-RPC batches are not supported");
      } else {
        try {
          auto r = server.handle(msg, &session, ctx);
          if (!r.message) continue;
          reply = std::move(*r.message);
        } catch (const std::exception& e) {
          // A bug must not end the connection: say so, log the detail, go on.
          spdlog::error("mcp: {}", e.what());
          reply = McpServer::error(McpServer::request_id(msg), kInternalError, "internal error (see the server log)");
        }
      }
    }
    out << reply.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
    out.flush();
  }
  return handled;
}

}  // namespace eagle::mcp
