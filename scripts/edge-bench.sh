#!/usr/bin/env bash
# Edge benchmark: per function (bundle, briefing, graph, SPARQL, MCP, health, and "empty":
# an unknown route, i.e. the fixed per-request cost of runtime + adapter with no handler
# work) and per runtime (native, workerd via `wrangler dev`, workerd directly, wasmtime): the
# cold request (fresh instance: the targets are restarted for each function) with the bytes
# it fetched from the store, then warm p50/p95 over N requests; the gzip size of each WASM
# artifact, and of each per-function build (scripts/per-function-builds.sh --sizes). Same
# start-up as scripts/edge-tests.sh.
#
#   EDGE_BENCH_N=200 scripts/edge-bench.sh
#   EDGE_WIKI=../shared/corpus/wikantik-pages   benchmark another wiki (default: the sample)
#   EDGE_MODEL=.cache/models/all-MiniLM-L6-v2   index with section vectors (hybrid retrieval)
#   EDGE_INDEX=target/scale-bench/index-12010-lite   serve a built index instead (a scale-bench one)
#   EDGE_NATIVE_PROFILE=dev  reuse the test build of the native host (default: release)
#   EDGE_BENCH_PER_FUNCTION=0  skip the per-function size builds (they take minutes)
#   EDGE_BENCH_FUNCTIONS="bundle empty"  only these functions
#
# "workerd-direct" bypasses wrangler dev's proxy: `wrangler dev` runs the Worker in one
# workerd and a proxy Worker in another, which forwards every request; the direct row sends
# requests to the Worker's own workerd socket (found from its listening ports).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/s3-server.sh
. scripts/lib/s3-server.sh
# shellcheck source=scripts/lib/edge-targets.sh
. scripts/lib/edge-targets.sh
N=${EDGE_BENCH_N:-100}
export EDGE_NATIVE_PROFILE=${EDGE_NATIVE_PROFILE:-release}

trap edge_stop_all EXIT
edge_prepare

if [ "${EDGE_BENCH_PER_FUNCTION:-1}" != 0 ]; then
    scripts/per-function-builds.sh --sizes
fi

echo "== WASM sizes (gzip -9)"
printf '   %-34s %10s %10s\n' artifact bytes gzip
for f in functions/workers/build/index_bg.wasm "$SPIN_WASM"; do
    printf '   %-34s %10d %10d\n' "$(basename "$(dirname "$f")")/$(basename "$f")" "$(wc -c <"$f")" "$(gzip -9c "$f" | wc -c)"
done

MCP_BODY='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"assemble_bundle","arguments":{"query":"hybrid fusion","k":4}}}'
declare -A PATHS=(
    [bundle]="GET /api/bundle?q=how+does+hybrid+fusion+weigh+bm25+and+dense"
    [briefing]="GET /api/briefing?prompt=how+does+hybrid+retrieval+work"
    [graph]="GET /api/graph/clusters"
    [sparql]="GET /sparql?query=SELECT+%3Fp+%3Fc+WHERE+%7B+%3Fp+a+%3Fc+%7D+LIMIT+20&format=compact"
    [mcp]="POST /knowledge-mcp"
    [health]="GET /health"
    [empty]="GET /no-such-route"
)
# The listening socket of the workerd that runs the Worker (not wrangler's proxy): of the
# processes under our wrangler launcher, the port that is not the public one and answers
# /health with a build id.
workerd_direct_url() {
    local pids port
    pids=$(descendants "$WRANGLER_PID" | paste -sd '|')
    [ -n "$pids" ] || return 0
    for port in $(ss -ltnpH 2>/dev/null | grep -E "pid=($pids)," | awk '{print $4}' | sed 's/.*://' | sort -u); do
        [ "http://127.0.0.1:$port" = "$WORKERD_URL" ] && continue
        if curl -s --max-time 5 "http://127.0.0.1:$port/health" 2>/dev/null | grep -q '"buildId"'; then
            echo "http://127.0.0.1:$port"
            return 0
        fi
    done
}
echo "== per function and runtime (cold = first request of a fresh instance; warm over $N requests)"
printf '   %-9s %-15s %9s %12s %9s %9s %12s\n' function runtime cold_ms cold_bytes p50_ms p95_ms last_bytes
for fn in ${EDGE_BENCH_FUNCTIONS:-bundle briefing graph sparql mcp health empty}; do
    EDGE_READY=tcp edge_start_all >/dev/null
    for rt in native workerd wasmtime workerd-direct; do
        case $rt in
            native) base=$NATIVE_URL ;;
            workerd) base=$WORKERD_URL ;;
            wasmtime) base=$WASMTIME_URL ;;
            # Found after the proxied run (the Worker's socket only exists once it started).
            workerd-direct) base=$(workerd_direct_url); [ -n "$base" ] || { echo "   $fn workerd-direct: socket not found"; continue; } ;;
        esac
        python3 - "$base" "${PATHS[$fn]}" "$MCP_BODY" "$N" "$fn" "$rt" <<'PY'
import sys, time, urllib.error, urllib.request
base, spec, mcp_body, n, fn, rt = sys.argv[1], sys.argv[2], sys.argv[3].encode(), int(sys.argv[4]), sys.argv[5], sys.argv[6]
method, path = spec.split(" ", 1)
expected = 404 if fn == "empty" else 200
def call():
    if method == "POST":
        req = urllib.request.Request(base + path, data=mcp_body, method="POST", headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18"})
    else:
        req = urllib.request.Request(base + path)
    t = time.perf_counter()
    try:
        with urllib.request.urlopen(req) as r:
            r.read()
            fetched, status = r.headers.get("x-wikantik-store-bytes"), r.status
    except urllib.error.HTTPError as e:
        e.read()
        fetched, status = e.headers.get("x-wikantik-store-bytes"), e.code
    return (time.perf_counter() - t) * 1000, fetched, status
cold, fetched, status = call()
assert status == expected, (fn, rt, status)
runs = [call() for _ in range(n)]
warm = sorted(r[0] for r in runs)
p = lambda q: warm[min(len(warm) - 1, int(q * len(warm)))]
# The store-bytes counter of the instance that served the last warm request: about the cold
# figure again when every request gets a fresh instance, cold + pointer re-reads when the
# instance (and its shard cache) is kept.
print(f"   {fn:<9} {rt:<15} {cold:9.1f} {fetched or '-':>12} {p(0.50):9.2f} {p(0.95):9.2f} {runs[-1][1] or '-':>12}")
PY
    done
    edge_stop_targets
done
echo "   (native reads a local directory and reports no fetched bytes; cold includes instance start-up;"
echo "    workerd-direct runs after the proxied workerd row, so its cold figure is a warm isolate's)"
