#!/usr/bin/env bash
# Bounded load test against the native host on loopback (issue 9, part 5).
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
cleanup() {
  local status=$?
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [ "$status" -ne 0 ] && [ -f "$work/server.log" ]; then
    echo "--- last lines of the server log"
    tail -n 15 "$work/server.log"
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "index: examples/wiki"
"$tools/index-builder" build examples/wiki --out "$work/index" >"$work/index-build.log" 2>&1 \
  || { cat "$work/index-build.log"; exit 1; }

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
log "native host on 127.0.0.1:$port (${LOAD_PROFILE:-debug})"
"$host" serve --index "$work/index" --addr "127.0.0.1:$port" --threads 4 --mcp-allow-unrestricted \
  >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
  kill -0 "$server_pid" 2>/dev/null || { echo "the host exited early:"; cat "$work/server.log"; exit 1; }
  curl -fsS -o /dev/null "http://127.0.0.1:$port/health" 2>/dev/null && break
  sleep 0.1
done

log "load: $requests requests at most, $max_seconds s at most"
extra=()
[ "${LOAD_ENFORCE_LATENCY:-0}" = 1 ] && extra+=(--enforce-latency)
"$tools/load" --url "http://127.0.0.1:$port" --requests "$requests" --max-seconds "$max_seconds" \
  --threads "${LOAD_THREADS:-4}" --warmup 1 "${extra[@]}"
