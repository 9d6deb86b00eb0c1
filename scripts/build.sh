#!/usr/bin/env bash
# Configures and builds Eagle into build/ (binaries in build/bin/):
#   bash scripts/build.sh          everything: `eagle`, the tests and the benchmarks
#   bash scripts/build.sh eagle    the `eagle` binary and its libraries alone (README
#                                  command (1): no GoogleTest or benchmark peers needed)
# Compiles through ccache when it is installed (its cache lives outside the checkout,
# see EAGLE_CCACHE in CMakeLists.txt), in unity batches (EAGLE_UNITY_BUILD).
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
case "$what" in
  all) options=(-DEAGLE_TESTS=ON -DEAGLE_BENCHMARKS=ON); targets=() ;;
  eagle) options=(-DEAGLE_TESTS=OFF -DEAGLE_BENCHMARKS=OFF); targets=(eagle) ;;
  *) echo "build: unknown target set '$what' (all | eagle)" >&2; exit 2 ;;
esac
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${options[@]}" >/dev/null
# Two cores: one compile job per core; more only thrashes memory on big units.
ninja -C build -j "${EAGLE_BUILD_JOBS:-2}" "${targets[@]}"
