#!/usr/bin/env python3
"""Replay the served fusion with another encoder's dense side: for every dev question, the
exact cosine ranking of the sections and the page-card cosines of an embed.py file replace
the dump's dense list and cards, the BM25 list stays the served one, and scripts/eval/replay.py
scores the result with the eval's folds and objective (in-sample and 5-fold cross-validated)
— so two document encoders are compared on what the bundle would serve, not on cosine alone.

Usage: compare.py DUMP.jsonl BASELINE_DIR EMB.npz [EMB.npz ...] [--sections CSV] [--queries CSV]
  DUMP.jsonl    index-builder eval --dump-rankings (the quality profile's)
  BASELINE_DIR  the exported sections (sections.jsonl) of the same index
"""
import argparse
import importlib.util
import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("replay", HERE.parent / "eval" / "replay.py")
replay = importlib.util.module_from_spec(spec)
spec.loader.exec_module(replay)
DEPTH = 300


def swapped(dump, sections, emb):
    key_row = {k: i for i, k in enumerate(emb["section_keys"])}
    card_row = {s: i for i, s in enumerate(emb["card_slugs"])}
    query_row = {q: i for i, q in enumerate(emb["query_ids"])}
    info = {s["key"]: (s["slug"], s["heading_path"]) for s in sections}
    keys = list(emb["section_keys"])
    out = []
    for d in dump:
        q = emb["queries"][query_row[d["id"]]]
        cos = emb["sections"] @ q
        top = np.argsort(-cos, kind="stable")[:DEPTH]
        dense = [[keys[i], info[keys[i]][0], info[keys[i]][1], float(cos[i])] for i in top]
        slugs = {e[1] for e in d["bm25"] + dense}
        cards = {s: float(emb["cards"][card_row[s]] @ q) for s in slugs if s in card_row}
        out.append(dict(d, dense=dense, cards=cards))
    return out


def dense_alone(dump, golds, categories, ideal):
    results = {}
    for d in dump:
        ranked, seen = [], set()
        for _k, s, path, _c in d["dense"]:
            if (s, tuple(path)) not in seen:
                seen.add((s, tuple(path)))
                ranked.append((s, path))
        results[d["id"]] = replay.outcome(d["id"], ranked, golds, ideal)
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("baseline_dir")
    ap.add_argument("embeddings", nargs="+")
    ap.add_argument("--sections", default="../shared/eval/sections-dev.csv")
    ap.add_argument("--queries", default="../shared/eval/retrieval-queries.csv")
    args = ap.parse_args()
    golds, categories, ideal = replay.read_sets(args.sections, args.queries)
    served_dump = [json.loads(l) for l in open(args.dump, encoding="utf-8")]
    sections = [json.loads(l) for l in (Path(args.baseline_dir) / "sections.jsonl").open(encoding="utf-8")]
    qids = [d["id"] for d in served_dump]
    fold = replay.folds(golds, categories, ideal)
    grid = [dict(replay.SERVED, card=c, dense=s) for c in (0, 0.15, 0.3) for s in (0.4, 0.5, 0.6, 0.7)]
    runs = [("served (int8, probed lists)", served_dump)]
    runs += [(Path(e).stem + " (exact)", swapped(served_dump, sections, np.load(e))) for e in args.embeddings]
    for name, dump in runs:
        print(replay.line(name + ": dense alone", replay.scores(dense_alone(dump, golds, categories, ideal), qids, golds, categories)))
        results = [{d["id"]: replay.outcome(d["id"], replay.fuse(d, p), golds, ideal) for d in dump} for p in grid]
        at_default = grid.index(dict(replay.SERVED, card=0.15, dense=0.5))
        print(replay.line(name + ": hybrid at the defaults", replay.scores(results[at_default], qids, golds, categories)))
        held = {}
        for f in range(replay.FOLDS):
            train = [q for q in qids if fold[q] != f]
            chosen = max(range(len(grid)), key=lambda i: (replay.objective(replay.scores(results[i], train, golds, categories)), -i))
            held.update({q: results[chosen][q] for q in qids if fold[q] == f})
        print(replay.line(name + ": hybrid, 5-fold cv", replay.scores(held, qids, golds, categories)))


if __name__ == "__main__":
    main()
