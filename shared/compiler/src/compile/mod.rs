//! The compile step: source pages in, shards and a manifest out. Pure and deterministic:
//! the same pages and options always give byte-identical shards.
//!
//! The index-builder reads the wiki directory (and git history) and hands the pages here;
//! it then writes what comes back. Tests and WASM builds call it directly on in-memory
//! pages.

mod embed;
mod encode;
mod knowledge;
mod lexical;
mod pages;
mod parse;



use wikantik_encoder::lite::StaticTableShard;
use wikantik_format::acl::Acl;
use wikantik_format::analysis::AnalyzerConfig;
use wikantik_format::catalog::assign_page_keys;
use wikantik_format::error::Result;
use wikantik_format::lexical::{DocumentModel, DocumentWeights};
use wikantik_format::manifest::ChunkerConfig;
use wikantik_format::model::ModelShard;
pub use wikantik_format::payload::*;
use wikantik_format::shard::content_defined_partitions;
use wikantik_format::vectors::CoverageThresholds;
use wikantik_text::page::Frontmatter;

/// One page file as read from the wiki.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourcePage {
    /// File name within the wiki directory, e.g. `AgentLoops+Hub.md`.
    pub file_name: String,
    pub text: String,
    /// Number of git commits that touched the file, when the wiki is a git repository.
    pub git_version: Option<u32>,
    /// Last change, unix seconds.
    pub updated: i64,
}

/// Settings of a build; recorded in the manifest where readers need them.
#[derive(Debug, Clone, PartialEq)]
pub struct CompileOptions {
    pub chunker: ChunkerConfig,
    pub analyzer: AnalyzerConfig,
    /// Average pages per `sections`/`bodies` partition.
    pub pages_per_partition: u32,
    /// Average terms per `terms` partition.
    pub terms_per_partition: u32,
    /// Target entries per `rdf-triples` partition ([`RDF_PARTITION_ENTRIES`]).
    pub rdf_partition_entries: usize,
    /// Terms per `rdf-terms` part of the RDF dictionary ([`RDF_TERMS_PER_PART`]); 0 writes the
    /// whole dictionary in the `rdf` directory, as indexes before the cut did.
    pub rdf_terms_per_part: usize,
    /// Page-range partitions per `page-records` shard (the page table by part): 64 of about
    /// 8 pages, some 500 records, about 30 KB.
    pub record_partitions_per_shard: usize,
    /// How large the knowledge graph's parts grow (`kg_parts::PartSizes`; tests use small
    /// ones).
    pub kg_part_sizes: wikantik_format::kg_parts::PartSizes,
    /// Malformed frontmatter fails the build (true) or skips the page with a warning (false).
    pub strict_frontmatter: bool,
    /// Written into the manifest, e.g. `wikantik-index-builder 0.1.0`.
    pub generator: String,
    /// Entities an extractor wrote beside the wiki ([`crate::entity_sidecar`]), merged with
    /// the pages' frontmatter `entities:`.
    pub entity_sidecar: Option<wikantik_text::entity_sidecar::EntitySidecar>,
    /// Builds with vectors and at least this many sections also get an `ann` (HNSW) shard
    /// (0 forces it, e.g. `index-builder eval --ann-threshold 0`). `None`, the default: no
    /// graph — the probed vector lists serve at every size, reading a bounded number of
    /// lists, where the graph's search needs every `vectors` partition (`ann::ANN_THRESHOLD`
    /// is what the graph was measured to need against an exact scan of everything).
    pub ann_threshold: Option<usize>,
    /// From this many vector lists on, their centroids are grouped
    /// (`ivf::GROUPED_FROM_LISTS`; tests group small indexes).
    pub grouped_lists_from: usize,
    /// Kinds of more shards than this are listed through manifest directories
    /// (`manifest::DIRECTORIES_FROM`; tests use small ones; `None`: every row in the manifest).
    pub directories_from: Option<usize>,
    /// Rows per block of the lite profile's `static-rows` blob
    /// (`encoder::lite::ROWS_PER_BLOCK`; tests use small blocks).
    pub lite_rows_per_block: usize,
    /// What a BM25 document is (docs/RETRIEVAL.md).
    pub lexical_document: DocumentModel,
    /// A postings list of more than twice this many postings is long: it gets a `terms`
    /// partition of its own and, when its tail would bound at most `cut_tails_below`, keeps
    /// this many in it, the rest going to a `term-tails` shard (`lexical::POSTINGS_HEAD`; 0:
    /// no list is long; tests use small heads).
    pub postings_head: usize,
    /// The highest bound (default parameters) of a tail worth cutting off
    /// (`lexical::CUT_TAILS_BELOW`; tests cut every long list with `f32::INFINITY`).
    pub cut_tails_below: f32,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            chunker: ChunkerConfig::default(),
            analyzer: AnalyzerConfig::default(),
            pages_per_partition: 8,
            terms_per_partition: 64,
            rdf_partition_entries: RDF_PARTITION_ENTRIES,
            rdf_terms_per_part: RDF_TERMS_PER_PART,
            record_partitions_per_shard: 64,
            kg_part_sizes: wikantik_format::kg_parts::PartSizes::default(),
            strict_frontmatter: true,
            generator: format!("wikantik {}", env!("CARGO_PKG_VERSION")),
            entity_sidecar: None,
            ann_threshold: None,
            grouped_lists_from: wikantik_format::ivf::GROUPED_FROM_LISTS,
            directories_from: Some(wikantik_format::manifest::DIRECTORIES_FROM),
            lite_rows_per_block: wikantik_encoder::lite::ROWS_PER_BLOCK,
            lexical_document: DocumentModel::Section { weights: DocumentWeights::default() },
            postings_head: wikantik_format::lexical::POSTINGS_HEAD,
            cut_tails_below: wikantik_format::lexical::CUT_TAILS_BELOW,
        }
    }
}

