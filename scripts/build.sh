#!/usr/bin/env bash
# Configures and builds Eagle into build/ (binaries in build/bin/).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
# Two cores: one compile job per core; more only thrashes memory on big units.
ninja -C build -j "${EAGLE_BUILD_JOBS:-2}"
