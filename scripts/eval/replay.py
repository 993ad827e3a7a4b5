#!/usr/bin/env python3
"""Replay fusion methods offline on the raw candidate rankings of `index-builder eval
--dump-rankings FILE` (one JSON line per dev question: its BM25 and dense section lists, each
entry [key, slug, heading path, score], and the candidate pages' card cosines), and report the
same figures as the eval — section recall@5/@12 per category, page-level recall@5/@20/MRR of the
bundle's page order — in-sample (each family's best point) and 5-fold cross-validated with the
eval's folds and objective. No dependency beyond the standard library.

It first rebuilds the served convex fusion at the shipped defaults (`served`): its figures must
equal the eval's in-sample hybrid row, which checks the replay. The other families are the
methods docs/RETRIEVAL.md lists as measured and not kept.

Usage: scripts/eval/replay.py DUMP.jsonl [--sections sections-dev.csv] [--queries retrieval-queries.csv]
"""
import argparse
import collections
import json
import re

CATEGORIES = ["SIMILARITY", "RELATIONAL", "BOUNDARY", "IDENTIFIER"]
FOLDS = 5
BUNDLE = 12
PAGE_DEPTH = 200  # sections read for the page order, as the eval reads them
# The shipped defaults (shared/serve/src/retrieval.rs): card weight, dense share, pool, page cap.
SERVED = {"card": 0.15, "dense": 0.5, "pool": 100, "cap": 4, "norm": "minmax", "lead": 4}
QUESTION_WORDS = {"how", "what", "why", "when", "where", "which", "who", "whom", "whose", "does", "do", "is", "are", "can", "should", "could"}


def topic_query(query, max_words):
    """A short query that names a topic (retrieval::is_topic_query; words split on non-word
    characters, close to the Unicode word split the product uses)."""
    words = [w for w in re.split(r"[^\w.'-]+", query) if w]
    return 0 < len(words) <= max_words and words[0].lower() not in QUESTION_WORDS


def norm(s):
    return " ".join(s.split()).lower()


def read_sets(sections_csv, queries_csv):
    golds, categories = collections.OrderedDict(), {}
    for line in open(sections_csv, encoding="utf-8"):
        if line.startswith("#") or line.startswith("query_id,") or not line.strip():
            continue
        qid, _query, category, slug, path, _notes = line.rstrip("\n").split(",")
        golds.setdefault(qid, []).append((norm(slug), [norm(x) for x in path.split(">") if x.strip()]))
        categories[qid] = category
    ideal, n = {}, 0
    for line in open(queries_csv, encoding="utf-8"):
        if line.startswith("#") or line.startswith("query,") or not line.strip():
            continue
        n += 1
        ideal["p%d" % n] = line.split(",")[1].strip()
    return golds, categories, ideal


def contains(path, gold):
    return any(path[k:k + len(gold)] == gold for k in range(len(path) - len(gold) + 1))


def minmax(scores):
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    return {k: ((v - lo) / (hi - lo) if hi > lo else 1.0) for k, v in scores.items()}


def fuse(d, p):
    """The fused section list of one question: (slug, heading path), distinct, best first."""
    info = {k: (s, path) for k, s, path, _ in d["bm25"] + d["dense"]}
    pool, cards = p["pool"], d["cards"]
    lexical, dense = d["bm25"][:pool], d["dense"][:pool]
    lowest = min(cards.values()) if cards else 0.0
    weight = p["card"] if cards else 0.0

    def dense_score(key, cosine):
        return weight * cards.get(info[key][0], lowest) + (1 - weight) * cosine if weight > 0 else cosine

    dsc = {k: dense_score(k, c) for k, _, _, c in dense}
    if dense:
        floor = min(c for *_, c in dense)
        for k, *_ in lexical:
            dsc.setdefault(k, dense_score(k, floor))
    lsc = {k: s for k, _, _, s in lexical}
    if p["norm"] == "rank":  # reciprocal ranks, then min-max
        k0 = p["k"]
        lsc = {k: 1 / (k0 + i + 1) for i, (k, _) in enumerate(sorted(lsc.items(), key=lambda kv: (-kv[1], kv[0])))}
        dsc = {k: 1 / (k0 + i + 1) for i, (k, _) in enumerate(sorted(dsc.items(), key=lambda kv: (-kv[1], kv[0])))}
    if p["norm"] == "max":
        top_l, top_d = max(lsc.values(), default=1.0), max(dsc.values(), default=1.0)
        lex_n, den_n = {k: v / top_l for k, v in lsc.items()}, {k: v / top_d for k, v in dsc.items()}
    else:
        lex_n, den_n = minmax(lsc), minmax(dsc)
    fused = collections.defaultdict(float)
    for k, v in lex_n.items():
        fused[k] += (1 - p["dense"]) * v
    for k, v in den_n.items():
        fused[k] += p["dense"] * v
    keys = [k for k, _ in sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))]
    seen = set(keys)
    for k, *_ in d["bm25"][pool:] + d["dense"][pool:]:
        if k not in seen:
            seen.add(k)
            keys.append(k)
    if p.get("lead") and cards and topic_query(d["query"], p["lead"]):
        # A topic query leads with the best section of the page whose card matches it best,
        # among the pages of the first BUNDLE sections (retrieval::lead_with_topic_page).
        lead, best = None, None
        for i, k in enumerate(keys[:BUNDLE]):
            c = cards.get(info[k][0])
            if c is not None and (best is None or c > best) and all(info[j][0] != info[k][0] for j in keys[:i]):
                lead, best = i, c
        if lead:
            keys.insert(0, keys.pop(lead))
    out, distinct = [], set()
    for k in keys:
        s, path = info[k]
        if (s, tuple(path)) not in distinct:
            distinct.add((s, tuple(path)))
            out.append((s, path))
    if p.get("cap"):
        # At most `cap` sections of a page among the `wanted` a request asks for while other
        # sections remain (bundle::ranked_sections): the bundle's 12 for a section question,
        # the 200 the page order is read from for a page query.
        wanted = PAGE_DEPTH if d["id"].startswith("p") else BUNDLE
        count, head, deferred = collections.Counter(), [], []
        for s, path in out:
            if len(head) >= wanted:
                break
            count[s] += 1
            (head if count[s] <= p["cap"] else deferred).append((s, path))
        out = head + deferred[: max(0, wanted - len(head))]
    return out


