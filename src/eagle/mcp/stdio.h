#pragma once
// The stdio transport (`eagle mcp`): newline-delimited JSON-RPC messages on stdin,
// one response line per request on stdout, nothing else on stdout (logs go to
// stderr). The connection is one session.
#include <iosfwd>

#include "eagle/mcp/protocol.h"
#include "eagle/search/orchestrator.h"

namespace eagle::mcp {

// A line longer than this is refused (-32600) and skipped, never buffered whole. It
// fits the largest query image core_retrieve_visual takes (kMaxQueryImageBytes as
// Base64) plus 1 MiB for the rest of the message.
inline constexpr size_t kMaxStdioLineBytes = (search::kMaxQueryImageBytes + 2) / 3 * 4 + (1u << 20);

// Serves until end of input; returns the number of messages handled.
size_t serve_stdio(const McpServer& server, std::istream& in, std::ostream& out, const ToolContext& ctx);

}  // namespace eagle::mcp
