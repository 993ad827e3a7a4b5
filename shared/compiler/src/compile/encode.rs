//! Phase 9 of a build: everything built so far encoded as shards — sections and bodies by page
//! range, the query encoder, vector lists, cards and the HNSW graph, term partitions, the page
//! table, graph, spine, citations, knowledge graph and RDF store — and the manifest over them.

use std::ops::Range;

use wikantik_format::catalog::{PageIndex, PageRecord, PageTable};
use wikantik_format::error::Result;
use wikantik_format::graph::PageGraph;
use wikantik_format::kg::{KnowledgeGraph, MentionIndex};
use wikantik_format::kg_parts::KgSplit;
use wikantik_format::lexical::{LexicalStats, SectionKey, TermEntry, TermPartition};
use wikantik_format::manifest::{BuildStats, Manifest};
use wikantik_format::clusters::{ClusterCards, ClusterIndex};
use wikantik_format::listing;
use wikantik_format::tags::TagIndex;
use wikantik_format::relations::Relatedness;
use wikantik_format::payload::*;
use rayon::prelude::*;
use wikantik_format::shard::{content_defined_partitions, encode_blob, encode_shard, EncodedShard, ShardKind};
use wikantik_format::spine::Spine;
use wikantik_format::vectors::{DenseInfo, VectorPartition, CARD_TEXT, PROFILE_LITE, PROFILE_QUALITY, TEXT_CONTEXTUAL, TEXT_PLAIN};
use wikantik_text::chunk::Chunk;

use super::embed::Embedded;
use super::{CompileOptions, ParsedPage, VectorBuild};

/// What the phases before produced, consumed by [`encode`].
pub(super) struct Built {
    /// The `sections` and `bodies` shards, encoded before the BM25 index
    /// ([`encode_page_partitions`]).
    pub page_partitions: Vec<EncodedShard>,
    pub keys: Vec<u32>,
    pub partitions: Vec<Range<usize>>,
    pub records: Vec<PageRecord>,
    pub spine: Spine,
    pub graph: PageGraph,
    pub citations: Vec<CitationEdge>,
    /// The knowledge graph's parts (`kg-*`) and the `rdf` and `rdf-triples` shards, encoded as soon as they were built
    /// ([`encode_knowledge`]).
    pub knowledge: Vec<EncodedShard>,
    /// The `metadata-values` shards ([`encode_metadata`]).
    pub metadata: Vec<EncodedShard>,
    pub lexical_stats: LexicalStats,
    pub entries: Vec<TermEntry>,
    pub embedded: Option<Embedded>,
    pub warnings: Vec<BuildWarning>,
}

/// The `metadata-values` shards: every frontmatter field's values with their pages tallied by
/// ACL (`frontmatters[i]` and `records[i]` are the same page), by field name.
pub(super) fn encode_metadata(frontmatters: &[&serde_json::Map<String, serde_json::Value>], records: &[PageRecord]) -> Result<Vec<EncodedShard>> {
    let parts = wikantik_format::metadata::parts(frontmatters.iter().copied().zip(records.iter().map(|r| &r.acl)));
    parts
        .iter()
        .enumerate()
        .map(|(p, (first, part))| encode_shard(ShardKind::MetadataValues, p as u32, part, (p > 0).then(|| first.clone()), None))
        .collect()
}

