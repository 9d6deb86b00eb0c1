# The biomedical plugin, included from the top-level CMakeLists.txt:
#   eagle_biomed_vocab   vocabularies, the entity model, the linear-time matcher, binary cache
#   eagle_biomed_ingest  SPL label parsing, paper sections, compound cards (CHUNK subscribers' logic)
#   eagle_biomed         the hook subscribers (intent, route, expansion, supplement, reranks)
#   eagle_biomed_plugin  the plugin (plugin/plugin.h): settings, engine instance, ingest
#                        readers and routing, MCP tools, `eagle entities`
# Debian packages: libxml2-dev (SPL XML).
find_package(LibXml2 REQUIRED)
# Read at ingest (ingest.cpp): SPL drug labels (a file kind) and compound tables (a format).
list(APPEND EAGLE_PLUGIN_FILE_KINDS spl)
list(APPEND EAGLE_PLUGIN_FORMATS compounds)

file(GLOB EAGLE_BIOMED_VOCAB_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/eagle/biomed/vocab/*.cpp)
add_library(eagle_biomed_vocab ${EAGLE_BIOMED_VOCAB_SOURCES})
target_link_libraries(eagle_biomed_vocab PUBLIC eagle_core PRIVATE PkgConfig::UTF8PROC)

file(GLOB EAGLE_BIOMED_INGEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/eagle/biomed/ingest/*.cpp)
add_library(eagle_biomed_ingest ${EAGLE_BIOMED_INGEST_SOURCES})
target_link_libraries(eagle_biomed_ingest PUBLIC eagle_core eagle_ingest eagle_biomed_vocab nlohmann_json::nlohmann_json
                      PRIVATE LibXml2::LibXml2)

file(GLOB EAGLE_BIOMED_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/eagle/biomed/*.cpp)
add_library(eagle_biomed ${EAGLE_BIOMED_SOURCES})
target_link_libraries(eagle_biomed PUBLIC eagle_search eagle_chem eagle_biomed_vocab eagle_biomed_ingest
                      PRIVATE spdlog::spdlog)

file(GLOB EAGLE_BIOMED_PLUGIN_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/eagle/biomed/app/*.cpp)
add_library(eagle_biomed_plugin ${EAGLE_BIOMED_PLUGIN_SOURCES})
target_link_libraries(eagle_biomed_plugin PUBLIC eagle_biomed eagle_app eagle_mcp CLI11::CLI11 PRIVATE spdlog::spdlog)

if(EAGLE_BENCHMARKS)
  add_executable(bench_matcher ${CMAKE_SOURCE_DIR}/bench/matcher.cpp)
  target_link_libraries(bench_matcher PRIVATE eagle_build_paths eagle_biomed_vocab eagle_ingest nlohmann_json::nlohmann_json CLI11::CLI11)
endif()
