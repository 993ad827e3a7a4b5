//! `get_page_for_agent` (REFERENCE §3.3): one page condensed for an agent.
//!
//! Serialized snake_case with nulls kept, as the reference does for this one tool. Where the
//! reference relies on a live server, the projection uses only build-time data:
//!
//! - `confidence`: an explicit, valid frontmatter `confidence` wins; else `STALE` without
//!   `verified_at` or when it is more than 90 days older than the newest change among the pages
//!   the caller may view (the index's own "now": the core reads no clock); else `PROVISIONAL`
//!   (there is no trusted-author registry at the edge, so nothing computes to `AUTHORITATIVE`).
//! - `audience`: `HUMANS`, `AGENTS` or `HUMANS_AND_AGENTS` from the scalar or list form; absent
//!   or unrecognized → `HUMANS_AND_AGENTS` (the reference's fallback).
//! - `key_facts`: frontmatter `key_facts` (≤ 6, each ≤ 240 characters), else the first three
//!   sentences of the body's prose (headings, code, tables, HTML, lists and ACL lines skipped).
//! - `recent_changes`: always `[]` — the index keeps one version number per page, not a
//!   change log, and we do not invent entries.
//! - `mcp_tool_hints`: frontmatter `mcp_tool_hints` (≤ 5), else synthesized from the page's
//!   kind, cluster and tags.
//! - `agent_hints`: `null` for a page outside every cluster; else `prefer_tools` (the distinct
//!   tools of the hints) and `prefer_pages`: the primary cluster's hub (role `cluster_hub`),
//!   then the other members by intra-cluster in-degree, ties by title (role `cluster_member`),
//!   at most 5, viewable pages only and counting only viewable referrers.
//! - `summary`: a hub without one gets a synthesized summary naming its viewable members
//!   (`summary_synthesized: true`).
//! - `headings_outline`: ATX headings of levels 2–6 outside fenced code; for an exported HTML
//!   page, the headings its sections were chunked under.
//! - `missing_fields`: which of `title`, `type`, `summary`, `cluster`, `canonical_id` the page
//!   lacks (a derived canonical id counts as missing); `degraded` is true when any is.
//! - `stale_citations`: the page's own non-current outbound citations, graded as the caller
//!   sees them (see [`super::citations`]), status as the enum name (`STALE`, `TARGET_MISSING`).

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Map, Value};

use super::citations::grade_for;
use super::common::{iso_instant, non_empty, parse_date_or_instant, path_segment, Bodies};
use super::{text_arg, KnowledgeTools};
use wikantik_access::access::Caller;
use wikantik_format::error::{Error, Result};
use wikantik_format::catalog::PageRecord;
use wikantik_format::clusters::{ClusterCard, ClusterPage};
use wikantik_format::payload::{CitationEdge, CitationStatus};
use wikantik_format::markup::strip_frontmatter;
use wikantik_mcp::ToolOutcome;
use crate::page_catalog::PageCatalog;
use crate::reader::ShardStore;

const MAX_KEY_FACTS: usize = 6;
const BODY_KEY_FACTS: usize = 3;
const MAX_FACT_CHARS: usize = 240;
const MAX_HEADINGS: usize = 32;
const MAX_TOOL_HINTS: usize = 5;
const MAX_PREFER_PAGES: usize = 5;
const STALE_AFTER_SECONDS: i64 = 90 * 86_400;

#[derive(Debug, Serialize)]
struct KeyFact {
    text: String,
    source_hint: &'static str,
}

#[derive(Debug, Serialize)]
struct Heading {
    level: usize,
    text: String,
}

#[derive(Debug, Serialize)]
struct ToolHint {
    tool: String,
    when: String,
}

#[derive(Debug, Serialize)]
struct PreferPage {
    canonical_id: String,
    title: String,
    role: &'static str,
}

#[derive(Debug, Serialize)]
struct AgentHints {
    prefer_tools: Vec<String>,
    prefer_pages: Vec<PreferPage>,
}

