//! The page tools of the retrieval group (REFERENCE §3.3): `get_page`, `list_pages`,
//! `list_metadata_values` and `read_pages`. Each one looks only at pages the caller may view,
//! so a restricted page is indistinguishable from a missing one — including in counts.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::common::{int_arg, viewable, Bodies, PageFilter, RetrievedPage};
use super::{text_arg, KnowledgeTools};
use wikantik_access::access::Caller;
use wikantik_format::catalog::PageRecord;
use wikantik_format::error::{Error, Result};
use wikantik_mcp::ToolOutcome;
use crate::page_catalog::PageCatalog;
use crate::reader::ShardStore;

/// Most slugs one `read_pages` call may name (CONTRACT §4).
pub const READ_PAGES_CAP: usize = 20;

/// Largest `list_pages` page.
pub const LIST_PAGES_MAX: i64 = 200;

fn json_outcome(value: impl serde::Serialize) -> Result<ToolOutcome> {
    serde_json::to_value(value).map(ToolOutcome::Json).map_err(|e| Error::Invalid(e.to_string()))
}

/// `get_page`: the page's `RetrievedPage` (score 0, no chunks), or `{"exists": false,
/// "pageName": slug}` — the same answer for a missing and a restricted page, and not an error.
pub(super) async fn get_page<S: ShardStore>(tools: &KnowledgeTools<'_, S>, args: &Value, caller: &Caller) -> Result<ToolOutcome> {
    let slug = text_arg(args, "slug").ok_or_else(|| Error::Invalid("a page identifier is required (one of: slug, pageName, name)".into()))?;
    let catalog = PageCatalog::open(tools.reader).await?;
    match catalog.viewable(caller, &slug).await? {
        Some(page) => json_outcome(RetrievedPage::of(&page)),
        None => {
            #[cfg(feature = "acl-mutation")]
            if let Some(message) = wikantik_format::mutation::restricted_wording(&*tools.reader.pages().await?, &slug) {
                return Err(Error::Invalid(message));
            }
            Ok(ToolOutcome::Json(json!({ "exists": false, "pageName": slug })))
        }
    }
}

/// `list_pages`: viewable pages matching the metadata filters, in slug order, paged.
/// `limit` 0 behaves like 1 (the echoed `limit` is the effective one); `totalMatched` counts
/// viewable matches only.
pub(super) async fn list_pages<S: ShardStore>(tools: &KnowledgeTools<'_, S>, args: &Value, caller: &Caller) -> Result<ToolOutcome> {
    let limit = int_arg(args, "limit").unwrap_or(50);
    if !(0..=LIST_PAGES_MAX).contains(&limit) {
        return Err(Error::Invalid(format!("limit must be in [0, {LIST_PAGES_MAX}], got {limit}")));
    }
    let offset = int_arg(args, "offset").unwrap_or(0);
    if offset < 0 {
        return Err(Error::Invalid(format!("offset must be >= 0, got {offset}")));
    }
    let (limit, offset) = (limit.max(1) as usize, usize::try_from(offset).unwrap_or(usize::MAX));
    let filter = PageFilter::from_args(args).map_err(Error::Invalid)?;
    // Without filters the count comes from the page index and only the window's records are
    // read; a filter looks at every viewable page's record.
    let (total, window) = if filter.is_empty() {
        PageCatalog::open(tools.reader).await?.viewable_window(caller, offset, limit).await?
    } else {
        // Streamed: the matches are counted and only the window's records kept.
        let (mut matched, mut window) = (0usize, Vec::new());
        PageCatalog::open(tools.reader)
            .await?
            .scan_viewable(caller, |p| {
                if filter.matches(p) {
                    if (offset..offset.saturating_add(limit)).contains(&matched) {
                        window.push(p.clone());
                    }
                    matched += 1;
                }
            })
            .await?;
        (matched, window)
    };
    let pages: Vec<RetrievedPage> = window.iter().map(RetrievedPage::of).collect();
    let pages = serde_json::to_value(&pages).map_err(|e| Error::Invalid(e.to_string()))?;
    Ok(ToolOutcome::Json(json!({ "pages": pages, "totalMatched": total, "limit": limit, "offset": offset })))
}

