#!/usr/bin/env bash
# Run every cargo-fuzz (libFuzzer) target for a short, bounded time.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 20 s each, every target)
#
# Targets (fuzz/fuzz_targets/): page (frontmatter + page parsing through compile), chunker,
# shard_decode (pointer, manifest and every shard kind: bytes -> error, never a panic or a huge
# allocation), rest_query (query strings through service::handle), mcp (JSON-RPC bodies and tool
# arguments through service::handle), sparql (queries through sparql::execute).
#
# Each target starts from its committed seed corpus (fuzz/seeds/TARGET, small inputs of our own)
# plus what earlier runs found (fuzz/corpus/TARGET, git-ignored). Limits: -malloc_limit_mb=512
# (an allocation blow-up is a crash), -rss_limit_mb=2048, -timeout=10 (a hang is a crash).
# A crash leaves its input in fuzz/artifacts/TARGET/ and fails the script; turn it into a
# regression test in the normal suite (tests/tests/hostile_input.rs), named after what it
# found, and fix the bug.
#
# cargo-fuzz needs nightly compiler flags (-Zsanitizer, -Cpasses=sancov); this machine has only
# the stable toolchain, so the script sets RUSTC_BOOTSTRAP=1, which lets stable rustc accept
# them. cargo-fuzz itself is installed at a pinned version if missing (idempotent).
#
# Longer runs (e.g. an hour per target, 2 jobs):
#   RUSTC_BOOTSTRAP=1 cargo fuzz run shard_decode fuzz/corpus/shard_decode fuzz/seeds/shard_decode \
#     -- -max_total_time=3600 -jobs=2 -malloc_limit_mb=512 -timeout=10
# Reproduce a crash:  RUSTC_BOOTSTRAP=1 cargo fuzz run TARGET fuzz/artifacts/TARGET/crash-…
#
# Env: FUZZ_SANITIZER=address (default none: our code is safe Rust and the sanitizer doubles
# the build time; use address for longer runs). Runs of at most 60 s a target build at
# opt-level 1 (CARGO_PROFILE_RELEASE_OPT_LEVEL overrides it).
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_FUZZ_VERSION=0.13.1
seconds=${1:-20}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(page chunker shard_decode rest_query mcp sparql)

export RUSTC_BOOTSTRAP=1
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
if cargo fuzz --version 2>/dev/null | grep -qwF "$CARGO_FUZZ_VERSION"; then
  echo "fuzz: present     cargo-fuzz $CARGO_FUZZ_VERSION"
else
  echo "fuzz: installing  cargo-fuzz $CARGO_FUZZ_VERSION"
  cargo install cargo-fuzz --locked --version "$CARGO_FUZZ_VERSION"
fi

sanitizer=${FUZZ_SANITIZER:-none}
# Short runs (the test suite's 10 s a target) build at opt-level 1: the build is most of their
# time, and a crash names its file and line all the same (line tables). Longer runs build at
# opt-level 3, for more executions a second.
export CARGO_PROFILE_RELEASE_OPT_LEVEL="${CARGO_PROFILE_RELEASE_OPT_LEVEL:-$([ "$seconds" -le 60 ] && echo 1 || echo 3)}"
# The fuzz crate is not a workspace member; keep its artifacts apart from the workspace's.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}/fuzz"
echo "fuzz: building ${#targets[@]} targets (sanitizer $sanitizer)"
(cd fuzz && cargo fuzz build --sanitizer "$sanitizer")

failed=()
for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
  started=$(date +%s)
  if (cd fuzz && cargo fuzz run --sanitizer "$sanitizer" "$t" "corpus/$t" "seeds/$t" -- \
        -max_total_time="$seconds" -malloc_limit_mb=512 -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 >"artifacts/$t/last-run.log" 2>&1); then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "fuzz/artifacts/$t/last-run.log" | grep -o '[0-9]*$' || echo '?')
    echo "fuzz: ok      $t ($runs runs in $(( $(date +%s) - started )) s)"
  else
    echo "fuzz: CRASH   $t — input in fuzz/artifacts/$t/, log:"
    tail -n 40 "fuzz/artifacts/$t/last-run.log"
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} target(s) crashed: ${failed[*]}"
  exit 1
fi
echo "fuzz: ${#targets[@]} passed, 0 failed"