#[derive(Debug, Serialize)]
struct StaleCitation {
    target_canonical_id: String,
    target_heading_path: String,
    span_text: Option<String>,
    claim_text: String,
    status: &'static str,
    pinned_target_version: Option<u32>,
}

/// The projection, in the reference's field order; every field is always present.
#[derive(Debug, Serialize)]
struct AgentPage {
    canonical_id: String,
    slug: String,
    title: String,
    #[serde(rename = "type")]
    page_type: Option<String>,
    cluster: Option<String>,
    audience: &'static str,
    confidence: &'static str,
    verified_at: Option<String>,
    verified_by: Option<String>,
    updated: String,
    summary: Option<String>,
    key_facts: Vec<KeyFact>,
    headings_outline: Vec<Heading>,
    recent_changes: Vec<Value>,
    mcp_tool_hints: Vec<ToolHint>,
    runbook: Option<Value>,
    agent_hints: Option<AgentHints>,
    summary_synthesized: bool,
    full_body_url: String,
    raw_markdown_url: String,
    degraded: bool,
    missing_fields: Vec<String>,
    stale_citations: Vec<StaleCitation>,
}

/// A frontmatter value as trimmed, non-blank text (strings, numbers, booleans).
fn scalar(frontmatter: &Map<String, Value>, key: &str) -> Option<String> {
    match frontmatter.get(key)? {
        Value::String(s) => non_empty(s),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn audience(frontmatter: &Map<String, Value>) -> &'static str {
    let values: Vec<String> = match frontmatter.get("audience") {
        Some(Value::String(s)) => vec![s.trim().to_ascii_lowercase()],
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(|s| s.trim().to_ascii_lowercase()).collect(),
        _ => Vec::new(),
    };
    let both = values.iter().any(|v| matches!(v.as_str(), "both" | "humans_and_agents" | "humans-and-agents"));
    let humans = both || values.iter().any(|v| v == "humans");
    let agents = both || values.iter().any(|v| v == "agents");
    match (humans, agents) {
        (true, false) => "HUMANS",
        (false, true) => "AGENTS",
        _ => "HUMANS_AND_AGENTS",
    }
}

fn confidence(frontmatter: &Map<String, Value>, verified_at: Option<i64>, now: i64) -> &'static str {
    match scalar(frontmatter, "confidence").map(|c| c.to_ascii_lowercase()).as_deref() {
        Some("authoritative") => return "AUTHORITATIVE",
        Some("provisional") => return "PROVISIONAL",
        Some("stale") => return "STALE",
        _ => {}
    }
    match verified_at {
        Some(at) if now.saturating_sub(at) <= STALE_AFTER_SECONDS => "PROVISIONAL",
        _ => "STALE",
    }
}

/// At most `MAX_FACT_CHARS` characters: a longer text is cut at the last word boundary that
/// leaves room for an ellipsis.
fn clip(text: &str) -> String {
    if text.chars().count() <= MAX_FACT_CHARS {
        return text.to_string();
    }
    let head: String = text.chars().take(MAX_FACT_CHARS - 1).collect();
    let cut = head.rfind(char::is_whitespace).filter(|&at| at > 0).unwrap_or(head.len());
    format!("{}…", head.get(..cut).unwrap_or(&head).trim_end())
}

/// A fence opener/closer: three or more backticks or tildes after up to three spaces.
fn fence_marker(line: &str) -> Option<(char, usize)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let c = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let run = trimmed.chars().take_while(|x| *x == c).count();
    (run >= 3).then_some((c, run))
}

/// The body's lines outside fenced code, in order.
fn prose_lines(body: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for line in body.lines() {
        match (fence, fence_marker(line)) {
            (None, Some(open)) => fence = Some(open),
            (Some((c, n)), Some((c2, n2))) if c == c2 && n2 >= n && line.trim().chars().all(|x| x == c) => fence = None,
            (Some(_), _) => {}
            (None, None) => out.push(line),
        }
    }
    out
}

/// An ATX heading `(level, text)`, closing `#`s removed.
fn atx_heading(line: &str) -> Option<(usize, String)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let level = trimmed.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = trimmed.get(level..)?;
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let mut text = rest.trim();
    let without_closing = text.trim_end_matches('#');
    if without_closing.is_empty() || without_closing.ends_with([' ', '\t']) {
        text = without_closing.trim_end();
    }
    Some((level, text.to_string()))
}

