#!/usr/bin/env bash
# Build the Cloudflare Worker (functions/workers) with worker-build: wasm-bindgen, wasm-opt
# and esbuild from pinned local copies (no downloads), opt-level "z" + LTO; then strip the
# WASM's name section.
#
#   WIKANTIK_WORKER_FEATURES   functions to build (comma-separated: bundle, briefing, graph,
#                              sparql, mcp); unset = every function (the default features)
#   WIKANTIK_WORKER_OUT        output directory under functions/workers (default: build)
# Output: functions/workers/<out>/{index.js,index_bg.wasm}. Called by wrangler's [build]
# (wrangler.toml: the default Worker, and one [env.<function>] per function).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
export PATH="$ROOT/tools/js/node_modules/.bin:$CARGO_HOME/bin:$PATH"
export WASM_BINDGEN_BIN="${WASM_BINDGEN_BIN:-$(command -v wasm-bindgen)}"
export ESBUILD_BIN="${ESBUILD_BIN:-$ROOT/tools/js/node_modules/@esbuild/linux-x64/bin/esbuild}"
export WASM_OPT_BIN="${WASM_OPT_BIN:-$ROOT/tools/js/node_modules/.bin/wasm-opt}"
export CARGO_PROFILE_RELEASE_OPT_LEVEL=z CARGO_PROFILE_RELEASE_LTO=true CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
args=(--release --out-dir "${WIKANTIK_WORKER_OUT:-build}")
if [ -n "${WIKANTIK_WORKER_FEATURES:-}" ]; then
    args+=(-- --no-default-features --features "$WIKANTIK_WORKER_FEATURES")
fi
cd functions/workers
worker-build "${args[@]}"
# worker-build's wasm-opt keeps the `name` section (function names, ~0.6 MB of the Worker);
# no host needs it, so drop it (no optimisation passes: only the section goes).
wasm="${WIKANTIK_WORKER_OUT:-build}/index_bg.wasm"
"$WASM_OPT_BIN" --all-features --strip-debug --strip-producers "$wasm" -o "$wasm"
