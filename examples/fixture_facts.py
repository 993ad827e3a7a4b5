#!/usr/bin/env python3
"""Recompute the facts documented in examples/FIXTURE.md from examples/wiki/.

Independent, deliberately simple re-implementation of the rules in
shared/spec/REFERENCE.md §4 and §6 (slugs, frontmatter, clusters, ACLs, wikilinks,
cite:// grading). It exists so that the numbers in FIXTURE.md can be re-checked after
any edit of the sample wiki:

    python3 examples/fixture_facts.py            # human-readable report
    python3 examples/fixture_facts.py --json     # writes examples/fixture-facts.json

Needs Python 3.9+ and PyYAML.
"""
import hashlib
import json
import os
import re
import sys
import urllib.parse

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
WIKI = os.path.join(HERE, "wiki")

ULID_RE = re.compile(r"^[0-7][0-9A-HJKMNP-TV-Z]{25}$")
CLUSTER_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*(/[a-z0-9]+(-[a-z0-9]+)*)?$")
LINK_RE = re.compile(r"\[([^\]]*)\]\(([^)]*)\)")
ACL_RE = re.compile(r"\[\{ALLOW\s+(view|comment|edit|modify|rename|upload|delete)\s+([^}]*)\}\]")
CITE_RE = re.compile(r"\[([^\]]*)\]\((cite://[^\s)\"]+)(?:\s+\"([^\"]*)\")?\)")
EXTERNAL = ("http://", "https://", "ftp://", "mailto:", "cite://")
KNOWN_KEYS = {
    "canonical_id", "title", "type", "status", "summary", "date", "author", "cluster", "tags",
    "related", "kg_include", "audience", "verified_at", "verified_by", "confidence", "runbook",
    "mcp_tool_hints", "key_facts", "derived_from", "derived_connector", "derived_source_url",
    "derived_orphaned", "image",
    # recognised by CONTRACT.md, not part of REFERENCE §4.2:
    "version", "entities",
    # removed upstream, still read for KG edges (CONTRACT §3.8):
    "relations",
}


def slug_of(fname):
    stem = fname.rsplit(".", 1)[0]
    return urllib.parse.unquote(stem.replace("+", " "))


def split_frontmatter(text):
    if not text.startswith("---\n"):
        return None, text
    end = text.find("\n---\n", 3)
    if end < 0:
        return None, text
    return yaml.safe_load(text[4:end + 1]), text[end + 5:]


def strip_code(body):
    """Remove fenced blocks and code spans (for ACL detection; the sample has no indented code)."""
    out, in_fence = [], False
    for line in body.split("\n"):
        if re.match(r"^\s*(```|~~~)", line):
            in_fence = not in_fence
            out.append("")
            continue
        if in_fence:
            out.append("")
            continue
        out.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def norm_ws(s):
    return re.sub(r"\s+", " ", s).strip()


def words(text):
    return len(re.findall(r"\S+", text))


def load_pages():
    pages = {}
    for fname in sorted(os.listdir(WIKI)):
        path = os.path.join(WIKI, fname)
        if not os.path.isfile(path) or not fname.endswith((".md", ".html")):
            continue
        text = open(path, encoding="utf-8").read()
        slug = slug_of(fname)
        if fname.endswith(".html"):
            fm, body = None, text
            plain = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", text, flags=re.S)
            plain = re.sub(r"<[^>]+>", " ", plain)
            wc = words(plain)
        else:
            fm, body = split_frontmatter(text)
            wc = words(body)
        pages[slug] = {"file": fname, "fm": fm or {}, "body": body, "html": fname.endswith(".html"),
                       "words": wc}
    return pages


def memberships(fm):
    c = fm.get("cluster")
    if c is None:
        return []
    vals = c if isinstance(c, list) else [c]
    out = []
    for v in vals:
        v = str(v).strip()
        if v and v not in out:
            out.append(v)
    return out


def extract_links(page):
    if page["html"]:
        return [], []
    targets, kinds = [], []
    for text, target in LINK_RE.findall(page["body"]):
        target = target.strip()
        if target.startswith("<") and target.endswith(">"):
            target = target[1:-1]
        if target == "":
            if len(text) <= 1 or text.startswith("{"):
                continue
            name, kind = text, "empty-target"
        elif target.startswith(EXTERNAL):
            kinds.append(("external" if not target.startswith("cite://") else "cite", target))
            continue
        elif target.startswith("#"):
            kinds.append(("anchor", target))
            continue
        else:
            name, kind = target, "explicit-target"
        anchor = None
        if "#" in name:
            name, anchor = name.split("#", 1)
        targets.append(name)
        kinds.append((kind + ("+anchor" if anchor else ""), name))
    return targets, kinds


def section_text(body, path):
    """REFERENCE §6 step 2: full ATX heading path match, until next heading of <= level."""
    lines = body.split("\n")
    stack, capture, level_cap, out = [], False, None, []
    for line in lines:
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if m:
            lvl, title = len(m.group(1)), norm_ws(m.group(2))
            if capture and lvl <= level_cap:
                break
            if not capture:
                stack = stack[: lvl - 1] + [""] * max(0, lvl - 1 - len(stack))
                stack = stack[: lvl - 1] + [title]
                if [s for s in stack if s] == path:
                    capture, level_cap = True, lvl
                    continue
        if capture:
            out.append(line)
    return "\n".join(out) if capture else None


