//! Dense retrieval end to end: a wiki built WITH vectors (the real int8 all-MiniLM-L6-v2),
//! read back, and queried in `dense` and `hybrid` modes; plus the embedding cache across a
//! rebuild after a one-page edit (CONTRACT §3.11).
//!
//! Skips (passing, with a message) when the model is absent: run `scripts/fetch-model.sh`.
//! The forward pass is ~100× slower unoptimised, so the test builds a handful of the sample
//! wiki's pages and keeps its embedding cache under `target/` between runs.

use std::path::PathBuf;
use std::sync::Arc;

use wikantik::access::Caller;
use wikantik::bundle::{assemble_bundle, BundleConfig, BundleRequest, RetrievalMode};
use wikantik::compile::{compile_with_vectors, CompileOptions, CompiledIndex, VectorBuild};
use wikantik::coverage::Confidence;
use wikantik::encoder::{Encoder, ModelShard};
use wikantik::reader::{IndexReader, MemoryStore, ShardCache};
use wikantik::retrieval::lexical_candidates;
use wikantik::shard::ShardKind;
use wikantik_index_builder::embed::{embed_with_encoder, load_model, EmbedStats, EmbeddingCache};
use wikantik_tests::{block_on, repo_root, sample_wiki};

/// The pages of the sample wiki this test builds.
const PAGES: &[&str] = &["RollBackABadBuild.md", "HybridFusion.md", "CoverageConfidence.md", "Glossary.md"];

fn model() -> Option<(ModelShard, String)> {
    let candidates: Vec<PathBuf> = std::env::var_os("WIKANTIK_MODEL")
        .map(PathBuf::from)
        .into_iter()
        .chain([
            repo_root().join(".cache/models/all-MiniLM-L6-v2.int8.cbor"),
            repo_root().join(".cache/models/all-MiniLM-L6-v2"),
        ])
        .collect();
    match candidates.iter().find(|p| p.exists()) {
        Some(path) => Some(load_model(path).expect("load model")),
        None => {
            eprintln!("SKIPPED: no embedding model (run scripts/fetch-model.sh); dense end-to-end checks skipped");
            None
        }
    }
}

fn sources(edit: Option<&str>) -> Vec<wikantik::compile::SourcePage> {
    let (all, _, _) = wikantik_index_builder::source::read_wiki(&sample_wiki()).expect("read wiki");
    all.into_iter()
        .filter(|p| PAGES.contains(&p.file_name.as_str()))
        .map(|mut p| {
            if let (Some(extra), true) = (edit, p.file_name == "Glossary.md") {
                p.text.push_str(extra);
            }
            p
        })
        .collect()
}

fn build(model: &ModelShard, model_id: &str, encoder: &Encoder, edit: Option<&str>) -> (CompiledIndex, EmbedStats) {
    build_with(model, model_id, encoder, edit, CompileOptions { pages_per_partition: 2, ..CompileOptions::default() })
}

fn build_with(model: &ModelShard, model_id: &str, encoder: &Encoder, edit: Option<&str>, options: CompileOptions) -> (CompiledIndex, EmbedStats) {
    let cache = EmbeddingCache::new(&repo_root().join("target/test-embeddings"), model_id);
    let stats = std::sync::Mutex::new(EmbedStats::default());
    let embed = |texts: &[String]| -> wikantik::Result<Vec<Vec<f32>>> {
        let (v, s) = embed_with_encoder(encoder, texts, Some(&cache), &|_, _| {}).map_err(|e| wikantik::Error::Encoder(e.to_string()))?;
        *stats.lock().unwrap() = s;
        Ok(v)
    };
    let build = VectorBuild {
        model,
        model_id: model_id.to_string(),
        contextual: true,
        thresholds: wikantik::dense::MINILM_THRESHOLDS,
        embed: &embed,
        lite: None,
    };
    let index = compile_with_vectors(sources(edit), &options, Some(&build), &mut |_, _, _| {}).expect("compile");
    let stats = *stats.lock().unwrap();
    (index, stats)
}

