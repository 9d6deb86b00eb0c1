#!/usr/bin/env bash
# README command (1): install dependencies, build, ingest the sample corpus into the
# embedded store, and run a few example queries.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
store="${EAGLE_DEMO_DIR:-build/demo-store}"
rm -rf "$store"
build/bin/eagle --data-dir "$store" ingest examples/sample
for q in "savolitinib plus osimertinib in MET-amplified NSCLC" \
         "PD-1 blockade adverse events" \
         "VEGFR1-3 inhibitor colorectal cancer" \
         "infection risk with TNF-alpha inhibitors"; do
  echo
  build/bin/eagle --data-dir "$store" search -k 3 "$q"
done
