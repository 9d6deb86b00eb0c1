#!/usr/bin/env bash
# Fuzzes the filter module (parser, evaluator, scalar indexes, compiler) with
# libFuzzer under AddressSanitizer and UndefinedBehaviorSanitizer.
# usage: scripts/fuzz_filter.sh [SECONDS]   (default 60)
# Needs only Debian's clang++ and libclang-rt-14-dev, no CMake. Builds into
# build-fuzz/, keeps the corpus in build-fuzz/filter-corpus/ between runs, and exits
# non-zero when the fuzzer finds a crash (the input is saved as build-fuzz/crash-*).
set -euo pipefail
seconds="${1:-60}"
cd "$(dirname "$0")/.."
out=build-fuzz
corpus="$out/filter-corpus"
mkdir -p "$corpus"

echo "building $out/filter_fuzz ..."
clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I src src/eagle/core/*.cpp src/eagle/filter/*.cpp fuzz/filter_fuzz.cpp -o "$out/filter_fuzz"

# A few valid expressions so the fuzzer starts from the grammar, not from noise.
i=0
while IFS= read -r seed; do
  printf '%s' "$seed" > "$corpus/seed-$i"
  i=$((i + 1))
done <<'SEEDS'
year >= 2020 and kb_name == "pubmed"
2019 < year <= 2024 or source_type in ["pdf", 'spl']
document_name like "ab\%%" && not (chunk_type is null)
array_contains_any(primary_drugs, ["aspirin", "x"]) || id like "doc%"
connect_to["k"] != 1.5e3 and kb_name in {l} and year == {y}
NOT array_contains_all(primary_drugs, {l}) AND path IS NOT NULL
array_contains(connect_to["arr"], 2.5) or type like {p} or year not in {n}
((year > -1 and document_id == "d1") || biomed_section != "\u00e9")
SEEDS

# -max_len bounds one input; the parser's own 64 KiB limit is covered by unit tests.
exec "$out/filter_fuzz" -max_total_time="$seconds" -dict=fuzz/filter.dict -max_len=4096 \
  -artifact_prefix="$out/" -print_final_stats=1 "$corpus"
