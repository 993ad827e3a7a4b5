#!/usr/bin/env bash
# The console page (GET /) in a real browser: headless Chromium from Debian's packages, driven by
# playwright-core (pinned in tests/console/package-lock.json; it drives the installed browser
# and downloads none).
#
#   scripts/console-tests.sh
#
# Builds the sample wiki (with vectors and the lite profile when scripts/fetch-model.sh has
# fetched the model, else lexical-only), mints an admin key with `index-builder keys new`,
# serves the index with the native host on a free 127.0.0.1 port, and runs
# tests/console/console.test.mjs: the page loads and shows the index's health; a question shows
# sections with their `slug @ version` citations and a confidence; a briefing renders as
# markdown with its token count; a restricted page never shows without a key and shows with
# the admin key. Screenshots of each step are kept in target/console-screenshots/.
#
# Installs what it lacks, idempotently: Debian's `chromium` (apt-get) and the npm packages
# (`npm ci`, skipped while the lock file is unchanged).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh

chromium=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
    echo "console-tests: installing Debian's chromium"
    if ! apt-get install -y -q chromium >/dev/null 2>&1; then
        apt-get update -q >/dev/null
        apt-get install -y -q chromium >/dev/null
    fi
fi

js=tests/console
stamp="$js/node_modules/.lock-sha256"
lock_sum=$(sha256sum "$js/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$lock_sum" ]; then
    echo "console-tests: npm ci in $js"
    (cd "$js" && npm ci --no-audit --no-fund --silent)
    echo "$lock_sum" >"$stamp"
fi

cargo build --locked -q -p wikantik-native
bin=${CARGO_TARGET_DIR:-target}/debug
index_builder=$(release_index_builder)
work=$(mktemp -d "${TMPDIR:-/tmp}/wikantik-console.XXXXXX")
host_pid=""
stop() { [ -z "$host_pid" ] || stop_pid "$host_pid"; }
cleanup_on_exit stop "$work" "$work/host.log"

dense=()
if compgen -G ".cache/models/all-MiniLM-L6-v2/.unpacked-from-*" >/dev/null; then
    dense=(--model .cache/models/all-MiniLM-L6-v2 --profile lite)
fi
"$index_builder" build examples/wiki --out "$work/index" -q "${dense[@]}"
key_out=$("$index_builder" keys new --scopes all --principals Admin --label console-test 2>/dev/null)
admin_key=$(sed -n 's/^key:  //p' <<<"$key_out")
admin_line=$(sed -n 's/^line: //p' <<<"$key_out")

port=$(free_port)
WIKANTIK_API_KEYS="$admin_line" start_bg host_pid "$work/host.log" \
    "$bin/wikantik-native" serve --index "$work/index" --addr "127.0.0.1:$port"
wait_for_http "http://127.0.0.1:$port/health" 60 "$host_pid" "$work/host.log" "native host"

mkdir -p target/console-screenshots
CONSOLE_URL="http://127.0.0.1:$port/" CONSOLE_ADMIN_KEY="$admin_key" CHROMIUM="$chromium" \
    CONSOLE_SCREENSHOTS="$PWD/target/console-screenshots" \
    node "$js/console.test.mjs"