/// A page after parsing, before encoding.
struct ParsedPage {
    file_name: String,
    slug: String,
    text: String,
    frontmatter: Frontmatter,
    /// Body with frontmatter removed and HTML reduced: what is chunked and scanned for links
    /// and citations.
    body: String,
    /// Found in the raw text, before any transformation (see [`page_acl`]).
    acl: Acl,
    updated: i64,
    git_version: Option<u32>,
}

/// Computes section embeddings for a build: given embedder inputs, one L2-normalised vector
/// per input, in order. The index-builder supplies one that runs the encoder on every core
/// behind an embedding cache; the core never runs it itself and stays single-threaded.
pub type EmbedFn<'a> = dyn Fn(&[String]) -> Result<Vec<Vec<f32>>> + 'a;

/// The dense side of a build: the model the index will carry and how to embed sections.
pub struct VectorBuild<'a> {
    /// The query encoder, stored as the `model` shard.
    pub model: &'a ModelShard,
    /// `<name>@<hash>`, recorded in the manifest (and the embedding cache's key).
    pub model_id: String,
    /// Embed with the REFERENCE §2.3 contextual prefix (true) or the chunk text alone.
    pub contextual: bool,
    /// Coverage thresholds calibrated for this model, recorded in the manifest.
    pub thresholds: CoverageThresholds,
    pub embed: &'a EmbedFn<'a>,
    /// `None`: the `quality` profile (the model shard is the query encoder). `Some`: the
    /// `lite` profile — this trains the static table from the build's own texts and vectors,
    /// and the index carries the table instead of the model.
    pub lite: Option<&'a TrainLiteFn<'a>>,
}

/// Target entries per `rdf-triples` partition: a predicate with more is alone in its
/// partition, smaller ones are packed together up to this many (12 bytes an entry).
pub const RDF_PARTITION_ENTRIES: usize = 2048;

/// Terms per `rdf-terms` part: about 25 KB compressed, so a query that names and returns a
/// few terms reads a few parts, not the whole dictionary (3 MB compressed at 120k pages).
pub const RDF_TERMS_PER_PART: usize = 2048;

/// What the lite profile's table is trained on: corpus texts only.
pub struct LiteTraining<'a> {
    /// The embedder inputs of every section, then of every page card, in build order.
    pub inputs: &'a [String],
    /// Their vectors from the model (`inputs.len()` rows, L2-normalised).
    pub vectors: &'a [Vec<f32>],
    /// Short corpus texts, sorted and unique: page titles, summaries, cluster names, heading
    /// texts and the first sentences of each section (the trainer embeds them with the model).
    pub short_texts: Vec<String>,
}

/// Trains the lite profile's static table (index-builder `lite::train_table`).
pub type TrainLiteFn<'a> = dyn Fn(&LiteTraining<'_>) -> Result<StaticTableShard> + 'a;

