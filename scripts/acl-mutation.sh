#!/usr/bin/env bash
# Mutation check of the ACL leak suite: proves tests/tests/acl_leaks.rs can fail.
#
#   scripts/acl-mutation.sh
#
# Builds the leak suite once with `--features acl-mutation` (the core then contains the
# deliberate ACL bugs of `wikantik::access::mutation`; normal builds do not), runs it once with
# no mutation (it must pass: the switch alone changes nothing), then once per mutation with
# WIKANTIK_ACL_MUTATION=<name> — the gate skipped for REST bundles and briefings, for MCP
# tools, for the graph routes, for SPARQL; neighbour searches that step through hidden pages;
# restricted pages named as restricted rather than missing; sub-cluster edges tied to the
# sub-cluster's first member again; and ACLs looked for in the body after HTML blocks are
# reduced (a directive in an HTML comment is lost). Every mutated run must fail; the script
# fails if any passes, and prints which tests caught each mutation. The same test binary
# serves every run (one extra build in all).
set -euo pipefail
cd "$(dirname "$0")/.."

mutations=(rest-bundles mcp-tools graph graph-steps sparql wording cluster-edges html-comments)
cargo=(cargo test --locked -p wikantik-tests --features acl-mutation --test end_to_end)

echo "== build the leak suite with the ACL mutations compiled in"
"${cargo[@]}" --no-run

log=$(mktemp "${TMPDIR:-/tmp}/acl-mutation.XXXXXX")
trap 'rm -f "$log"' EXIT

echo "== no mutation: the suite passes"
if ! WIKANTIK_ACL_MUTATION=none "${cargo[@]}" -q -- acl_leaks:: >"$log" 2>&1; then
    tail -40 "$log"
    echo "FAIL: the leak suite fails without a mutation"
    exit 1
fi

survivors=()
for m in "${mutations[@]}"; do
    if WIKANTIK_ACL_MUTATION=$m "${cargo[@]}" -q -- acl_leaks:: --test-threads 2 >"$log" 2>&1; then
        echo "   $m: SURVIVED (the leak suite passed with this ACL bug)"
        survivors+=("$m")
    else
        caught=$(sed -n 's/^---- acl_leaks::\([a-z_]*\) stdout ----$/\1/p' "$log" | sort | tr '\n' ' ')
        if [ -z "$caught" ]; then
            tail -20 "$log"
            echo "FAIL: $m: the suite failed without a failing test (build or harness error)"
            exit 1
        fi
        echo "   $m: caught by $caught"
    fi
done

if [ ${#survivors[@]} -gt 0 ]; then
    echo "FAIL: the leak suite missed: ${survivors[*]}"
    exit 1
fi
echo "== every ACL mutation was caught"