/// The knowledge graph and its mentions by part (`kg-index`, `kg-nodes`, `kg-ids`,
/// `kg-node-mentions`, `kg-page-mentions`; [`wikantik_format::kg_parts`]) and the RDF store
/// projected from the graph (`rdf`, then the `rdf-triples` partitions), encoded on every core
/// as soon as they exist, and each structure dropped once encoded: they are several times
/// their encoded size (2 GB at 120k pages together) and would otherwise be held at once and
/// through the BM25 index. The parts are encoded while the RDF store is projected.
pub(super) fn encode_knowledge(knowledge_graph: KnowledgeGraph, mention_index: MentionIndex, records: &[PageRecord], options: &CompileOptions) -> Result<Vec<EncodedShard>> {
    let public: std::collections::HashSet<u32> = records.iter().filter(|r| r.acl.is_empty()).map(|r| r.key).collect();
    let is_public = |key: u32| public.contains(&key);
    let (graph_parts, rdf_store) = rayon::join(
        || encode_knowledge_parts(&KgSplit::new(&knowledge_graph, &mention_index, &is_public, options.kg_part_sizes)),
        || super::knowledge::rdf_projection(records, &knowledge_graph, options.rdf_partition_entries),
    );
    drop(knowledge_graph);
    drop(mention_index);
    let (mut rdf_directory, rdf_partitions) = rdf_store?;
    rdf_directory.projection = wikantik_sparql::ontology::PROJECTION_VERSION;
    let term_parts = if options.rdf_terms_per_part == 0 { Vec::new() } else { rdf_directory.cut_dictionary(options.rdf_terms_per_part) };
    let (directory, (triples, terms)) = rayon::join(
        || encode_shard(ShardKind::Rdf, 0, &rdf_directory, None, None),
        || {
            rayon::join(
                || rdf_partitions.par_iter().enumerate().map(|(p, partition)| encode_shard(ShardKind::RdfTriples, p as u32, partition, None, None)).collect::<Result<Vec<EncodedShard>>>(),
                || term_parts.par_iter().enumerate().map(|(p, part)| encode_shard(ShardKind::RdfTerms, p as u32, part, None, None)).collect::<Result<Vec<EncodedShard>>>(),
            )
        },
    );
    let mut shards = graph_parts?;
    shards.push(directory?);
    shards.extend(triples?);
    shards.extend(terms?);
    Ok(shards)
}

/// Every part of the split graph, each made and encoded on one core and dropped.
fn encode_knowledge_parts(split: &KgSplit<'_>) -> Result<Vec<EncodedShard>> {
    let mut jobs: Vec<(ShardKind, usize)> = vec![(ShardKind::KgIndex, 0)];
    jobs.extend((0..split.node_parts()).map(|p| (ShardKind::KgNodes, p)));
    jobs.extend((0..split.id_parts()).map(|p| (ShardKind::KgIds, p)));
    jobs.extend((0..split.node_mention_parts()).map(|p| (ShardKind::KgNodeMentions, p)));
    jobs.extend((0..split.page_mention_parts()).map(|p| (ShardKind::KgPageMentions, p)));
    jobs.extend((0..split.card_parts()).map(|p| (ShardKind::KgCards, p)));
    jobs.par_iter()
        .map(|&(kind, p)| {
            let n = p as u32;
            match kind {
                ShardKind::KgIndex => encode_shard(kind, n, &split.index(), None, None),
                ShardKind::KgNodes => encode_shard(kind, n, &split.node_part(p), None, None),
                ShardKind::KgIds => encode_shard(kind, n, &split.id_part(p), None, None),
                ShardKind::KgNodeMentions => encode_shard(kind, n, &split.node_mention_part(p), None, None),
                ShardKind::KgCards => encode_shard(kind, n, &split.card_part(p), None, None),
                _ => encode_shard(kind, n, &split.page_mention_part(p), None, None),
            }
        })
        .collect()
}

/// Page-range partitions encoded together on every core between two progress reports.
const ENCODE_BATCH: usize = 64;