fn bundle(reader: &IndexReader<MemoryStore>, query: &str, mode: RetrievalMode) -> wikantik::bundle::Bundle {
    let request = BundleRequest { query: query.into(), mode, k: Some(5), budget: None };
    block_on(assemble_bundle(reader, &request, &BundleConfig::default(), &Caller::anonymous())).expect("bundle")
}

#[test]
fn dense_and_hybrid_bundles_use_real_vectors() {
    let Some((model, model_id)) = model() else { return };
    let encoder = Encoder::from_shard(model.clone()).expect("encoder");
    let (index, _) = build(&model, &model_id, &encoder, None);

    let dense = index.manifest.dense.as_ref().expect("manifest records the dense side");
    assert_eq!(dense.profile, "quality");
    assert_eq!(dense.model_id, model_id);
    assert_eq!(dense.dim, 384);
    assert_eq!(dense.vectors, index.manifest.stats.sections);
    assert_eq!(index.manifest.shards_of(ShardKind::Model).count(), 1);
    // Vector lists (`ivf`): a small wiki keeps one list, with its directory; the cards are in it.
    assert_eq!(index.manifest.shards_of(ShardKind::Vectors).count(), wikantik::ivf::list_count(index.manifest.stats.sections as usize));
    assert_eq!(index.manifest.shards_of(ShardKind::VectorLists).count(), 1);
    assert_eq!(index.manifest.shards_of(ShardKind::Cards).count(), 0);

    let reader = block_on(IndexReader::open(MemoryStore::from_compiled(&index), Arc::new(ShardCache::default()))).expect("open");
    for mode in [RetrievalMode::Dense, RetrievalMode::Hybrid] {
        let b = bundle(&reader, "how do I undo a bad index publish", mode);
        assert_eq!(b.sections[0].slug, "RollBackABadBuild", "{mode:?}: {:?}", b.sections.iter().map(|s| &s.slug).collect::<Vec<_>>());
        assert!(b.coverage.top_similarity > 0.3 && b.coverage.top_similarity <= 1.0, "{mode:?}: {}", b.coverage.top_similarity);
        assert_ne!(b.coverage.confidence, Confidence::Unknown, "{mode:?}");
        // `score` is the section's true cosine: recompute it from the dequantized-free f32 path.
        let top = &b.sections[0];
        assert!(top.score > 0.3, "{mode:?}: score {}", top.score);
        assert!((top.score - b.coverage.top_similarity).abs() < 1e-9 || top.score < b.coverage.top_similarity);
    }
    // A question sharing no word with its page: lexical finds nothing there, dense does.
    let query = "revert faulty release";
    let lexical = block_on(lexical_candidates(&reader, query, &BundleConfig::default().bm25, 50)).expect("lexical");
    let pages = block_on(reader.pages()).expect("pages");
    let index_of = pages.key_index();
    let lexical_slugs: Vec<&str> = lexical.sections.iter().filter_map(|s| index_of.get(&s.key.page_key()).map(|&i| pages.pages[i].slug.as_str())).collect();
    assert!(!lexical_slugs.contains(&"RollBackABadBuild"), "the query must not share a word with the page: {lexical_slugs:?}");
    let b = bundle(&reader, query, RetrievalMode::Hybrid);
    assert!(b.sections.iter().take(3).any(|s| s.slug == "RollBackABadBuild"), "{:?}", b.sections.iter().map(|s| &s.slug).collect::<Vec<_>>());

    // Without vectors the same index degrades to lexical with `unknown`.
    let lexical_only = wikantik::compile::compile(sources(None), &CompileOptions::default(), &mut |_, _, _| {}).expect("compile");
    assert!(lexical_only.manifest.dense.is_none());
    let reader = block_on(IndexReader::open(MemoryStore::from_compiled(&lexical_only), Arc::new(ShardCache::default()))).expect("open");
    let b = bundle(&reader, "how do I undo a bad index publish", RetrievalMode::Dense);
    assert_eq!(b.coverage.confidence, Confidence::Unknown);
    assert_eq!(b.coverage.top_similarity, -1.0);
}

