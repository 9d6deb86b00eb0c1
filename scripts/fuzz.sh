#!/usr/bin/env bash
# Fuzzing: builds the libFuzzer targets (fuzz/, in build-fuzz with clang, ASan + UBSan)
# and runs each for SECONDS (default 20; scripts/test.sh uses the default, run longer
# by hand), EAGLE_FUZZ_JOBS targets at a time (default 2, one per core).
#
#   bash scripts/fuzz.sh [SECONDS]        build, then run every target
#   bash scripts/fuzz.sh build            build only
#   bash scripts/fuzz.sh run [SECONDS]    run only (after a build)
#
# Each target starts from its committed seed corpus plus the corpus earlier runs grew,
# kept outside the checkout in $EAGLE_FUZZ_CORPUS_DIR (default
# ${XDG_CACHE_HOME:-~/.cache}/eagle/fuzz-corpus/<target>), so every run goes on from
# where the last one stopped instead of rediscovering the same inputs. Prints one JSON
# line per target with its executions and findings, and exits 1 if any target found a
# crash, a leak, undefined behaviour or an exception other than eagle::Error. Crash
# inputs are kept in build-fuzz/findings/.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=all
case "${1:-}" in
  build) mode=build; shift ;;
  run) mode=run; shift ;;
esac
seconds="${1:-20}"
jobs="${EAGLE_FUZZ_JOBS:-2}"
corpus_cache="${EAGLE_FUZZ_CORPUS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/eagle/fuzz-corpus}"

if [ "$mode" != run ]; then
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release -DEAGLE_FUZZ=ON \
    -DEAGLE_TESTS=OFF -DEAGLE_BENCHMARKS=OFF >/dev/null
  ninja -C build-fuzz -j "${EAGLE_BUILD_JOBS:-2}" fuzzers
fi
[ "$mode" = build ] && exit 0

work="$(mktemp -d /tmp/eagle-fuzz-XXXX)"
findings="build-fuzz/findings"
mkdir -p "$findings" "$corpus_cache"
trap 'rm -rf "$work"' EXIT

# One target: seeds + the kept corpus in, the grown corpus merged back out.
fuzz_one() {
  local bin="$1" t
  t="$(basename "$bin")"
  local kept="$corpus_cache/$t"
  mkdir -p "$work/$t/corpus" "$work/$t/tmp" "$kept"
  cp -r "fuzz/corpus/$t/." "$work/$t/corpus/"
  cp -r "$kept/." "$work/$t/corpus/" 2>/dev/null || true
  # The targets' own temporary files go under $work (TMPDIR); the corpus grows there,
  # never in the tree.
  local rc=0
  TMPDIR="$work/$t/tmp" LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp" "$bin" -max_total_time="$seconds" \
    -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$findings/$t-" "$work/$t/corpus" >"$work/$t/log" 2>&1 || rc=$?
  local runs found corpus
  runs="$(grep -o 'Done [0-9]* runs' "$work/$t/log" | grep -o '[0-9]*' || echo 0)"
  found="$(ls "$findings" | grep -c "^$t-" || true)"
  corpus="$(ls "$work/$t/corpus" | wc -l)"
  # Inputs are named by their SHA-1: copying adds the new ones and rewrites none.
  cp -r "$work/$t/corpus/." "$kept/"
  echo "{\"fuzz\": \"$t\", \"seconds\": $seconds, \"executions\": ${runs:-0}, \"corpus\": $corpus, \"findings\": $found, \"exit\": $rc}" \
    >"$work/$t/result"
  if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then tail -40 "$work/$t/log" >>"$work/$t/result"; return 1; fi
}

failed=0
running=0
pids=()
targets=(build-fuzz/bin/fuzz_*)
for bin in "${targets[@]}"; do
  fuzz_one "$bin" &
  pids+=($!)
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done
for bin in "${targets[@]}"; do cat "$work/$(basename "$bin")/result"; done
exit "$failed"
