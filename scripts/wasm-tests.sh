#!/usr/bin/env bash
# The core's end-to-end tests inside WebAssembly (shared/wikantik/tests/wasm.rs; the same tests run
# natively as shared/wikantik/tests/in_memory.rs, so these runs are a parity check):
#
#   1. wasm32-unknown-unknown (Cloudflare Workers): wasm-bindgen-test under Node;
#   2. the core still builds for wasm32-wasip2 (Spin);
#   3. wasm32-wasip2: the same tests under wasmtime (skipped with a message when wasmtime
#      could not be installed; set WASM_TESTS_WASIP2=0 to skip it on purpose).
#
# Installs what it needs first (scripts/install-tools.sh; fast when already installed).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-tools.sh
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PWD/.cache/tools/bin:$PATH"

# No `cargo test -q` here: cargo passes `--quiet` on to the runner, and
# wasm-bindgen-test-runner 0.2.130 rejects it ("unexpected argument '--quiet'").
echo "== core tests in wasm32-unknown-unknown, under Node $(node --version)"
cargo test --locked -p wikantik --target wasm32-unknown-unknown --test wasm

echo "== the core builds for wasm32-wasip2"
cargo build --locked -p wikantik --target wasm32-wasip2

if [[ ${WASM_TESTS_WASIP2:-1} == 0 ]]; then
    echo "== SKIP core tests in wasm32-wasip2 (WASM_TESTS_WASIP2=0)"
elif ! command -v wasmtime >/dev/null; then
    echo "== SKIP core tests in wasm32-wasip2: wasmtime is not installed (see scripts/install-tools.sh)"
else
    echo "== core tests in wasm32-wasip2, under $(wasmtime --version)"
    CARGO_TARGET_WASM32_WASIP2_RUNNER=wasmtime \
        cargo test --locked -p wikantik --target wasm32-wasip2 --test wasm
fi
