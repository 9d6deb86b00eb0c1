#!/usr/bin/env bash
# README command (1): install dependencies, build, ingest the sample corpus into the
# embedded store, and run a few example queries; then the biomedical demo: the FDA
# labels and DrugBank structures in ../shared/data, asked a regulatory, a
# drug-entity, a combination and a chemical question through the biomed plugin.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
store="${EAGLE_DEMO_DIR:-build/demo-store}"
rm -rf "$store"
eagle() { build/bin/eagle --data-dir "$store" "$@"; }
eagle ingest examples/sample
for q in "savolitinib plus osimertinib in MET-amplified NSCLC" \
         "PD-1 blockade adverse events" \
         "VEGFR1-3 inhibitor colorectal cancer" \
         "infection risk with TNF-alpha inhibitors"; do
  echo
  eagle search -k 3 "$q"
done

shared="../shared/data"
if [ -d "$shared/spl" ]; then
  echo
  echo "== biomed demo: FDA labels (SPL) and DrugBank structures"
  # The *_otc-bars.xml fixtures are not SPL: they are reported and skipped.
  eagle ingest --namespace biomed --skip-bad "$shared/spl"
  eagle ingest --namespace biomed "$shared/vocab/drugbank_structures.csv" 2>/dev/null
  for q in "What are the warnings on the Humira label?" \
           "atorvastatin dosing in renal impairment" \
           "adalimumab combined with methotrexate" \
           "compounds similar to imatinib"; do
    echo
    eagle search --namespace biomed --explain -k 3 "$q"
  done
else
  echo "(biomed demo skipped: $shared/spl not found)"
fi
