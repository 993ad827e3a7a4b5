#!/usr/bin/env bash
# The whole test suite: what `.ci/run` runs and what the README calls "the whole test suite".
# Installs what it needs (idempotent, pinned), then runs every suite of every tier of
# scripts/test.sh, in order, each stamped with the elapsed time. Tests that need the real
# corpus (kept beside the repository, not shipped) or the model files skip with a message when
# those are absent. `scripts/test.sh TIER` runs one tier (fast, edge, mcp, reliability, eval,
# lint).
set -euo pipefail
# One build from scratch: incremental compilation's caches would only cost disk (gigabytes) and
# time here.
export CARGO_INCREMENTAL=0
exec "$(dirname "$0")/test.sh" all
