#!/usr/bin/env python3
"""Embed the evaluation corpus's sections, page cards and dev questions with a
sentence-transformers model, for comparing document encoders offline (scripts/encoder-lab/compare.py).

Input: the directory `index-builder eval` exports for the baselines (sections.jsonl: key, slug,
title, summary, tags, cluster, heading_path, text; queries.jsonl: id, query). The texts are the
product's: a section is embedded as `contextual-v1` (shared/format/src/vectors.rs
`contextual_text`), a page card as the mean of its card text's and its bare title's embeddings
(`card-v2`), a question as typed.

Output: an .npz with `section_keys`, `sections` (L2-normalised float32 rows), `card_slugs`,
`cards`, `query_ids`, `queries`.

Usage: embed.py MODEL_DIR BASELINE_DIR OUT.npz [--batch 32] [--max-seq N]
"""
import argparse
import json
import time
from pathlib import Path

import numpy as np
from sentence_transformers import SentenceTransformer


def contextual_text(s):
    out = "Page: " + s["title"]
    if (s.get("cluster") or "").strip():
        out += " | Cluster: " + s["cluster"].strip()
    if s["heading_path"]:
        out += " | Section: " + " > ".join(s["heading_path"])
    if s["summary"].strip():
        out += "\nSummary: " + s["summary"].strip()
    return out + "\n\n" + s["text"]


def card_text(s):
    out = "Page: " + s["title"]
    if (s.get("cluster") or "").strip():
        out += " | Cluster: " + s["cluster"].strip()
    if s["summary"].strip():
        out += "\nSummary: " + s["summary"].strip()
    if s["tags"]:
        out += "\nTags: " + ", ".join(s["tags"])
    return out


def normalise(m):
    return (m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)).astype(np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("baseline_dir")
    ap.add_argument("out")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--max-seq", type=int, default=0, help="the model's max_seq_length (0 = its own)")
    args = ap.parse_args()
    d = Path(args.baseline_dir)
    sections = [json.loads(l) for l in (d / "sections.jsonl").open(encoding="utf-8")]
    queries = [json.loads(l) for l in (d / "queries.jsonl").open(encoding="utf-8")]
    model = SentenceTransformer(args.model, device="cpu")
    if args.max_seq:
        model.max_seq_length = args.max_seq
    started = time.time()
    encode = lambda texts: normalise(model.encode(texts, batch_size=args.batch, show_progress_bar=False, convert_to_numpy=True))
    q = encode([x["query"] for x in queries])
    pages = {}
    for s in sections:
        pages.setdefault(s["slug"], s)
    slugs = sorted(pages)
    cards = normalise(encode([card_text(pages[p]) for p in slugs]) + encode([pages[p]["title"] for p in slugs]))
    print(f"queries and {len(slugs)} cards in {time.time() - started:.0f} s", flush=True)
    # Longest first keeps padding small; progress every ~5 %.
    order = sorted(range(len(sections)), key=lambda i: -len(sections[i]["text"]))
    rows = np.zeros((len(sections), (getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension)()), dtype=np.float32)
    step = max(args.batch, len(order) // 20)
    for start in range(0, len(order), step):
        part = order[start:start + step]
        rows[part] = encode([contextual_text(sections[i]) for i in part])
        print(f"sections {start + len(part)}/{len(order)} in {time.time() - started:.0f} s", flush=True)
    np.savez(args.out, section_keys=np.array([s["key"] for s in sections]), sections=rows,
             card_slugs=np.array(slugs), cards=cards, query_ids=np.array([x["id"] for x in queries]), queries=q)
    print(f"wrote {args.out} in {time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
