//! The structural tools (REFERENCE §3.3, structural spine group): `list_clusters`,
//! `list_tags`, `list_pages_by_filter` and `get_page_by_id`.
//!
//! All four count and list only pages the caller may view: a cluster's `articleCount` and
//! `updatedAt`, a tag's count and example ids, and the filtered page list are computed after
//! the ACL gate, so their numbers are the same as if restricted pages did not exist.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use serde_json::{json, Value};

use super::common::{in_cluster, int_arg, iso_instant, paginate, paginated, parse_instant, type_enum, viewable, PageDescriptor};
use super::{list_arg, text_arg, KnowledgeTools};
use wikantik_access::access::Caller;
use wikantik_format::error::{Error, Result};
use wikantik_format::catalog::PageRecord;
use wikantik_format::acl::viewable_under;
use wikantik_format::clusters::ClusterSummary;
use wikantik_format::listing;
use wikantik_mcp::ToolOutcome;
use crate::reader::ShardStore;
use crate::page_catalog::PageCatalog;

/// Default and cap of `list_pages_by_filter`'s `limit`.
pub const FILTER_DEFAULT_LIMIT: usize = 100;
pub const FILTER_MAX_LIMIT: usize = 1000;

/// Most example canonical ids per tag.
pub const TOP_PAGE_IDS: usize = wikantik_format::tags::EXAMPLE_IDS;

/// `limit` (at least 1, default 50) and `offset` (at least 0) of the paginated listings.
fn page_window(args: &Value) -> (usize, usize) {
    let limit = int_arg(args, "limit").unwrap_or(50).max(1);
    let offset = int_arg(args, "offset").unwrap_or(0).max(0);
    (usize::try_from(limit).unwrap_or(usize::MAX), usize::try_from(offset).unwrap_or(usize::MAX))
}

fn descriptor_value(page: &PageRecord) -> Value {
    serde_json::to_value(PageDescriptor::of(page)).unwrap_or(Value::Null)
}

/// `list_clusters`: every cluster with at least one viewable member, sorted by name.
/// `articleCount` is the number of viewable transitive members (hub included, each page once),
/// `updatedAt` their latest change; `hubPage` is omitted when the cluster has no hub or the
/// caller may not view it. A cluster whose members are all restricted is left out entirely.
pub(super) async fn list_clusters<S: ShardStore>(tools: &KnowledgeTools<'_, S>, args: &Value, caller: &Caller) -> Result<ToolOutcome> {
    let (limit, offset) = page_window(args);
    if let Some(index) = tools.reader.cluster_index().await? {
        // Tallies by ACL: only the window's entries are made.
        let viewable = viewable_under(&index.acls, |acl| caller.can_view_under(acl));
        let listed: Vec<(&ClusterSummary, usize, i64)> = index
            .clusters
            .iter()
            .filter_map(|cluster| match cluster.viewable_members(&viewable) {
                (count, Some(updated)) => Some((cluster, count, updated)),
                (_, None) => None,
            })
            .collect();
        let page = listed
            .iter()
            .skip(offset)
            .take(limit)
            .map(|(cluster, count, updated)| {
                let mut entry = json!({ "name": cluster.name });
                if let Some(hub) = cluster.hub.as_ref().filter(|hub| caller.can_view(hub)) {
                    entry["hubPage"] = descriptor_value(hub);
                }
                entry["articleCount"] = json!(count);
                entry["updatedAt"] = json!(iso_instant(*updated));
                entry
            })
            .collect();
        return Ok(ToolOutcome::Json(paginated("clusters", page, listed.len(), offset, limit)));
    }
    let (table, spine) = futures_util::join!(tools.reader.pages(), tools.reader.spine());
    let (table, spine) = (table?, spine?);
    let mut clusters = Vec::new();
    for cluster in &spine.spine.clusters {
        let members: Vec<&PageRecord> = spine.spine.members(&cluster.name).iter().filter_map(|s| caller.page(&table, s)).collect();
        let Some(updated) = members.iter().map(|p| p.updated).max() else { continue };
        let mut entry = json!({ "name": cluster.name });
        if let Some(hub) = cluster.hub.as_deref().and_then(|h| caller.page(&table, h)) {
            entry["hubPage"] = descriptor_value(hub);
        }
        entry["articleCount"] = json!(members.len());
        entry["updatedAt"] = json!(iso_instant(updated));
        clusters.push(entry);
    }
    Ok(ToolOutcome::Json(paginate("clusters", clusters, offset, limit)))
}

