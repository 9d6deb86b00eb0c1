#!/usr/bin/env bash
# README command (2): install dependencies, build, and run the whole test suite (what
# CI runs). Stages, each timed:
#   setup        scripts/setup.sh test (Debian and npm packages, idempotent)
#   lint         no function of src/ over 150 lines (scripts/function_lengths.py)
#   build        scripts/build.sh (everything, through ccache)
#   fuzz_build   build-fuzz: the libFuzzer targets (clang, ASan + UBSan)
#   test         the main suite, ctest -j2, on SQLite and a throwaway PostgreSQL
#   fuzz         every fuzz target for 20 s, one at a time, beside `test`
#   tsan_build   build-tsan: the libraries, `eagle` and the threaded test programs (and test_core for read_ahead)
#   tsan_test    the test cases that start threads, under ThreadSanitizer (label tsan)
#   core_build   build-core: the core alone, -DEAGLE_PLUGINS= (no plugin built in)
#   core_test    its test programs (the plugins' cases are not built there)
# The last line printed is one JSON object with every stage's seconds and what each
# test stage ran; past EAGLE_CI_BUDGET_S (default 2400 s, 40 minutes) a warning names
# the slowest stages. The warning never fails the run: the machine is noisy.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${EAGLE_BUILD_JOBS:-2}"
budget="${EAGLE_CI_BUDGET_S:-2400}"
run_start=$(date +%s)
stage_names=()
stage_seconds=()
stage_result="failed"
ran_main="[]"
ran_tsan="[]"
ran_fuzz="[]"
ran_core="[]"

# What failed, last: CI keeps only the tail of a run's output, and ctest prints a
# failing test's output when that test ends, far above the tail. The failed cases and
# their first assertion lines, from every suite's log, kept short.
failure_digest() {
  local log
  for log in build/Testing/Temporary/LastTest.log build-tsan/Testing/Temporary/LastTest.log \
             build-core/Testing/Temporary/LastTest.log; do
    [ -f "$log" ] || continue
    grep -q '^\[  FAILED  \]' "$log" || continue
    echo "failures in $log:"
    grep -h -A3 ': Failure$\|WARNING: ThreadSanitizer' "$log" | grep -v '^--$' | cut -c1-300 | head -16
    grep -h '^\[  FAILED  \] [A-Za-z]' "$log" | sed 's/ ([0-9]* ms)$//' | sort -u | head -6
  done
}

report() {
  local total=$(( $(date +%s) - run_start )) i json="" slow
  for i in "${!stage_names[@]}"; do
    json+="${json:+, }\"${stage_names[$i]}\": ${stage_seconds[$i]}"
  done
  echo
  failure_digest
  echo "{\"ci_stages_s\": {$json}, \"total_s\": $total, \"budget_s\": $budget, \"result\": \"$stage_result\"," \
       "\"main_tests\": $ran_main, \"tsan_tests\": $ran_tsan, \"fuzz_targets\": $ran_fuzz," \
       "\"core_tests\": $ran_core}"
  if [ "$total" -gt "$budget" ]; then
    slow="$(for i in "${!stage_names[@]}"; do echo "${stage_seconds[$i]} ${stage_names[$i]}"; done |
            sort -rn | head -3 | awk '{printf "%s%s %d s", (NR > 1 ? ", " : ""), $2, $1}')"
    echo "WARNING: this run took $total s, over its budget of $budget s (CI's limit is 5400 s)." >&2
    echo "WARNING: slowest stages: $slow. Make them faster before the limit blocks every landing." >&2
  fi
}
fuzz_pid=""
trap 'report; [ -z "$fuzz_pid" ] || kill "$fuzz_pid" 2>/dev/null || true' EXIT

# stage NAME COMMAND...: runs COMMAND, records its wall time under NAME.
stage() {
  local name="$1" start
  shift
  start=$(date +%s)
  echo "== stage $name: $*"
  "$@"
  stage_names+=("$name")
  stage_seconds+=("$(( $(date +%s) - start ))")
}

# The names of the tests a ctest invocation in $1 with options $2... would run, as JSON.
ctest_names() {
  local dir="$1"
  shift
  (cd "$dir" && ctest -N "$@") | sed -n 's/^ *Test *#[0-9]*: \(.*\)$/"\1"/p' | paste -sd, | sed 's/^/[/; s/$/]/'
}

