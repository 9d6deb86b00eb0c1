# The document registry: eagle_registry (SQLite and PostgreSQL
# backends behind DocumentRegistry) and test_registry, its one typed test suite.
# Included from the top-level CMakeLists.txt after eagle_core is defined:
#   include(src/eagle/registry/registry.cmake)
# Debian packages: libsqlite3-dev libpq-dev libutf8proc-dev libspdlog-dev (build), postgresql
# (scripts/with_postgres.sh starts a throwaway server for the PostgreSQL tests).
if(NOT EAGLE_ROOT)
  set(EAGLE_ROOT ${CMAKE_SOURCE_DIR})
endif()

find_package(PkgConfig REQUIRED)
find_package(SQLite3 REQUIRED)
if(NOT TARGET nlohmann_json::nlohmann_json)
  find_package(nlohmann_json REQUIRED)
endif()
if(NOT TARGET spdlog::spdlog)
  find_package(spdlog REQUIRED)
endif()
if(NOT TARGET PkgConfig::LIBPQ)
  pkg_check_modules(LIBPQ REQUIRED IMPORTED_TARGET libpq)
endif()
if(NOT TARGET PkgConfig::UTF8PROC)
  pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
endif()

add_library(eagle_registry
  ${EAGLE_ROOT}/src/eagle/registry/registry.cpp
  ${EAGLE_ROOT}/src/eagle/registry/sqlite_registry.cpp
  ${EAGLE_ROOT}/src/eagle/registry/postgres_registry.cpp)
target_include_directories(eagle_registry PUBLIC ${EAGLE_ROOT}/src)
target_link_libraries(eagle_registry PUBLIC eagle_core
                      PRIVATE SQLite::SQLite3 PkgConfig::LIBPQ PkgConfig::UTF8PROC nlohmann_json::nlohmann_json
                      spdlog::spdlog)

if(EAGLE_TESTS OR NOT DEFINED EAGLE_TESTS)
# The suite runs every test against both backends. The PostgreSQL half needs
# EAGLE_TEST_POSTGRES (a libpq conninfo) and FAILS without it; run ctest under
# scripts/with_postgres.sh, which starts a server and sets it.
find_package(GTest REQUIRED)
enable_testing()
add_executable(test_registry ${EAGLE_ROOT}/tests/registry/registry_test.cpp)
# libpq and SQLite directly too: the PostgreSQL fixture drops its per-test schema, and
# a test writes an old-version SQLite file by hand.
target_link_libraries(test_registry PRIVATE eagle_registry PkgConfig::LIBPQ SQLite::SQLite3 GTest::gtest_main GTest::gtest)
add_test(NAME test_registry COMMAND test_registry)
set_tests_properties(test_registry PROPERTIES TIMEOUT 600)
endif()