#[test]
fn a_one_page_edit_re_embeds_only_that_page() {
    let Some((model, model_id)) = model() else { return };
    let encoder = Encoder::from_shard(model.clone()).expect("encoder");
    let (before, _) = build(&model, &model_id, &encoder, None);
    // A new paragraph at the end of one page: one new section text, everything else cached.
    // (Unique per run, since the cache outlives the test.)
    let nonce = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let edit = format!("\n\n## Late addition\n\nA fresh paragraph, number {nonce}.\n");
    let (after, stats) = build(&model, &model_id, &encoder, Some(&edit));
    assert!(stats.embedded >= 1 && stats.embedded <= 2, "{stats:?}");
    // Every section, every page card and every title (a card is the mean of the two) went
    // through the cache.
    assert_eq!(stats.cached + stats.embedded, (after.manifest.stats.sections + 2 * after.manifest.stats.pages) as usize);
    let vector_names = |i: &CompiledIndex| -> Vec<String> { i.manifest.shards_of(ShardKind::Vectors).map(|s| s.name.clone()).collect() };
    let (a, b) = (vector_names(&before), vector_names(&after));
    // Vectors live in lists by topic, not by page range, so an edit may rewrite any list (here
    // the only one); the other page-range shards keep their names.
    assert_eq!((a.len(), b.len()), (1, 1));
    assert_ne!(a, b);
    let section_names = |i: &CompiledIndex| -> Vec<String> { i.manifest.shards_of(ShardKind::Sections).map(|s| s.name.clone()).collect() };
    let (a, b) = (section_names(&before), section_names(&after));
    assert_eq!(a.iter().zip(&b).filter(|(x, y)| x != y).count(), 1, "exactly one sections shard changed");
    // The model shard is shared between the builds.
    let model_name = |i: &CompiledIndex| i.manifest.shards_of(ShardKind::Model).next().map(|s| s.name.clone());
    assert_eq!(model_name(&before), model_name(&after));
}

/// The sample pages with the HNSW forced on (threshold 0) and off (no threshold).
fn ann_and_exact(model: &ModelShard, model_id: &str, encoder: &Encoder) -> (CompiledIndex, CompiledIndex) {
    let with = |ann_threshold| CompileOptions { pages_per_partition: 2, ann_threshold, ..CompileOptions::default() };
    (build_with(model, model_id, encoder, None, with(Some(0))).0, build_with(model, model_id, encoder, None, with(None)).0)
}

#[test]
fn a_forced_ann_index_ranks_like_the_exact_scan() {
    let Some((model, model_id)) = model() else { return };
    let encoder = Encoder::from_shard(model.clone()).expect("encoder");
    let (ann, exact) = ann_and_exact(&model, &model_id, &encoder);
    assert_eq!(ann.manifest.shards_of(ShardKind::Ann).count(), 1, "threshold 0 forces the graph");
    assert_eq!(exact.manifest.shards_of(ShardKind::Ann).count(), 0);
    // The graph is the only difference: same vectors shards.
    let names = |i: &CompiledIndex, kind| -> Vec<String> { i.manifest.shards_of(kind).map(|s| s.name.clone()).collect() };
    assert_eq!(names(&ann, ShardKind::Vectors), names(&exact, ShardKind::Vectors));
    // Deterministic: a rebuild gives the same graph shard.
    let (again, _) = ann_and_exact(&model, &model_id, &encoder);
    assert_eq!(names(&ann, ShardKind::Ann), names(&again, ShardKind::Ann));

    let open = |i: &CompiledIndex| block_on(IndexReader::open(MemoryStore::from_compiled(i), Arc::new(ShardCache::default()))).expect("open");
    let (ann_reader, exact_reader) = (open(&ann), open(&exact));
    for query in ["how do I undo a bad index publish", "revert faulty release", "how are dense and lexical rankings combined", "what does coverage confidence mean"] {
        for mode in [RetrievalMode::Dense, RetrievalMode::Hybrid] {
            let (a, e) = (bundle(&ann_reader, query, mode), bundle(&exact_reader, query, mode));
            let slugs = |b: &wikantik::bundle::Bundle| b.sections.iter().map(|s| (s.slug.clone(), s.score)).collect::<Vec<_>>();
            assert_eq!(slugs(&a), slugs(&e), "{query} ({mode:?}): ANN and exact differ");
            assert_eq!(a.coverage.top_similarity, e.coverage.top_similarity);
        }
    }
}

