#!/usr/bin/env bash
# The main job: build the bundled sample wiki and serve it (REST; MCP once mounted) on
# 127.0.0.1. Usage: scripts/run-demo.sh [PORT]   (default 8080; Ctrl-C stops it)
set -euo pipefail
cd "$(dirname "$0")/.."
port="${1:-8080}"
cargo build --release --locked -p wikantik-index-builder -p wikantik-native
./target/release/index-builder build examples/wiki --out index-out
base="http://127.0.0.1:${port}"
cat <<EOT

Serving the sample wiki on ${base} — try:

  curl -s '${base}/health'
  curl -s '${base}/api/bundle?q=how+do+I+publish+a+new+index&k=3'
  curl -s '${base}/api/briefing?clusters=retrieval&prompt=coverage+confidence&format=md'
  curl -s '${base}/api/briefing?pins=Glossary,Onboarding&budget=2000'

EOT
exec ./target/release/wikantik-native serve --index index-out --addr "127.0.0.1:${port}" --mcp-allow-unrestricted
