# shellcheck shell=bash
# Shared helper (sourced, not run): a local S3-compatible server (moto_server, PyPI
# `moto[server]` pinned in scripts/s3-server-requirements.txt) on 127.0.0.1, started and
# stopped by PID. Used by scripts/s3-tests.sh and scripts/edge-tests.sh.
#
#   s3_server_start NAME BUCKET   install once into .cache/s3-venv, start on a free port,
#                                 create BUCKET; sets S3_ENDPOINT and S3_SERVER_PID
#                                 (PID file .cache/NAME.pid, log .cache/NAME.log)
#   s3_server_stop                stop the server started above (by its PID)
# The caller must run from the repository root.

S3_VENV=.cache/s3-venv
S3_REQUIREMENTS=scripts/s3-server-requirements.txt

s3_server_install() {
    local stamp
    stamp="$S3_VENV/.installed-$(sha256sum "$S3_REQUIREMENTS" | cut -c1-16)"
    if [ ! -f "$stamp" ]; then
        rm -rf "$S3_VENV"
        python3 -m venv "$S3_VENV"
        "$S3_VENV/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$S3_REQUIREMENTS"
        touch "$stamp"
    fi
}

s3_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

s3_server_start() {
    local name=$1 bucket=$2 port
    mkdir -p .cache
    s3_server_install
    S3_PIDFILE=.cache/$name.pid
    S3_LOG=.cache/$name.log
    # A server left behind by an interrupted run: stop it by its saved PID.
    if [ -f "$S3_PIDFILE" ]; then
        kill "$(cat "$S3_PIDFILE")" 2>/dev/null || true
        rm -f "$S3_PIDFILE"
    fi
    port="${WIKANTIK_S3_PORT:-$(s3_free_port)}"
    S3_ENDPOINT="http://127.0.0.1:$port"
    "$S3_VENV/bin/moto_server" -H 127.0.0.1 -p "$port" >"$S3_LOG" 2>&1 &
    S3_SERVER_PID=$!
    echo "$S3_SERVER_PID" >"$S3_PIDFILE"
    for _ in $(seq 1 150); do
        if curl -sf -o /dev/null "$S3_ENDPOINT/"; then break; fi
        if ! kill -0 "$S3_SERVER_PID" 2>/dev/null; then
            echo "moto_server exited; its log:" >&2
            cat "$S3_LOG" >&2
            return 1
        fi
        sleep 0.2
    done
    curl -sf -o /dev/null "$S3_ENDPOINT/" || { echo "moto_server did not answer on $S3_ENDPOINT within 30 s" >&2; cat "$S3_LOG" >&2; return 1; }
    # moto does not check signatures, so a plain PUT creates the bucket.
    curl -sf -o /dev/null -X PUT "$S3_ENDPOINT/$bucket"
    echo "   moto_server on $S3_ENDPOINT (pid $S3_SERVER_PID), bucket $bucket"
}

s3_server_stop() {
    if [ -n "${S3_SERVER_PID:-}" ]; then
        kill "$S3_SERVER_PID" 2>/dev/null || true
        wait "$S3_SERVER_PID" 2>/dev/null || true
        rm -f "${S3_PIDFILE:-}"
        S3_SERVER_PID=
    fi
}