#[test]
fn a_corrupt_ann_shard_is_reported_by_name() {
    use wikantik::auth::{AccessConfig, KeyRing};
    use wikantik::http::Request;
    use wikantik::mcp::McpConfig;
    use wikantik::service::{handle, ServiceConfig};
    let Some((model, model_id)) = model() else { return };
    let encoder = Encoder::from_shard(model.clone()).expect("encoder");
    let (ann, _) = ann_and_exact(&model, &model_id, &encoder);
    let entry = ann.manifest.shards_of(ShardKind::Ann).next().expect("ann shard").clone();
    let mut bytes = MemoryStore::from_compiled(&ann).object(&entry.name).expect("stored").to_vec();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x40;
    let store = MemoryStore::from_compiled(&ann).with_object(&entry.name, Some(bytes));
    let reader = block_on(IndexReader::open(store, Arc::new(ShardCache::default()))).expect("open");
    // The dense ranker refuses it, naming the shard.
    let err = block_on(wikantik::dense::dense_candidates(&reader, "revert faulty release", 10)).expect_err("corrupt graph");
    assert!(err.to_string().contains(&entry.name), "{err}");
    // Over MCP the context tool answers with a tool error naming it ("index unavailable").
    let mcp = McpConfig { access: AccessConfig { keys: KeyRing::empty(), allow_unrestricted: true }, ..McpConfig::default() };
    let config = ServiceConfig { mcp, ..ServiceConfig::default() };
    let body = serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "retrieve_context", "arguments": { "query": "revert faulty release" } } });
    let request = Request::new("POST", "/knowledge-mcp")
        .with_header("content-type", "application/json")
        .with_header("accept", "application/json, text/event-stream")
        .with_header("mcp-protocol-version", "2025-06-18")
        .with_body(serde_json::to_vec(&body).expect("json"));
    let response = block_on(handle(Ok(&reader), &request, &config));
    let text = String::from_utf8_lossy(&response.body);
    assert!(text.contains("index unavailable") && text.contains(&entry.name), "{text}");
}

