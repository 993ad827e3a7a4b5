//! The wiki as tools that read [llms.txt](https://llmstxt.org/) expect it: `GET /llms.txt` (a
//! title, a summary, then one section of links per cluster with each page's one-line
//! description) and `GET /pages/{slug}.md` (one page's markdown). Both are gated like every
//! other route: a page the caller may not view is neither listed nor served, and its route
//! answers exactly as for a page that does not exist.

use std::collections::BTreeSet;
use std::fmt::Write;

use wikantik_access::access::Caller;
use wikantik_format::catalog::PageRecord;
use wikantik_format::markup::{path_segment, url_decode};
use wikantik_http::Response;

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
    let (table, spine) = futures_util::join!(reader.pages(), reader.spine());
    let (table, spine) = match (table, spine) {
        (Ok(t), Ok(s)) => (t, s),
        (Err(e), _) | (_, Err(e)) => return routes::failure(&e, "llms.txt"),
    };
    let viewable = |slug: &str| caller.page(&table, slug);
    let visible_pages = table.pages.iter().filter(|p| caller.can_view(p)).count();
    let mut out = String::new();
    let mut listed: BTreeSet<&str> = BTreeSet::new();
    let mut sections = String::new();
    let mut clusters = 0usize;
    for cluster in spine.spine.clusters.iter().filter(|c| !c.name.contains('/')) {
        let members: Vec<&PageRecord> = spine.spine.members(&cluster.name).iter().filter_map(|s| viewable(s)).collect();
        if members.is_empty() {
            continue; // a cluster with no viewable member does not exist for this caller
        }
        clusters += 1;
        let _ = writeln!(sections, "\n## {}\n", cluster.name);
        // The hub first (it introduces the cluster), then the members by slug.
        let hub = cluster.hub.as_deref().and_then(viewable);
        for page in hub.into_iter().chain(members.iter().copied().filter(|p| Some(p.slug.as_str()) != cluster.hub.as_deref())) {
            link_line(&mut sections, page);
            listed.insert(&page.slug);
        }
    }
    let others: Vec<&PageRecord> = table.pages.iter().filter(|p| caller.can_view(p) && !listed.contains(p.slug.as_str())).collect();
    if !others.is_empty() {
        // llms.txt's "Optional" section: what a reader with little room may skip.
        sections.push_str("\n## Optional\n\n");
        for page in others {
            link_line(&mut sections, page);
        }
    }
    let _ = writeln!(out, "# Wiki");
    let _ = writeln!(out, "\n> {visible_pages} pages in {clusters} clusters, build {}: each page's markdown is linked below.", reader.build_id());
    let _ = writeln!(
        out,
        "\nServed by Wikantik, which returns ranked, citation-bearing context and never synthesizes answers: \
         `GET /api/bundle?q=QUESTION` for the sections that answer a question (cite them as `slug @ version`), \
         `GET /api/briefing?clusters=…&format=md` for a session briefing, and the MCP server at `/knowledge-mcp`."
    );
    out.push_str(&sections);
    Response::text(200, MARKDOWN, out)
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
