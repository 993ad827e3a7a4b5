#!/usr/bin/env bash
# Per-function builds of the edge functions (ARCHITECTURE.md, "Per-function deployment").
#
#   scripts/per-function-builds.sh          CI check: every function's build of both adapters
#                                           type-checks for its WASM target (Worker:
#                                           wasm32-unknown-unknown, Spin: wasm32-wasip2), and
#                                           the core built with only that function serves its
#                                           routes and refuses the others' (tests/per_function.rs)
#   scripts/per-function-builds.sh --sizes  also build each function's release WASM per
#                                           platform (Worker: index_bg.wasm after wasm-opt, via
#                                           scripts/build-worker.sh into functions/workers/build-<f>;
#                                           Spin: the component, copied to $SIZES_DIR) and print
#                                           bytes and gzip -9 bytes (target: <= 1.5 MB gzip each)
#
# A cfg mistake (a route or engine used outside its feature) fails the check.
set -euo pipefail
cd "$(dirname "$0")/.."
FUNCTIONS=(bundle briefing graph sparql mcp)
TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

echo "== per-function builds: type-check each function for its WASM targets"
for f in "${FUNCTIONS[@]}"; do
    cargo check --locked -q -p wikantik-workers --target wasm32-unknown-unknown --no-default-features --features "$f"
    cargo check --locked -q -p wikantik-spin --target wasm32-wasip2 --no-default-features --features "$f"
    echo "   $f: Worker and Spin builds check"
done
echo "== per-function builds: the core with one function refuses the other functions' routes"
for f in "${FUNCTIONS[@]}"; do
    if ! log=$(cargo test --locked -q -p wikantik --no-default-features --features "$f" --test per_function 2>&1); then
        echo "$log" >&2
        exit 1
    fi
    echo "   $f: $(grep -E '^test result' <<<"$log")"
done

[ "${1:-}" = --sizes ] || exit 0

SIZES_DIR="${SIZES_DIR:-$PWD/.cache/per-function}"
mkdir -p "$SIZES_DIR"
echo "== per-function WASM sizes (release; gzip -9); target <= 1,500,000 B gzip each"
printf '   %-9s %-8s %10s %10s\n' function platform bytes gzip
row() { printf '   %-9s %-8s %10d %10d\n' "$1" "$2" "$(wc -c <"$3")" "$(gzip -9c "$3" | wc -c)"; }
for f in all "${FUNCTIONS[@]}"; do
    features=() out=build
    if [ "$f" != all ]; then features=(--no-default-features --features "$f"); out="build-$f"; fi
    WIKANTIK_WORKER_FEATURES=$([ "$f" = all ] || echo "$f") WIKANTIK_WORKER_OUT=$out \
        scripts/build-worker.sh >"$SIZES_DIR/worker-$f.log" 2>&1 || { tail -30 "$SIZES_DIR/worker-$f.log" >&2; exit 1; }
    row "$f" worker "functions/workers/$out/index_bg.wasm"
    cargo build --locked -q -p wikantik-spin --target wasm32-wasip2 --profile wasm "${features[@]}"
    cp "$TARGET_DIR/wasm32-wasip2/wasm/wikantik_spin.wasm" "$SIZES_DIR/spin-$f.wasm"
    row "$f" spin "$SIZES_DIR/spin-$f.wasm"
done
# Leave the default (every function) Spin component where spin.toml and the edge scripts expect it.
cargo build --locked -q -p wikantik-spin --target wasm32-wasip2 --profile wasm
