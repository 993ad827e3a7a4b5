#!/usr/bin/env python3
"""Pseudo-queries made from the corpus only (never from the eval CSV), each labelled with the
page it was made from, in `index-builder eval --queries` format (query,ideal_page,notes).

Per page, at most one query of each kind, shortened to look like a search:
  heading  - an H2/H3 heading of 2+ words that no more than two pages use (not the title);
  sentence - the first sentence of a section, its first 8 words;
  summary  - the front-matter summary, its first 7 words.
Deterministic sample (seeded) of N queries.  Usage: pseudo_queries.py CORPUS_DIR N > out.csv
"""
import collections, os, random, re, sys

GENERIC = {"overview", "introduction", "summary", "see also", "references", "conclusion",
           "further reading", "related pages", "related", "sources", "notes", "background",
           "key takeaways", "next steps", "examples", "example", "faq", "links", "resources"}


def clean(text):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)        # [label](link) -> label
    text = re.sub(r"\[\[([^\]|]*)(\|[^\]]*)?\]\]", r"\1", text)   # [[Wiki link]]
    text = re.sub(r"[`*_#>|\"]", " ", text)
    text = text.replace(",", " ")
    return re.sub(r"\s+", " ", text).strip()


def read_page(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    summary = ""
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end > 0:
            m = re.search(r"^summary:\s*(.*(?:\n  .*)*)", text[3:end], re.M)
            if m:
                summary = " ".join(m.group(1).split()).strip("'\"")
            text = text[end + 4:]
    headings, sentences = [], []
    in_code = False
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("```"):
            in_code = not in_code
        if in_code:
            continue
        m = re.match(r"^(##|###)\s+(.*)", line)
        if m:
            headings.append(clean(m.group(2)))
            for nxt in lines[i + 1:i + 8]:
                if nxt.strip() and not nxt.startswith(("#", "|", "-", "*", "```", ">", "!")) and not re.match(r"^\d+\.", nxt):
                    sentences.append(clean(re.split(r"(?<=[.!?])\s", nxt.strip())[0]))
                    break
    return summary, headings, sentences


def main():
    corpus, n = sys.argv[1], int(sys.argv[2])
    rng = random.Random(20261130)
    pages = {}
    for name in sorted(os.listdir(corpus)):
        if name.endswith(".md"):
            pages[name[:-3]] = read_page(os.path.join(corpus, name))
    used = collections.Counter(h.lower() for _, hs, _ in pages.values() for h in set(hs))
    rows = []
    for slug, (summary, headings, sentences) in pages.items():
        hs = [h for h in headings if len(h.split()) >= 2 and h.lower() not in GENERIC and used[h.lower()] <= 2]
        ss = [s for s in sentences if len(s.split()) >= 5]
        if hs:
            rows.append((rng.choice(hs), slug, "heading"))
        if ss:
            rows.append((" ".join(rng.choice(ss).split()[:8]), slug, "sentence"))
        if len(summary.split()) >= 4:
            rows.append((" ".join(clean(summary).split()[:7]), slug, "summary"))
    rng.shuffle(rows)
    print("query,ideal_page,notes")
    for q, slug, kind in rows[:n]:
        print(f"{q},{slug},{kind}")


if __name__ == "__main__":
    main()
