//! The wiki as tools that read [llms.txt](https://llmstxt.org/) expect it: `GET /llms.txt` (a
//! title, a summary, then one section of links per cluster with each page's one-line
//! description) and `GET /pages/{slug}.md` (one page's markdown). Both are gated like every
//! other route: a page the caller may not view is neither listed nor served, and its route
//! answers exactly as for a page that does not exist.

use std::fmt::Write;

use wikantik_access::access::Caller;
use wikantik_format::catalog::PageRecord;
use wikantik_format::error::Result;
use wikantik_format::markup::{path_segment, url_decode};
use wikantik_http::Response;

use crate::page_catalog::PageCatalog;
use crate::reader::{IndexReader, ShardStore};
use crate::routes;

/// Content type of both routes' markdown.
const MARKDOWN: &str = "text/markdown; charset=UTF-8";

/// The path of a page's markdown.
pub fn page_path(slug: &str) -> String {
    format!("/pages/{}.md", path_segment(slug))
}

/// `GET /llms.txt`.
pub async fn llms_txt<S: ShardStore>(reader: &IndexReader<S>, caller: &Caller) -> Response {
    match llms_text(reader, caller).await {
        Ok(text) => Response::text(200, MARKDOWN, text),
        Err(e) => routes::failure(&e, "llms.txt"),
    }
}

/// The llms.txt of the pages `caller` may view: a section per top-level cluster with a
/// viewable member (its hub first, then its members by slug), then the pages in none. Each
/// viewable page's link line is made as the page records stream by
/// ([`PageCatalog::scan_viewable`]), so what is held is the lines, not the page table.
async fn llms_text<S: ShardStore>(reader: &IndexReader<S>, caller: &Caller) -> Result<String> {
    let catalog = PageCatalog::open(reader).await?;
    // Every viewable page's link line, in slug order: `text[ends[i - 1]..ends[i]]` is page
    // `slugs[i]`'s.
    let (mut slugs, mut text, mut ends) = (Vec::new(), String::new(), Vec::new());
    catalog
        .scan_viewable(caller, |page| {
            link_line(&mut text, page);
            slugs.push(page.slug.clone());
            ends.push(text.len());
        })
        .await?;
    text.shrink_to_fit();
    let index_of = |slug: &str| slugs.binary_search_by(|s: &String| s.as_str().cmp(slug)).ok();
    let line = |i: usize| text.get(if i == 0 { 0 } else { ends[i - 1] }..ends[i]).unwrap_or_default();
    // Each top-level cluster (by name) with a viewable member: its hub (if viewable) and its
    // members by slug without the hub; from the clusters' cards (a batch at a time), or in an
    // index without them from the spine.
    let mut sections: Vec<(String, Vec<usize>)> = Vec::new();
    let mut add = |name: &str, hub: Option<&str>, members: &mut dyn Iterator<Item = &str>| {
        if name.contains('/') {
            return;
        }
        let members: Vec<usize> = members.filter_map(&index_of).collect();
        if members.is_empty() {
            return; // a cluster with no viewable member does not exist for this caller
        }
        let hub = hub.and_then(index_of);
        sections.push((name.to_string(), hub.into_iter().chain(members.into_iter().filter(|&m| Some(m) != hub)).collect()));
    };
    let carded = catalog.scan_cluster_cards(|card| add(&card.name, card.hub.as_ref().map(|h| h.slug.as_str()), &mut card.members.iter().map(|m| m.page.slug.as_str()))).await?;
    if !carded {
        let spine = reader.spine().await?;
        for cluster in &spine.spine.clusters {
            add(&cluster.name, cluster.hub.as_deref(), &mut spine.spine.members(&cluster.name).iter().map(String::as_str));
        }
    }
    let mut listed = vec![false; slugs.len()];
    for &i in sections.iter().flat_map(|(_, pages)| pages) {
        if let Some(seen) = listed.get_mut(i) {
            *seen = true;
        }
    }
    // The answer is about as large as the wiki: made once, in a buffer of its exact size.
    let optional: Vec<usize> = (0..slugs.len()).filter(|&i| !listed[i]).collect();
    let size = 1024
        + sections.iter().map(|(name, pages)| name.len() + 8 + pages.iter().map(|&i| line(i).len()).sum::<usize>()).sum::<usize>()
        + optional.iter().map(|&i| line(i).len() + 16).sum::<usize>();
    let mut out = String::with_capacity(size);
    let _ = writeln!(out, "# Wiki");
    let _ = writeln!(out, "\n> {} pages in {} clusters, build {}: each page's markdown is linked below.", slugs.len(), sections.len(), reader.build_id());
    let _ = writeln!(
        out,
        "\nServed by Wikantik, which returns ranked, citation-bearing context and never synthesizes answers: \
         `GET /api/bundle?q=QUESTION` for the sections that answer a question (cite them as `slug @ version`), \
         `GET /api/briefing?clusters=…&format=md` for a session briefing, and the MCP server at `/knowledge-mcp`."
    );
    for (name, pages) in &sections {
        // The hub first (it introduces the cluster), then the members by slug.
        let _ = writeln!(out, "\n## {name}\n");
        for &i in pages {
            out.push_str(line(i));
        }
    }
    if !optional.is_empty() {
        // llms.txt's "Optional" section: what a reader with little room may skip.
        out.push_str("\n## Optional\n\n");
        for &i in &optional {
            out.push_str(line(i));
        }
    }
    Ok(out)
}

fn link_line(out: &mut String, page: &PageRecord) {
    let summary = page.summary.split_whitespace().collect::<Vec<_>>().join(" ");
    let title = page.title.replace(['[', ']'], "");
    if summary.is_empty() {
        let _ = writeln!(out, "- [{title}]({})", page_path(&page.slug));
    } else {
        let _ = writeln!(out, "- [{title}]({}): {summary}", page_path(&page.slug));
    }
}

/// `GET /pages/{slug}.md`: the page's markdown as stored (frontmatter included), with its
/// version; 404 for a page that does not exist or that the caller may not view.
pub async fn page_markdown<S: ShardStore>(reader: &IndexReader<S>, path: &str, caller: &Caller) -> Response {
    let not_found = || Response::error(404, "page not found");
    let Some(raw) = path.strip_prefix("/pages/").and_then(|p| p.strip_suffix(".md")) else {
        return not_found();
    };
    let slug = url_decode(raw, false);
    let page = match crate::page_catalog::PageCatalog::open(reader).await {
        Ok(catalog) => catalog.viewable(caller, &slug).await,
        Err(e) => Err(e),
    };
    let page = match page {
        Ok(Some(page)) => page,
        Ok(None) => return not_found(),
        Err(e) => return routes::failure(&e, "page"),
    };
    let bodies = match reader.bodies(page.partition).await {
        Ok(b) => b,
        Err(e) => return routes::failure(&e, "page"),
    };
    match bodies.page(page.key) {
        Some(body) => Response::text(200, MARKDOWN, body.text.clone()).with_header("x-wikantik-page-version", &page.version.to_string()),
        None => not_found(),
    }
}