/// Each page-range partition's `sections` and `bodies` shards, encoded (CBOR, gzip, SHA-256)
/// on every core, in partition order, so the bytes are the same either way. A build encodes
/// them before its BM25 index and then drops the parsed pages (their text and frontmatter:
/// the largest structure of a build after the postings). Page-range partitions carry no key
/// range in the manifest: readers find a page's partition in the page index (or its record),
/// never by slug range, and two slugs per row were a fifth of the manifest's bytes.
pub(super) fn encode_page_partitions(
    pages: &[ParsedPage],
    slugs: &[String],
    keys: &[u32],
    chunks: &[Vec<Chunk>],
    records: &[PageRecord],
    partitions: &[Range<usize>],
    progress: &mut dyn FnMut(Stage, usize, usize),
) -> Result<Vec<EncodedShard>> {
    let total = encode_total(partitions);
    let encode_range = |p: usize, range: &Range<usize>| -> Result<[EncodedShard; 2]> {
        let section_payload = SectionPartition {
            pages: range
                .clone()
                .map(|i| PageSections {
                    key: keys[i],
                    slug: slugs[i].clone(),
                    sections: chunks[i]
                        .iter()
                        .map(|c| SectionRecord {
                            heading_path: c.heading_path.clone(),
                            text: c.text.clone(),
                            content_hash: c.content_hash.clone(),
                            tokens: c.token_estimate as u32,
                        })
                        .collect(),
                    canonical_id: records.get(i).map(|r| r.canonical_id.clone()),
                    version: records.get(i).map(|r| r.version),
                })
                .collect(),
        };
        let body_payload = BodyPartition {
            pages: range
                .clone()
                .map(|i| PageBody {
                    key: keys[i],
                    slug: slugs[i].clone(),
                    text: pages[i].text.clone(),
                    frontmatter: pages[i].frontmatter.fields.clone(),
                })
                .collect(),
        };
        Ok([encode_shard(ShardKind::Sections, p as u32, &section_payload, None, None)?, encode_shard(ShardKind::Bodies, p as u32, &body_payload, None, None)?])
    };
    let mut shards = Vec::with_capacity(partitions.len() * 2);
    for (start, batch) in (0..partitions.len()).step_by(ENCODE_BATCH).map(|s| (s, &partitions[s..(s + ENCODE_BATCH).min(partitions.len())])) {
        let encoded: Vec<[EncodedShard; 2]> = batch.par_iter().enumerate().map(|(j, range)| encode_range(start + j, range)).collect::<Result<_>>()?;
        shards.extend(encoded.into_iter().flatten());
        progress(Stage::Encode, shards.len().min(total), total);
    }
    Ok(shards)
}

/// What the encode stage counts: two shards per page-range partition, then six steps.
fn encode_total(partitions: &[Range<usize>]) -> usize {
    partitions.len() * 2 + 6
}

