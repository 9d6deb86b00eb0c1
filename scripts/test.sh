#!/usr/bin/env bash
# README command (2): install dependencies, build, and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
# The registry suite runs on SQLite and on a real PostgreSQL: with_postgres.sh starts
# a throwaway server on a loopback port, runs the tests, and stops it.
cd build
bash ../scripts/with_postgres.sh ctest --output-on-failure --timeout 900
