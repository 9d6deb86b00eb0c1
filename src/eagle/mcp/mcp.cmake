# MCP (Model Context Protocol): the tools over the Engine, the protocol (revisions
# 2025-11-25 and 2026-07-28), and its stdio and Streamable HTTP transports.
add_library(eagle_mcp src/eagle/mcp/json_schema.cpp src/eagle/mcp/tools.cpp src/eagle/mcp/protocol.cpp
            src/eagle/mcp/stdio.cpp src/eagle/mcp/http_transport.cpp)
target_link_libraries(eagle_mcp PUBLIC eagle_app PRIVATE spdlog::spdlog)