/// The lite profile end to end: the build trains a static table into the model's space (here
/// from noise and on the section texts only, so that the unoptimised test build does not run
/// the model over the whole vocabulary), the index carries the table instead of the model,
/// and dense and hybrid bundles are answered from the same section vectors.
#[test]
fn a_lite_index_answers_without_the_model_shard() {
    use wikantik::encoder::lite::StaticTableShard;
    use wikantik_index_builder::lite::{train_table, TableCache, TrainConfig};
    let Some((model, model_id)) = model() else { return };
    let encoder = Encoder::from_shard(model.clone()).expect("encoder");
    let cache = EmbeddingCache::new(&repo_root().join("target/test-embeddings"), &model_id);
    let embed = |texts: &[String]| -> wikantik::Result<Vec<Vec<f32>>> {
        Ok(embed_with_encoder(&encoder, texts, Some(&cache), &|_, _| {}).map_err(|e| wikantik::Error::Encoder(e.to_string()))?.0)
    };
    let config = TrainConfig { distill: false, short_texts: false, epochs: 40, learning_rate: 0.01, batch: 8, holdout: 0, ..TrainConfig::default() };
    let trained = std::sync::Mutex::new(0usize);
    let train = |training: &wikantik::compile::LiteTraining<'_>| -> wikantik::Result<StaticTableShard> {
        *trained.lock().unwrap() += 1;
        assert_eq!(training.inputs.len(), training.vectors.len());
        assert!(training.short_texts.iter().any(|t| t == "Roll back a bad build"), "titles are short texts: {:?}", training.short_texts);
        train_table(&model, &model_id, &encoder, training, &cache, None::<&TableCache>, &config, &|_| {}).map_err(|e| wikantik::Error::Encoder(e.to_string()))
    };
    let build = VectorBuild {
        model: &model,
        model_id: model_id.clone(),
        contextual: true,
        thresholds: wikantik::dense::MINILM_THRESHOLDS,
        embed: &embed,
        lite: Some(&train),
    };
    let index = compile_with_vectors(sources(None), &CompileOptions::default(), Some(&build), &mut |_, _, _| {}).expect("compile");
    assert_eq!(*trained.lock().unwrap(), 1);

    let dense = index.manifest.dense.as_ref().expect("dense block");
    assert_eq!(dense.profile, "lite");
    assert_eq!(dense.model_id, model_id, "the vectors are still the model's");
    let encoder_id = dense.encoder_id.as_deref().expect("the table's id is recorded");
    let table = index.manifest.shards_of(ShardKind::StaticEncoder).next().expect("static-encoder shard");
    assert_eq!(encoder_id, format!("wikantik/minilm-static@{}", &table.sha256[..16]));
    assert_eq!(index.manifest.shards_of(ShardKind::Model).count(), 0, "no model shard in a lite index");
    let rows = index.manifest.shards_of(ShardKind::StaticRows).next().expect("the table's rows, a blob read by block");
    assert!(rows.name.ends_with(".bin") && rows.size.is_multiple_of(384 + 4), "{rows:?}");

    // The store holds no model at all: answering must not need it.
    let reader = block_on(IndexReader::open(MemoryStore::from_compiled(&index), Arc::new(ShardCache::default()))).expect("open");
    let query_encoder = block_on(wikantik::dense::query_encoder(&reader)).expect("encoder").expect("lite encoder");
    assert_eq!(query_encoder.profile(), "lite");
    for mode in [RetrievalMode::Dense, RetrievalMode::Hybrid] {
        let b = bundle(&reader, "roll back a bad build", mode);
        assert_eq!(b.sections[0].slug, "RollBackABadBuild", "{mode:?}: {:?}", b.sections.iter().map(|s| &s.slug).collect::<Vec<_>>());
        assert!(b.coverage.top_similarity > 0.3 && b.coverage.top_similarity <= 1.0, "{mode:?}: {}", b.coverage.top_similarity);
        assert_ne!(b.coverage.confidence, Confidence::Unknown, "{mode:?}");
    }
    // The quality build of the same pages shares every vectors shard with the lite one.
    let quality = build_quality_names(&model, &model_id, &encoder);
    let lite_vectors: Vec<String> = index.manifest.shards_of(ShardKind::Vectors).map(|s| s.name.clone()).collect();
    assert_eq!(lite_vectors, quality);
}

fn build_quality_names(model: &ModelShard, model_id: &str, encoder: &Encoder) -> Vec<String> {
    let cache = EmbeddingCache::new(&repo_root().join("target/test-embeddings"), model_id);
    let embed = |texts: &[String]| -> wikantik::Result<Vec<Vec<f32>>> {
        Ok(embed_with_encoder(encoder, texts, Some(&cache), &|_, _| {}).map_err(|e| wikantik::Error::Encoder(e.to_string()))?.0)
    };
    let build = VectorBuild { model, model_id: model_id.to_string(), contextual: true, thresholds: wikantik::dense::MINILM_THRESHOLDS, embed: &embed, lite: None };
    let index = compile_with_vectors(sources(None), &CompileOptions::default(), Some(&build), &mut |_, _, _| {}).expect("compile");
    index.manifest.shards_of(ShardKind::Vectors).map(|s| s.name.clone()).collect()
}
