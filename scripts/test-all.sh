#!/usr/bin/env bash
# The whole test suite: what `.ci/run` runs and what the README calls "run all tests".
# Installs what it needs (idempotent, pinned), then runs every suite. Tests that need the real
# corpus (../shared/corpus) or the model files skip with a message when those are absent.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each suite's start is stamped with the time the run has taken so far, so a slow CI log shows
# where the minutes went.
# The CPU seconds (user + system, of every finished child process) beside the wall time, so a
# suite's cost can be read even on a loaded machine.
suite_started=$SECONDS
suite_cpu=0
times_file=$(mktemp)
trap 'rm -f "$times_file"' EXIT
section() {
    local cpu
    times >"$times_file"    # in this shell: a subshell would report only its own children
    cpu=$(tail -1 "$times_file" | awk '{ split($1, u, "m"); split($2, s, "m"); printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }')
    echo "== [$((SECONDS / 60))m$((SECONDS % 60))s, previous suite $((SECONDS - suite_started))s wall, $((cpu - suite_cpu))s CPU] $*"
    suite_started=$SECONDS
    suite_cpu=$cpu
}

section "tools (rustup targets, wasm-bindgen-cli, wasmtime; skipped when present)"
scripts/install-tools.sh

section "native tests (all crates)"
cargo test --workspace --locked

section "reliability: ACL mutation check (the leak suite must fail under each deliberate ACL bug)"
scripts/acl-mutation.sh

section "retrieval evaluation on the real corpus (section and page level, both profiles, cross-validated, beside the plain baselines; a ratchet; skips without ../shared/corpus)"
scripts/eval.sh

section "publish tests against a local S3-compatible server (moto)"
scripts/s3-tests.sh

section "edge: native host, Workers in workerd (local R2), Spin component under wasmtime (moto S3): identical responses"
# With the model (eval.sh fetched it) the edge index carries vectors and the lite profile, so
# the suite also covers dense retrieval, the vector lists and the lite table's ranged reads
# (R2 range gets, HTTP Range requests) on every target; without it, a lexical-only index.
if [ -d .cache/models/all-MiniLM-L6-v2 ]; then
    EDGE_MODEL=.cache/models/all-MiniLM-L6-v2 EDGE_PROFILE=lite scripts/edge-tests.sh
else
    scripts/edge-tests.sh
fi

section "reliability: bounded load test against the Worker in workerd (wrangler dev, local R2)"
scripts/edge-load-test.sh 500 60

section "shell scripts (shellcheck; installed from the OS packages if missing)"
scripts/lint-shell.sh

section "MCP: official SDK clients (TypeScript, Python) and the MCP conformance suite against the native host"
MCP_TESTS_PROFILE=debug scripts/mcp-tests.sh

section "the core builds for Cloudflare Workers (wasm32-unknown-unknown) and Spin (wasm32-wasip2)"
cargo build --locked -p wikantik --target wasm32-unknown-unknown
cargo build --locked -p wikantik --target wasm32-wasip2

section "per-function builds: each function's Worker and Spin build checks for its WASM target; each refuses the other functions' routes"
scripts/per-function-builds.sh

section "the core's end-to-end tests inside WASM (Node for Workers, wasmtime for Spin)"
scripts/wasm-tests.sh

section "reliability: every fuzz target for a short bounded time (cargo-fuzz, libFuzzer)"
scripts/fuzz.sh 10

section "reliability: bounded load test against the native host"
scripts/load-test.sh 2000 60

section "all tests passed"
