# The HTTP server (`eagle serve`): cpp-httplib (Debian libcpp-httplib-dev) on a
# worker pool, the OpenAPI contract embedded from openapi.json at configure time.
set(EAGLE_OPENAPI_FILE ${CMAKE_SOURCE_DIR}/src/eagle/server/openapi.json)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${EAGLE_OPENAPI_FILE})
file(READ ${EAGLE_OPENAPI_FILE} EAGLE_OPENAPI_JSON)
configure_file(${CMAKE_SOURCE_DIR}/src/eagle/server/openapi_json.cpp.in
               ${CMAKE_BINARY_DIR}/generated/openapi_json.cpp @ONLY)
add_library(eagle_server src/eagle/server/http_server.cpp src/eagle/server/metrics.cpp src/eagle/server/tasks.cpp
            ${CMAKE_BINARY_DIR}/generated/openapi_json.cpp)
target_link_libraries(eagle_server PUBLIC eagle_app PRIVATE PkgConfig::HTTPLIB spdlog::spdlog)
