# shellcheck shell=bash
# Functions every test and benchmark script uses (sourced, not run): local servers on
# 127.0.0.1 only, started in the background and stopped by PID, and pinned Python venvs.
#
#   free_port                         print a free TCP port on 127.0.0.1
#   start_bg VAR LOG CMD...           run CMD in the background, stdout and stderr to LOG;
#                                     set VAR to its PID
#   wait_for_http [--any-status] URL TIMEOUT PID [LOG [NAME]]
#                                     wait until URL answers 2xx (any HTTP answer with
#                                     --any-status); fail, with the last lines of LOG, when PID
#                                     exits first or after TIMEOUT seconds
#   wait_for_port PORT TIMEOUT PID [LOG [NAME]]
#                                     the same for a TCP connection to 127.0.0.1:PORT (no
#                                     request is sent, so a benchmark's first request stays cold)
#   descendants PID                   print every descendant of PID, one per line
#   stop_pid PID...                   stop each PID and its descendants (children first), then
#                                     wait for it; never fails
#   ensure_venv DIR REQUIREMENTS [PIP_ARGS...]
#                                     a venv at DIR with REQUIREMENTS installed, rebuilt only
#                                     when the requirements file changes
#   cleanup_on_exit STOP WORK LOG...  on exit (Ctrl-C and TERM exit with 130): run the function
#                                     STOP (it stops the servers), print the last lines of each
#                                     LOG that exists when the script fails, remove the
#                                     directory WORK, and keep the exit status
#   release_index_builder             build the release index-builder (a no-op when the eval or
#                                     the demo built it) and print its path: indexes with vectors
#                                     are built by the release binary, whose embedding and lite
#                                     training take seconds where the dev profile's take minutes
#   run_load_client BIN URL REQUESTS MAX_SECONDS
#                                     the `load` client (tests/src/bin/load.rs) with the mix and
#                                     the settings of the load tests (LOAD_THREADS,
#                                     LOAD_ENFORCE_LATENCY)

release_index_builder() {
    cargo build --release --locked -q -p wikantik-index-builder >&2
    echo "${CARGO_TARGET_DIR:-$PWD/target}/release/index-builder"
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# (The locals have names no caller uses for VAR: printf -v sets the caller's variable.)
start_bg() {
    local start_bg_var=$1 start_bg_log=$2
    shift 2
    "$@" >"$start_bg_log" 2>&1 &
    printf -v "$start_bg_var" '%s' "$!"
}

# wait_until NAME TIMEOUT PID LOG CHECK...: run CHECK every 0.1 s until it succeeds.
wait_until() {
    local name=$1 timeout=$2 pid=$3 log=$4 deadline
    shift 4
    deadline=$((SECONDS + timeout))
    while ! "$@"; do
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "$name (pid $pid) exited before it answered; last lines of its log:" >&2
            tail -n 40 "$log" >&2 2>/dev/null || true
            return 1
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            echo "$name (pid $pid) did not answer within $timeout s; last lines of its log:" >&2
            tail -n 40 "$log" >&2 2>/dev/null || true
            return 1
        fi
        sleep 0.1
    done
}

http_2xx() { curl -fs -o /dev/null "$1" 2>/dev/null; }
http_answers() { curl -s -o /dev/null "$1" 2>/dev/null; }
tcp_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for_http() {
    local check=http_2xx
    if [ "$1" = --any-status ]; then check=http_answers; shift; fi
    wait_until "${5:-$1}" "$2" "$3" "${4:-/dev/null}" "$check" "$1"
}

wait_for_port() {
    wait_until "${5:-127.0.0.1:$1}" "$2" "$3" "${4:-/dev/null}" tcp_open "$1"
}

descendants() {
    local child
    for child in $(pgrep -P "$1" 2>/dev/null); do
        echo "$child"
        descendants "$child"
    done
}

# The tree of PID, children first (wrangler → node → workerd), each by its own PID.
kill_tree() {
    local child
    for child in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$child"; done
    kill "$1" 2>/dev/null || true
}

stop_pid() {
    local pid
    for pid in "$@"; do [ -n "$pid" ] && kill_tree "$pid"; done
    for pid in "$@"; do [ -n "$pid" ] && { wait "$pid" 2>/dev/null || true; }; done
    return 0
}

ensure_venv() {
    local dir=$1 requirements=$2 sum
    shift 2
    sum=$(sha256sum "$requirements" | cut -d' ' -f1)
    if [ "$(cat "$dir/.requirements-sha256" 2>/dev/null)" != "$sum" ]; then
        echo "   installing $requirements into $dir"
        rm -rf "$dir"
        python3 -m venv "$dir"
        "$dir/bin/pip" install --quiet --disable-pip-version-check --no-input "$@" -r "$requirements"
        echo "$sum" >"$dir/.requirements-sha256"
    fi
}

cleanup_on_exit() {
    CLEANUP_STOP=$1 CLEANUP_WORK=$2
    shift 2
    CLEANUP_LOGS=("$@")
    trap run_cleanup EXIT
    trap 'exit 130' INT TERM
}

run_cleanup() {
    local status=$? log
    "$CLEANUP_STOP"
    if [ "$status" -ne 0 ]; then
        for log in ${CLEANUP_LOGS[@]+"${CLEANUP_LOGS[@]}"}; do
            [ -f "$log" ] || continue
            echo "--- last lines of $(basename "$log")"
            tail -n 20 "$log"
        done
    fi
    rm -rf "$CLEANUP_WORK"
    exit "$status"
}

run_load_client() {
    local bin=$1 url=$2 requests=$3 max_seconds=$4 extra=()
    [ "${LOAD_ENFORCE_LATENCY:-0}" = 1 ] && extra+=(--enforce-latency)
    "$bin" --url "$url" --requests "$requests" --max-seconds "$max_seconds" \
        --threads "${LOAD_THREADS:-4}" --warmup 1 "${extra[@]}"
}