/// The shards and the manifest of a build.
pub(super) fn encode(
    built: Built,
    options: &CompileOptions,
    vectors: Option<&VectorBuild<'_>>,
    progress: &mut dyn FnMut(Stage, usize, usize),
) -> Result<CompiledIndex> {
    let Built { page_partitions, keys, partitions, records, spine, graph, citations, knowledge, metadata, lexical_stats, entries, embedded, warnings } = built;
    let (embeddings, lite_table) = match embedded {
        Some(Embedded { sections, cards, lite_table }) => (Some((sections, cards)), lite_table),
        None => (None, None),
    };
    let mut shards = page_partitions;
    let mut vector_partitions: Vec<VectorPartition> = Vec::new();
    let encode_total = encode_total(&partitions);
    let mut encoded = shards.len();
    let mut tick = |progress: &mut dyn FnMut(Stage, usize, usize)| {
        encoded += 1;
        progress(Stage::Encode, encoded.min(encode_total), encode_total);
    };
    let mut encoder_id = None;
    match (vectors, &lite_table) {
        (Some(_), Some(table)) => {
            // The head (tokenizer, shape, block hashes) and the rows as a blob read by block.
            let (head, rows) = table.split(options.lite_rows_per_block)?;
            let shard = encode_shard(ShardKind::StaticEncoder, 0, &head, None, None)?;
            encoder_id = Some(format!("{}@{}", table.name, &shard.entry.sha256[..16]));
            shards.push(shard);
            shards.push(encode_blob(ShardKind::StaticRows, 0, rows));
        }
        (Some(v), None) => shards.push(encode_shard(ShardKind::Model, 0, v.model, None, None)?),
        (None, _) => {}
    }
    if let (Some(v), Some((embeddings, cards))) = (vectors, &embeddings) {
        // Section vectors in lists by topic (`ivf`): list i is `vectors` partition i.
        let rows: Vec<(SectionKey, Vec<f32>)> = embeddings
            .iter()
            .enumerate()
            .flat_map(|(i, page)| {
                let page_key = keys[i];
                page.iter().enumerate().map(move |(c, e)| (SectionKey::new(page_key, c as u32), e.clone()))
            })
            .collect();
        // Each page card goes with the list nearest it (no shard of every card).
        let page_cards = keys.iter().zip(cards).map(|(&key, e)| (key, e.clone())).collect();
        let mut built = crate::ivf_build::build(v.model.dim, rows, page_cards, options.grouped_lists_from)?;
        let mut list_entries = Vec::with_capacity(built.lists.len());
        for (p, list) in built.lists.iter().enumerate() {
            let shard = encode_shard(ShardKind::Vectors, p as u32, list, None, None)?;
            list_entries.push(shard.entry.clone());
            shards.push(shard);
        }
        for (g, group) in built.groups.iter_mut().enumerate() {
            // A group names its lists' shards: a query opening it needs no manifest directory.
            group.list_shards = group
                .keys
                .iter()
                .map(|&list| {
                    usize::try_from(list).ok().and_then(|l| list_entries.get(l)).cloned().ok_or_else(|| {
                        wikantik_format::error::Error::Invalid(format!("vector group {g} holds list {list} of {}", list_entries.len()))
                    })
                })
                .collect::<Result<_>>()?;
            shards.push(encode_shard(ShardKind::VectorGroups, g as u32, group, None, None)?);
        }
        vector_partitions = built.lists;
        shards.push(encode_shard(ShardKind::VectorLists, 0, &built.directory, None, None)?);
    }
    if vectors.is_some() {
        // The HNSW graph over the rows in partition (= manifest) order.
        let rows: usize = vector_partitions.iter().map(|p| p.keys.len()).sum();
        if rows > 0 && options.ann_threshold.is_some_and(|threshold| rows >= threshold) {
            let graph = crate::ann_build::build(&vector_partitions.iter().collect::<Vec<_>>())?;
            shards.push(encode_shard(ShardKind::Ann, 0, &graph, None, None)?);
        }
    }
    drop(vector_partitions);
    // Long postings lists are cut by impact: each tail a shard of its own, numbered in term
    // order, named by its head.
    let (entries, tail_shards) = cut_long_postings(entries, &lexical_stats, options.postings_head, options.cut_tails_below)?;
    shards.extend(tail_shards);
    let alone: Vec<bool> = entries.iter().map(|e| e.postings.iter().any(|p| p.is_long(options.postings_head))).collect();
    let term_ranges = isolate_terms(
        content_defined_partitions(&entries.iter().map(|e| e.term.as_str()).collect::<Vec<_>>(), options.terms_per_partition),
        &alone,
    );
    let mut entries: Vec<Option<TermEntry>> = entries.into_iter().map(Some).collect();
    let term_partitions: Vec<Vec<TermEntry>> =
        term_ranges.iter().map(|range| range.clone().filter_map(|i| entries.get_mut(i).and_then(Option::take)).collect()).collect();
    drop(entries);
    let encoded: Vec<EncodedShard> = term_partitions
        .into_par_iter()
        .enumerate()
        .map(|(p, terms)| {
            // The first partition is unbounded below so every term routes somewhere.
            let first = if p == 0 { None } else { terms.first().map(|t| t.term.clone()) };
            let last = terms.last().map(|t| t.term.clone());
            encode_shard(ShardKind::Terms, p as u32, &TermPartition { terms }, first, last)
        })
        .collect::<Result<_>>()?;
    shards.extend(encoded);
    tick(progress);
    let restricted_pages = records.iter().filter(|r| !r.acl.is_open_to_everyone()).count() as u64;
    let table = PageTable::new(records);
    let link_count = graph.edge_count() as u64;
    let stats = BuildStats {
        pages: table.pages.len() as u64,
        sections: lexical_stats.sections,
        clusters: spine.clusters.len() as u64,
        hubs: spine.hubs() as u64,
        sub_clusters: spine.sub_cluster_count() as u64,
        links: link_count,
        citations: citations.len() as u64,
        restricted_pages,
        warnings: warnings.len() as u64,
    };
    // The single shards of the whole wiki are independent: encoded on every core, listed in
    // the same order as ever.
    let (graph, spine, citations) = (GraphShard { graph }, SpineShard { spine }, CitationTable { citations });
    let mut page_index = PageIndex::with_record_groups(&table, options.record_partitions_per_shard);
    // Ids and cluster cards are cut like the page records (none when the records are not).
    let (id_parts, cluster_parts) = if page_index.has_record_groups() {
        let (cluster_parts, cluster_first) = ClusterCards::new(&table, &spine.spine, &graph.graph).parts(page_index.record_starts.len());
        page_index.cluster_first = cluster_first;
        (page_index.split_ids(&table), cluster_parts)
    } else {
        (Vec::new(), Vec::new())
    };
    // The records again by canonical id, one listing part per id run.
    let (listing, id_latest) = listing::listing_parts(&table, &id_parts);
    if !listing.is_empty() {
        page_index.id_latest = id_latest;
    }
    type Encode<'a> = Box<dyn Fn() -> Result<EncodedShard> + Sync + 'a>;
    let singles: Vec<Encode<'_>> = vec![
        Box::new(|| encode_shard(ShardKind::Pages, 0, &table, None, None)),
        Box::new(|| encode_shard(ShardKind::PageIndex, 0, &page_index, None, None)),
        Box::new(|| encode_shard(ShardKind::Graph, 0, &graph, None, None)),
        Box::new(|| encode_shard(ShardKind::Spine, 0, &spine, None, None)),
        Box::new(|| encode_shard(ShardKind::Citations, 0, &citations, None, None)),
        Box::new(|| encode_shard(ShardKind::ClusterIndex, 0, &ClusterIndex::new(&table, &spine.spine), None, None)),
        Box::new(|| encode_shard(ShardKind::TagIndex, 0, &TagIndex::new(&table), None, None)),
    ];
    let encoded: Vec<EncodedShard> = singles.par_iter().map(|encode| encode()).collect::<Result<_>>()?;
    shards.extend(encoded);
    let record_shards: Vec<EncodedShard> = page_index
        .record_groups()
        .into_par_iter()
        .enumerate()
        .map(|(g, range)| encode_shard(ShardKind::PageRecords, g as u32, &PageTable::new(table.pages.get(range).map(<[PageRecord]>::to_vec).unwrap_or_default()), None, None))
        .collect::<Result<_>>()?;
    shards.extend(record_shards);
    // Each page-records shard's related-page candidates, ranked over the whole table and graph.
    let relatedness = Relatedness::new(&table, &graph.graph);
    let relation_shards: Vec<EncodedShard> = page_index
        .record_groups()
        .into_par_iter()
        .enumerate()
        .map(|(g, range)| encode_shard(ShardKind::PageRelations, g as u32, &relatedness.part(range), None, None))
        .collect::<Result<_>>()?;
    shards.extend(relation_shards);
    // Each page-records shard's links, cut from the whole graph (its nodes are the positions).
    let link_shards: Vec<EncodedShard> = page_index
        .record_groups()
        .into_par_iter()
        .enumerate()
        .map(|(g, range)| encode_shard(ShardKind::GraphLinks, g as u32, &graph.graph.links_part(range), None, None))
        .collect::<Result<_>>()?;
    shards.extend(link_shards);
    let id_shards: Vec<EncodedShard> = id_parts.par_iter().enumerate().map(|(p, part)| encode_shard(ShardKind::PageIds, p as u32, part, None, None)).collect::<Result<_>>()?;
    shards.extend(id_shards);
    let listing_shards: Vec<EncodedShard> =
        listing.par_iter().enumerate().map(|(p, part)| encode_shard(ShardKind::PageListing, p as u32, part, None, None)).collect::<Result<_>>()?;
    shards.extend(listing_shards);
    let facet_shards: Vec<EncodedShard> = listing::facet_parts(&listing)
        .iter()
        .enumerate()
        .map(|(p, (first, part))| encode_shard(ShardKind::ListingFacets, p as u32, part, (p > 0).then(|| first.clone()), None))
        .collect::<Result<_>>()?;
    shards.extend(facet_shards);
    drop(listing);
    let cluster_shards: Vec<EncodedShard> =
        cluster_parts.par_iter().enumerate().map(|(p, part)| encode_shard(ShardKind::ClusterCards, p as u32, part, None, None)).collect::<Result<_>>()?;
    shards.extend(cluster_shards);
    shards.extend(knowledge);
    shards.extend(metadata);
    for _ in 0..5 {
        tick(progress);
    }

    let section_count = lexical_stats.sections;
    let mut manifest = Manifest::new(
        options.generator.clone(),
        stats,
        options.analyzer,
        options.chunker,
        lexical_stats,
        shards.iter().map(|s| s.entry.clone()).collect(),
    )?;
    if let Some(v) = vectors {
        manifest = manifest.with_dense(DenseInfo {
            profile: if lite_table.is_some() { PROFILE_LITE } else { PROFILE_QUALITY }.into(),
            model_id: v.model_id.clone(),
            encoder_id,
            dim: v.model.dim as u32,
            text_format: if v.contextual { TEXT_CONTEXTUAL } else { TEXT_PLAIN }.into(),
            vectors: section_count,
            card_format: Some(CARD_TEXT.into()),
            thresholds: v.thresholds,
        })?;
    }
    let (manifest, directories) = manifest.with_directories(options.directories_from)?;
    shards.extend(directories);
    let (manifest_name, manifest_bytes, pointer) = manifest.encode()?;
    Ok(CompiledIndex { manifest, manifest_name, manifest_bytes, pointer, shards, warnings })}

