#!/usr/bin/env python3
"""Make an N-page wiki from the evaluation corpus, for the scale benchmark (scripts/scale-bench.sh).

The corpus itself is copy 0, unchanged. Copy k (k = 1, 2, ...) of every page is a renamed,
perturbed version of it, so the wiki keeps the corpus's shape (page lengths, headings, code,
tables, link density, cluster structure) at any size:

- the page `Foo` becomes `Foo-c<k>` (file `Foo-c<k>.md`; `AgentLoops+Hub.md` ->
  `AgentLoops+Hub-c<k>.md`), its title gets ` (c<k>)`, and its authored `canonical_id` is
  dropped (the build derives a unique one);
- links between pages (`[text](Target)`, `[Target]()`, `related:` entries) point into the same
  copy, and clusters are renamed per copy (`a/b` -> `a-c<k>/b-c<k>`), so every copy has its own
  hubs, clusters and link graph;
- about 3 % of the prose words of four letters or more are replaced by another corpus word of
  the same length (same length keeps the chunker's token estimates, so a copy is cut into the
  same sections as its original and its section vectors can be made from the original's);
- a share of the copies' pages (`--acl-share`, default 5 %) carry a JSPWiki ACL restricting
  them to `Engineering` (as a YAML comment in the frontmatter, where the build reads ACLs too
  and where it changes no section text).

Everything is deterministic (seeded by page and copy). Pages are copied in file-name order and
copy by copy until N pages exist, so the first 1,201 pages of any N are the corpus.

Usage: make-wiki.py CORPUS_DIR OUT_DIR N [--acl-share 0.05]
"""
import argparse
import hashlib
import os
import random
import re
import sys
from pathlib import Path
from urllib.parse import unquote

WORD = re.compile(r"[A-Za-z]{4,}")
INLINE = re.compile(r"\]\(([^)\s#]+)(#[^)\s]*)?\)")
EMPTY_TARGET = re.compile(r"\[([^\[\]{}\n]{2,})\]\(\)")


def slug_of(stem):
    return unquote(stem.replace("+", " "))


def split_frontmatter(text):
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            close = text.find("\n", end + 4)
            close = len(text) if close == -1 else close + 1
            return text[:close], text[close:]
    return "", text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("out")
    ap.add_argument("n", type=int)
    ap.add_argument("--acl-share", type=float, default=0.05)
    args = ap.parse_args()
    corpus, out = Path(args.corpus), Path(args.out)
    files = sorted(p for p in corpus.iterdir() if p.is_file() and p.suffix in (".md", ".html"))
    if not files:
        sys.exit(f"make-wiki: no pages in {corpus}")
    texts = {p.name: p.read_text(encoding="utf-8") for p in files}
    stems = {p.stem for p in files}
    slugs = {slug_of(s): s for s in stems}
    # Replacement words by length, from the corpus itself.
    by_length = {}
    for text in texts.values():
        for w in WORD.findall(text):
            by_length.setdefault(len(w), set()).add(w.lower())
    by_length = {n: sorted(ws) for n, ws in by_length.items()}

    def target_in_copy(target, k):
        """The copy-k name of a link target that names a corpus page, else None."""
        decoded = slug_of(target[2:] if target.startswith("./") else target)
        if decoded.endswith(".md"):
            decoded = decoded[:-3]
        stem = target if target in stems else slugs.get(decoded)
        return None if stem is None else f"{stem}-c{k}"

    def copy(name, text, k):
        rng = random.Random(int.from_bytes(hashlib.sha256(f"{name}/{k}".encode()).digest()[:8], "big"))
        front, body = split_frontmatter(text)
        lines, key = [], None
        for line in front.splitlines(keepends=True):
            m = re.match(r"^([A-Za-z_]+):\s*(.*)$", line)
            if m:
                key, value = m.group(1), m.group(2)
                if key == "canonical_id":
                    continue
                if key == "title" and value:
                    line = f"title: {retitled(value.rstrip(), k)}\n"
                elif key == "cluster" and value:
                    line = "cluster: " + "/".join(f"{c}-c{k}" for c in value.split("/")) + "\n"
                elif key in ("related", "relations") and value and not value.startswith("["):
                    renamed = target_in_copy(value.strip(), k)
                    line = line if renamed is None else f"{key}: {renamed}\n"
            elif key in ("related", "relations", "uses", "enables", "related_to"):
                m = re.match(r"^(\s*-\s+)(\S+)\s*$", line)
                if m and target_in_copy(m.group(2), k):
                    line = m.group(1) + target_in_copy(m.group(2), k) + "\n"
            lines.append(line)
        front = "".join(lines)
        if front and rng.random() < args.acl_share:
            front = front.replace("\n", "\n# [{ALLOW view Engineering}]\n", 1)
        out_lines, fenced = [], False
        for line in body.splitlines(keepends=True):
            if line.lstrip().startswith("```"):
                fenced = not fenced
            elif not fenced and not line.lstrip().startswith("#"):
                line = WORD.sub(lambda m: swap(m.group(0), rng), line)
                line = INLINE.sub(lambda m: relink(m, k), line)
                line = EMPTY_TARGET.sub(lambda m: relink_empty(m, k), line)
            out_lines.append(line)
        return front + "".join(out_lines)

    def retitled(value, k):
        if len(value) >= 2 and value[0] in "'\"" and value[-1] == value[0]:
            return value[:-1] + f" (c{k})" + value[-1]
        if value[0] in "|>[{&*!%@`":  # block scalars and other YAML forms: keep as written
            return value
        return value + f" (c{k})"

    def swap(word, rng):
        if rng.random() >= 0.03:
            return word
        pool = by_length.get(len(word))
        new = pool[rng.randrange(len(pool))] if pool else word
        return new.capitalize() if word[0].isupper() else new

    def relink(m, k):
        renamed = target_in_copy(m.group(1), k)
        return m.group(0) if renamed is None else f"]({renamed}{m.group(2) or ''})"

    def relink_empty(m, k):
        renamed = target_in_copy(m.group(1).split("#")[0].strip(), k)
        return m.group(0) if renamed is None else f"[{m.group(1)}]({renamed})"

    out.mkdir(parents=True, exist_ok=True)
    for extra in corpus.iterdir():  # the entity sidecar and other dot-folders come with copy 0
        if extra.is_dir() and extra.name.startswith("."):
            os.system(f"cp -r '{extra}' '{out}/'")
    written = 0
    k = 0
    while written < args.n:
        for p in files:
            if written >= args.n:
                break
            if k == 0:
                (out / p.name).write_text(texts[p.name], encoding="utf-8")
            else:
                (out / f"{p.stem}-c{k}{p.suffix}").write_text(copy(p.name, texts[p.name], k), encoding="utf-8")
            written += 1
        k += 1
    print(f"make-wiki: {written} pages ({k} copies of {len(files)}) in {out}")


if __name__ == "__main__":
    main()
