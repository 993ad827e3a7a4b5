#!/usr/bin/env python3
"""The two plain baselines of the retrieval evaluation, over the index's own sections.

Input (written by `index-builder eval --baseline-dir DIR`):
  DIR/sections.jsonl  one section per line: key (hex), slug, title, summary, tags, heading_path, text
  DIR/queries.jsonl   one question per line: id, query, dense (section keys by plain cosine with
                      the MiniLM query embedding, best first: no page cards, no fusion)
Output:
  DIR/rankings.jsonl  per question and system, the section keys best first (DEPTH deep):
    bm25   off-the-shelf bm25s (Lucene BM25, k1 1.5, b 0.75; English stop words and Snowball
           stems) over one document per section: its page's title, summary and tags repeated in
           every section, then its heading path and text;
    rrf    reciprocal-rank fusion (k = 60, equal weights) of that BM25 ranking and the plain
           cosine ranking.
The evaluation scores these rankings exactly as it scores the product's (same sections, same
de-duplication by page and heading path, same scoring rule).
"""
import json
import sys
from pathlib import Path

import bm25s
import Stemmer

DEPTH = 200
RRF_K = 60


def document(section):
    parts = [section["title"], section["summary"], " ".join(section["tags"]), " ".join(section["heading_path"]), section["text"]]
    return "\n".join(p for p in parts if p)


def main(directory):
    directory = Path(directory)
    sections = [json.loads(line) for line in (directory / "sections.jsonl").open(encoding="utf-8")]
    queries = [json.loads(line) for line in (directory / "queries.jsonl").open(encoding="utf-8")]
    keys = [s["key"] for s in sections]
    stemmer = Stemmer.Stemmer("english")
    corpus_tokens = bm25s.tokenize([document(s) for s in sections], stopwords="en", stemmer=stemmer, show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(corpus_tokens, show_progress=False)
    depth = min(DEPTH, len(keys))
    out = []
    for q in queries:
        tokens = bm25s.tokenize([q["query"]], stopwords="en", stemmer=stemmer, show_progress=False)
        bm25 = []
        if tokens.ids and tokens.ids[0]:
            docs, scores = retriever.retrieve(tokens, k=depth, show_progress=False)
            bm25 = [keys[int(d)] for d, s in zip(docs[0], scores[0]) if s > 0]
        fused = {}
        for ranking in (bm25, q.get("dense", [])[:DEPTH]):
            for rank, key in enumerate(ranking, start=1):
                fused[key] = fused.get(key, 0.0) + 1.0 / (RRF_K + rank)
        rrf = [k for k, _ in sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))][:DEPTH]
        out.append(json.dumps({"id": q["id"], "system": "bm25", "ranking": bm25}))
        out.append(json.dumps({"id": q["id"], "system": "rrf", "ranking": rrf}))
    (directory / "rankings.jsonl").write_text("\n".join(out) + "\n", encoding="utf-8")
    print(f"baselines: {len(queries)} questions over {len(sections)} sections -> {directory / 'rankings.jsonl'}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: baselines.py DIR")
    main(sys.argv[1])
