#!/usr/bin/env bash
# `index-builder publish` against a real S3-compatible server on 127.0.0.1.
#
# Installs moto's S3 server (PyPI `moto[server]`, versions pinned in
# scripts/s3-server-requirements.txt) into .cache/s3-venv once (later runs skip the install),
# starts it on a free loopback port with its PID in .cache/s3-server.pid, creates the test
# bucket, runs the publish tests with WIKANTIK_S3_TEST_ENDPOINT / WIKANTIK_S3_TEST_BUCKET set,
# and stops the server by its PID on exit (also on failure or Ctrl-C).
#
# Without this script the S3 tests skip with a message; the file:// tests always run.
# Usage: scripts/s3-tests.sh [extra cargo test args]
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.cache/s3-venv
REQUIREMENTS=scripts/s3-server-requirements.txt
PIDFILE=.cache/s3-server.pid
LOG=.cache/s3-server.log
BUCKET=wikantik-test
mkdir -p .cache

echo "== S3 test server (moto_server, pinned in $REQUIREMENTS)"
STAMP="$VENV/.installed-$(sha256sum "$REQUIREMENTS" | cut -c1-16)"
if [ ! -f "$STAMP" ]; then
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$REQUIREMENTS"
    touch "$STAMP"
fi

# A server left behind by an interrupted run of this script: stop it by its saved PID.
if [ -f "$PIDFILE" ]; then
    kill "$(cat "$PIDFILE")" 2>/dev/null || true
    rm -f "$PIDFILE"
fi

PORT="${WIKANTIK_S3_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
ENDPOINT="http://127.0.0.1:$PORT"
"$VENV/bin/moto_server" -H 127.0.0.1 -p "$PORT" >"$LOG" 2>&1 &
SERVER_PID=$!
echo "$SERVER_PID" >"$PIDFILE"
stop_server() {
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    rm -f "$PIDFILE"
}
trap stop_server EXIT

for _ in $(seq 1 150); do
    if curl -sf -o /dev/null "$ENDPOINT/"; then break; fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        echo "moto_server exited; its log:" >&2
        cat "$LOG" >&2
        exit 1
    fi
    sleep 0.2
done
curl -sf -o /dev/null "$ENDPOINT/" || { echo "moto_server did not answer on $ENDPOINT within 30 s" >&2; cat "$LOG" >&2; exit 1; }
# moto does not check signatures, so a plain PUT creates the bucket.
curl -sf -o /dev/null -X PUT "$ENDPOINT/$BUCKET"
echo "   listening on $ENDPOINT (pid $SERVER_PID), bucket $BUCKET"

echo "== publish tests against $ENDPOINT"
export WIKANTIK_S3_TEST_ENDPOINT="$ENDPOINT"
export WIKANTIK_S3_TEST_BUCKET="$BUCKET"
cargo test -p wikantik-index-builder --locked --test publish "$@"
