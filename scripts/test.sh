#!/usr/bin/env bash
# The test suite in tiers, so that a change can be checked in minutes and the whole suite run
# when it matters.
#
#   scripts/test.sh TIER...        run the suites of these tiers (in the order `all` runs them)
#   scripts/test.sh list           print each tier's suites
#   scripts/test.sh --dry-run TIER...   print what those tiers would run, run nothing
#
# Tiers:
#   fast         native `cargo test --workspace --locked`: every crate's unit tests, the core's
#                parity suite natively (shared/wikantik/tests/in_memory.rs), the end-to-end tests over
#                the native host (REST, MCP tools, briefings, hooks, ACL leaks, faults, limits)
#                and the index-builder CLI tests — minutes
#   edge         tools, publish tests against a local S3 server, the edge tests (native host,
#                Worker in workerd, Spin component under wasmtime), the load test against the
#                Worker, the core's builds for both WASM targets, the per-function builds and
#                the core's tests inside WASM
#   mcp          the official MCP SDK clients (TypeScript, Python) and the conformance suite
#   browser      the console page (GET /) in headless Debian Chromium, driven by playwright-core
#   demo         the README's main command (scripts/run-demo.sh) on a fresh copy of the
#                repository: hybrid retrieval out of the box, a real coverage confidence
#   reliability  the ACL mutation check, every fuzz target for a bounded time, the load test
#                against the native host
#   eval         tools, then the retrieval evaluation on the real corpus (skips without it)
#   lint         shellcheck, the documentation's relative links, the generated client hooks
#   all          every suite above, tools first: what `.ci/run` runs (scripts/test-all.sh)
#
# Tests that need the real corpus or the model files skip with a message when those are
# absent. Each suite's start is stamped with the time the run has taken so far, so a slow CI
# log shows where the minutes went.
set -euo pipefail
cd "$(dirname "$0")/.."

TIERS=(fast edge mcp browser demo reliability eval lint all)

# The suites, in the order `all` runs them: "tiers (space-separated) | function | title".
# The order matters: eval fetches the model the edge and MCP suites then use, the edge load
# test reuses the edge tests' Worker build.
SUITES=(
    "edge eval|suite_tools|tools (rustup targets, wasm-bindgen-cli, wasmtime; skipped when present)"
    "fast|suite_native|native tests (all crates)"
    "reliability|suite_acl_mutation|reliability: ACL mutation check (the leak suite must fail under each deliberate ACL bug)"
    "eval|suite_eval|retrieval evaluation on the real corpus (section and page level, both profiles, cross-validated, beside the plain baselines; a ratchet; skips without ../shared/corpus)"
    "demo|suite_demo|the main command on a fresh copy: run-demo.sh serves hybrid retrieval, a bundle's confidence is not unknown"
    "edge|suite_s3|publish tests against a local S3-compatible server (moto)"
    "edge|suite_edge|edge: native host, Workers in workerd (local R2), Spin component under wasmtime (moto S3): identical responses"
    "edge|suite_edge_load|reliability: bounded load test against the Worker in workerd (wrangler dev, local R2)"
    "lint|suite_shellcheck|shell scripts (shellcheck; installed from the OS packages if missing)"
    "lint|suite_links|documentation links (relative links resolve inside the repository)"
    "lint|suite_hooks_generated|client hooks (each hook's shared part is clients/lib/briefing-hook-core.sh)"
    "browser|suite_console|the console page in headless Chromium: health, a bundle with its confidence, a briefing, restricted pages only with their key"
    "mcp|suite_mcp|MCP: official SDK clients (TypeScript, Python) and the MCP conformance suite against the native host"
    "edge|suite_edge_deps|the edge links only the query side: no build-only crate in any edge function's dependency tree"
    "edge|suite_per_function|per-function builds: each function's Worker and Spin build checks for its WASM target; each refuses the other functions' routes"
    "edge|suite_wasm_tests|the core's end-to-end tests inside WASM (Node for Workers, wasmtime for Spin)"
    "reliability|suite_fuzz|reliability: every fuzz target for a short bounded time (cargo-fuzz, libFuzzer)"
    "reliability|suite_load|reliability: bounded load test against the native host"
)

