//! The caller's pages as MCP resources ([`wikantik_mcp::resources`]): listed and read only when
//! the caller may view them, so a restricted page is exactly as absent as a missing one.

use super::common::{iso_instant, non_empty, Bodies};
use super::KnowledgeTools;
use wikantik_access::access::Caller;
use wikantik_format::catalog::PageRecord;
use wikantik_format::error::{Error, Result};
use wikantik_mcp::{PageContents, PageResource};
use crate::page_catalog::PageCatalog;
use crate::reader::ShardStore;

/// `text/html` for a page exported as HTML, else `text/markdown`.
fn mime_type(page: &PageRecord) -> &'static str {
    let source = page.source.to_ascii_lowercase();
    if source.ends_with(".html") || source.ends_with(".htm") {
        "text/html"
    } else {
        "text/markdown"
    }
}

fn resource_of(page: &PageRecord) -> PageResource {
    PageResource {
        slug: page.slug.clone(),
        title: non_empty(&page.title).unwrap_or_else(|| page.slug.clone()),
        description: non_empty(&page.summary),
        mime_type: mime_type(page).to_string(),
        canonical_id: page.canonical_id.clone(),
        version: page.version,
        last_modified: Some(iso_instant(page.updated)),
    }
}

/// Every page the caller may view, in slug order.
pub(super) async fn list<S: ShardStore>(tools: &KnowledgeTools<'_, S>, caller: &Caller) -> Result<Vec<PageResource>> {
    let mut resources = Vec::new();
    PageCatalog::open(tools.reader).await?.scan_viewable(caller, |page| resources.push(resource_of(page))).await?;
    Ok(resources)
}

/// One page of the caller's resources after `after` (slug order), and whether more follow:
/// the page index and the records of the window, not the whole page table.
pub(super) async fn list_after<S: ShardStore>(tools: &KnowledgeTools<'_, S>, after: Option<&str>, limit: usize, caller: &Caller) -> Result<(Vec<PageResource>, bool)> {
    let (records, more) = PageCatalog::open(tools.reader).await?.viewable_after(caller, after, limit).await?;
    Ok((records.iter().map(resource_of).collect(), more))
}

/// Page `slug` with its raw text, if the caller may view it: its record and its body, not the
/// whole page table.
pub(super) async fn read<S: ShardStore>(tools: &KnowledgeTools<'_, S>, slug: &str, caller: &Caller) -> Result<Option<PageContents>> {
    let Some(page) = PageCatalog::open(tools.reader).await?.viewable(caller, slug).await? else { return Ok(None) };
    let page = &page;
    let bodies = Bodies::load(tools.reader, &[page]).await?;
    let body = bodies
        .get(page)
        .ok_or_else(|| Error::MissingShard { name: format!("body of {} (bodies partition {})", page.slug, page.partition) })?;
    Ok(Some(PageContents { resource: resource_of(page), text: body.text.clone() }))
}
