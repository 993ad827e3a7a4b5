# shellcheck shell=bash
# Sourced, not run: build the edge artifacts and start/stop the three targets.
# Used by scripts/edge-tests.sh, scripts/edge-bench.sh and scripts/edge-load-test.sh; run from
# the repository root.
#
#   edge_prepare        tools, builds, sample index, seeded stores (R2 local, moto, native dir)
#   edge_start_all      start native, workerd, wasmtime; sets NATIVE_URL WORKERD_URL WASMTIME_URL
#   edge_build_worker   the Worker alone (skipped when newer than its sources)
#   edge_r2_put DIR ""  seed local R2 ($EDGE/r2) with an index directory, pointer last
#   edge_start_workerd  `wrangler dev --local` alone; sets WORKERD_URL
#   edge_stop_targets   stop the servers started here, by PID (wrangler: launcher + children)
#   edge_stop_all       edge_stop_targets, then the S3 server
# Needs scripts/lib/common.sh and scripts/lib/s3-server.sh sourced first (the second sources
# the first).
# Work files live in .cache/edge (git-ignored); EDGE_DIR=<dir> moves them (e.g. when
# .cache is shared between working copies that run the suite at the same time).
#
#   EDGE_WIKI=<dir>    wiki to index (default: the sample wiki)
#   EDGE_MODEL=<dir>   build the index with section vectors from this model (the embedding
#                      cache in .cache/embeddings makes a rebuild cheap); default: no vectors
#   EDGE_PROFILE=lite  with EDGE_MODEL: the lite query-encoder profile (default quality)
#   EDGE_INDEX=<dir>   serve this built index instead of building one (the benchmark at
#                      scale, e.g. a scale-bench index); no second build is made, so the
#                      edge tests, whose publish-under-traffic case needs one, refuse it

EDGE="${EDGE_DIR:-$PWD/.cache/edge}"
export EDGE_DIR="$EDGE"
EDGE_TTL_SECS=${EDGE_TTL_SECS:-2}
EDGE_BUCKET=wikantik-edge
EDGE_PREFIX=wiki
R2_BUCKET=wikantik-shards
export WRANGLER_SEND_METRICS=false WRANGLER_HIDE_BANNER=true CLOUDFLARE_CF_FETCH_ENABLED=false DO_NOT_TRACK=1
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
export PATH="$PWD/tools/js/node_modules/.bin:$CARGO_HOME/bin:$PWD/.cache/tools/bin:$PATH"
# Dummy keys: moto accepts any; they make the Spin component sign every GET (SigV4).
export AWS_ACCESS_KEY_ID=edgetestkey AWS_SECRET_ACCESS_KEY=edgetestsecret AWS_REGION=us-east-1
TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
EDGE_PIDS=()

# edge_wait NAME URL PID LOG: wait up to 300 s for a target to answer /health (any status);
# with EDGE_READY=tcp (the benchmark) only for its port, so the first request stays cold.
edge_wait() {
    local name=$1 url=$2 pid=$3 log=$4
    if [ "${EDGE_READY:-http}" = tcp ]; then
        wait_for_port "${url##*:}" 300 "$pid" "$log" "$name" || return 1
    else
        wait_for_http --any-status "$url/health" 300 "$pid" "$log" "$name" || return 1
    fi
    echo "   $name on $url (pid $pid)"
}