/// Cut by impact (`FieldPostings::split_by_impact`) every postings list longer than twice
/// `head` whose tail would bound at most `cut_below` under the default parameters (a tail a
/// query can leave unread): the tails encoded as `term-tails` shards numbered in term order,
/// the heads naming them. Longer lists whose tails bound higher stay whole.
fn cut_long_postings(mut entries: Vec<TermEntry>, stats: &LexicalStats, head: usize, cut_below: f32) -> Result<(Vec<TermEntry>, Vec<EncodedShard>)> {
    // Which lists to cut, in term order (splitting is the costly part: on every core; a list
    // that is not long does not split).
    let splits: Vec<Vec<(usize, wikantik_format::lexical::ImpactSplit)>> = entries
        .par_iter()
        .map(|entry| {
            let mut cut = Vec::new();
            for (l, list) in entry.postings.iter().enumerate() {
                if let Some(split) = list.split_by_impact(&entry.term, stats, head)? {
                    if split.default_bound(stats) <= cut_below {
                        cut.push((l, split));
                    }
                }
            }
            Ok(cut)
        })
        .collect::<Result<_>>()?;
    let mut shards = Vec::new();
    for (entry, cuts) in entries.iter_mut().zip(splits) {
        for (l, split) in cuts {
            let shard = encode_shard(ShardKind::TermTails, shards.len() as u32, &split.tail, None, None)?;
            if let Some(list) = entry.postings.get_mut(l) {
                *list = split.named(shard.entry.clone());
            }
            shards.push(shard);
        }
    }
    Ok((entries, shards))
}

/// `ranges` with each term of `alone` (a long postings list, whole or cut) in a partition of
/// its own, so the terms routed beside it do not read its list.
fn isolate_terms(ranges: Vec<Range<usize>>, alone: &[bool]) -> Vec<Range<usize>> {
    let mut out = Vec::with_capacity(ranges.len());
    for range in ranges {
        let mut start = range.start;
        for i in range.clone() {
            if alone.get(i).copied().unwrap_or(false) {
                if start < i {
                    out.push(start..i);
                }
                out.push(i..i + 1);
                start = i + 1;
            }
        }
        if start < range.end {
            out.push(start..range.end);
        }
    }
    out
}
