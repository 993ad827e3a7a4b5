#!/usr/bin/env bash
# Edge benchmark: per function (bundle, briefing, MCP, health) and per runtime (native,
# workerd, wasmtime): the cold request (fresh instance: the targets are restarted for each
# function) with the bytes it fetched from the store, then warm p50/p95 over N requests,
# and the gzip size of each WASM artifact. Same start-up as scripts/edge-tests.sh.
#
#   EDGE_BENCH_N=200 scripts/edge-bench.sh
#   EDGE_WIKI=../shared/corpus/wikantik-pages   benchmark another wiki (default: the sample)
#   EDGE_NATIVE_PROFILE=dev  reuse the test build of the native host (default: release)
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

echo "== WASM sizes (gzip -9)"
printf '   %-34s %10s %10s\n' artifact bytes gzip
for f in functions/workers/build/index_bg.wasm "$SPIN_WASM"; do
    printf '   %-34s %10d %10d\n' "$(basename "$(dirname "$f")")/$(basename "$f")" "$(wc -c <"$f")" "$(gzip -9c "$f" | wc -c)"
done

MCP_BODY='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"assemble_bundle","arguments":{"query":"hybrid fusion","k":4}}}'
declare -A PATHS=(
    [bundle]="GET /api/bundle?q=how+does+hybrid+fusion+weigh+bm25+and+dense"
    [briefing]="GET /api/briefing?prompt=how+does+hybrid+retrieval+work"
    [mcp]="POST /knowledge-mcp"
    [health]="GET /health"
)
echo "== per function and runtime (cold = first request of a fresh instance; warm over $N requests)"
printf '   %-9s %-9s %9s %12s %9s %9s\n' function runtime cold_ms cold_bytes p50_ms p95_ms
for fn in bundle briefing mcp health; do
    EDGE_READY=tcp edge_start_all >/dev/null
    for rt in native workerd wasmtime; do
        case $rt in native) base=$NATIVE_URL ;; workerd) base=$WORKERD_URL ;; wasmtime) base=$WASMTIME_URL ;; esac
        python3 - "$base" "${PATHS[$fn]}" "$MCP_BODY" "$N" "$fn" "$rt" <<'PY'
import sys, time, urllib.request
base, spec, mcp_body, n, fn, rt = sys.argv[1], sys.argv[2], sys.argv[3].encode(), int(sys.argv[4]), sys.argv[5], sys.argv[6]
method, path = spec.split(" ", 1)
def call():
    if method == "POST":
        req = urllib.request.Request(base + path, data=mcp_body, method="POST", headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18"})
    else:
        req = urllib.request.Request(base + path)
    t = time.perf_counter()
    with urllib.request.urlopen(req) as r:
        r.read()
        fetched = r.headers.get("x-wikantik-store-bytes")
        status = r.status
    return (time.perf_counter() - t) * 1000, fetched, status
cold, fetched, status = call()
assert status == 200, status
warm = sorted(call()[0] for _ in range(n))
p = lambda q: warm[min(len(warm) - 1, int(q * len(warm)))]
print(f"   {fn:<9} {rt:<9} {cold:9.1f} {fetched or '-':>12} {p(0.50):9.2f} {p(0.95):9.2f}")
PY
    done
    edge_stop_targets
done
echo "   (native reads a local directory and reports no fetched bytes; cold includes instance start-up)"
