#!/usr/bin/env bash
# Exact scan vs HNSW at growing section counts (the measurement behind ann::ANN_THRESHOLD;
# docs/BUILDING.md "ANN (HNSW) for large indexes", runs in docs/BENCHMARKS.md): prepares the data sets natively from the real corpus vectors in the embedding
# cache, then times both searches natively and, when a wasmtime CLI is present, in WASM
# (wasm32-wasip2 + simd128, the Spin build's target).
#
# Needs: the embedding cache filled by a corpus build or scripts/eval.sh, and the model for the
# query vectors (scripts/fetch-model.sh; without it, perturbed held-out section vectors are the
# queries). Usage: scripts/ann-bench.sh [N,N,…]   (default 2k,5k,10k,20k,50k,100k)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
SIZES=${1:--}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
CACHE=${WIKANTIK_EMBEDDING_CACHE:-.cache/embeddings/sentence-transformers_all-MiniLM-L6-v2@bb7b3d68ee33f67e}
MODEL=.cache/models/all-MiniLM-L6-v2.int8.cbor
QUERIES=${WIKANTIK_EVAL_QUERIES:-../shared/eval/retrieval-queries.csv}
OUT=${ANN_BENCH_DIR:-$CARGO_TARGET_DIR/ann-bench}
[[ -d "$CACHE" ]] || { echo "ann-bench: SKIPPED — no embedding cache at $CACHE"; exit 0; }
query_args=()
[[ -f "$MODEL" && -f "$QUERIES" ]] && query_args=("$MODEL" "$QUERIES")
cargo build --release -q -p wikantik --example ann_bench
BIN="$CARGO_TARGET_DIR/release/examples/ann_bench"
"$BIN" prepare "$CACHE" "$OUT" "$SIZES" "${query_args[@]}"
"$BIN" run "$OUT"
WASMTIME=${WASMTIME:-$ROOT/.cache/tools/bin/wasmtime}
if [[ -x "$WASMTIME" ]]; then
  RUSTFLAGS="-C target-feature=+simd128" cargo build --release -q -p wikantik --example ann_bench --target wasm32-wasip2
  "$WASMTIME" run --dir "$OUT::/bench" "$CARGO_TARGET_DIR/wasm32-wasip2/release/examples/ann_bench.wasm" run /bench
else
  echo "ann-bench: no wasmtime (scripts/install-tools.sh or WASMTIME=…): WASM figures skipped"
fi