/// `list_tags`: tags of viewable pages with their page counts (at least `min_pages`, floor 1)
/// and up to 10 example canonical ids (ascending, so the choice is stable and depends on
/// nothing the caller cannot see), sorted by count descending, then tag.
pub(super) async fn list_tags<S: ShardStore>(tools: &KnowledgeTools<'_, S>, args: &Value, caller: &Caller) -> Result<ToolOutcome> {
    let (limit, offset) = page_window(args);
    let min_pages = usize::try_from(int_arg(args, "min_pages").unwrap_or(1).max(1)).unwrap_or(usize::MAX);
    if let Some(index) = tools.reader.tag_index().await? {
        let viewable = viewable_under(&index.acls, |acl| caller.can_view_under(acl));
        let mut tags: Vec<(&str, usize, Vec<&str>)> = index
            .tags
            .iter()
            .map(|summary| {
                let (count, ids) = summary.viewable(&viewable);
                (summary.tag.as_str(), count, ids)
            })
            .filter(|(_, count, _)| *count >= min_pages)
            .collect();
        tags.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        let page = tags
            .iter()
            .skip(offset)
            .take(limit)
            .map(|(tag, count, ids)| json!({ "tag": tag, "count": count, "topPageIds": ids }))
            .collect();
        return Ok(ToolOutcome::Json(paginated("tags", page, tags.len(), offset, limit)));
    }
    let table = tools.reader.pages().await?;
    let mut by_tag: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for page in viewable(&table, caller) {
        let mut tags: Vec<&str> = page.tags.iter().map(String::as_str).collect();
        tags.sort_unstable();
        tags.dedup();
        for tag in tags {
            by_tag.entry(tag).or_default().push(page.canonical_id.as_str());
        }
    }
    let mut tags: Vec<(&str, Vec<&str>)> = by_tag.into_iter().filter(|(_, ids)| ids.len() >= min_pages).collect();
    tags.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(b.0)));
    let items = tags
        .into_iter()
        .map(|(tag, mut ids)| {
            ids.sort_unstable();
            let count = ids.len();
            ids.truncate(TOP_PAGE_IDS);
            json!({ "tag": tag, "count": count, "topPageIds": ids })
        })
        .collect();
    Ok(ToolOutcome::Json(paginate("tags", items, offset, limit)))
}

/// The `type` filter of `list_pages_by_filter`: a known type (case-insensitive) matches pages
/// of that type; anything else means `UNKNOWN` and matches untyped or off-list pages.
fn type_matches(filter: &str, page: &PageRecord) -> bool {
    type_enum(Some(filter)) == type_enum(page.page_type.as_deref())
}

