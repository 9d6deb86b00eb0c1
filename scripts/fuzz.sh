#!/usr/bin/env bash
# Fuzzing: builds the libFuzzer targets (fuzz/, in build-fuzz with clang, ASan + UBSan)
# and runs each for SECONDS (default 20; scripts/test.sh uses the default, run longer
# by hand) from its committed seed corpus. Prints one JSON line per target with its
# executions and findings, and exits 1 if any target found a crash, a leak, undefined
# behaviour or an exception other than eagle::Error. Crash inputs are kept in
# build-fuzz/findings/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release -DEAGLE_FUZZ=ON >/dev/null
ninja -C build-fuzz -j "${EAGLE_BUILD_JOBS:-2}" fuzzers
work="$(mktemp -d /tmp/eagle-fuzz-XXXX)"
findings="build-fuzz/findings"
mkdir -p "$findings"
trap 'rm -rf "$work"' EXIT
failed=0
for bin in build-fuzz/bin/fuzz_*; do
  t="$(basename "$bin")"
  mkdir -p "$work/$t/corpus" "$work/$t/tmp"
  cp -r "fuzz/corpus/$t/." "$work/$t/corpus/"
  # The targets' own temporary files go under $work (TMPDIR); the corpus grows there,
  # never in the tree.
  set +e
  TMPDIR="$work/$t/tmp" LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp" "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="$findings/$t-" "$work/$t/corpus" >"$work/$t/log" 2>&1
  rc=$?
  set -e
  runs="$(grep -o 'Done [0-9]* runs' "$work/$t/log" | grep -o '[0-9]*' || echo 0)"
  found="$(ls "$findings" | grep -c "^$t-" || true)"
  corpus="$(ls "$work/$t/corpus" | wc -l)"
  echo "{\"fuzz\": \"$t\", \"seconds\": $seconds, \"executions\": ${runs:-0}, \"corpus\": $corpus, \"findings\": $found, \"exit\": $rc}"
  if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
    failed=1
    tail -40 "$work/$t/log"
  fi
done
exit "$failed"
