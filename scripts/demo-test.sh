#!/usr/bin/env bash
# The README's main command as a new user meets it: copies the repository's tracked files into
# a fresh directory (no .cache, no index, no model), runs `scripts/run-demo.sh PORT` there, waits
# for it to serve, and checks that a bundle carries a real coverage confidence (strong, partial
# or weak — not `unknown`, which would mean the demo fell back to lexical-only retrieval), that
# the console page and /llms.txt answer, and that MCP lists its tools. The copy builds into this
# checkout's target directory (CARGO_TARGET_DIR), so only the demo's own work is repeated.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh

work=$(mktemp -d "${TMPDIR:-/tmp}/wikantik-demo.XXXXXX")
demo_pid=""
stop() { [ -z "$demo_pid" ] || stop_pid "$demo_pid"; }
cleanup_on_exit stop "$work" "$work/demo.log"

git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$work"

port=$(free_port)
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
start_bg demo_pid "$work/demo.log" bash -c "cd '$work' && exec scripts/run-demo.sh $port"
# A cold build of the two release binaries and the lite table's training take minutes.
wait_for_http "http://127.0.0.1:$port/health" 1500 "$demo_pid" "$work/demo.log" "run-demo.sh"

base="http://127.0.0.1:$port"
grep -q "hybrid retrieval, lite profile" "$work/demo.log" || { echo "FAIL: the demo did not say it serves hybrid retrieval"; exit 1; }
grep -q "claude mcp add --transport http" "$work/demo.log" || { echo "FAIL: no MCP client set-up printed"; exit 1; }
confidence=$(curl -sf "$base/api/bundle?q=how+do+I+publish+a+new+index&k=3" | python3 -c 'import json,sys; print(json.load(sys.stdin)["coverage"]["confidence"])')
echo "demo: bundle confidence $confidence"
case $confidence in
    strong|partial|weak) ;;
    *) echo "FAIL: the demo's bundle confidence is '$confidence'"; exit 1 ;;
esac
# (each answer is read whole before it is searched: `curl | grep -q` would fail under pipefail
# when grep stops reading early)
console=$(curl -sf "$base/")
grep -q 'id="bundle-form"' <<<"$console" || { echo "FAIL: no console page at /"; exit 1; }
llms=$(curl -sf "$base/llms.txt")
grep -q '^# ' <<<"$llms" || { echo "FAIL: no /llms.txt"; exit 1; }
tools=$(curl -sf "$base/knowledge-mcp" -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
    -H 'mcp-protocol-version: 2025-11-25' \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}' | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["result"]["tools"]))')
[ "$tools" = 21 ] || { echo "FAIL: MCP lists $tools tools"; exit 1; }
echo "demo: hybrid out of the box (confidence $confidence), console, llms.txt and 21 MCP tools served"
