#!/usr/bin/env bash
# Installs every Debian package Eagle's build and tests need. Idempotent: packages
# already present are skipped, so a second run costs only the dpkg query.
set -euo pipefail

PACKAGES=(
  build-essential g++ cmake ninja-build pkg-config
  libxapian-dev libstemmer-dev libutf8proc-dev
  libyaml-cpp-dev nlohmann-json3-dev libsimdjson-dev libspdlog-dev libcli11-dev
  libsqlite3-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#PACKAGES[@]} Debian packages present"
fi
