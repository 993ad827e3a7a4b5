#!/usr/bin/env bash
# Bounded load test against the native host on loopback.
#
#   scripts/load-test.sh [REQUESTS] [MAX_SECONDS]      (defaults: 2000 requests, 60 s)
#
# Builds the sample wiki (examples/wiki) with index-builder, starts `wikantik-native serve` on a
# free 127.0.0.1 port (4 worker threads, MCP open to anonymous callers), then runs the `load`
# binary (tests/src/bin/load.rs): 4 client threads with keep-alive connections sending a fixed
# mix of /api/bundle, /api/briefing and /knowledge-mcp (tools/call, tools/list) requests, at
# most REQUESTS requests and at most MAX_SECONDS seconds, after one unmeasured warm-up pass. It prints throughput, p50/p90/p99/max
# per kind and overall, and errors. Fails on any error (non-2xx, transport, JSON-RPC or tool
# error); LOAD_ENFORCE_LATENCY=1 also fails when p99 > 5 x p50 (off by default: CI machines
# share their cores, and a scheduler hiccup is not a regression).
#
# Env: LOAD_PROFILE=release builds the host optimised (representative latencies; default debug,
# which reuses `cargo test`'s artifacts). LOAD_THREADS (client threads, default 4).
# The Worker in `wrangler dev` gets the same mix from scripts/edge-load-test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/common.sh
. scripts/lib/common.sh
root=$PWD
target=${CARGO_TARGET_DIR:-$root/target}
requests=${1:-2000}
max_seconds=${2:-60}

log() { printf '== %s\n' "$*"; }

# The index-builder and the load client always come from the dev profile (they are not what
# is measured, and `cargo test` has built them); LOAD_PROFILE picks the host's profile.
cargo build --locked -p wikantik-index-builder -p wikantik-tests --bin index-builder --bin load
tools=$target/debug
case ${LOAD_PROFILE:-debug} in
  release) cargo build --release --locked -p wikantik-native
           host=$target/release/wikantik-native ;;
  debug)   cargo build --locked -p wikantik-native
           host=$target/debug/wikantik-native ;;
  *)       echo "LOAD_PROFILE must be release or debug"; exit 2 ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/wikantik-load.XXXXXX")
server_pid=
stop_server() { stop_pid "$server_pid"; }
cleanup_on_exit stop_server "$work" "$work/server.log"

log "index: examples/wiki"
"$tools/index-builder" build examples/wiki --out "$work/index" >"$work/index-build.log" 2>&1 \
  || { cat "$work/index-build.log"; exit 1; }

port=$(free_port)
log "native host on 127.0.0.1:$port (${LOAD_PROFILE:-debug})"
start_bg server_pid "$work/server.log" \
  "$host" serve --index "$work/index" --addr "127.0.0.1:$port" --threads 4 --mcp-allow-unrestricted
wait_for_http "http://127.0.0.1:$port/health" 60 "$server_pid" "$work/server.log" "the native host"

log "load: $requests requests at most, $max_seconds s at most"
run_load_client "$tools/load" "http://127.0.0.1:$port" "$requests" "$max_seconds"