suite_tools() { scripts/install-tools.sh; }
suite_native() { cargo test --workspace --locked; }
suite_acl_mutation() { scripts/acl-mutation.sh; }
# The query encoder's CPU per query in WASM (scripts/bench-wasm.sh) and the HNSW graph's recall
# against the exact scan (the `ann` lines, forced below the corpus size) are benchmarks and
# diagnostics, not part of the ratchet (docs/BENCHMARKS.md, docs/RETRIEVAL.md): the test run
# leaves them out and evaluates the served path.
suite_eval() { EVAL_WASM=0 ANN_THRESHOLD=50000 scripts/eval.sh; }
suite_s3() { scripts/s3-tests.sh; }
suite_edge() {
    # With the model (eval.sh fetched it) the edge index carries vectors and the lite profile,
    # so the suite also covers dense retrieval, the vector lists and the lite table's ranged
    # reads (R2 range gets, HTTP Range requests) on every target; without it, a lexical-only
    # index.
    if [ -d .cache/models/all-MiniLM-L6-v2 ]; then
        EDGE_MODEL=.cache/models/all-MiniLM-L6-v2 EDGE_PROFILE=lite scripts/edge-tests.sh
    else
        scripts/edge-tests.sh
    fi
}
suite_edge_load() { scripts/edge-load-test.sh 500 60; }
suite_shellcheck() { scripts/lint-shell.sh; }
suite_links() { scripts/check-links.sh; }
suite_hooks_generated() { scripts/gen-hooks.sh --check; }
suite_console() { scripts/console-tests.sh; }
suite_demo() { scripts/demo-test.sh; }
suite_mcp() { MCP_TESTS_PROFILE=debug scripts/mcp-tests.sh; }
suite_edge_deps() { scripts/check-edge-deps.sh; }
suite_per_function() { scripts/per-function-builds.sh; }
suite_wasm_tests() { scripts/wasm-tests.sh; }
suite_fuzz() { scripts/fuzz.sh 10; }
suite_load() { scripts/load-test.sh 2000 60; }

usage() {
    sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
}

# in_tiers "TIERS OF A SUITE": true when one of them was asked for (or `all` was).
in_tiers() {
    local t
    [ -n "${wanted[all]:-}" ] && return 0
    for t in $1; do [ -n "${wanted[$t]:-}" ] && return 0; done
    return 1
}

list() {
    local tier entry tiers title
    for tier in "${TIERS[@]}"; do
        echo "$tier:"
        for entry in "${SUITES[@]}"; do
            tiers=${entry%%|*}
            title=${entry##*|}
            if [ "$tier" = all ] || [[ " $tiers " == *" $tier "* ]]; then echo "    $title"; fi
        done
    done
}

dry_run=0
if [ "${1:-}" = --dry-run ]; then dry_run=1; shift; fi
[ $# -gt 0 ] || { usage >&2; exit 2; }
case $1 in
    -h|--help|help) usage; exit 0 ;;
    list) list; exit 0 ;;
esac

declare -A wanted=()
for arg in "$@"; do
    if [[ " ${TIERS[*]} " != *" $arg "* ]]; then
        echo "unknown tier '$arg' (expected one of: ${TIERS[*]}, or list)" >&2
        exit 2
    fi
    wanted[$arg]=1
done

# Each suite's start is stamped with the wall time so far, the previous suite's wall and CPU
# seconds (user + system of every finished child process), so its cost can be read even on a
# loaded machine, and the disk space left.
suite_started=$SECONDS
suite_cpu=0
# Free space on the disk of the target directory, so a log shows which suite filled it.
disk_free() { df -h --output=avail "${CARGO_TARGET_DIR:-.}" 2>/dev/null | sed -n "2s/ //gp"; }
times_file=$(mktemp)
trap 'rm -f "$times_file"' EXIT
section() {
    local cpu
    times >"$times_file"    # in this shell: a subshell would report only its own children
    cpu=$(tail -1 "$times_file" | awk '{ split($1, u, "m"); split($2, s, "m"); printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }')
    echo "== [$((SECONDS / 60))m$((SECONDS % 60))s, previous suite $((SECONDS - suite_started))s wall, $((cpu - suite_cpu))s CPU; $(disk_free) free] $*"
    suite_started=$SECONDS
    suite_cpu=$cpu
}

for entry in "${SUITES[@]}"; do
    tiers=${entry%%|*}
    rest=${entry#*|}
    fn=${rest%%|*}
    title=${rest#*|}
    in_tiers "$tiers" || continue
    if [ "$dry_run" = 1 ]; then
        echo "== $title"
        declare -f "$fn" | sed '1,2d;$d'
        continue
    fi
    section "$title"
    "$fn"
done
[ "$dry_run" = 0 ] || exit 0

if [ -n "${wanted[all]:-}" ]; then
    section "all tests passed"
else
    section "tiers $*: all tests passed"
fi
