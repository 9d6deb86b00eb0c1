# Ingest readers, included from the top-level CMakeLists.txt:
#   eagle_ingest  corpus readers (BEIR, JSONL, Markdown, text), the structured-document
#                 readers (JATS, PubMed, HTML via libxml2; PDF via poppler-cpp) and the
#                 article chunker that turns their structure into chunk rows.
# Debian packages: libxml2-dev, libpoppler-cpp-dev, libssl-dev.
find_package(LibXml2 REQUIRED)
find_package(OpenSSL REQUIRED)  # SHA-256 of ingested files (dedup)
pkg_check_modules(POPPLER_CPP REQUIRED IMPORTED_TARGET poppler-cpp)
file(GLOB EAGLE_INGEST_SOURCES CONFIGURE_DEPENDS
     ${CMAKE_SOURCE_DIR}/src/eagle/ingest/*.cpp
     ${CMAKE_SOURCE_DIR}/src/eagle/ingest/article/*.cpp
     ${CMAKE_SOURCE_DIR}/src/eagle/ingest/xml/*.cpp
     ${CMAKE_SOURCE_DIR}/src/eagle/ingest/pdf/*.cpp
     ${CMAKE_SOURCE_DIR}/src/eagle/ingest/markdown/*.cpp)
add_library(eagle_ingest ${EAGLE_INGEST_SOURCES})
target_link_libraries(eagle_ingest PUBLIC eagle_core nlohmann_json::nlohmann_json
                      PRIVATE LibXml2::LibXml2 PkgConfig::POPPLER_CPP OpenSSL::Crypto)
