#!/usr/bin/env python3
"""Learning-to-rank lab for hybrid fusion (issue #3), pure Python (no numpy on the machine).

Input: JSON-lines dumps of `index-builder eval --dump-rankings` (raw BM25 and dense section
rankings, each candidate page's card cosine; dumps made before `card-v2` cards also carry each BM25
section's own cosine, which is used when present). The served
convex fusion (card_weight 0.5, dense_share 0.7, pool 200) is rebuilt from them; the first
CANDIDATES pages of that page ranking get features, and a pairwise logistic model (L2) is
fitted on pseudo-query dumps only (scripts/ltr-lab/pseudo_queries.py), its L2 chosen on a
held-out split of the pseudo-queries by page. `--eval DUMP` then measures the chosen model
once on the real queries.

Usage: ltr.py PSEUDO_DUMP [--eval EVAL_DUMP]

The whole experiment (docs/RETRIEVAL.md, "History before section-level evaluation"; run from the repo root,
after `scripts/eval.sh` has fetched the model and warmed .cache/embeddings):
  python3 scripts/ltr-lab/pseudo_queries.py ../shared/corpus/wikantik-pages 1200 > /tmp/pseudo.csv
  IB=target/release/index-builder; ARGS="--model .cache/models/all-MiniLM-L6-v2 --embedding-cache .cache/embeddings"
  $IB eval ../shared/corpus/wikantik-pages --queries /tmp/pseudo.csv $ARGS --dump-rankings /tmp/pseudo.jsonl
  $IB eval ../shared/corpus/wikantik-pages --queries ../shared/eval/retrieval-queries.csv $ARGS --dump-rankings /tmp/eval.jsonl
  python3 scripts/ltr-lab/ltr.py /tmp/pseudo.jsonl --eval /tmp/eval.jsonl
"""
import hashlib, json, math, random, sys

CARD_WEIGHT, DENSE_SHARE = 0.5, 0.7
CANDIDATES = 30
FEATURES = ["convex", "bm25_norm", "cosine", "card", "inv_bm25_rank", "inv_dense_rank",
            "inv_card_rank", "log_bm25_sections", "log_dense_sections", "second_convex"]


def minmax(d):
    if not d:
        return {}
    lo, hi = min(d.values()), max(d.values())
    return {k: (v - lo) / (hi - lo) if hi > lo else 1.0 for k, v in d.items()}


def page_order(sections):
    """Pages by first appearance in a best-first list of (slug, ...)."""
    seen, out = set(), []
    for s in sections:
        if s[0] not in seen:
            seen.add(s[0])
            out.append(s[0])
    return out


def candidates(row):
    """The served convex page ranking and, for its first CANDIDATES pages, the feature rows."""
    bm25, dense, cards = row["bm25"], row["dense"], row["cards"]
    slug_of = {cid: slug for slug, cid, _ in bm25 + dense}
    floor = min((c for _, _, c in dense), default=0.0)
    lowest_card = min(cards.values(), default=0.0)
    card = lambda slug: cards.get(slug, lowest_card)
    cosine = {cid: c for _, cid, c in dense}
    for (_, cid, _), c in zip(bm25, row.get("bm25_cosines") or []):  # older dumps only
        if c is not None:
            cosine.setdefault(cid, c)
    dscore = {cid: CARD_WEIGHT * card(slug) + (1 - CARD_WEIGHT) * c for slug, cid, c in dense}
    for slug, cid, _ in bm25:
        dscore.setdefault(cid, CARD_WEIGHT * card(slug) + (1 - CARD_WEIGHT) * cosine.get(cid, floor))
    nb = minmax({cid: s for _, cid, s in bm25})
    nd = minmax(dscore)
    fused = {}
    for cid, v in nb.items():
        fused[cid] = fused.get(cid, 0.0) + (1 - DENSE_SHARE) * v
    for cid, v in nd.items():
        fused[cid] = fused.get(cid, 0.0) + DENSE_SHARE * v
    ranked = sorted(fused, key=lambda cid: (-fused[cid], cid))
    pages = page_order([(slug_of[cid],) for cid in ranked])
    top = pages[:CANDIDATES]
    bm25_pages, dense_pages = page_order(bm25), page_order(dense)
    card_pages = sorted(top, key=lambda s: -card(s))
    per_page = {}
    for cid in ranked:
        per_page.setdefault(slug_of[cid], []).append(cid)
    feats = []
    for slug in top:
        cids = per_page[slug]
        f = {
            "convex": fused[cids[0]],
            "bm25_norm": max((nb.get(c, 0.0) for c in cids), default=0.0),
            "cosine": max((cosine.get(c, floor) for c in cids), default=floor),
            "card": card(slug),
            "inv_bm25_rank": 1.0 / (bm25_pages.index(slug) + 1) if slug in bm25_pages else 0.0,
            "inv_dense_rank": 1.0 / (dense_pages.index(slug) + 1) if slug in dense_pages else 0.0,
            "inv_card_rank": 1.0 / (card_pages.index(slug) + 1),
            "log_bm25_sections": math.log1p(sum(1 for s in bm25 if s[0] == slug)),
            "log_dense_sections": math.log1p(sum(1 for s in dense if s[0] == slug)),
            "second_convex": fused[cids[1]] if len(cids) > 1 else 0.0,
        }
        feats.append([f[name] for name in FEATURES])
    return pages, top, feats


