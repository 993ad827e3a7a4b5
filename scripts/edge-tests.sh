#!/usr/bin/env bash
# The three-target end-to-end suite: the native host, the Cloudflare Worker in workerd
# (`wrangler dev --local`, shards seeded into local R2) and the Spin component under
# `wasmtime serve` (shards over HTTP, SigV4-signed, from a local moto S3 server filled by
# `index-builder publish`). Everything on 127.0.0.1, started and stopped by PID, telemetry off.
#
# Steps: install tools (scripts/install-tools.sh, skipped when present) → build index-builder,
# native host, the Worker (scripts/build-worker.sh) and the Spin component → build the sample
# index → seed local R2 / moto / a native directory → start the three servers → run
# tests/tests/edge_parity.rs (identical responses; then a publish under traffic).
# Leaves WIKANTIK_EDGE_* base URLs in .cache/edge/targets.env while running (the benchmark
# script uses the same start-up via `EDGE_KEEP_RUNNING=1 ... ` — see scripts/edge-bench.sh).
#
# Usage: scripts/edge-tests.sh
#   EDGE_NATIVE_PROFILE=release   release build of the hosts and the suite (default: dev, the
#                                 test profile); EDGE_MODEL, EDGE_WIKI, EDGE_DIR as in
#                                 scripts/lib/edge-targets.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# shellcheck source=scripts/lib/s3-server.sh
. scripts/lib/s3-server.sh
# shellcheck source=scripts/lib/edge-targets.sh
. scripts/lib/edge-targets.sh

if [ -n "${EDGE_INDEX:-}" ]; then
    echo "edge-tests: EDGE_INDEX is for the benchmark; the suite builds its own two indexes" >&2
    exit 2
fi
trap edge_stop_all EXIT
edge_prepare
edge_start_all

echo "== edge parity suite (native, workerd, wasmtime)"
export WIKANTIK_EDGE_NATIVE="$NATIVE_URL" WIKANTIK_EDGE_WORKERD="$WORKERD_URL" WIKANTIK_EDGE_WASMTIME="$WASMTIME_URL"
export WIKANTIK_EDGE_REPUBLISH="$ROOT/scripts/lib/edge-republish.sh" WIKANTIK_EDGE_TTL_SECS="$EDGE_TTL_SECS"
# EDGE_NATIVE_PROFILE=release: the suite too, so it reuses the release build of the hosts.
profile=()
[ "${EDGE_NATIVE_PROFILE:-dev}" = release ] && profile=(--release)
cargo test -p wikantik-tests --locked "${profile[@]}" --test end_to_end -- edge_parity:: --nocapture --test-threads 1
