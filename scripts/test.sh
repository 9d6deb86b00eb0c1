#!/usr/bin/env bash
# README command (2): install dependencies, build, and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
# The registry suite runs on SQLite and on a real PostgreSQL: with_postgres.sh starts
# a throwaway server on a loopback port, runs the tests, and stops it.
(cd build && bash ../scripts/with_postgres.sh ctest --output-on-failure --timeout 900)

# ThreadSanitizer, a separate target: the store, the concurrency tests and the server
# tests again in an instrumented build of their own (build-tsan). TSan reports fail
# the test binaries (halt_on_error) and the server tests check the server's log.
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Release -DEAGLE_TSAN=ON >/dev/null
ninja -C build-tsan -j "${EAGLE_BUILD_JOBS:-2}" eagle test_store test_concurrency test_server test_mcp_clients
(cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  ctest --output-on-failure --timeout 900 -R '^(test_store|test_concurrency|test_server|test_mcp_clients)$')

# Fuzzing: every parser of outside input under libFuzzer with ASan + UBSan (clang,
# build-fuzz), 20 s per target; any finding fails the run (docs/fuzzing.md).
bash scripts/fuzz.sh "${EAGLE_FUZZ_SECONDS:-20}"
