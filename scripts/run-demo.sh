#!/usr/bin/env bash
# The main job: build the bundled sample wiki into ./index-out and print what was built.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release --locked -p wikantik-index-builder -- build examples/wiki --out index-out "$@"