def load(path):
    out = []
    for line in open(path):
        row = json.loads(line)
        pages, top, feats = candidates(row)
        out.append({"ideal": row["ideal"], "pages": pages, "top": top, "feats": feats})
    return out


def metrics(queries, score=None):
    r5 = r20 = mrr = 0.0
    for q in queries:
        pages = q["pages"]
        if score is not None:
            order = sorted(range(len(q["top"])), key=lambda i: (-score(q["feats"][i]), i))
            pages = [q["top"][i] for i in order] + pages[len(q["top"]):]
        if q["ideal"] in pages:
            r = pages.index(q["ideal"]) + 1
            r5 += r <= 5
            r20 += r <= 20
            mrr += 1.0 / r
    n = max(len(queries), 1)
    return r5 / n, r20 / n, mrr / n


def standardiser(queries):
    rows = [f for q in queries for f in q["feats"]]
    k = len(FEATURES)
    mean = [sum(r[j] for r in rows) / len(rows) for j in range(k)]
    sd = [math.sqrt(sum((r[j] - mean[j]) ** 2 for r in rows) / len(rows)) or 1.0 for j in range(k)]
    return mean, sd


def fit(queries, l2, mean, sd, negatives=10, steps=300, rate=0.5):
    """Pairwise logistic regression: the source page above each of the first `negatives` others."""
    z = lambda f: [(f[j] - mean[j]) / sd[j] for j in range(len(f))]
    pairs = []
    for q in queries:
        if q["ideal"] not in q["top"]:
            continue
        pos = z(q["feats"][q["top"].index(q["ideal"])])
        for i, slug in enumerate(q["top"][:negatives + 1]):
            if slug != q["ideal"]:
                neg = z(q["feats"][i])
                pairs.append([a - b for a, b in zip(pos, neg)])
    k = len(FEATURES)
    w = [0.0] * k
    w[0] = 1.0  # start from the served fusion
    for _ in range(steps):
        grad = [2 * l2 * wj for wj in w]
        for d in pairs:
            m = sum(wj * dj for wj, dj in zip(w, d))
            g = -1.0 / (1.0 + math.exp(m)) if m > -30 else -1.0
            for j in range(k):
                grad[j] += g * d[j] / len(pairs)
        w = [wj - rate * gj for wj, gj in zip(w, grad)]
    return w, len(pairs)


def fmt(m):
    return f"r@5 {m[0]:.3f}  r@20 {m[1]:.3f}  MRR {m[2]:.3f}"


def main():
    pseudo = load(sys.argv[1])
    held = lambda q: int(hashlib.sha256(q["ideal"].encode()).hexdigest(), 16) % 5 == 0
    train = [q for q in pseudo if not held(q)]
    val = [q for q in pseudo if held(q)]
    mean, sd = standardiser(train)
    print(f"pseudo-queries: {len(train)} train, {len(val)} validation (split by page)")
    print(f"served convex   train {fmt(metrics(train))} | validation {fmt(metrics(val))}")
    best = None
    for l2 in [0.3, 0.1, 0.03, 0.01, 0.001]:
        w, n = fit(train, l2, mean, sd)
        score = lambda f, w=w: sum(wj * (f[j] - mean[j]) / sd[j] for j, wj in enumerate(w))
        tr, va = metrics(train, score), metrics(val, score)
        print(f"LTR l2={l2:<6} train {fmt(tr)} | validation {fmt(va)}  ({n} pairs)")
        if best is None or va[2] > best[0][2]:
            best = (va, l2, w)
    va, l2, w = best
    print(f"chosen l2={l2}; weights (standardised): " + ", ".join(f"{n} {x:+.3f}" for n, x in zip(FEATURES, w)))
    if "--eval" in sys.argv:
        real = load(sys.argv[sys.argv.index("--eval") + 1])
        score = lambda f: sum(wj * (f[j] - mean[j]) / sd[j] for j, wj in enumerate(w))
        print(f"real queries ({len(real)}): served convex {fmt(metrics(real))}")
        print(f"real queries ({len(real)}): learned       {fmt(metrics(real, score))}")


if __name__ == "__main__":
    main()
