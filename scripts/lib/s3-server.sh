# shellcheck shell=bash
# Sourced, not run: a local S3-compatible server (moto_server, PyPI `moto[server]` pinned in
# scripts/s3-server-requirements.txt) on 127.0.0.1, started and stopped by PID. Used by
# scripts/s3-tests.sh and scripts/edge-tests.sh.
#
#   s3_server_start NAME BUCKET   install once into .cache/s3-venv, start on a free port,
#                                 create BUCKET; sets S3_ENDPOINT and S3_SERVER_PID
#                                 (PID file .cache/NAME.pid, log .cache/NAME.log)
#   s3_server_stop                stop the server started above (by its PID)
# The caller must run from the repository root.

# shellcheck source=scripts/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

S3_VENV=.cache/s3-venv
S3_REQUIREMENTS=scripts/s3-server-requirements.txt

s3_server_start() {
    local name=$1 bucket=$2 port
    mkdir -p .cache
    ensure_venv "$S3_VENV" "$S3_REQUIREMENTS"
    S3_PIDFILE=.cache/$name.pid
    S3_LOG=.cache/$name.log
    # A server left behind by an interrupted run: stop it by its saved PID.
    if [ -f "$S3_PIDFILE" ]; then
        kill "$(cat "$S3_PIDFILE")" 2>/dev/null || true
        rm -f "$S3_PIDFILE"
    fi
    port="${WIKANTIK_S3_PORT:-$(free_port)}"
    S3_ENDPOINT="http://127.0.0.1:$port"
    start_bg S3_SERVER_PID "$S3_LOG" "$S3_VENV/bin/moto_server" -H 127.0.0.1 -p "$port"
    echo "$S3_SERVER_PID" >"$S3_PIDFILE"
    wait_for_http "$S3_ENDPOINT/" 30 "$S3_SERVER_PID" "$S3_LOG" moto_server || return 1
    # moto does not check signatures, so a plain PUT creates the bucket.
    curl -sf -o /dev/null -X PUT "$S3_ENDPOINT/$bucket"
    echo "   moto_server on $S3_ENDPOINT (pid $S3_SERVER_PID), bucket $bucket"
}

s3_server_stop() {
    if [ -n "${S3_SERVER_PID:-}" ]; then
        stop_pid "$S3_SERVER_PID"
        rm -f "${S3_PIDFILE:-}"
        S3_SERVER_PID=
    fi
}