/// `list_metadata_values`: distinct values of one frontmatter field over the pages the caller
/// may view (the reference counted restricted pages too; CONTRACT §3.5 gates it), each value's
/// count being the number of pages carrying it; most frequent first, then by value.
pub(super) async fn list_metadata_values<S: ShardStore>(
    tools: &KnowledgeTools<'_, S>,
    args: &Value,
    caller: &Caller,
) -> Result<ToolOutcome> {
    let field = text_arg(args, "field").or_else(|| text_arg(args, "key")).ok_or_else(|| Error::Invalid("field must not be blank".into()))?;
    if let Some(part) = tools.reader.metadata_part(&field).await? {
        let values: Vec<Value> = part.viewable_values(&field, |acl| caller.can_view_under(acl)).into_iter().map(|(value, count)| json!({ "value": value, "count": count })).collect();
        return Ok(ToolOutcome::Json(json!({ "field": field, "values": values })));
    }
    let table = tools.reader.pages().await?;
    let pages = viewable(&table, caller);
    let bodies = Bodies::load(tools.reader, &pages).await?;
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for page in &pages {
        let Some(value) = bodies.get(page).and_then(|b| b.frontmatter.get(&field)) else { continue };
        let distinct: BTreeSet<String> = wikantik_format::metadata::values_of(value).into_iter().collect();
        for v in distinct {
            *counts.entry(v).or_default() += 1;
        }
    }
    let mut values: Vec<(String, usize)> = counts.into_iter().collect();
    values.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let values: Vec<Value> = values.into_iter().map(|(value, count)| json!({ "value": value, "count": count })).collect();
    Ok(ToolOutcome::Json(json!({ "field": field, "values": values })))
}

/// `read_pages`: the raw text (frontmatter included) of up to 20 pages. Slugs are trimmed,
/// blanks dropped and duplicates removed (first occurrence wins) before the cap is checked; a
/// missing or restricted page is the entry `{slug, content: null, error: "not_found"}`.
pub(super) async fn read_pages<S: ShardStore>(tools: &KnowledgeTools<'_, S>, args: &Value, caller: &Caller) -> Result<ToolOutcome> {
    let Some(Value::Array(raw)) = args.get("slugs") else {
        return Err(Error::Invalid("slugs argument is required (an array of 1 to 20 page slugs)".into()));
    };
    let mut seen = BTreeSet::new();
    let slugs: Vec<String> = raw
        .iter()
        .filter_map(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty() && seen.insert(s.to_string()))
        .map(str::to_string)
        .collect();
    if slugs.is_empty() {
        return Err(Error::Invalid("slugs must contain at least one non-blank slug".into()));
    }
    if slugs.len() > READ_PAGES_CAP {
        return Err(Error::Invalid(format!("slugs exceeds cap of {READ_PAGES_CAP} entries")));
    }
    let asked: Vec<&str> = slugs.iter().map(String::as_str).collect();
    let records: Vec<Option<PageRecord>> =
        PageCatalog::open(tools.reader).await?.by_slugs(&asked).await?.into_iter().map(|p| p.filter(|p| caller.can_view(p))).collect();
    let found: Vec<&PageRecord> = records.iter().flatten().collect();
    let bodies = Bodies::load(tools.reader, &found).await?;
    let pages: Vec<Value> = slugs
        .iter()
        .zip(&records)
        .map(|(slug, record)| match record {
            Some(page) => match bodies.get(page) {
                Some(body) => json!({ "slug": slug, "content": body.text }),
                None => json!({ "slug": slug, "content": null, "error": "internal_error" }),
            },
            None => json!({ "slug": slug, "content": null, "error": "not_found" }),
        })
        .collect();
    Ok(ToolOutcome::Json(json!({ "pages": pages })))
}
