#!/usr/bin/env bash
# README command (1): install what `eagle` needs (the runtime package set, not the
# test tools), build the `eagle` binary alone, ingest the sample corpus into the
# embedded store, and run a few example queries; then the biomedical demo: the FDA
# labels and DrugBank structures in ../shared/data, asked a regulatory, a
# drug-entity, a combination and a chemical question through the biomed plugin.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh runtime
bash scripts/build.sh eagle
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
# The store `eagle serve` answers from below: the biomed one when it is made.
served="$store"
if [ -d "$shared/spl" ]; then
  echo
  echo "== biomed demo: FDA labels (SPL) and DrugBank structures"
  # A store of its own, as README "The biomedical plugin" makes it: the sample's
  # abstracts are another corpus, not what these questions are asked of.
  served="$store-biomed"
  rm -rf "$served"
  eagle() { build/bin/eagle --data-dir "$served" "$@"; }
  # The shared SPL folder's non-label XML files are reported and skipped.
  eagle ingest --namespace biomed "$shared/spl"
  eagle ingest --namespace biomed "$shared/vocab/drugbank_structures.csv" 2>/dev/null
  for q in "What are the warnings on the Humira label?" \
           "atorvastatin dosing in renal impairment" \
           "adalimumab combined with methotrexate" \
           "compounds similar to imatinib"; do
    echo
    eagle search --namespace biomed --explain -k 3 "$q"
  done
  # An answer with citations (the extractive answer of the embedded default; with
  # generation.base_url set, a chat model writes it from the same passages).
  echo
  eagle query "Can sildenafil be taken with nitrates?"
  # The same question over MCP (stdio, the tool an agent calls).
  echo
  echo "== MCP core_query (stdio)"
  printf '%s\n' \
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"demo","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"core_query","arguments":{"query":"Can sildenafil be taken with nitrates?"}}}' |
    build/bin/eagle --data-dir "$served" mcp 2>/dev/null | tail -1 | head -c 900
  echo
else
  echo "(biomed demo skipped: $shared/spl not found)"
fi

# The same store behind `eagle serve`: one warm process answering HTTP/JSON. It binds
# 127.0.0.1 on a free port (the first line it prints), answers a search and an ingest
# over curl, and stops on SIGTERM. `bash scripts/demo.sh serve` keeps it running on
# port 8686 instead, until Ctrl-C.
echo
echo "== eagle serve (HTTP/JSON, docs/http-api.md)"
if [ "${1:-}" = "serve" ]; then
  exec build/bin/eagle --data-dir "$served" serve --port 8686
fi
log="$(mktemp)"
build/bin/eagle --data-dir "$served" serve --port 0 >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 300); do grep -q "eagle: ready" "$log" && break; sleep 0.1; done
cat "$log"
url="$(grep -o 'http://[0-9.:]*' "$log" | head -1)"
set -x
curl -s "$url/health"; echo
curl -s -X POST "$url/search" -H 'Content-Type: application/json' \
  -d '{"query": "infection risk with TNF-alpha inhibitors", "top_k": 2}' | head -c 600; echo
curl -s -X POST "$url/search" -H 'Content-Type: application/json' \
  -d '{"query": "What are the warnings on the Humira label?", "plugin_namespace": "biomed", "top_k": 2}' | head -c 600; echo
curl -s -X POST "$url/query" -H 'Content-Type: application/json' \
  -d '{"query": "Can sildenafil be taken with nitrates?"}' | head -c 900; echo
curl -s "$url/collections"; echo
set +x
kill "$server"
wait "$server" 2>/dev/null || true
