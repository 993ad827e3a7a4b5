//! `list_stale_citations` (REFERENCE §6) and the caller's view of a citation's grade, which
//! `get_page_for_agent` shares.
//!
//! The reference did not gate this tool; we do (CONTRACT §3.5), with one rule: **a caller sees
//! a citation as if the pages it may not view did not exist.**
//!
//! - A citation whose *source* page the caller may not view is not listed at all (the source
//!   page is where the citation lives).
//! - A citation whose *target* exists but is restricted is graded `target_missing`, with no
//!   `pinnedTargetVersion` — exactly what the caller would see if the target had been deleted.
//!   Its build-time grade (`current` or `stale`) would tell whether the restricted text still
//!   contains the span, so it is never shown. A `current` citation to a restricted page thus
//!   appears as `target_missing`: the honest answer from where the caller stands.
//! - With `page`, a page the caller may not view behaves like an unknown id: no citations.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use super::common::int_arg;
use super::{text_arg, KnowledgeTools};
use wikantik_access::access::Caller;
use wikantik_format::error::Result;
use wikantik_format::catalog::PageRecord;
use wikantik_format::payload::CitationStatus;
use wikantik_format::payload::CitationEdge;
use wikantik_mcp::ToolOutcome;
use crate::page_catalog::PageCatalog;
use crate::reader::ShardStore;

/// The grade of `edge` (whose source `caller` may view) given its target's record: a target
/// the caller may not view is reported missing, as if it did not exist.
pub(crate) fn grade_for(edge: &CitationEdge, target: Option<&PageRecord>, caller: &Caller) -> (CitationStatus, Option<u32>) {
    match target {
        Some(target) if !caller.can_view(target) => (CitationStatus::TargetMissing, None),
        _ => (edge.status, edge.pinned_target_version),
    }
}

/// Which citations of `page` to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Outbound,
    Inbound,
    Both,
    /// An unrecognized value matches nothing, as in the reference (the schema's enum normally
    /// rejects it first).
    Nothing,
}

impl Direction {
    fn parse(raw: Option<&str>) -> Direction {
        match raw.map(str::trim) {
            None | Some("both") => Direction::Both,
            Some("outbound") => Direction::Outbound,
            Some("inbound") => Direction::Inbound,
            Some(_) => Direction::Nothing,
        }
    }
}

fn row(edge: &CitationEdge, status: CitationStatus, pinned: Option<u32>) -> Value {
    let mut row = Map::new();
    row.insert("sourceCanonicalId".into(), json!(edge.source_canonical_id));
    row.insert("targetCanonicalId".into(), json!(edge.target_canonical_id));
    row.insert("targetHeadingPath".into(), json!(edge.target_heading_path));
    row.insert("spanText".into(), json!(edge.span_text.as_deref().unwrap_or("")));
    row.insert("claimText".into(), json!(edge.claim_text));
    row.insert("status".into(), json!(status.as_str()));
    if let Some(version) = pinned {
        row.insert("pinnedTargetVersion".into(), json!(version));
    }
    Value::Object(row)
}

/// `list_stale_citations`: non-current citations as the caller sees them (module docs). With
/// `page` (a canonical id): its outbound ones, then its inbound ones, per `direction`; without:
/// every `stale` one, then every `target_missing` one, each group in index order. Cut at `limit`.
pub(super) async fn list_stale_citations<S: ShardStore>(
    tools: &KnowledgeTools<'_, S>,
    args: &Value,
    caller: &Caller,
) -> Result<ToolOutcome> {
    let limit = usize::try_from(int_arg(args, "limit").unwrap_or(50).max(0)).unwrap_or(usize::MAX);
    let direction = Direction::parse(args.get("direction").and_then(Value::as_str));
    let citations = tools.reader.citations().await?;
    if citations.citations.is_empty() {
        return Ok(ToolOutcome::Json(json!({ "citations": [], "count": 0 })));
    }
    // The records of the citations' sources (by slug) and targets (by canonical id), read by
    // part.
    let catalog = PageCatalog::open(tools.reader).await?;
    let sources: Vec<&str> = citations.citations.iter().map(|e| e.source_slug.as_str()).collect::<BTreeSet<_>>().into_iter().collect();
    let targets: Vec<&str> = citations.citations.iter().map(|e| e.target_canonical_id.as_str()).collect::<BTreeSet<_>>().into_iter().collect();
    let (source_records, target_records) = futures_util::try_join!(catalog.by_slugs(&sources), catalog.by_canonical_ids(&targets))?;
    let viewable_sources: BTreeSet<&str> =
        sources.iter().zip(&source_records).filter(|(_, record)| record.as_ref().is_some_and(|r| caller.can_view(r))).map(|(slug, _)| *slug).collect();
    let target_of: BTreeMap<&str, &PageRecord> = targets.iter().zip(&target_records).filter_map(|(id, record)| Some((*id, record.as_ref()?))).collect();
    // A caller sees a citation only from a page it may view, graded as if the pages it may not
    // view did not exist (module docs).
    let graded: Vec<(&CitationEdge, CitationStatus, Option<u32>)> = citations
        .citations
        .iter()
        .filter(|e| viewable_sources.contains(e.source_slug.as_str()))
        .map(|e| {
            let (status, pinned) = grade_for(e, target_of.get(e.target_canonical_id.as_str()).copied(), caller);
            (e, status, pinned)
        })
        .filter(|(_, status, _)| *status != CitationStatus::Current)
        .collect();
    let rows: Vec<Value> = match text_arg(args, "page") {
        Some(_) if graded.is_empty() => Vec::new(),
        Some(page) => match catalog.viewable_by_id(caller, &page).await? {
            None => Vec::new(),
            Some(page) => {
                let id = page.canonical_id.as_str();
                let outbound = graded.iter().filter(|(e, ..)| e.source_canonical_id == id && e.source_slug == page.slug);
                let inbound = graded.iter().filter(|(e, ..)| e.target_canonical_id == id);
                let chosen: Vec<_> = match direction {
                    Direction::Outbound => outbound.collect(),
                    Direction::Inbound => inbound.collect(),
                    Direction::Both => outbound.chain(inbound).collect(),
                    Direction::Nothing => Vec::new(),
                };
                chosen.into_iter().map(|(e, s, p)| row(e, *s, *p)).collect()
            }
        },
        None => {
            let of = |wanted: CitationStatus| graded.iter().filter(move |(_, s, _)| *s == wanted);
            of(CitationStatus::Stale).chain(of(CitationStatus::TargetMissing)).map(|(e, s, p)| row(e, *s, *p)).collect()
        }
    };
    let rows: Vec<Value> = rows.into_iter().take(limit).collect();
    let count = rows.len();
    Ok(ToolOutcome::Json(json!({ "citations": rows, "count": count })))
}