fn headings_outline(body: &str) -> Vec<Heading> {
    prose_lines(body)
        .into_iter()
        .filter_map(atx_heading)
        .filter(|(level, text)| (2..=6).contains(level) && !text.is_empty())
        .take(MAX_HEADINGS)
        .map(|(level, text)| Heading { level, text })
        .collect()
}

/// The outline of a page whose text is not Markdown (an exported `.html` page), read off its
/// sections' heading paths: each new path prefix below the title is a heading at its depth.
fn outline_from_sections(sections: &[wikantik_format::payload::SectionRecord]) -> Vec<Heading> {
    let mut seen: BTreeSet<&[String]> = BTreeSet::new();
    let mut out = Vec::new();
    for section in sections {
        for depth in 2..=section.heading_path.len().min(6) {
            let Some(prefix) = section.heading_path.get(..depth) else { continue };
            if seen.insert(prefix) {
                if let Some(text) = prefix.last().and_then(|t| non_empty(t)) {
                    out.push(Heading { level: depth, text });
                }
            }
        }
    }
    out.truncate(MAX_HEADINGS);
    out
}

/// Inline Markdown reduced to its text: `[text](dest)` and `[Page]()` → the bracket text,
/// code-span backticks and emphasis markers dropped.
fn plain_inline(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find('[') {
        out.push_str(rest.get(..open).unwrap_or_default());
        let after = rest.get(open + 1..).unwrap_or_default();
        match after.find(']') {
            Some(close) if after.get(close + 1..).is_some_and(|s| s.starts_with('(')) => {
                out.push_str(after.get(..close).unwrap_or_default());
                let dest = after.get(close + 2..).unwrap_or_default();
                rest = dest.find(')').and_then(|end| dest.get(end + 1..)).unwrap_or_default();
            }
            _ => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out.replace("**", "").replace("__", "").replace('`', "")
}

/// The first sentences of the body's paragraphs (text up to `.`, `!` or `?` before a space or
/// the paragraph's end).
fn body_sentences(body: &str, wanted: usize) -> Vec<String> {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    // Inside a list, indented lines continue the item: they are not prose either.
    let mut in_list = false;
    for line in prose_lines(body) {
        let t = line.trim();
        let indented = line.starts_with([' ', '\t']);
        let list_item = t.starts_with("- ")
            || t.starts_with("* ")
            || t.starts_with("+ ")
            || t.split_once(". ").is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if list_item {
            in_list = true;
        } else if !t.is_empty() && !indented {
            in_list = false;
        }
        let is_prose = !(t.is_empty()
            || list_item
            || (in_list && indented)
            || t.starts_with('#')
            || t.starts_with('|')
            || t.starts_with('<')
            || t.starts_with('>')
            || t.starts_with("[{")
            || line.starts_with("    ")
            || line.starts_with('\t'));
        if is_prose {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(&plain_inline(t));
        } else if !current.is_empty() {
            paragraphs.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    let mut sentences = Vec::new();
    for paragraph in paragraphs {
        let mut start = 0;
        let chars: Vec<(usize, char)> = paragraph.char_indices().collect();
        for (i, &(at, c)) in chars.iter().enumerate() {
            let ends = matches!(c, '.' | '!' | '?') && chars.get(i + 1).is_none_or(|(_, next)| next.is_whitespace());
            if ends {
                let end = at + c.len_utf8();
                if let Some(s) = paragraph.get(start..end).map(str::trim).filter(|s| s.len() > 1) {
                    sentences.push(s.to_string());
                }
                start = end;
            }
        }
        // A trailing fragment without terminal punctuation (a label, a navigation bar, an intro
        // ending in a colon) is not a fact.
        if sentences.len() >= wanted {
            break;
        }
    }
    sentences.truncate(wanted);
    sentences
}

fn key_facts(frontmatter: &Map<String, Value>, body: &str) -> Vec<KeyFact> {
    if let Some(Value::Array(items)) = frontmatter.get("key_facts") {
        let facts: Vec<KeyFact> = items
            .iter()
            .filter_map(Value::as_str)
            .filter_map(non_empty)
            .take(MAX_KEY_FACTS)
            .map(|t| KeyFact { text: clip(&t), source_hint: "frontmatter" })
            .collect();
        if !facts.is_empty() {
            return facts;
        }
    }
    body_sentences(body, BODY_KEY_FACTS).into_iter().map(|t| KeyFact { text: clip(&t), source_hint: "body" }).collect()
}

fn tool_hints(frontmatter: &Map<String, Value>, page: &PageRecord) -> Vec<ToolHint> {
    if let Some(Value::Array(items)) = frontmatter.get("mcp_tool_hints") {
        let hints: Vec<ToolHint> = items
            .iter()
            .filter_map(|item| {
                let tool = item.get("tool").and_then(Value::as_str).and_then(non_empty)?;
                let when = item.get("when").and_then(Value::as_str).and_then(non_empty).unwrap_or_default();
                Some(ToolHint { tool, when })
            })
            .take(MAX_TOOL_HINTS)
            .collect();
        if !hints.is_empty() {
            return hints;
        }
    }
    let hint = |tool: &str, when: String| ToolHint { tool: tool.to_string(), when };
    let title = if page.title.is_empty() { &page.slug } else { &page.title };
    let mut hints = Vec::new();
    let cluster = page.clusters.first();
    if let (true, Some(cluster)) = (page.page_type.as_deref().is_some_and(|t| t.trim().eq_ignore_ascii_case("hub")), cluster) {
        hints.push(hint("get_briefing", format!("You start work in the {cluster} area and want its hub and members as standing context (clusters: [\"{cluster}\"]).")));
    }
    hints.push(hint("assemble_bundle", format!("You have a concrete question about {title} and need citable sections.")));
    if let Some(cluster) = cluster {
        hints.push(hint("list_pages_by_filter", format!("You want the other pages of the {cluster} cluster (cluster: \"{cluster}\").")));
    }
    if !page.tags.is_empty() {
        let tags: Vec<&str> = page.tags.iter().take(2).map(String::as_str).collect();
        hints.push(hint("retrieve_context", format!("You look for more pages about {} (filters.tags).", tags.join(", "))));
    }
    hints.push(hint("read_pages", format!("You need the full text of this page (slugs: [\"{}\"]).", page.slug)));
    hints.truncate(MAX_TOOL_HINTS);
    hints
}

/// The `runbook` block of a runbook page when it is well formed (`when_to_use` ≥ 1, `steps` ≥ 2,
/// `pitfalls` ≥ 1 entries); `None` otherwise.
fn runbook(frontmatter: &Map<String, Value>, page: &PageRecord) -> Option<Value> {
    if !page.page_type.as_deref().is_some_and(|t| t.trim().eq_ignore_ascii_case("runbook")) {
        return None;
    }
    let block = frontmatter.get("runbook").filter(|v| v.is_object())?;
    let entries = |key: &str| block.get(key).and_then(Value::as_array).map_or(0, Vec::len);
    (entries("when_to_use") >= 1 && entries("steps") >= 2 && entries("pitfalls") >= 1).then(|| block.clone())
}

/// The primary cluster's hub, then its other members by intra-cluster in-degree (viewable
/// pages only, as members and as referrers), ties by title; at most 5, never the page itself.
fn prefer_pages(page: &PageRecord, card: &ClusterCard, can_view: impl Fn(u32) -> bool) -> Vec<PreferPage> {
    let viewable: Vec<bool> = card.members.iter().map(|m| can_view(m.page.position)).collect();
    let entry = |p: &ClusterPage, role| PreferPage { canonical_id: p.canonical_id.clone(), title: p.title.clone(), role };
    let hub = card.hub.as_ref();
    let mut out: Vec<PreferPage> = Vec::new();
    if let Some(hub) = hub.filter(|h| can_view(h.position) && h.slug != page.slug) {
        out.push(entry(hub, "cluster_hub"));
    }
    let mut others: Vec<(usize, &ClusterPage)> = card
        .members
        .iter()
        .zip(&viewable)
        .filter(|(m, &v)| v && m.page.slug != page.slug && Some(m.page.slug.as_str()) != hub.map(|h| h.slug.as_str()))
        .map(|(m, _)| (m.referrers_among(&viewable), &m.page))
        .collect();
    others.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.title.cmp(&b.1.title)).then_with(|| a.1.slug.cmp(&b.1.slug)));
    out.extend(others.into_iter().map(|(_, p)| entry(p, "cluster_member")));
    out.truncate(MAX_PREFER_PAGES);
    out
}

pub(super) async fn get_page_for_agent<S: ShardStore>(tools: &KnowledgeTools<'_, S>, args: &Value, caller: &Caller) -> Result<ToolOutcome> {
    let id = text_arg(args, "canonical_id").ok_or_else(|| Error::Invalid("canonical_id argument is required".into()))?;
    let reader = tools.reader;
    // The page, its cluster's card and the newest change the caller may see, each read by
    // part (an older index answers from its page table, spine and graph).
    let catalog = PageCatalog::open(reader).await?;
    let page = catalog.viewable_by_id(caller, &id).await?.ok_or_else(|| Error::Invalid(format!("no page for canonical_id {id}")))?;
    let page = &page;
    let wanted = [page];
    let cluster = page.clusters.first().cloned();
    let card = async {
        match &cluster {
            Some(c) => catalog.cluster(c).await,
            None => Ok(None),
        }
    };
    let (bodies, card, citations, latest) = futures_util::join!(Bodies::load(reader, &wanted), card, reader.citations(), catalog.latest_viewable(caller));
    let (bodies, card, citations, latest) = (bodies?, card?, citations?, latest?);
    let empty = Map::new();
    let (frontmatter, text) = match bodies.get(page) {
        Some(body) => (&body.frontmatter, body.text.as_str()),
        None => (&empty, ""),
    };
    let body = strip_frontmatter(text);
    let can_view = |position: u32| catalog.can_view_position(caller, position);

    let now = latest.unwrap_or(page.updated);
    let verified_raw = scalar(frontmatter, "verified_at");
    let verified_at = verified_raw.as_deref().and_then(parse_date_or_instant);
    let is_hub = page.page_type.as_deref().is_some_and(|t| t.trim().eq_ignore_ascii_case("hub"));

    let mut summary = non_empty(&page.summary);
    let mut summary_synthesized = false;
    if let (None, true, Some(c), Some(card)) = (&summary, is_hub, &cluster, &card) {
        let names: Vec<String> = card
            .members
            .iter()
            .filter(|m| can_view(m.page.position) && m.page.slug != page.slug)
            .map(|m| m.page.title.clone())
            .collect();
        if !names.is_empty() {
            let shown: Vec<&str> = names.iter().take(5).map(String::as_str).collect();
            let more = names.len().saturating_sub(shown.len());
            let tail = if more > 0 { format!(" and {more} more") } else { String::new() };
            summary = Some(format!("Hub of the {c} cluster: {}{tail}.", shown.join(", ")));
            summary_synthesized = true;
        }
    }

    let mcp_tool_hints = tool_hints(frontmatter, page);
    let agent_hints = card.as_ref().map(|card| {
        let mut seen = BTreeSet::new();
        AgentHints {
            prefer_tools: mcp_tool_hints.iter().map(|h| h.tool.clone()).filter(|t| seen.insert(t.clone())).collect(),
            prefer_pages: prefer_pages(page, card, can_view),
        }
    });

    let mut missing_fields = Vec::new();
    // A title taken from an HTML page's <title> counts; the slug fallback does not.
    if frontmatter.get("title").and_then(Value::as_str).and_then(non_empty).is_none() && (page.title.is_empty() || page.title == page.slug) {
        missing_fields.push("title".to_string());
    }
    if page.page_type.as_deref().and_then(non_empty).is_none() {
        missing_fields.push("type".to_string());
    }
    if summary.is_none() {
        missing_fields.push("summary".to_string());
    }
    if cluster.is_none() {
        missing_fields.push("cluster".to_string());
    }
    if !page.canonical_id_authored {
        missing_fields.push("canonical_id".to_string());
    }

    let own: Vec<&CitationEdge> = citations.citations.iter().filter(|e| e.source_slug == page.slug).collect();
    let targets = futures_util::future::try_join_all(own.iter().map(|e| catalog.by_canonical_id(&e.target_canonical_id))).await?;
    let stale_citations = own
        .iter()
        .zip(&targets)
        .map(|(e, target)| {
            let (status, pinned) = grade_for(e, target.as_ref(), caller);
            (e, status, pinned)
        })
        .filter(|(_, status, _)| *status != CitationStatus::Current)
        .map(|(e, status, pinned)| StaleCitation {
            target_canonical_id: e.target_canonical_id.clone(),
            target_heading_path: e.target_heading_path.clone(),
            span_text: e.span_text.clone(),
            claim_text: e.claim_text.clone(),
            status: status.enum_name(),
            pinned_target_version: pinned,
        })
        .collect();

    // An exported HTML page is read through its sections (its text already reduced to prose).
    let (headings_outline, key_facts) = if page.source.to_ascii_lowercase().ends_with(".html") {
        let sections = reader.sections(page.partition).await?;
        let records = sections.page(page.key).map(|p| p.sections.as_slice()).unwrap_or_default();
        let prose: Vec<&str> = records.iter().map(|r| r.text.as_str()).collect();
        (outline_from_sections(records), key_facts(frontmatter, &prose.join("\n\n")))
    } else {
        (headings_outline(body), key_facts(frontmatter, body))
    };
    let projection = AgentPage {
        canonical_id: page.canonical_id.clone(),
        slug: page.slug.clone(),
        title: if page.title.is_empty() { page.slug.clone() } else { page.title.clone() },
        page_type: page.page_type.as_deref().and_then(non_empty).map(|t| t.to_ascii_lowercase()),
        cluster,
        audience: audience(frontmatter),
        confidence: confidence(frontmatter, verified_at, now),
        verified_at: verified_raw.map(|raw| verified_at.map(iso_instant).unwrap_or(raw)),
        verified_by: scalar(frontmatter, "verified_by"),
        updated: iso_instant(page.updated),
        summary,
        key_facts,
        headings_outline,
        recent_changes: Vec::new(),
        mcp_tool_hints,
        runbook: runbook(frontmatter, page),
        agent_hints,
        summary_synthesized,
        full_body_url: format!("/api/pages/{}", path_segment(&page.slug)),
        raw_markdown_url: format!("/wiki/{}?format=md", path_segment(&page.slug)),
        degraded: !missing_fields.is_empty(),
        missing_fields,
        stale_citations,
    };
    serde_json::to_value(projection).map(ToolOutcome::Json).map_err(|e| Error::Invalid(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_facts_are_clipped_on_a_word_boundary() {
        let long = "word ".repeat(100);
        let clipped = clip(long.trim());
        assert!(clipped.chars().count() <= MAX_FACT_CHARS && clipped.ends_with("word…"), "{clipped}");
        assert_eq!(clip("short fact."), "short fact.");
    }

    #[test]
    fn outline_skips_fenced_code_and_level_one() {
        let body = "# Title\n\n## One ##\n```\n## not a heading\n```\n### Two\n####### seven\n#nospace\n";
        let outline: Vec<(usize, String)> = headings_outline(body).into_iter().map(|h| (h.level, h.text)).collect();
        assert_eq!(outline, vec![(2, "One".to_string()), (3, "Two".to_string())]);
    }

    #[test]
    fn body_sentences_are_plain_prose() {
        let body = "[{ALLOW view All}]()\n# T\n\nThe [index builder](IndexBuilder) writes **shards**. It uses `cbor`.\n\n- a list\n  continued.\n\nThird one here! Fourth.";
        assert_eq!(body_sentences(body, 3), vec!["The index builder writes shards.", "It uses cbor.", "Third one here!"]);
    }
}