def outcome(qid, ranked, golds, ideal):
    if qid in golds:
        hits = []
        for slug, gold in golds[qid]:
            rank = next((i + 1 for i, (s, p) in enumerate(ranked[:BUNDLE]) if norm(s) == slug and contains([norm(x) for x in p if norm(x)], gold)), None)
            hits.append(rank)
        return hits
    pages = []
    for s, _ in ranked[:PAGE_DEPTH]:
        if s not in pages:
            pages.append(s)
    return pages.index(ideal[qid]) + 1 if ideal[qid] in pages else None


def scores(results, qids, golds, categories):
    sec = [(categories[q], r) for q in qids if q in golds for r in results[q]]
    pages = [results[q] for q in qids if q not in golds]
    within = lambda rs, n: sum(1 for r in rs if r and r <= n) / max(1, len(rs))
    out = {"r5": within([r for _, r in sec], 5), "r12": within([r for _, r in sec], 12)}
    for c in CATEGORIES:
        out[c] = within([r for cc, r in sec if cc == c], 12)
    out["p5"], out["p20"] = within(pages, 5), within(pages, 20)
    out["mrr"] = sum(1 / r for r in pages if r) / max(1, len(pages))
    return out


def objective(s):
    return (s["r5"] + s["r12"]) / 2 + (s["p5"] + s["p20"] + s["mrr"]) / 3


def folds(golds, categories, ideal):
    fold, count = {}, collections.Counter()
    for qid in golds:
        fold[qid] = count[categories[qid]] % FOLDS
        count[categories[qid]] += 1
    for j, qid in enumerate(ideal):
        fold[qid] = j % FOLDS
    return fold


def line(label, s):
    cats = " ".join("%s %.3f" % (c[:3].lower(), s[c]) for c in CATEGORIES)
    return "%-44s sections %.3f / %.3f  (%s)  pages %.3f / %.3f / %.3f" % (label, s["r5"], s["r12"], cats, s["p5"], s["p20"], s["mrr"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("--sections", default="../shared/eval/sections-dev.csv")
    ap.add_argument("--queries", default="../shared/eval/retrieval-queries.csv")
    args = ap.parse_args()
    golds, categories, ideal = read_sets(args.sections, args.queries)
    dump = [json.loads(l) for l in open(args.dump, encoding="utf-8")]
    qids = [d["id"] for d in dump]
    fold = folds(golds, categories, ideal)
    families = {
        "served": [SERVED],
        "convex + page cap": [dict(SERVED, card=c, dense=s, cap=cap) for c in (0, 0.15, 0.3) for s in (0.4, 0.5, 0.6) for cap in (0, 3, 4)],
        "max-normalised convex": [dict(SERVED, norm="max", card=c, dense=s) for c in (0, 0.15, 0.3) for s in (0.3, 0.4, 0.5, 0.6, 0.7)],
        "rank-normalised convex": [dict(SERVED, norm="rank", k=k, card=c, dense=s) for k in (10, 30, 60) for c in (0, 0.15, 0.3) for s in (0.4, 0.5, 0.6)],
    }
    for name, grid in families.items():
        results = [{d["id"]: outcome(d["id"], fuse(d, p), golds, ideal) for d in dump} for p in grid]
        best = max(range(len(grid)), key=lambda i: (objective(scores(results[i], qids, golds, categories)), -i))
        print(line("%s: in-sample best" % name, scores(results[best], qids, golds, categories)), grid[best])
        if len(grid) > 1:
            held = {}
            for f in range(FOLDS):
                train = [q for q in qids if fold[q] != f]
                chosen = max(range(len(grid)), key=lambda i: (objective(scores(results[i], train, golds, categories)), -i))
                held.update({q: results[chosen][q] for q in qids if fold[q] == f})
            print(line("%s: %d-fold cv" % (name, FOLDS), scores(held, qids, golds, categories)))


if __name__ == "__main__":
    main()