edge_prepare() {
    mkdir -p "$EDGE"
    echo "== tools"
    scripts/install-tools.sh
    echo "== builds (native host, index-builder (release), Worker, Spin component)"
    local t0=$SECONDS
    # The test profile by default (shares every dependency with `cargo test`); the benchmark
    # sets EDGE_NATIVE_PROFILE=release for a fair native number.
    local profile=${EDGE_NATIVE_PROFILE:-dev} dir=debug
    [ "$profile" = dev ] || dir=$profile
    cargo build --locked --profile "$profile" -p wikantik-native
    INDEX_BUILDER=$(release_index_builder)
    NATIVE="$TARGET_DIR/$dir/wikantik-native"
    edge_build_worker
    cargo build --locked -p wikantik-spin --target wasm32-wasip2 --profile wasm
    SPIN_WASM="$TARGET_DIR/wasm32-wasip2/wasm/wikantik_spin.wasm"
    echo "   builds took $((SECONDS - t0)) s"
    echo "   Worker wasm: $(gzip -9c functions/workers/build/index_bg.wasm | wc -c) B gzip; Spin component: $(gzip -9c "$SPIN_WASM" | wc -c) B gzip"

    echo "== sample index and stores"
    rm -rf "$EDGE/index" "$EDGE/index2" "$EDGE/native-index" "$EDGE/r2" "$EDGE/wiki2"
    local wiki=${EDGE_WIKI:-examples/wiki}
    local vectors=()
    if [ -n "${EDGE_MODEL:-}" ]; then
        vectors=(--model "$EDGE_MODEL" --embedding-cache "$PWD/.cache/embeddings" --profile "${EDGE_PROFILE:-quality}")
        echo "   index with section vectors ($EDGE_MODEL, ${EDGE_PROFILE:-quality} query-encoder profile)"
    fi
    if [ -n "${EDGE_INDEX:-}" ]; then
        echo "   prebuilt index $EDGE_INDEX"
        cp -r "$EDGE_INDEX" "$EDGE/index"
    else
        "$INDEX_BUILDER" build "$wiki" --out "$EDGE/index" "${vectors[@]}" >/dev/null
        # The second build (for the publish-under-traffic test): one page changed.
        cp -r "$wiki" "$EDGE/wiki2"
        printf '\n\nA line added for the publish-under-traffic test about shards.\n' >>"$(find "$EDGE/wiki2" -maxdepth 1 -name "*.md" | sort | head -1)"
        "$INDEX_BUILDER" build "$EDGE/wiki2" --out "$EDGE/index2" "${vectors[@]}" >/dev/null
    fi
    "$INDEX_BUILDER" publish "$EDGE/index" --to "file://$EDGE/native-index" >/dev/null
    s3_server_start edge-s3 "$EDGE_BUCKET"
    AWS_ENDPOINT_URL="$S3_ENDPOINT" "$INDEX_BUILDER" publish "$EDGE/index" --to "s3://$EDGE_BUCKET/$EDGE_PREFIX" | tail -2
    edge_r2_put "$EDGE/index" ""
}

# The Worker (functions/workers/build). worker-build reruns wasm-bindgen and wasm-opt (Node)
# every time: skip it when the Worker is newer than every source it is built from.
edge_build_worker() {
    local wasm=functions/workers/build/index_bg.wasm
    # worker-build reruns wasm-bindgen and wasm-opt (Node) every time: skip it when the Worker
    # is newer than every source it is built from.
    if [ -f "$wasm" ] && [ -z "$(find shared functions/workers/src functions/workers/Cargo.toml Cargo.lock .cargo/config.toml -newer "$wasm" -print -quit)" ]; then
        echo "   Worker is up to date ($wasm)"
    else
        nice -n 5 scripts/build-worker.sh >"$EDGE/worker-build.log" 2>&1 || { tail -40 "$EDGE/worker-build.log" >&2; return 1; }
    fi
}

# edge_r2_put DIR SKIP_DIR: put every object of DIR into local R2 (objects also in SKIP_DIR
# are already there: content-addressed) with `wrangler r2 bulk put --local`, then the
# pointer last with `wrangler r2 object put --local`, so readers never see a pointer to a
# manifest that is not there yet.
edge_r2_put() {
    local dir=$1 skip=$2 t0=$SECONDS
    local list="$EDGE/r2-put.json"
    python3 - "$dir" "$skip" "$list" <<'PY'
import json, os, sys, filecmp
src, skip, out = sys.argv[1], sys.argv[2], sys.argv[3]
entries = []
for root, _, files in os.walk(src):
    for f in sorted(files):
        path = os.path.join(root, f)
        rel = os.path.relpath(path, src)
        if rel == "current.json":
            continue
        if skip and os.path.isfile(os.path.join(skip, rel)) and filecmp.cmp(path, os.path.join(skip, rel), shallow=False):
            continue
        entries.append({"key": rel, "file": os.path.abspath(path)})
json.dump(entries, open(out, "w"))

PY
    if [ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$list")" -gt 0 ]; then
        wrangler r2 bulk put "$R2_BUCKET" --filename "$list" --local --persist-to "$EDGE/r2" -y >>"$EDGE/r2-put.log" 2>&1 \
            || { tail -20 "$EDGE/r2-put.log" >&2; return 1; }
    fi
    wrangler r2 object put "$R2_BUCKET/current.json" --file "$dir/current.json" --local --persist-to "$EDGE/r2" >>"$EDGE/r2-put.log" 2>&1 \
        || { tail -20 "$EDGE/r2-put.log" >&2; return 1; }
    echo "   local R2: objects of $dir put in $((SECONDS - t0)) s"
}

