# The HTTP server (`eagle serve`): an event-driven listener on Boost.Beast (Debian
# libboost-dev, header-only) with a worker pool, the OpenAPI contract embedded from
# openapi.json at configure time (with the build's plugins in its enums).
set(EAGLE_OPENAPI_FILE ${CMAKE_SOURCE_DIR}/src/eagle/server/openapi.json)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${EAGLE_OPENAPI_FILE})
file(READ ${EAGLE_OPENAPI_FILE} EAGLE_OPENAPI_JSON)
# The build's plugins in the enums every schema refers to: the namespaces
# (PluginNamespace, PluginNamespaceOrAuto) and ingest formats (IngestFormat), in the
# order the engine lists them (plugin::namespaces(), Engine::ingest_formats()). The
# document served and the one tests validate against is build/generated/openapi.json.
function(eagle_json_array out)
  set(items "")
  foreach(v IN LISTS ARGN)
    if(items)
      string(APPEND items ", ")
    endif()
    string(APPEND items "\"${v}\"")
  endforeach()
  set(${out} "[${items}]" PARENT_SCOPE)
endfunction()
eagle_json_array(ns_enum core ${EAGLE_PLUGIN_LIST})
eagle_json_array(ns_auto_enum core ${EAGLE_PLUGIN_LIST} auto)
eagle_json_array(format_enum auto beir jsonl folder ${EAGLE_PLUGIN_FILE_KINDS} jats pubmed pdf html markdown
                 ${EAGLE_PLUGIN_FORMATS})
string(JSON EAGLE_OPENAPI_JSON SET "${EAGLE_OPENAPI_JSON}" components schemas PluginNamespace enum "${ns_enum}")
string(JSON EAGLE_OPENAPI_JSON SET "${EAGLE_OPENAPI_JSON}" components schemas PluginNamespaceOrAuto enum "${ns_auto_enum}")
string(JSON EAGLE_OPENAPI_JSON SET "${EAGLE_OPENAPI_JSON}" components schemas IngestFormat enum "${format_enum}")
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/generated/openapi.json CONTENT "${EAGLE_OPENAPI_JSON}\n")
configure_file(${CMAKE_SOURCE_DIR}/src/eagle/server/openapi_json.cpp.in
               ${CMAKE_BINARY_DIR}/generated/openapi_json.cpp @ONLY)
# The web console's files, embedded as a table (embed_files.cmake) at build time.
set(EAGLE_CONSOLE_DIR ${CMAKE_SOURCE_DIR}/src/eagle/server/console)
file(GLOB_RECURSE EAGLE_CONSOLE_FILES CONFIGURE_DEPENDS ${EAGLE_CONSOLE_DIR}/*)
add_custom_command(
  OUTPUT ${CMAKE_BINARY_DIR}/generated/console_files.cpp
  COMMAND ${CMAKE_COMMAND} -DDIR=${EAGLE_CONSOLE_DIR} -DOUT=${CMAKE_BINARY_DIR}/generated/console_files.cpp
          -P ${CMAKE_SOURCE_DIR}/src/eagle/server/embed_files.cmake
  DEPENDS ${EAGLE_CONSOLE_FILES} ${CMAKE_SOURCE_DIR}/src/eagle/server/embed_files.cmake
  COMMENT "Embedding the web console")
add_library(eagle_server src/eagle/server/http_server.cpp src/eagle/server/http_listener.cpp
            src/eagle/server/http_message.cpp src/eagle/server/metrics.cpp src/eagle/server/tasks.cpp
            ${CMAKE_BINARY_DIR}/generated/openapi_json.cpp ${CMAKE_BINARY_DIR}/generated/console_files.cpp)
target_link_libraries(eagle_server PUBLIC eagle_app eagle_mcp PRIVATE spdlog::spdlog)