stage setup bash scripts/setup.sh test
stage lint python3 scripts/function_lengths.py 150 src
stage build bash scripts/build.sh

# Fuzzing: every parser of outside input under libFuzzer with ASan + UBSan (clang,
# build-fuzz), 20 s per target; any finding fails the run (docs/fuzzing.md). The
# targets run one at a time beside the main suite: for most of the suite's time
# test_large_ingest keeps one core busy and the other would idle, and a fuzzer runs
# for a fixed time, so this stage costs no wall time of its own.
stage fuzz_build bash scripts/fuzz.sh build
ran_fuzz="$(ls build-fuzz/bin | grep '^fuzz_' | sed 's/^/"/; s/$/"/' | paste -sd, | sed 's/^/[/; s/$/]/')"
fuzz_log="$(mktemp)"
fuzz_start=$(date +%s)
EAGLE_FUZZ_JOBS=1 bash scripts/fuzz.sh run "${EAGLE_FUZZ_SECONDS:-20}" >"$fuzz_log" 2>&1 &
fuzz_pid=$!

# The registry suite runs on SQLite and on a real PostgreSQL: with_postgres.sh starts
# a throwaway server on a loopback port, runs the tests, and stops it. Tests make
# their own uniquely named temporary folders, so two run at once.
ran_main="$(ctest_names build)"
stage test bash -c "cd build && bash ../scripts/with_postgres.sh ctest -j $jobs --output-on-failure --timeout 900"

echo "== stage fuzz (beside test): waiting for the fuzzers"
fuzz_rc=0
wait "$fuzz_pid" || fuzz_rc=$?
fuzz_pid=""
cat "$fuzz_log"
rm -f "$fuzz_log"
stage_names+=("fuzz_beside_test")
stage_seconds+=("$(( $(date +%s) - fuzz_start ))")
[ "$fuzz_rc" -eq 0 ] || { echo "fuzzing found a defect (inputs in build-fuzz/findings/)" >&2; exit 1; }

# ThreadSanitizer, a separate build (build-tsan): the store, engine, server and MCP
# client tests that start threads (tests/CMakeLists.txt, label tsan; the server and
# MCP tests run `eagle` itself under TSan). TSan reports fail the test binaries
# (halt_on_error) and the server tests check the server's log.
tsan_targets=(eagle test_store test_concurrency test_server test_mcp_clients test_core test_http)
stage tsan_build bash -c "cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Release -DEAGLE_TSAN=ON \
  -DEAGLE_BENCHMARKS=OFF >/dev/null && ninja -C build-tsan -j $jobs ${tsan_targets[*]}"
# What ran under TSan: each test's command line (program and gtest filter).
ran_tsan="$(cd build-tsan && ctest -N -V -L tsan | sed -n 's/^.*Test command: //p' |
            sed 's#^[^ ]*/##; s/"/\\"/g; s/^/"/; s/$/"/' | paste -sd, | sed 's/^/[/; s/$/]/')"
stage tsan_test bash -c "cd build-tsan && TSAN_OPTIONS='halt_on_error=1 second_deadlock_stack=1' \
  ctest -j $jobs -L tsan --output-on-failure --timeout 900"

# The core alone (build-core, -DEAGLE_PLUGINS=): the core's libraries name no plugin,
# so they build and pass their tests without one (docs/plugins.md). The test cases of
# a plugin's behaviour are built only with it (EAGLE_TEST_WITH_BIOMED); the fixtures
# they share run on core documents. test_large_ingest (a million rows through code
# that is the same in both builds) runs in the main stage only.
stage core_build bash -c "cmake -S . -B build-core -G Ninja -DCMAKE_BUILD_TYPE=Release -DEAGLE_PLUGINS= \
  -DEAGLE_BENCHMARKS=OFF >/dev/null && ninja -C build-core -j $jobs"
ran_core="$(ctest_names build-core -E test_large_ingest)"
stage core_test bash -c "cd build-core && bash ../scripts/with_postgres.sh ctest -j $jobs -E test_large_ingest \
  --output-on-failure --timeout 900"

stage_result="passed"
