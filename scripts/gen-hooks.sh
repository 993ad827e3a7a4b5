#!/usr/bin/env bash
# The two client hooks from one source. clients/lib/briefing-hook-core.sh holds the code both
# hooks share; this script copies it (everything after its leading comment) between the
# "# ---- shared part" and "# ---- end of the shared part" lines of each hook, so each hook
# stays one self-contained POSIX sh file that users copy, and the shared code is written once.
# Each hook keeps its own header and its own last lines (what it prints).
#
#   scripts/gen-hooks.sh           rewrite the hooks' shared parts from the core
#   scripts/gen-hooks.sh --check   change nothing; fail and name every hook whose shared part
#                                  differs from the core (scripts/test.sh lint runs this)
set -euo pipefail
cd "$(dirname "$0")/.."

CORE=clients/lib/briefing-hook-core.sh
HOOKS=(clients/claude-code/briefing-hook.sh clients/antigravity/antigravity-briefing-hook.sh)
BEGIN="# ---- shared part (generated from $CORE by scripts/gen-hooks.sh: edit it there) ----"
END="# ---- end of the shared part -----------------------------------------------------------------"

check=0
case ${1:-} in
    --check) check=1 ;;
    "") ;;
    *) echo "usage: scripts/gen-hooks.sh [--check]" >&2; exit 2 ;;
esac

# The core without its leading comment block (which ends at the first blank line).
body=$(mktemp)
trap 'rm -f "$body" "$body.hook"' EXIT
awk 'started || /^$/ { started = 1; print }' "$CORE" >"$body"

stale=()
for hook in "${HOOKS[@]}"; do
    if ! grep -q '^# ---- shared part' "$hook" || ! grep -q '^# ---- end of the shared part' "$hook"; then
        echo "gen-hooks: $hook has no shared-part markers" >&2
        exit 1
    fi
    # The hook's own head, the markers around the core, the hook's own tail.
    awk -v begin="$BEGIN" -v end="$END" -v body="$body" '
        /^# ---- shared part/ { print begin; while ((getline line < body) > 0) print line; skip = 1; next }
        /^# ---- end of the shared part/ { print end; skip = 0; next }
        !skip' "$hook" >"$body.hook"
    if cmp -s "$body.hook" "$hook"; then
        continue
    fi
    if [ "$check" = 1 ]; then
        stale+=("$hook")
    else
        cat "$body.hook" >"$hook"     # in place: keeps the file's mode (executable)
        echo "gen-hooks: rewrote the shared part of $hook"
    fi
done

if [ ${#stale[@]} -gt 0 ]; then
    echo "gen-hooks: the shared part of ${stale[*]} differs from $CORE; run scripts/gen-hooks.sh" >&2
    exit 1
fi
[ "$check" = 1 ] && echo "gen-hooks: both hooks carry $CORE"
exit 0
