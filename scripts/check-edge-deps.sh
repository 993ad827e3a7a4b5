#!/usr/bin/env bash
# The edge links only the query side (ARCHITECTURE.md, "The one-way rule"): fails when the
# dependency tree of an edge function — the Worker (wasm32-unknown-unknown) and the Spin
# component (wasm32-wasip2), with every function and with each function alone — contains a
# build-only crate: the index build and text analysis (wikantik-compiler, wikantik-text), HNSW
# construction (instant-distance), HTML and Markdown parsing (lol_html, pulldown-cmark), YAML
# (serde_yaml*, unsafe-libyaml). rayon is allowed only as a dependency of `tokenizers` (the
# query encoder's tokenizer, which depends on it unconditionally and never starts a pool in a
# function); any other crate that pulls it in fails the check.
set -euo pipefail
cd "$(dirname "$0")/.."

forbidden='^(wikantik-compiler|wikantik-text|instant-distance|lol_html|pulldown-cmark|serde_yaml|serde_yaml_ng|unsafe-libyaml)$'
rayon_users_allowed='^(rayon|rayon-cond|tokenizers)$'
failed=0

check() {
    local package=$1 target=$2 features=$3 tree found users
    local args=(-p "$package" --target "$target" -e "normal,build" --prefix none)
    if [ "$features" != all ]; then args+=(--no-default-features --features "$features"); fi
    tree=$(cargo tree "${args[@]}" | sed 's/ v[0-9].*//' | sort -u)
    found=$(grep -E "$forbidden" <<<"$tree" || true)
    users=""
    if grep -qx rayon <<<"$tree"; then
        users=$(cargo tree "${args[@]}" -i rayon --depth 1 | sed 's/ v[0-9].*//' | sort -u | grep -vE "$rayon_users_allowed" || true)
    fi
    if [ -n "$found$users" ]; then
        echo "FAIL: $package ($target, features: $features) links build-only crates: $(echo "$found" "$users" | xargs)"
        failed=1
    else
        echo "   $package ($target, features: $features): query side only"
    fi
}

for features in all bundle briefing graph sparql mcp; do
    check wikantik-workers wasm32-unknown-unknown "$features"
    check wikantik-spin wasm32-wasip2 "$features"
done
exit "$failed"
