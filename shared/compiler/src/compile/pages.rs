//! Phases 3 to 6 of a build: each page's ACL, links and sections; the spine and the page
//! graph; the page table's records.

use std::ops::Range;

use wikantik_format::acl::Acl;
use wikantik_format::catalog::PageRecord;
use wikantik_format::graph::PageGraph;
use wikantik_format::lexical::SectionKey;
use wikantik_format::payload::{BuildWarning, Stage};
use wikantik_format::spine::{ConflictKind, PageFacts, Spine};
use wikantik_format::tokens::estimate_tokens;
use wikantik_text::chunk::{chunk_body, Chunk};
use wikantik_text::links::link_targets;

use super::{CompileOptions, ParsedPage};

/// What a build takes from each page's body, in page order.
pub(super) struct PageParts {
    pub acls: Vec<Acl>,
    pub links: Vec<Vec<String>>,
    pub chunks: Vec<Vec<Chunk>>,
}

/// Each page's ACL, link targets and sections (at most `SectionKey::MAX_CHUNKS_PER_PAGE`).
pub(super) fn page_parts(
    pages: &[ParsedPage],
    options: &CompileOptions,
    warnings: &mut Vec<BuildWarning>,
    progress: &mut dyn FnMut(Stage, usize, usize),
) -> PageParts {
    // 3. Per-page facts: ACL, links, chunks.
    let mut acls: Vec<Acl> = Vec::with_capacity(pages.len());
    let mut links: Vec<Vec<String>> = Vec::with_capacity(pages.len());
    let mut chunks = Vec::with_capacity(pages.len());
    for (i, page) in pages.iter().enumerate() {
        progress(Stage::Chunk, i + 1, pages.len());
        let acl = page.acl.clone();
        // Under the `html-comments` mutation, the ACL found in the reduced body (HTML comments
        // gone), as the compiler once did.
        #[cfg(feature = "acl-mutation")]
        let acl = if wikantik_format::mutation::active() == wikantik_format::mutation::Mutation::HtmlComments {
            wikantik_text::acl_markup::parse_acl(&page.body)
        } else {
            acl
        };
        acls.push(acl);
        links.push(link_targets(&page.body, &page.frontmatter.related));
        let mut page_chunks = chunk_body(&page.body, &options.chunker);
        if page_chunks.len() > SectionKey::MAX_CHUNKS_PER_PAGE as usize {
            warnings.push(BuildWarning {
                kind: "TOO_MANY_SECTIONS".into(),
                file: Some(page.file_name.clone()),
                line: None,
                message: format!(
                    "{} sections; only the first {} are indexed",
                    page_chunks.len(),
                    SectionKey::MAX_CHUNKS_PER_PAGE
                ),
            });
            page_chunks.truncate(SectionKey::MAX_CHUNKS_PER_PAGE as usize);
        }
        chunks.push(page_chunks);
    }

    PageParts { acls, links, chunks }
}

/// The cluster spine (its conflicts become warnings) and the page graph.
pub(super) fn structure(pages: &[ParsedPage], slugs: &[String], links: &[Vec<String>], warnings: &mut Vec<BuildWarning>) -> (Spine, PageGraph) {
    // 4. Structure: spine and graph.
    let facts: Vec<PageFacts> = pages
        .iter()
        .map(|p| PageFacts {
            slug: p.slug.clone(),
            page_type: p.frontmatter.page_type.clone(),
            clusters: p.frontmatter.clusters.clone(),
            has_canonical_id: p.frontmatter.canonical_id.is_some(),
            updated: p.updated,
        })
        .collect();
    let spine = Spine::project(&facts);
    for conflict in &spine.conflicts {
        if conflict.kind == ConflictKind::MissingCanonicalId {
            continue; // reported with the canonical-id warnings, which name the derived id
        }
        let kind = serde_json::to_value(conflict.kind).ok().and_then(|v| v.as_str().map(str::to_string));
        warnings.push(BuildWarning {
            kind: kind.unwrap_or_else(|| format!("{:?}", conflict.kind)),
            file: conflict.slugs.first().and_then(|s| pages.iter().find(|p| &p.slug == s)).map(|p| p.file_name.clone()),
            line: None,
            message: conflict.message.clone(),
        });
    }
    let graph = PageGraph::build(slugs, links);

    (spine, graph)
}

/// The page table's records, in page order.
pub(super) fn page_records(
    pages: &[ParsedPage],
    canonical_ids: &[(String, bool)],
    keys: &[u32],
    parts: &PageParts,
    partitions: &[Range<usize>],
) -> Vec<PageRecord> {
    let (acls, chunks) = (&parts.acls, &parts.chunks);
    // 5. Partitions by page range.
    let mut partition_of = vec![0u32; pages.len()];
    for (p, range) in partitions.iter().enumerate() {
        for slot in partition_of.get_mut(range.clone()).into_iter().flatten() {
            *slot = p as u32;
        }
    }

    // 6. Page table.
    pages
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let fm = &p.frontmatter;
            let (canonical_id, authored) = canonical_ids[i].clone();
            PageRecord {
                slug: p.slug.clone(),
                key: keys[i],
                canonical_id,
                canonical_id_authored: authored,
                title: fm.title.clone().unwrap_or_else(|| p.slug.clone()),
                summary: fm.summary.clone().unwrap_or_default(),
                page_type: fm.page_type.clone(),
                status: fm.status.clone(),
                clusters: wikantik_format::spine::memberships(&fm.clusters),
                tags: fm.tags.clone(),
                author: fm.author.clone(),
                date: fm.date.clone(),
                version: fm.version.or(p.git_version).unwrap_or(1).max(1),
                updated: p.updated,
                derived: fm.derived,
                kg_include: fm.kg_include,
                acl: acls[i].clone(),
                chunk_count: chunks[i].len() as u32,
                body_tokens: estimate_tokens(&p.text) as u32,
                partition: partition_of[i],
                source: p.file_name.clone(),
            }
        })
        .collect()

}
