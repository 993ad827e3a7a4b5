#!/usr/bin/env bash
# Build the Cloudflare Worker (functions/workers) with worker-build: wasm-bindgen, wasm-opt
# and esbuild from pinned local copies (no downloads), opt-level "z" + LTO.
#
#   WIKANTIK_WORKER_FEATURES   routes to build (comma-separated: bundle,briefing,mcp);
#                              unset = every route (the default features)
# Output: functions/workers/build/{index.js,index_bg.wasm}. Called by wrangler's [build].
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
export PATH="$ROOT/tools/js/node_modules/.bin:$CARGO_HOME/bin:$PATH"
export WASM_BINDGEN_BIN="${WASM_BINDGEN_BIN:-$(command -v wasm-bindgen)}"
export ESBUILD_BIN="${ESBUILD_BIN:-$ROOT/tools/js/node_modules/@esbuild/linux-x64/bin/esbuild}"
export WASM_OPT_BIN="${WASM_OPT_BIN:-$ROOT/tools/js/node_modules/.bin/wasm-opt}"
export CARGO_PROFILE_RELEASE_OPT_LEVEL=z CARGO_PROFILE_RELEASE_LTO=true CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
args=()
if [ -n "${WIKANTIK_WORKER_FEATURES:-}" ]; then
    args=(-- --no-default-features --features "$WIKANTIK_WORKER_FEATURES")
fi
cd functions/workers
exec worker-build --release "${args[@]}"