edge_start_all() {
    echo "== starting targets"
    local port log pid
    port=$(free_port); log="$EDGE/native.log"
    start_bg pid "$log" "$NATIVE" serve --index "$EDGE/native-index" --addr "127.0.0.1:$port" \
        --pointer-ttl-secs "$EDGE_TTL_SECS" --mcp-allow-unrestricted
    EDGE_PIDS+=("$pid"); NATIVE_URL="http://127.0.0.1:$port"
    edge_wait native "$NATIVE_URL" "$pid" "$log"

    port=$(free_port); log="$EDGE/wasmtime.log"
    start_bg pid "$log" wasmtime serve --addr "127.0.0.1:$port" -Scli \
        --env "WIKANTIK_SHARDS_URL=$S3_ENDPOINT/$EDGE_BUCKET/$EDGE_PREFIX" --env "WIKANTIK_POINTER_TTL_SECS=$EDGE_TTL_SECS" \
        --env WIKANTIK_MCP_ALLOW_UNRESTRICTED=true --env "AWS_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID" \
        --env "AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY" --env "AWS_REGION=$AWS_REGION" \
        "$SPIN_WASM"
    EDGE_PIDS+=("$pid"); WASMTIME_URL="http://127.0.0.1:$port"
    edge_wait wasmtime "$WASMTIME_URL" "$pid" "$log"

    edge_start_workerd
    {
        echo "WIKANTIK_EDGE_NATIVE=$NATIVE_URL"; echo "WIKANTIK_EDGE_WORKERD=$WORKERD_URL"; echo "WIKANTIK_EDGE_WASMTIME=$WASMTIME_URL"
        echo "S3_ENDPOINT=$S3_ENDPOINT"; echo "INDEX_BUILDER=$INDEX_BUILDER"
    } >"$EDGE/targets.env"
}

# `wrangler dev --local` (workerd) over the local R2 in $EDGE/r2; sets WORKERD_URL.
edge_start_workerd() {
    local port log
    port=$(free_port); log="$EDGE/wrangler.log"
    # The root wrangler.toml without its [build] step (the Worker was built above) and with
    # an absolute `main`, so `wrangler dev` does not rebuild (wasm-opt under Node is slow).
    sed -e '/^\[build\]/,/^command/d' -e "s|^main = \"|main = \"$PWD/|" wrangler.toml >"$EDGE/wrangler.toml"
    # WRANGLER_PID: the benchmark looks for the Worker's own workerd socket under it.
    start_bg WRANGLER_PID "$log" wrangler dev -c "$EDGE/wrangler.toml" --local --ip 127.0.0.1 --port "$port" \
        --persist-to "$EDGE/r2" --show-interactive-dev-session=false \
        --var WIKANTIK_MCP_ALLOW_UNRESTRICTED:true --var "WIKANTIK_POINTER_TTL_SECS:$EDGE_TTL_SECS"
    export WRANGLER_PID
    EDGE_PIDS+=("$WRANGLER_PID"); WORKERD_URL="http://127.0.0.1:$port"
    edge_wait workerd "$WORKERD_URL" "$WRANGLER_PID" "$log"
}

# Stop the three servers (not the S3 server), each with its descendants (wrangler → node →
# workerd), by PID.
edge_stop_targets() {
    stop_pid ${EDGE_PIDS[@]+"${EDGE_PIDS[@]}"}
    EDGE_PIDS=()
}

edge_stop_all() {
    edge_stop_targets
    s3_server_stop
}
