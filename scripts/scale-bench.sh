#!/usr/bin/env bash
# The scale benchmark: wikis of N pages made from the evaluation corpus, built and served.
#
# For each N (default 1201 12010; 120100 is the 120k run):
#   1. scripts/scale/make-wiki.py makes an N-page wiki (renamed, perturbed copies of the
#      corpus with links, clusters and a share of ACLs remapped);
#   2. the lexical build (`index-builder build`), timed, with its peak memory;
#   3. for each profile in SCALE_PROFILES (default `lite`), the build with section vectors
#      made from the corpus's real ones (index-builder/examples/scale_index.rs: embedding a
#      large wiki is out of reach on two cores), timed, with its peak memory;
#   4. target/release/scale-bench on every index built: per request kind (bundle, briefing,
#      MCP assemble_bundle and list_pages, a SPARQL count, a graph route) the cold bytes,
#      object reads, time and peak heap of a fresh instance, the warm p50/p95, and which
#      shards the cold bytes are made of.
#
# Prints figures and asserts nothing (docs/BENCHMARKS.md keeps the runs). Needs the corpus
# beside the repository (skips without it) and, for vectors, the model (scripts/fetch-model.sh)
# with the corpus's embeddings in .cache/embeddings (scripts/eval.sh fills it).
#
# Usage: scripts/scale-bench.sh [N...]
#   SCALE_DIR       where wikis and indexes go (default target/scale-bench; reused: a wiki
#                   or index already there is not rebuilt, SCALE_REBUILD=1 rebuilds)
#   SCALE_PROFILES  vector profiles to build and serve besides lexical ("" for none)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/common.sh
. scripts/lib/common.sh

CORPUS=${WIKANTIK_CORPUS:-../shared/corpus/wikantik-pages}
if [[ ! -d "$CORPUS" ]]; then
  echo "scale-bench: SKIPPED — no corpus at $CORPUS"
  exit 0
fi
SIZES=("$@")
[[ ${#SIZES[@]} -gt 0 ]] || SIZES=(1201 12010)
DIR=${SCALE_DIR:-target/scale-bench}
PROFILES=${SCALE_PROFILES-lite}
MODEL=.cache/models/all-MiniLM-L6-v2
mkdir -p "$DIR"

BIN=$(release_index_builder)
cargo build --release --locked -q -p wikantik-tests --bin scale-bench
cargo build --release --locked -q -p wikantik-index-builder --example scale_index
BENCH=${CARGO_TARGET_DIR:-target}/release/scale-bench
SCALE_INDEX=${CARGO_TARGET_DIR:-target}/release/examples/scale_index
[[ -z "$PROFILES" ]] || scripts/fetch-model.sh

# timed LOG INDEX CMD...: run CMD (which builds INDEX) with /usr/bin/time -v, output to LOG;
# print its wall time, peak memory and the index's size.
timed() {
  local log=$1 index=$2
  shift 2
  /usr/bin/time -v "$@" >"$log" 2>&1 || { tail -20 "$log" >&2; return 1; }
  local wall rss
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")
  echo "    build: ${wall} wall, peak memory $((rss / 1024)) MB, index $(du -sh "$index" | cut -f1)"
}

for n in "${SIZES[@]}"; do
  wiki=$DIR/wiki-$n
  echo "== $n pages"
  if [[ ! -d $wiki || ${SCALE_REBUILD:-0} == 1 ]]; then
    rm -rf "$wiki"
    python3 scripts/scale/make-wiki.py "$CORPUS" "$wiki" "$n"
  fi
  for profile in lexical $PROFILES; do
    index=$DIR/index-$n-$profile
    if [[ ! -f $index/current.json || ${SCALE_REBUILD:-0} == 1 ]]; then
      rm -rf "$index"
      echo "  $profile build"
      if [[ $profile == lexical ]]; then
        timed "$DIR/build-$n-$profile.log" "$index" "$BIN" build "$wiki" --out "$index" -q
      else
        timed "$DIR/build-$n-$profile.log" "$index" "$SCALE_INDEX" "$CORPUS" "$wiki" "$index" "$MODEL" "$profile"
      fi
    fi
    echo "  $profile serve"
    "$BENCH" "$index"
  done
done
