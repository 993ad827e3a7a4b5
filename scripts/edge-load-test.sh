#!/usr/bin/env bash
# Bounded load test against the Cloudflare Worker in workerd (`wrangler dev --local`) on
# loopback: the same load generator and request mix as scripts/load-test.sh (native
# host), pointed at the Worker.
#
#   scripts/edge-load-test.sh [REQUESTS] [MAX_SECONDS]     (defaults: 500 requests, 60 s)
#
# Builds the index of EDGE_WIKI (default examples/wiki), seeds it into a local R2 bucket
# (`wrangler r2 bulk put --local`, pointer last), starts `wrangler dev --local` on a free
# 127.0.0.1 port (telemetry off; stopped by PID with its children), sends one warm-up pass of
# the mix (not measured: the first request of each route loads its shards), then at most
# REQUESTS requests within MAX_SECONDS from LOAD_THREADS client threads (default 4): a fixed
# mix of /api/bundle, /api/briefing and /knowledge-mcp calls. Prints throughput, p50/p90/p99
# per kind and overall, and errors; fails on any error (non-2xx, transport, JSON-RPC or tool
# error). LOAD_ENFORCE_LATENCY=1 also fails when p99 > 5 x p50 (off by default: CI machines
# share their cores). The build steps and the Worker start-up are those of
# scripts/edge-tests.sh (scripts/lib/edge-targets.sh); state lives in a temporary directory.
#
# The real corpus (not run in CI):
#   EDGE_WIKI=../shared/corpus/wikantik-pages scripts/edge-load-test.sh 500 120
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${1:-500}
max_seconds=${2:-60}
# shellcheck source=scripts/lib/s3-server.sh
. scripts/lib/s3-server.sh
# shellcheck source=scripts/lib/edge-targets.sh
. scripts/lib/edge-targets.sh
# Our own state (index, local R2, wrangler config and log), not the parity suite's.
EDGE=$(mktemp -d "${TMPDIR:-/tmp}/wikantik-edge-load.XXXXXX")

cleanup_on_exit edge_stop_targets "$EDGE" "$EDGE/wrangler.log"

echo "== tools and builds (index-builder, load client, Worker)"
scripts/install-tools.sh >/dev/null
cargo build --locked -p wikantik-index-builder -p wikantik-tests --bin index-builder --bin load
edge_build_worker

wiki=${EDGE_WIKI:-examples/wiki}
echo "== index of $wiki into local R2"
"$TARGET_DIR/debug/index-builder" build "$wiki" --out "$EDGE/index" >"$EDGE/index-build.log" 2>&1 \
    || { tail -20 "$EDGE/index-build.log"; exit 1; }
edge_r2_put "$EDGE/index" ""

echo "== wrangler dev"
edge_start_workerd

echo "== load: $requests requests at most, $max_seconds s at most, against workerd"
run_load_client "$TARGET_DIR/debug/load" "$WORKERD_URL" "$requests" "$max_seconds"