def main():
    pages = load_pages()
    md = [s for s in pages if not pages[s]["html"]]
    facts = {"pages_total": len(pages), "pages_md": len(md),
             "pages_html": sorted(s for s in pages if pages[s]["html"]),
             "slugs": sorted(pages),
             "decoded_file_names": {p["file"]: s for s, p in pages.items()
                                  if p["file"].rsplit(".", 1)[0] != s}}

    # canonical ids
    ids, missing, malformed = {}, [], {}
    for s in md:
        cid = pages[s]["fm"].get("canonical_id")
        if cid is None:
            missing.append(s)
        elif not ULID_RE.match(str(cid)):
            malformed[s] = str(cid)
        else:
            ids.setdefault(str(cid), []).append(s)
    facts["missing_canonical_id_md"] = sorted(missing)
    facts["malformed_canonical_id"] = malformed
    facts["duplicate_canonical_id"] = {k: sorted(v) for k, v in ids.items() if len(v) > 1}
    facts["unique_valid_ids"] = {v[0]: k for k, v in ids.items() if len(v) == 1}

    # frontmatter keys
    keyuse = {}
    for s in md:
        for k in pages[s]["fm"]:
            keyuse.setdefault(k, []).append(s)
    facts["frontmatter_keys"] = {k: sorted(v) for k, v in sorted(keyuse.items())}
    facts["unknown_keys"] = {k: sorted(v) for k, v in keyuse.items() if k not in KNOWN_KEYS}
    facts["types"] = {}
    facts["status"] = {}
    for s in md:
        facts["types"].setdefault(str(pages[s]["fm"].get("type")), []).append(s)
        facts["status"].setdefault(str(pages[s]["fm"].get("status")), []).append(s)
    facts["no_title"] = sorted(s for s in md if "title" not in pages[s]["fm"])
    facts["no_summary"] = sorted(s for s in md if "summary" not in pages[s]["fm"])
    facts["summary_lengths_out_of_50_160"] = {s: len(str(pages[s]["fm"]["summary"])) for s in md
                                              if "summary" in pages[s]["fm"] and not 50 <= len(str(pages[s]["fm"]["summary"])) <= 160}
    facts["word_counts"] = {s: pages[s]["words"] for s in sorted(pages)}
    facts["runbook_pages"] = sorted(s for s in md if "runbook" in pages[s]["fm"])
    for s in facts["runbook_pages"]:
        rb = pages[s]["fm"]["runbook"]
        assert pages[s]["fm"].get("type") == "runbook", s
        assert len(rb.get("when_to_use", [])) >= 1 and len(rb.get("steps", [])) >= 2 and len(rb.get("pitfalls", [])) >= 1, s
    facts["entities"] = {s: pages[s]["fm"]["entities"] for s in md if "entities" in pages[s]["fm"]}
    facts["relations"] = {s: pages[s]["fm"]["relations"] for s in md if "relations" in pages[s]["fm"]}

    # clusters
    hubs, conflicts = {}, []
    for s in sorted(md):
        fm = pages[s]["fm"]
        if fm.get("type") == "hub":
            ms = memberships(fm)
            if not ms:
                conflicts.append(("CLUSTERLESS_HUB", s))
                continue
            if isinstance(fm.get("cluster"), list) and len(ms) > 1:
                conflicts.append(("MULTI_CLUSTER_HUB", s))
            if ms[0] in hubs:
                conflicts.append(("DUPLICATE_CLUSTER_DECLARATION", s))
            else:
                hubs[ms[0]] = s
    for s in md:
        for c in memberships(pages[s]["fm"]):
            assert CLUSTER_RE.match(c), (s, c)
    direct = {}
    for s in md:
        for c in memberships(pages[s]["fm"]):
            direct.setdefault(c, []).append(s)
    all_paths = sorted(set(direct) | set(hubs))
    for c in all_paths:
        if c not in hubs:
            conflicts.append(("HEADLESS_CLUSTER", c))
        if "/" in c and c.split("/")[0] not in hubs:
            conflicts.append(("UNDECLARED_CLUSTER", c))
    for s in missing:
        conflicts.append(("MISSING_CANONICAL_ID", s))

    def members(c):  # transitive, hub included, counted once
        out = set()
        for p, ss in direct.items():
            if p == c or p.startswith(c + "/"):
                out.update(ss)
        return sorted(out)

    facts["hubs"] = dict(sorted(hubs.items()))
    facts["clusters"] = {c: {"hub": hubs.get(c), "direct_members": sorted(direct.get(c, [])),
                             "transitive_members": members(c)} for c in all_paths}
    facts["top_level_clusters"] = sorted(c for c in all_paths if "/" not in c)
    facts["sub_clusters"] = sorted(c for c in all_paths if "/" in c)
    facts["multi_membership"] = {s: memberships(pages[s]["fm"]) for s in sorted(md)
                                 if isinstance(pages[s]["fm"].get("cluster"), list)}
    facts["conflicts"] = sorted(conflicts)

    # ACLs
    acl = {}
    for s in md:
        entries = ACL_RE.findall(strip_code(pages[s]["body"]))
        if entries:
            acl[s] = [(a, [p.strip() for p in ps.split(",")]) for a, ps in entries]
    facts["acl"] = acl
    public_principals = {"All", "Anonymous", "Guest"}
    facts["restricted"] = {s: sorted({p for _, ps in e for p in ps}) for s, e in acl.items()
                           if not any(set(ps) & public_principals for _, ps in e)}
    restricted = set(facts["restricted"])
    facts["anonymous_visible_pages"] = len(pages) - len(restricted)
    facts["visible_pages_by_principal"] = {
        pr: len(pages) - len([r for r in restricted if pr not in facts["restricted"][r]])
        for pr in ["Alice", "Engineering", "Operators"]}
    facts["visible_pages_by_principal"]["Admin (AllPermission bypass)"] = len(pages)
    tag_pages = {}
    for s in md:
        for t in pages[s]["fm"].get("tags") or []:
            tag_pages.setdefault(str(t), set()).add(s)
    facts["tags_only_on_restricted_pages"] = sorted(t for t, ps in tag_pages.items() if ps <= restricted)
    facts["distinct_tags"] = len(tag_pages)
    facts["distinct_tags_anonymous"] = len([t for t, ps in tag_pages.items() if ps - restricted])
    facts["acl_markup_only_in_code"] = sorted(s for s in md if "[{ALLOW" in pages[s]["body"] and s not in acl)

    # links / graph
    edges, link_kinds, dangling = set(), {}, set()
    for s in md:
        targets, kinds = extract_links(pages[s])
        rel = pages[s]["fm"].get("related") or []
        for t in kinds:
            link_kinds.setdefault(t[0], set()).add(s)
        for t in list(targets) + [str(r) for r in rel]:
            if t in pages and t != s:
                edges.add((s, t))
            elif t not in pages:
                dangling.add((s, t))
    facts["link_syntax_used_by"] = {k: sorted(v) for k, v in sorted(link_kinds.items())}
    facts["links_to_nonexistent_pages"] = sorted(dangling)
    facts["edge_count"] = len(edges)
    indeg = {s: 0 for s in pages}
    for _, t in edges:
        indeg[t] += 1
    facts["in_degree"] = dict(sorted(indeg.items(), key=lambda kv: (-kv[1], kv[0])))
    facts["restricted_pages_outgoing_edges"] = sorted(e for e in edges if e[0] in facts["restricted"])

    order = {}
    for c in all_paths:
        ms = members(c)
        hub = hubs.get(c)
        rows = []
        for m in ms:
            if m == hub:
                continue
            ex = sum(1 for (a, b) in edges if b == m and a in ms and a != hub)
            inc = sum(1 for (a, b) in edges if b == m and a in ms)
            rows.append((m, ex, inc))
        rows.sort(key=lambda r: (-r[1], r[0]))
        order[c] = {"hub": hub, "members_by_intra_in_degree": [[m, ex, inc] for m, ex, inc in rows],
                    "alphabetical": sorted(r[0] for r in rows)}
    facts["intra_cluster_in_degree"] = order
    for c in all_paths:
        facts["clusters"][c]["transitive_count"] = len(members(c))
        facts["clusters"][c]["transitive_count_anonymous"] = len([m for m in members(c) if m not in restricted])

    # citations
    cites = []
    by_id = {str(pages[s]["fm"]["canonical_id"]): s for s in md if "canonical_id" in pages[s]["fm"]}
    for s in md:
        for claim, url, span in CITE_RE.findall(pages[s]["body"]):
            rest = url[len("cite://"):]
            target, _, hp = rest.partition("/")
            path = [norm_ws(urllib.parse.unquote_plus(x)) for x in hp.split("/")] if hp else []
            path = [x for x in path if x]
            tslug = by_id.get(target)
            if tslug is None:
                status = "target_missing"
            else:
                sec = pages[tslug]["body"] if not path else section_text(pages[tslug]["body"], path)
                if sec is None:
                    status = "stale (heading path not found)"
                elif not span.strip():
                    status = "current"
                elif norm_ws(span) in norm_ws(sec):
                    status = "current"
                else:
                    status = "stale (span not in section)"
            cites.append({"source": s, "target": target, "target_slug": tslug,
                          "heading_path": " > ".join(path), "span": span, "claim": claim,
                          "status": status,
                          "span_sha256_normalized": hashlib.sha256(norm_ws(span).encode()).hexdigest() if span else None})
    facts["citations"] = cites

    if "--json" in sys.argv:
        with open(os.path.join(HERE, "fixture-facts.json"), "w") as f:
            json.dump(facts, f, indent=2, sort_keys=True, default=str)
            f.write("\n")
    print(json.dumps(facts, indent=1, default=str))


if __name__ == "__main__":
    main()