/// The knowledge graph and its mentions as a build makes them, before they are split into
/// parts (`kg_parts`): for tests that compare the parts with the whole graph, or write an
/// index of the layout before the split (one `kg` and one `mentions` shard).
pub fn whole_knowledge_graph(mut sources: Vec<SourcePage>, options: &CompileOptions) -> Result<(wikantik_format::kg::KnowledgeGraph, wikantik_format::kg::MentionIndex)> {
    let mut warnings = Vec::new();
    let progress = &mut |_: Stage, _: usize, _: usize| {};
    sources.sort_by(|a, b| a.file_name.cmp(&b.file_name));
    let pages = parse::parse_sources(sources, options, &mut warnings, progress)?;
    let slugs: Vec<String> = pages.iter().map(|p| p.slug.clone()).collect();
    let canonical_ids = parse::resolve_canonical_ids(&pages, &mut warnings);
    let keys = assign_page_keys(&slugs);
    let parts = pages::page_parts(&pages, options, &mut warnings, progress);
    let (spine, _) = pages::structure(&pages, &slugs, &parts.links, &mut warnings);
    let partitions = content_defined_partitions(&slugs, options.pages_per_partition);
    let records = pages::page_records(&pages, &canonical_ids, &keys, &parts, &partitions);
    let frontmatters: Vec<Frontmatter> = pages.into_iter().map(|p| p.frontmatter).collect();
    knowledge::knowledge(&frontmatters, &records, &parts, &spine, options, &mut warnings)
}

/// Compile source pages into shards and a manifest (lexical only: no vectors).
pub fn compile(
    sources: Vec<SourcePage>,
    options: &CompileOptions,
    progress: &mut dyn FnMut(Stage, usize, usize),
) -> Result<CompiledIndex> {
    compile_with_vectors(sources, options, None, progress)
}

/// Compile source pages into shards and a manifest; with `vectors`, also embed every section
/// and write `vectors` shards (one per page-range partition) and the `model` shard.
pub fn compile_with_vectors(
    mut sources: Vec<SourcePage>,
    options: &CompileOptions,
    vectors: Option<&VectorBuild<'_>>,
    progress: &mut dyn FnMut(Stage, usize, usize),
) -> Result<CompiledIndex> {
    let mut warnings = Vec::new();
    sources.sort_by(|a, b| a.file_name.cmp(&b.file_name));
    // 1–2. Parse; canonical ids: valid and unique authored ids are kept, the rest derived.
    let mut pages = parse::parse_sources(sources, options, &mut warnings, progress)?;
    let slugs: Vec<String> = pages.iter().map(|p| p.slug.clone()).collect();
    let canonical_ids = parse::resolve_canonical_ids(&pages, &mut warnings);
    let keys = assign_page_keys(&slugs);
    // 3–4. Per-page facts (ACL, links, sections); structure (spine, graph).
    let parts = pages::page_parts(&pages, options, &mut warnings, progress);
    let (spine, graph) = pages::structure(&pages, &slugs, &parts.links, &mut warnings);
    // 5–6. Partitions by page range; the page table.
    let partitions = content_defined_partitions(&slugs, options.pages_per_partition);
    let records = pages::page_records(&pages, &canonical_ids, &keys, &parts, &partitions);
    // 7. Citations graded against their targets (their warnings are reported after the
    // knowledge graph's), the last use of a page's body; 9a. the page-range shards, the last
    // use of its text. Only the frontmatter is kept past them: the text is dropped before the
    // knowledge graph, the build's largest structure, is made.
    let mut citation_warnings = Vec::new();
    let citations = knowledge::citations(&pages, &records, &mut citation_warnings);
    for page in &mut pages {
        drop(std::mem::take(&mut page.body));
    }
    let page_partitions = encode::encode_page_partitions(&pages, &slugs, &keys, &parts.chunks, &records, &partitions, progress)?;
    drop(slugs);
    let frontmatters: Vec<Frontmatter> = pages.into_iter().map(|p| p.frontmatter).collect();
    // 6a. Frontmatter values by field.
    let metadata = encode::encode_metadata(&frontmatters.iter().map(|f| &f.fields).collect::<Vec<_>>(), &records)?;
    // 6b. Knowledge graph, mentions and the RDF projection, each encoded as soon as it exists.
    let (knowledge_graph, mention_index) = knowledge::knowledge(&frontmatters, &records, &parts, &spine, options, &mut warnings)?;
    drop(frontmatters);
    let knowledge = encode::encode_knowledge(knowledge_graph, mention_index, &records, options)?;
    warnings.append(&mut citation_warnings);
    // 8. Lexical index; 8b. embeddings and the lite table.
    let (lexical_stats, entries) = lexical::lexical_index(&records, &parts.chunks, &keys, options, progress);
    let embedded = match vectors {
        Some(v) => Some(embed::embed(v, &records, &parts.chunks, progress)?),
        None => None,
    };
    drop(parts);
    // 9. Shards and manifest.
    let built = encode::Built {
        page_partitions,
        keys,
        partitions,
        records,
        spine,
        graph,
        citations,
        knowledge,
        metadata,
        lexical_stats,
        entries,
        embedded,
        warnings,
    };
    encode::encode(built, options, vectors, progress)
}

