# Ingest readers, included from the top-level CMakeLists.txt:
#   eagle_ingest  corpus readers (BEIR, JSONL, Markdown, text), the structured-document
#                 readers (JATS, PubMed, HTML via libxml2; PDF via poppler-cpp), the
#                 article chunker that turns their structure into chunk rows
#   eagle_image   images (PNG via libpng, JPEG via libjpeg-turbo; the dct-lowfreq-v1
#                 descriptor)
# Debian packages: libxml2-dev, libpoppler-cpp-dev, libssl-dev, libpng-dev, libjpeg62-turbo-dev.
find_package(LibXml2 REQUIRED)
find_package(OpenSSL REQUIRED)  # SHA-256 of ingested files (dedup)
find_package(PNG REQUIRED)
find_package(JPEG REQUIRED)
pkg_check_modules(POPPLER_CPP REQUIRED IMPORTED_TARGET poppler-cpp)
file(GLOB EAGLE_INGEST_SOURCES CONFIGURE_DEPENDS
     ${CMAKE_SOURCE_DIR}/src/eagle/ingest/*.cpp
     ${CMAKE_SOURCE_DIR}/src/eagle/ingest/article/*.cpp
     ${CMAKE_SOURCE_DIR}/src/eagle/ingest/xml/*.cpp
     ${CMAKE_SOURCE_DIR}/src/eagle/ingest/pdf/*.cpp
     ${CMAKE_SOURCE_DIR}/src/eagle/ingest/markdown/*.cpp
     ${CMAKE_SOURCE_DIR}/src/eagle/ingest/tiles/*.cpp)
add_library(eagle_ingest ${EAGLE_INGEST_SOURCES})
target_link_libraries(eagle_ingest PUBLIC eagle_core eagle_image nlohmann_json::nlohmann_json
                      PRIVATE LibXml2::LibXml2 PkgConfig::POPPLER_CPP OpenSSL::Crypto)
# Images on their own: the encoders (the embedded descriptor) need them without the
# document readers.
file(GLOB EAGLE_IMAGE_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/eagle/ingest/image/*.cpp)
add_library(eagle_image ${EAGLE_IMAGE_SOURCES})
target_link_libraries(eagle_image PUBLIC eagle_core PRIVATE PNG::PNG JPEG::JPEG)
