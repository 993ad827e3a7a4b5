#!/usr/bin/env bash
# The whole test suite: what `.ci/run` runs and what the README calls "run all tests".
# Installs what it needs (idempotent), then runs native tests, the WASM builds, and the
# corpus checks when ../shared/corpus is present (they skip with a message otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== toolchain"
rustup target add wasm32-unknown-unknown wasm32-wasip2 >/dev/null

echo "== native tests (all crates)"
cargo test --workspace --locked

echo "== publish tests against a local S3-compatible server (moto)"
scripts/s3-tests.sh

echo "== shell scripts (shellcheck; installed from the OS packages if missing)"
scripts/lint-shell.sh

echo "== the core builds for Cloudflare Workers (wasm32-unknown-unknown) and Spin (wasm32-wasip2)"
cargo build --locked -p wikantik --target wasm32-unknown-unknown
cargo build --locked -p wikantik --target wasm32-wasip2

echo "== all tests passed"