/// `list_pages_by_filter`: descriptors of viewable pages matching `type`, `cluster`, `tag`
/// (all of them) and `updated_since`, sorted by canonical id, then cut at `limit` (≤ 0 → 100,
/// capped at 1000). The ACL gate runs *before* the limit — the reference cut first and then
/// hid pages, which let a short page reveal that restricted pages sorted into it. With
/// `page-listing` shards the records are read in that order from the parts the filters'
/// facets and `updated_since` allow, until `limit` pages match; older indexes scan every record.
pub(super) async fn list_pages_by_filter<S: ShardStore>(
    tools: &KnowledgeTools<'_, S>,
    args: &Value,
    caller: &Caller,
) -> Result<ToolOutcome> {
    let page_type = text_arg(args, "type");
    let cluster = text_arg(args, "cluster");
    let tags = match args.get("tag") {
        Some(Value::String(_)) => text_arg(args, "tag").into_iter().collect(),
        _ => list_arg(args, "tag"),
    };
    let since = text_arg(args, "updated_since").map(|s| parse_instant(&s)).transpose().map_err(Error::Invalid)?;
    let limit = match int_arg(args, "limit") {
        Some(n) if n > 0 => usize::try_from(n).unwrap_or(usize::MAX).min(FILTER_MAX_LIMIT),
        _ => FILTER_DEFAULT_LIMIT,
    };
    let matches = |p: &PageRecord| {
        page_type.as_deref().is_none_or(|t| type_matches(t, p))
            && cluster.as_deref().is_none_or(|c| in_cluster(&p.clusters, c))
            && tags.iter().all(|t| p.tags.contains(t))
            && since.is_none_or(|s| p.updated >= s)
    };
    let catalog = PageCatalog::open(tools.reader).await?;
    let mut pages: Vec<PageRecord> = Vec::new();
    if catalog.has_listing() {
        // The listing is in canonical-id order: the first `limit` matches are the answer.
        let parts = listing_candidates(tools, &catalog, page_type.as_deref(), cluster.as_deref(), &tags, since).await?;
        catalog
            .scan_listing(caller, &parts, |p| {
                if matches(p) {
                    pages.push(p.clone());
                }
                if pages.len() >= limit {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })
            .await?;
    } else {
        // The first `limit` by canonical id, kept as the pages stream by in slug order (at
        // most twice the limit held).
        let order = |a: &PageRecord, b: &PageRecord| a.canonical_id.cmp(&b.canonical_id).then_with(|| a.slug.cmp(&b.slug));
        catalog
            .scan_viewable(caller, |p| {
                if matches(p) {
                    pages.push(p.clone());
                    if pages.len() >= 2 * limit {
                        pages.sort_by(order);
                        pages.truncate(limit);
                    }
                }
            })
            .await?;
        pages.sort_by(order);
        pages.truncate(limit);
    }
    let descriptors: Vec<Value> = pages.iter().map(descriptor_value).collect();
    let count = descriptors.len();
    Ok(ToolOutcome::Json(json!({ "pages": descriptors, "count": count })))
}

/// The `page-listing` parts that may hold a page matching the filters, ascending: those each
/// filter's facet names (a type filter naming no known type narrows nothing: it matches
/// untyped pages and off-list types) that changed at or after `since`.
async fn listing_candidates<S: ShardStore>(
    tools: &KnowledgeTools<'_, S>,
    catalog: &PageCatalog<'_, S>,
    page_type: Option<&str>,
    cluster: Option<&str>,
    tags: &[String],
    since: Option<i64>,
) -> Result<Vec<u32>> {
    let latest = catalog.listing_latest();
    let mut parts: Vec<u32> = (0..latest.len() as u32).filter(|&p| since.is_none_or(|s| latest.get(p as usize).is_some_and(|&l| l >= s))).collect();
    let known_type = page_type.map(|t| type_enum(Some(t))).filter(|t| *t != "UNKNOWN");
    let keys: Vec<String> = known_type
        .and_then(listing::type_key)
        .into_iter()
        .chain(cluster.map(listing::cluster_key))
        .chain(tags.iter().map(|t| listing::tag_key(t)))
        .collect();
    if !keys.is_empty() {
        if let Some(found) = tools.reader.listing_facets(&keys).await? {
            for holding in found {
                parts.retain(|p| holding.binary_search(p).is_ok());
            }
        }
    }
    Ok(parts)
}

/// `get_page_by_id`: the descriptor of one viewable page by canonical id (`id`, or the
/// deprecated `canonical_id`); unknown and restricted ids give the same error.
pub(super) async fn get_page_by_id<S: ShardStore>(tools: &KnowledgeTools<'_, S>, args: &Value, caller: &Caller) -> Result<ToolOutcome> {
    let id = text_arg(args, "id").or_else(|| text_arg(args, "canonical_id")).ok_or_else(|| Error::Invalid("id (or canonical_id) argument is required".into()))?;
    let catalog = PageCatalog::open(tools.reader).await?;
    let page = catalog.viewable_by_id(caller, &id).await?.ok_or_else(|| Error::Invalid(format!("no page for canonical_id {id}")))?;
    Ok(ToolOutcome::Json(descriptor_value(&page)))
}
