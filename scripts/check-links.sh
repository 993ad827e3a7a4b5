#!/usr/bin/env bash
# Check the relative links of the repository's documentation: every `[text](target)` in
# README.md, ARCHITECTURE.md, docs/*.md and clients/**/*.md whose target is not a URL must name
# a file or directory inside this repository (so the link works from a fresh clone), and a
# `#fragment` on a Markdown target (or on its own) must name a heading of that file (GitHub's
# heading anchors). Links into the folder beside the repository (`../shared/...`: the
# specification and the evaluation corpus, not shipped) are refused: say in words what lives
# there instead. Code spans and fenced code blocks are not read.
#
# Usage: scripts/check-links.sh [FILE.md...]     (default: the files above)
# Exit status 1 and one line per broken link when any link is broken. Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -eq 0 ]; then
    mapfile -t files < <({ ls README.md ARCHITECTURE.md docs/*.md 2>/dev/null; find clients -name '*.md'; } | LC_ALL=C sort -u)
else
    files=("$@")
fi

python3 - "${files[@]}" <<'PY'
import os, re, sys

root = os.path.realpath(".")
link = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
heading = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
anchors_cache = {}

def text_lines(path, blank_code=True):
    """The file's lines outside fenced code blocks (code spans blanked when blank_code)."""
    fence = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            stripped = line.lstrip()
            m = re.match(r"(`{3,}|~{3,})", stripped)
            if m:
                if fence is None:
                    fence = m.group(1)[0] * len(m.group(1))
                elif stripped.startswith(fence):
                    fence = None
                continue
            if fence is None:
                yield n, re.sub(r"(`+)(?:(?!\1).)+?\1", "``", line) if blank_code else line

def slug(text):
    text = re.sub(r"`|\*\*|__|\*|_(?=\W)|(?<=\W)_", "", text)      # emphasis and code marks
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)               # links keep their text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")

def anchors(path):
    if path not in anchors_cache:
        seen, out = {}, set()
        for _, line in text_lines(path, blank_code=False):
            m = heading.match(line.rstrip("\n"))
            if not m:
                continue
            s = slug(m.group(2))
            k = seen.get(s, 0)
            seen[s] = k + 1
            out.add(s if k == 0 else f"{s}-{k}")
        anchors_cache[path] = out
    return anchors_cache[path]

broken = 0
checked = 0
for doc in sys.argv[1:]:
    for n, line in text_lines(doc):
        for m in link.finditer(line):
            target = m.group(1)
            if not target or re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):
                continue                      # empty (wiki markup) or a URL / mailto:
            checked += 1
            path, _, fragment = target.partition("#")
            where = f"{doc}:{n}: ({target})"
            if path.startswith("../shared") or "/../shared" in path:
                print(f"{where}: links to the folder beside the repository, which is not shipped")
                broken += 1
                continue
            dest = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
            real = os.path.realpath(dest)
            if not (real == root or real.startswith(root + os.sep)):
                print(f"{where}: points outside the repository")
                broken += 1
            elif not os.path.exists(dest):
                print(f"{where}: no such file")
                broken += 1
            elif fragment and dest.endswith(".md") and fragment.lower() not in anchors(dest):
                print(f"{where}: no heading with the anchor #{fragment} in {dest}")
                broken += 1

print(f"check-links: {checked} relative links in {len(sys.argv) - 1} files, {broken} broken")
sys.exit(1 if broken else 0)
PY
