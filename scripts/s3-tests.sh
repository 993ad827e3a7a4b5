#!/usr/bin/env bash
# `index-builder publish` against a real S3-compatible server on 127.0.0.1.
#
# Installs moto's S3 server (PyPI `moto[server]`, versions pinned in
# scripts/s3-server-requirements.txt) into .cache/s3-venv once (later runs skip the install),
# starts it on a free loopback port with its PID in .cache/s3-server.pid, creates the test
# bucket, runs the publish tests with WIKANTIK_S3_TEST_ENDPOINT / WIKANTIK_S3_TEST_BUCKET set,
# and stops the server by its PID on exit (also on failure or Ctrl-C). The start/stop logic
# is shared with scripts/edge-tests.sh (scripts/lib/s3-server.sh).
#
# Without this script the S3 tests skip with a message; the file:// tests always run.
# Usage: scripts/s3-tests.sh [extra cargo test args]
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/s3-server.sh
. scripts/lib/s3-server.sh

BUCKET=wikantik-test
echo "== S3 test server (moto_server, pinned in $S3_REQUIREMENTS)"
trap s3_server_stop EXIT
s3_server_start s3-server "$BUCKET"

echo "== publish tests against $S3_ENDPOINT"
export WIKANTIK_S3_TEST_ENDPOINT="$S3_ENDPOINT"
export WIKANTIK_S3_TEST_BUCKET="$BUCKET"
cargo test -p wikantik-index-builder --locked --test publish "$@"
