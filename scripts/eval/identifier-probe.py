#!/usr/bin/env python3
"""A known-item probe for identifier questions, on questions nobody wrote or tuned for.

    scripts/eval/identifier-probe.py CORPUS_DIR BASE_URL [exact|ask] [PER_KIND]

Draws identifiers from the corpus's inline code spans — flags (`--out`), absolute paths
(`/proc`), environment variables, file names, dotted keys, camelCase, snake_case and kebab-case
names — that at most three pages spell (anywhere in their text), PER_KIND (default 25) of each
kind with a fixed seed. Each becomes a question (`exact`: the identifier alone; `ask`: "what does
X do") sent to BASE_URL's /api/bundle (a served index of CORPUS_DIR, e.g. `wikantik-native
serve`); a question is a hit when a page spelling the identifier is among the bundle's first
five pages. Prints the hit rate per kind and the misses. A diagnostic beside the dev sets
(docs/RETRIEVAL.md §2), not a ratchet: nothing is chosen on it.
"""
import collections
import json
import os
import random
import re
import sys
import urllib.parse
import urllib.request

CODE_SPAN = re.compile(r"`([^`\n]{3,60})`")
IDENTIFIER = re.compile(r"^[A-Za-z_$@/.-][A-Za-z0-9_$@/.:{}=-]*$")
QUESTIONS = {"exact": "{x}", "ask": "what does {x} do"}


def kind(x):
    if x.startswith("--"):
        return "flag"
    if x.startswith("/"):
        return "path"
    if re.match(r"^[A-Z][A-Z0-9_]+$", x) and "_" in x:
        return "env"
    if re.search(r"\.(java|py|rs|ts|js|go|md|yaml|yml|json|toml|xml|sh|properties)$", x):
        return "file"
    if "." in x and re.match(r"^[a-z]", x):
        return "dotted"
    if re.search(r"[a-z][A-Z]", x):
        return "camel"
    if "_" in x:
        return "snake"
    if "-" in x:
        return "kebab"
    return None


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    corpus, base = sys.argv[1], sys.argv[2].rstrip("/")
    mode = sys.argv[3] if len(sys.argv) > 3 else "exact"
    per_kind = int(sys.argv[4]) if len(sys.argv) > 4 else 25
    if mode not in QUESTIONS:
        sys.exit(f"identifier-probe: unknown mode {mode!r} (exact or ask)")
    texts = {}
    for name in sorted(os.listdir(corpus)):
        if name.endswith(".md"):
            with open(os.path.join(corpus, name), encoding="utf-8", errors="replace") as f:
                texts[name[:-3]] = f.read()
    spans = set()
    for text in texts.values():
        for m in CODE_SPAN.finditer(text):
            x = m.group(1).strip()
            if len(x) >= 5 and " " not in x and IDENTIFIER.match(x) and kind(x):
                spans.add(x)
    by_kind = collections.defaultdict(list)
    for x in sorted(spans):
        literal = re.compile(r"(?<![A-Za-z0-9_-])" + re.escape(x) + r"(?![A-Za-z0-9_])")
        pages = sorted(slug for slug, text in texts.items() if x in text and literal.search(text))
        if 1 <= len(pages) <= 3:
            by_kind[kind(x)].append((x, pages))
    rng = random.Random(20261207)
    hits = collections.Counter()
    asked = collections.Counter()
    misses = []
    for k in sorted(by_kind):
        for x, pages in rng.sample(by_kind[k], min(per_kind, len(by_kind[k]))):
            query = urllib.parse.urlencode({"q": QUESTIONS[mode].format(x=x), "k": 12})
            with urllib.request.urlopen(f"{base}/api/bundle?{query}") as response:
                bundle = json.load(response)
            order = list(dict.fromkeys(s["slug"] for s in bundle["sections"]))
            asked[k] += 1
            if any(p in order[:5] for p in pages):
                hits[k] += 1
            else:
                misses.append((k, x, pages, order[:3]))
    total, n = sum(hits.values()), sum(asked.values())
    print(f"{mode}: page hit@5 {total}/{n} = {total / max(n, 1):.3f}  " + "  ".join(f"{k} {hits[k]}/{asked[k]}" for k in sorted(asked)))
    for k, x, pages, first in misses:
        print(f"  miss {k} {x}: spelled in {', '.join(pages)}; bundle led with {', '.join(first)}")


if __name__ == "__main__":
    main()
