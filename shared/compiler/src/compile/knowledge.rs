//! Phases 6b and 7 of a build: the knowledge graph, its mentions and RDF projection, and the
//! `cite://` citations graded against their targets.

use wikantik_format::catalog::PageRecord;
use wikantik_format::error::{Error, Result};
use wikantik_format::kg::{KnowledgeGraph, MentionIndex};
use wikantik_format::payload::{BuildWarning, CitationEdge, CitationStatus};
use wikantik_format::spine::Spine;
use wikantik_sparql::{RdfDirectory, TriplePartition};
use wikantik_text::citation::{grade, parse_citations};

use wikantik_text::page::Frontmatter;

use super::pages::PageParts;
use super::{CompileOptions, ParsedPage};

/// The knowledge graph and its mention index.
pub(super) fn knowledge(
    frontmatters: &[Frontmatter],
    records: &[PageRecord],
    parts: &PageParts,
    spine: &Spine,
    options: &CompileOptions,
    warnings: &mut Vec<BuildWarning>,
) -> Result<(KnowledgeGraph, MentionIndex)> {
    let (links, chunks) = (&parts.links, &parts.chunks);
    // 6b. Knowledge graph and mentions.
    let sidecar = options.entity_sidecar.as_ref();
    if let Some(sc) = sidecar {
        let slugs: std::collections::HashSet<&str> = records.iter().map(|r| r.slug.as_str()).collect();
        for (slug, line) in &sc.lines {
            if !slugs.contains(slug.as_str()) {
                warnings.push(BuildWarning {
                    kind: "UNKNOWN_SIDECAR_PAGE".into(),
                    file: Some(wikantik_text::entity_sidecar::SIDECAR_PATH.into()),
                    line: Some(*line),
                    message: format!("the entity sidecar names page {slug}, which the wiki does not have; its entities are ignored"),
                });
            }
        }
    }
    let kg_inputs: Vec<crate::kg_build::KgPageInput<'_>> = frontmatters
        .iter()
        .enumerate()
        .map(|(i, frontmatter)| crate::kg_build::KgPageInput {
            record: &records[i],
            links: &links[i],
            related: &frontmatter.related,
            frontmatter: &frontmatter.fields,
            sections: chunks[i].iter().map(|c| c.text.as_str()).collect(),
            sidecar_entities: sidecar.and_then(|sc| sc.pages.get(&records[i].slug)).map_or(&[], Vec::as_slice),
        })
        .collect();
    Ok(crate::kg_build::build(&kg_inputs, sidecar, spine))
}

/// The RDF projection of the knowledge graph (REFERENCE §5.2–5.3).
pub(super) fn rdf_projection(records: &[PageRecord], knowledge_graph: &KnowledgeGraph, partition_entries: usize) -> Result<(RdfDirectory, Vec<TriplePartition>)> {
    wikantik_sparql::ontology::project_split(records, knowledge_graph, partition_entries).map_err(|e| Error::Invalid(e.to_string()))
}

/// Every page's citations, graded against their targets' current text.
pub(super) fn citations(pages: &[ParsedPage], records: &[PageRecord], warnings: &mut Vec<BuildWarning>) -> Vec<CitationEdge> {
    // 7. Citations, graded against their targets (found by canonical id in one map: a scan of
    // every page per citation is quadratic).
    let mut citations = Vec::new();
    let by_canonical_id: std::collections::HashMap<&str, usize> = records.iter().enumerate().rev().map(|(i, r)| (r.canonical_id.as_str(), i)).collect();
    for (i, page) in pages.iter().enumerate() {
        for c in parse_citations(&page.body) {
            let target = by_canonical_id.get(c.target_canonical_id.as_str()).copied();
            let status = grade(&c, target.map(|t| pages[t].body.as_str()));
            if status != CitationStatus::Current {
                warnings.push(BuildWarning {
                    kind: if status == CitationStatus::Stale { "STALE_CITATION".into() } else { "CITATION_TARGET_MISSING".into() },
                    file: Some(page.file_name.clone()),
                    line: None,
                    message: format!(
                        "cite://{}/{} is {}",
                        c.target_canonical_id,
                        c.heading_path.join("/"),
                        if status == CitationStatus::Stale { "stale" } else { "missing its target" }
                    ),
                });
            }
            citations.push(CitationEdge {
                source_slug: page.slug.clone(),
                source_canonical_id: records[i].canonical_id.clone(),
                target_canonical_id: c.target_canonical_id.clone(),
                target_heading_path: c.heading_path.join(" > "),
                span_text: c.span.clone(),
                span_sha256: c.span_sha256.clone(),
                claim_text: c.claim_text.clone(),
                ordinal: c.ordinal,
                status,
                pinned_target_version: target.map(|t| records[t].version),
            });
        }
    }

    citations
}