#[cfg(test)]
mod acl_tests {
    use super::{compile, CompileOptions, CompiledIndex, SourcePage};
    use wikantik_format::acl::{Acl, Action};
    use wikantik_format::catalog::PageTable;
    use wikantik_serve::reader::{IndexReader, MemoryStore, ShardCache};

    fn source(file_name: &str, text: &str) -> SourcePage {
        SourcePage { file_name: file_name.into(), text: text.into(), git_version: None, updated: 0 }
    }

    fn build(sources: Vec<SourcePage>) -> (CompiledIndex, PageTable) {
        let index = compile(sources, &CompileOptions::default(), &mut |_, _, _| {}).expect("compile");
        let table = pollster::block_on(async {
            let reader = IndexReader::open(MemoryStore::from_compiled(&index), std::sync::Arc::new(ShardCache::default())).await.expect("open");
            reader.pages().await.expect("pages").as_ref().clone()
        });
        (index, table)
    }

    fn acl_of<'a>(table: &'a PageTable, slug: &str) -> &'a Acl {
        &table.by_slug(slug).expect("page").acl
    }

    #[test]
    fn acl_inside_html_comment_restricts_the_page() {
        let (index, table) = build(vec![
            source("Commented.md", "---\ntitle: Commented\n---\n<!-- [{ALLOW view Alice}]() -->\n\n# Commented\n\nSecret.\n"),
            source("Multiline.md", "# Multiline\n\n<!--\n  [{ALLOW view Alice}]()\n-->\n\nSecret.\n"),
            source("InDiv.md", "<div class=\"acl\">\n[{ALLOW view Alice}]()\n</div>\n\n# In a div\n"),
            source("Exported.html", "<html><head><title>Exported</title></head><body><!-- [{ALLOW view Alice}]() --><p>Secret.</p></body></html>"),
            source("Documented.md", "# Documented\n\nWrite `<!-- [{ALLOW view Alice}]() -->` to hide an ACL.\n"),
            source("Plain.md", "# Plain\n\nNo ACL.\n"),
        ]);
        for slug in ["Commented", "Multiline", "InDiv", "Exported"] {
            let acl = acl_of(&table, slug);
            assert!(!acl.is_public(), "{slug}: {acl:?}");
            assert!(acl.permits(&["Alice".to_string()], Action::View), "{slug}");
        }
        assert!(acl_of(&table, "Documented").is_public());
        assert!(acl_of(&table, "Plain").is_public());
        assert!(index.warnings.iter().all(|w| w.kind != "MALFORMED_ACL"), "{:?}", index.warnings);
        assert_eq!(index.manifest.stats.restricted_pages, 4);
    }

    #[test]
    fn malformed_acl_restricts_the_page_to_admin_and_warns() {
        let many = "[{ALLOW view\n".repeat(12);
        let (index, table) = build(vec![
            source("Typo.md", "# Typo\n\n<!--\n[{ALLOW veiw Alice}]()\n-->\n"),
            source("Lower.md", "---\ntitle: Lower\n---\n[{allow view All}]()\n"),
            source("Deny.md", "[{ALLOW view All}]()\n[{DENY view Bob}]()\n"),
            source("Broken.html", "<p>x</p>\n<!-- [{ALLOW view Alice -->"),
            source("Many.md", &many),
        ]);
        for slug in ["Typo", "Lower", "Deny", "Broken", "Many"] {
            assert_eq!(acl_of(&table, slug), &Acl::admin_only(), "{slug}");
        }
        let located: Vec<(String, Option<usize>)> = index
            .warnings
            .iter()
            .filter(|w| w.kind == "MALFORMED_ACL")
            .map(|w| (w.file.clone().unwrap_or_default(), w.line))
            .collect();
        let mut expected: Vec<(String, Option<usize>)> = vec![("Broken.html".into(), Some(2)), ("Deny.md".into(), Some(2)), ("Lower.md".into(), Some(4))];
        expected.extend((1..=10).map(|line| ("Many.md".to_string(), Some(line))));
        expected.extend([("Many.md".to_string(), None), ("Typo.md".to_string(), Some(4))]);
        assert_eq!(located, expected);
        let typo = index.warnings.iter().find(|w| w.file.as_deref() == Some("Typo.md")).map(|w| w.to_string()).unwrap_or_default();
        assert_eq!(
            typo,
            "Typo.md:4: MALFORMED_ACL: malformed ACL directive: unknown action 'veiw' (expected view, comment, edit, modify, rename, \
             upload or delete, in lower case); the page is restricted to Admin until it is fixed"
        );
    }
}

