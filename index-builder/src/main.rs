//! `index-builder`: compiles a Markdown wiki into Wikantik's content-addressed CBOR shards.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use wikantik::compile::{compile, CompileOptions, Stage};

use wikantik_index_builder::error::Result;
use wikantik_index_builder::publish::{publish, BuildObjects, PublishOptions, PublishReport};
use wikantik_index_builder::s3::S3Settings;
use wikantik_index_builder::{output, source, store};

#[derive(Parser)]
#[command(name = "index-builder", version, about = "Compile a Markdown wiki into Wikantik shards and publish them")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build an index from a wiki directory into an output directory.
    Build {
        /// The wiki: a directory of Markdown (and HTML) pages.
        wiki: PathBuf,
        /// Where to write the index (created if missing; earlier builds are kept).
        #[arg(long, default_value = "index-out")]
        out: PathBuf,
        /// How many builds to keep in the output directory (older ones are removed).
        #[arg(long, default_value_t = 3)]
        keep_builds: usize,
        /// Skip pages with malformed frontmatter (with a warning) instead of failing.
        #[arg(long)]
        lenient: bool,
        /// Print only errors.
        #[arg(long, short)]
        quiet: bool,
        #[command(flatten)]
        dense: DenseArgs,
    },
    /// Build a wiki in memory and report page-level retrieval quality per mode.
    Eval {
        /// The wiki directory.
        wiki: PathBuf,
        /// Query set: `query,ideal_page,notes` CSV.
        #[arg(long)]
        queries: PathBuf,
        /// Fail when hybrid (or lexical, without vectors) recall@5 is below this.
        #[arg(long, default_value_t = 0.0)]
        min_recall_at_5: f64,
        /// Fail when recall@20 is below this.
        #[arg(long, default_value_t = 0.0)]
        min_recall_at_20: f64,
        /// Fail when MRR is below this.
        #[arg(long, default_value_t = 0.0)]
        min_mrr: f64,
        /// Fail when the lite profile's hybrid recall@5 is below this (with a model).
        #[arg(long, default_value_t = 0.0)]
        min_lite_recall_at_5: f64,
        /// Fail when the lite profile's hybrid recall@20 is below this.
        #[arg(long, default_value_t = 0.0)]
        min_lite_recall_at_20: f64,
        /// Fail when the lite profile's hybrid MRR is below this.
        #[arg(long, default_value_t = 0.0)]
        min_lite_mrr: f64,
        /// Also run the tuning grid (BM25 field boosts, then RRF k / weights / truncation)
        /// and the coverage-threshold calibration, and print them in full.
        #[arg(long)]
        grid: bool,
        /// Also write each query's raw BM25 and dense section rankings (200 deep, with page
        /// slugs and scores, BM25 sections' own cosines and page-card cosines; quality
        /// profile, serving path) as JSON lines to this file, for studying fusion offline.
        #[arg(long, value_name = "FILE")]
        dump_rankings: Option<PathBuf>,
        #[command(flatten)]
        dense: DenseArgs,
    },
    /// Manage API keys for the functions (the deployment stores only their hashes).
    Keys {
        #[command(subcommand)]
        command: KeysCommand,
    },
    /// Publish a built index directory to a bucket or another directory.
    ///
    /// Reads INDEX_DIR's current build (current.json → manifest → shards), verifies every
    /// object's SHA-256, uploads only the objects the target lacks, then the manifest, then the
    /// build history, then swaps the target's current.json (the last write), then removes
    /// objects no kept build references. Re-running an interrupted publish completes it.
    ///
    /// S3 settings come from the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
    /// (required), AWS_SESSION_TOKEN, AWS_REGION or AWS_DEFAULT_REGION (default us-east-1;
    /// R2: auto), AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (or --endpoint) for R2, MinIO and
    /// other S3-compatible servers. Requests use path-style addressing.
    Publish {
        /// A directory written by `index-builder build --out`.
        index_dir: PathBuf,
        /// Where to publish: s3://bucket[/prefix] or file://DIR.
        #[arg(long, value_name = "URL")]
        to: String,
        /// S3 endpoint URL (e.g. https://<account>.r2.cloudflarestorage.com); overrides AWS_ENDPOINT_URL.
        #[arg(long, value_name = "URL")]
        endpoint: Option<String>,
        /// How many builds to keep at the target (older ones are garbage-collected).
        #[arg(long, default_value_t = 5)]
        keep_builds: usize,
        /// Uploads in flight at once.
        #[arg(long, default_value_t = 8)]
        concurrency: usize,
        /// Print the plan (uploads, pointer change, removals) without writing anything.
        #[arg(long)]
        dry_run: bool,
        /// Print only errors.
        #[arg(long, short)]
        quiet: bool,
    },
}

#[derive(Subcommand)]
enum KeysCommand {
    /// Mint a new key: prints the key once (give it to the client) and the key-ring line to add
    /// to the deployment's WIKANTIK_API_KEYS secret (hash, scopes, principals, label).
    New {
        /// Scopes, comma-separated: mcp_read (read-only MCP), mcp, tools, all.
        #[arg(long, default_value = "mcp_read")]
        scopes: String,
        /// Principals (users, groups, roles) the key holds for ACLs, comma-separated.
        #[arg(long, default_value = "")]
        principals: String,
        /// A label for logs (who holds the key).
        #[arg(long)]
        label: Option<String>,
    },
}

/// Dense-retrieval options shared by `build` and `eval`.
#[derive(clap::Args, Debug, Clone)]
struct DenseArgs {
    /// Embedding model: a model-shard CBOR file or an unpacked all-MiniLM-L6-v2 folder
    /// (see scripts/fetch-model.sh). Default: the WIKANTIK_MODEL environment variable; with
    /// neither, the index is lexical-only.
    #[arg(long, value_name = "PATH")]
    model: Option<PathBuf>,
    /// Section-embedding cache directory, keyed by (model id, SHA-256 of the text).
    #[arg(long, value_name = "DIR", default_value = ".cache/embeddings")]
    embedding_cache: PathBuf,
    /// Embed the chunk text alone instead of the contextual text (REFERENCE §2.3).
    #[arg(long)]
    plain_text: bool,
    /// Add the HNSW (`ann`) shard from this many sections on; 0 forces it (README, "ANN").
    #[arg(long, value_name = "SECTIONS", default_value_t = wikantik::ann::ANN_THRESHOLD)]
    ann_threshold: usize,
    /// Query-encoder profile recorded in the manifest: `quality` (the model embeds queries)
    /// or `lite` (a static token table trained into the model's space on this wiki; the
    /// index carries the table instead of the model). Section vectors are the same.
    #[arg(long, value_enum, default_value_t = Profile::Quality)]
    profile: Profile,
    /// Cache of trained lite tables, keyed by everything they depend on.
    #[arg(long, value_name = "DIR", default_value = ".cache/lite-tables")]
    lite_cache: PathBuf,
}

/// The query-encoder profiles (`wikantik::dense::PROFILE_*`).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum Profile {
    Quality,
    Lite,
}

/// Compile `sources`, with vectors when a model is configured.
fn compile_index(sources: Vec<wikantik::compile::SourcePage>, options: &CompileOptions, dense: &DenseArgs, bar: &ProgressBar, progress: &mut dyn FnMut(Stage, usize, usize)) -> Result<wikantik::compile::CompiledIndex> {
    use wikantik::compile::{compile_with_vectors, VectorBuild};
    use wikantik_index_builder::embed::{embed_with_encoder, load_model, model_path, EmbeddingCache};
    use wikantik_index_builder::lite::{train_table, TableCache, TrainConfig};
    let Some(path) = model_path(dense.model.clone()) else {
        if dense.profile == Profile::Lite {
            return Err(wikantik_index_builder::error::BuildError::Invalid(
                "--profile lite trains its table from the model's vectors: give --model (or WIKANTIK_MODEL)".into(),
            ));
        }
        return Ok(compile(sources, options, progress)?);
    };
    let (model, model_id) = load_model(&path)?;
    let encoder = wikantik::encoder::Encoder::from_shard(model.clone())?;
    let cache = EmbeddingCache::new(&dense.embedding_cache, &model_id);
    let stats = std::sync::Mutex::new(None);
    let started = Instant::now();
    let embed = |texts: &[String]| -> wikantik::Result<Vec<Vec<f32>>> {
        bar.set_length(texts.len() as u64);
        let (vectors, s) = embed_with_encoder(&encoder, texts, Some(&cache), &|done, _| bar.set_position(done as u64))
            .map_err(|e| wikantik::Error::Encoder(e.to_string()))?;
        if let Ok(mut slot) = stats.lock() {
            *slot = Some(s);
        }
        Ok(vectors)
    };
    let table_cache = TableCache::new(&dense.lite_cache, &model_id);
    let train_lite = |training: &wikantik::compile::LiteTraining<'_>| -> wikantik::Result<wikantik::encoder::lite::StaticTableShard> {
        train_table(&model, &model_id, &encoder, training, &cache, Some(&table_cache), &TrainConfig::default(), &|line| {
            bar.suspend(|| eprintln!("{line}"))
        })
        .map_err(|e| wikantik::Error::Encoder(e.to_string()))
    };
    let build = VectorBuild {
        model: &model,
        model_id: model_id.clone(),
        contextual: !dense.plain_text,
        thresholds: if dense.profile == Profile::Lite { wikantik::dense::MINILM_LITE_THRESHOLDS } else { wikantik::dense::MINILM_THRESHOLDS },
        embed: &embed,
        lite: (dense.profile == Profile::Lite).then_some(&train_lite as &wikantik::compile::TrainLiteFn<'_>),
    };
    let compiled = compile_with_vectors(sources, options, Some(&build), progress)?;
    if let Ok(Some(s)) = stats.lock().map(|s| *s) {
        eprintln!(
            "embedded {} sections with {model_id} ({} from cache {}, {} computed) in {:.1} s",
            s.cached + s.embedded,
            s.cached,
            dense.embedding_cache.display(),
            s.embedded,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(compiled)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Build { wiki, out, keep_builds, lenient, quiet, dense } => build(&wiki, &out, keep_builds, lenient, quiet, &dense),
        Command::Eval { wiki, queries, min_recall_at_5, min_recall_at_20, min_mrr, min_lite_recall_at_5, min_lite_recall_at_20, min_lite_mrr, grid, dump_rankings, dense } => evaluate(
            &wiki,
            &queries,
            Floors { recall_at_5: min_recall_at_5, recall_at_20: min_recall_at_20, mrr: min_mrr },
            Floors { recall_at_5: min_lite_recall_at_5, recall_at_20: min_lite_recall_at_20, mrr: min_lite_mrr },
            grid,
            dump_rankings.as_deref(),
            &dense,
        ),
        Command::Keys { command: KeysCommand::New { scopes, principals, label } } => new_key(&scopes, &principals, label.as_deref()),
        Command::Publish { index_dir, to, endpoint, keep_builds, concurrency, dry_run, quiet } => {
            run_publish(&index_dir, &to, endpoint, keep_builds, concurrency, dry_run, quiet)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}

fn build(wiki: &std::path::Path, out: &std::path::Path, keep_builds: usize, lenient: bool, quiet: bool, dense: &DenseArgs) -> Result<()> {
    let started = Instant::now();
    let (sources, skipped, from_git) = source::read_wiki(wiki)?;
    let options = CompileOptions {
        strict_frontmatter: !lenient,
        generator: format!("wikantik-index-builder {}", env!("CARGO_PKG_VERSION")),
        entity_sidecar: source::read_entity_sidecar(wiki)?,
        ann_threshold: dense.ann_threshold,
        ..CompileOptions::default()
    };
    let bar = if quiet { ProgressBar::hidden() } else { ProgressBar::new(sources.len() as u64) };
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg:8} [{bar:40}] {pos}/{len}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let mut last_stage = None;
    let mut on_progress = |stage: Stage, done: usize, total: usize| {
        if last_stage != Some(stage) {
            last_stage = Some(stage);
            bar.set_message(match stage {
                Stage::Parse => "parse",
                Stage::Chunk => "chunk",
                Stage::Index => "index",
                Stage::Embed => "embed",
                Stage::Encode => "encode",
            });
            bar.set_length(total as u64);
        }
        if stage != Stage::Embed {
            bar.set_position(done as u64);
        }
    };
    let compiled = compile_index(sources, &options, dense, &bar, &mut on_progress)?;
    bar.finish_and_clear();
    let report = output::write_index(out, &compiled, keep_builds)?;
    if quiet {
        return Ok(());
    }
    let m = &compiled.manifest;
    let s = &m.stats;
    let mut warnings: Vec<String> = skipped.iter().map(|f| format!("{}: SKIPPED_FILE: {}", f.file, f.reason)).collect();
    warnings.extend(compiled.warnings.iter().map(|w| w.to_string()));
    println!("Built index {} from {} in {:.1} s", m.build_id, wiki.display(), started.elapsed().as_secs_f64());
    println!("  pages      {:>8}  ({} restricted by ACL; versions from {})", s.pages, s.restricted_pages, if from_git { "git history" } else { "frontmatter or 1" });
    println!("  sections   {:>8}", s.sections);
    println!("  clusters   {:>8}  ({} hubs, {} sub-clusters)", s.clusters, s.hubs, s.sub_clusters);
    println!("  links      {:>8}", s.links);
    println!("  citations  {:>8}", s.citations);
    match &m.dense {
        Some(d) => println!(
            "  vectors    {:>8}  ({} profile{}, {}, {} text; coverage strong ≥ {}, partial ≥ {})",
            d.vectors,
            d.profile,
            d.encoder_id.as_ref().map(|e| format!(" with {e}")).unwrap_or_default(),
            d.model_id,
            d.text_format,
            d.thresholds.strong_similarity,
            d.thresholds.partial_similarity
        ),
        None => println!("  vectors    {:>8}  (no model: lexical-only index)", 0),
    }
    println!(
        "  shards     {:>8}  ({} written, {} unchanged; {} in all, {} written)",
        compiled.shards.len(),
        report.shards_written,
        report.shards_unchanged,
        human_bytes(report.total_bytes),
        human_bytes(report.bytes_written)
    );
    println!("  output     {}  (pointer current.json; {} builds kept, {} old objects removed)", out.display(), report.builds_kept, report.objects_removed);
    println!("  warnings   {:>8}", warnings.len());
    for w in &warnings {
        println!("    {w}");
    }
    Ok(())
}

/// The ratchet: the gated mode must not fall below these.
struct Floors {
    recall_at_5: f64,
    recall_at_20: f64,
    mrr: f64,
}

/// A reader over the same build without its `ann` shard (the exact scan), for comparison.
/// A reader over `compiled` without its shards of the `dropped` kinds (e.g. without `ann`
/// and `vector-lists`: the exact scan), optionally with the vector lists' probe replaced.
fn view(
    compiled: &wikantik::compile::CompiledIndex,
    dropped: &[wikantik::shard::ShardKind],
    probe: Option<u32>,
) -> Result<wikantik::reader::IndexReader<wikantik::reader::MemoryStore>> {
    use wikantik::manifest::Manifest;
    use wikantik::reader::{IndexReader, MemoryStore, ShardCache};
    use wikantik::shard::{decode_shard, encode_shard, ShardKind};
    let m = &compiled.manifest;
    let mut store = MemoryStore::from_compiled(compiled);
    let mut shards = Vec::new();
    for entry in m.shards.iter().filter(|s| !dropped.contains(&s.kind)) {
        match (entry.kind, probe, store.object(&entry.name)) {
            (ShardKind::VectorLists, Some(probe), Some(bytes)) => {
                let mut lists: wikantik::ivf::VectorLists = decode_shard(entry, bytes)?;
                lists.probe = probe.min(lists.len() as u32);
                let shard = encode_shard(ShardKind::VectorLists, 0, &lists, None, None)?;
                store.put(&shard.entry.name, shard.bytes);
                shards.push(shard.entry);
            }
            _ => shards.push(entry.clone()),
        }
    }
    let mut manifest = Manifest::new(m.generator.clone(), m.stats.clone(), m.analyzer, m.chunker, m.lexical.clone(), shards)?;
    if let Some(dense) = &m.dense {
        manifest = manifest.with_dense(dense.clone())?;
    }
    let (name, bytes, pointer) = manifest.encode()?;
    store.put(&name, bytes);
    Ok(pollster::block_on(IndexReader::open_at(store, pointer, std::sync::Arc::new(ShardCache::new(1 << 30))))?)
}

/// `--grid`: page-level figures and vector bytes fetched per cold query for a range of
/// probes (how `ivf::PROBE_SHARE` was chosen).
fn run_probe_grid(
    compiled: &wikantik::compile::CompiledIndex,
    queries: &[wikantik_index_builder::eval::EvalQuery],
    config: &wikantik::bundle::BundleConfig,
    lists: usize,
) -> Result<()> {
    use wikantik::bundle::RetrievalMode;
    use wikantik::shard::ShardKind;
    use wikantik_index_builder::eval;
    let exact = view(compiled, &[ShardKind::Ann, ShardKind::VectorLists], None)?;
    println!("probe grid ({lists} lists): probe, vector bytes per cold query, candidate recall@20/@200 vs exact, hybrid page-level r@5 r@20 MRR");
    for probe in [1usize, 2, 4, 8, 12, 16, 24, 32, 48].into_iter().filter(|&p| p <= lists) {
        let probed = view(compiled, &[ShardKind::Ann], Some(probe as u32))?;
        let Some(report) = pollster::block_on(eval::ivf_report(&probed, &exact, queries, &[20, config.candidates]))? else { return Ok(()) };
        let hybrid = pollster::block_on(eval::evaluate(&probed, queries, RetrievalMode::Hybrid, config))?;
        let recall: Vec<String> = report.candidate_recall.iter().map(|(_, r)| format!("{r:.3}")).collect();
        println!(
            "  probe {probe:>2}: {:>9.0} B  candidates {}  hybrid {:.3} {:.3} {:.3}",
            report.fetched_bytes,
            recall.join(" / "),
            hybrid.recall_at_5,
            hybrid.recall_at_20,
            hybrid.mrr
        );
    }
    Ok(())
}

fn evaluate(wiki: &std::path::Path, queries: &std::path::Path, floors: Floors, lite_floors: Floors, run_grid: bool, dump: Option<&std::path::Path>, dense: &DenseArgs) -> Result<()> {
    use wikantik::bundle::{BundleConfig, RetrievalMode};
    use wikantik::reader::{IndexReader, MemoryStore, ShardCache};
    use wikantik::shard::ShardKind;
    use wikantik_index_builder::eval;

    let queries = eval::read_queries(queries)?;
    let (sources, _, _) = source::read_wiki(wiki)?;
    let has_model = wikantik_index_builder::embed::model_path(dense.model.clone()).is_some();
    // Both profiles when there is a model (the lite index reuses the cached section vectors).
    let profiles: &[Profile] = if has_model { &[Profile::Quality, Profile::Lite] } else { &[Profile::Quality] };
    let config = BundleConfig::default();
    let mut summary = Vec::new();
    let mut failures = Vec::new();
    for &profile in profiles {
        let started = Instant::now();
        let args = DenseArgs { profile, ..dense.clone() };
        let options = CompileOptions { entity_sidecar: source::read_entity_sidecar(wiki)?, ann_threshold: dense.ann_threshold, ..CompileOptions::default() };
        let compiled = compile_index(sources.clone(), &options, &args, &ProgressBar::hidden(), &mut |_, _, _| {})?;
        println!(
            "Indexed {} pages, {} sections{} in {:.1} s",
            compiled.manifest.stats.pages,
            compiled.manifest.stats.sections,
            compiled
                .manifest
                .dense
                .as_ref()
                .map(|d| format!(" with {} vectors ({}, {} text; {} profile{})", d.vectors, d.model_id, d.text_format, d.profile, d.encoder_id.as_ref().map(|e| format!(", {e}")).unwrap_or_default()))
                .unwrap_or_default(),
            started.elapsed().as_secs_f64()
        );
        let store = MemoryStore::from_compiled(&compiled);
        let reader = pollster::block_on(IndexReader::open(store, std::sync::Arc::new(ShardCache::new(1 << 30))))?;
        // The headline figures are the serving path below `ann::ANN_THRESHOLD`: the probed
        // vector lists (the graph, when forced into the build, is compared separately).
        let serving = view(&compiled, &[ShardKind::Ann], None)?;
        let exact_reader = view(&compiled, &[ShardKind::Ann, ShardKind::VectorLists], None)?;

        // Encoder CPU time per query, natively (one thread; the encoder is built before timing).
        let mut encoder_ms = None;
        if let Some(encoder) = pollster::block_on(wikantik::dense::query_encoder(&reader))? {
            let mut times: Vec<f64> = queries
                .iter()
                .map(|q| {
                    let t = thread_cpu_ms();
                    let _ = pollster::block_on(wikantik::dense::embed_query(&reader, &encoder, &q.query));
                    thread_cpu_ms() - t
                })
                .collect();
            times.sort_by(f64::total_cmp);
            let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
            let p50 = times.get(times.len() / 2).copied().unwrap_or(0.0);
            println!("query encoder, {} profile (native, one thread, CPU): p50 {p50:.3} ms, mean {mean:.3} ms over {} queries", encoder.profile(), times.len());
            encoder_ms = Some(p50);
        }

        let mut reports = Vec::new();
        for mode in [RetrievalMode::Lexical, RetrievalMode::Dense, RetrievalMode::Hybrid] {
            reports.push(pollster::block_on(eval::evaluate(&serving, &queries, mode, &config))?);
        }
        println!("{}", eval::render(&queries, &reports));

        // How the probed vector lists and (when built) the HNSW graph compare with the exact
        // scan over the same vectors: candidate recall at the answer and bundle depths, then
        // page-level figures. Both are gated by the floors below.
        let depths = [20, config.candidates];
        let dense_modes = [RetrievalMode::Dense, RetrievalMode::Hybrid];
        let evaluate_modes = |r: &IndexReader<MemoryStore>| -> Result<Vec<eval::ModeReport>> {
            dense_modes.iter().map(|&mode| pollster::block_on(eval::evaluate(r, &queries, mode, &config))).collect()
        };
        let mut gated: Vec<eval::ModeReport> = reports.iter().filter(|r| r.mode == RetrievalMode::Hybrid).cloned().collect();
        let exact = evaluate_modes(&exact_reader)?;
        if let Some(ivf) = pollster::block_on(eval::ivf_report(&serving, &exact_reader, &queries, &depths))? {
            let probed: Vec<eval::ModeReport> = reports.iter().filter(|r| dense_modes.contains(&r.mode)).cloned().collect();
            println!("{}", eval::render_ivf(&ivf, &probed, &exact));
            if run_grid {
                run_probe_grid(&compiled, &queries, &config, ivf.lists)?;
            }
        }
        if let Some(ann) = pollster::block_on(eval::ann_report(&reader, &queries, &depths))? {
            let with_ann = evaluate_modes(&reader)?;
            println!("{}", eval::render_ann(&ann, &with_ann, &exact));
            gated.extend(with_ann.into_iter().filter(|r| r.mode == RetrievalMode::Hybrid));
        }
        if let (Some(path), Profile::Quality) = (dump, profile) {
            pollster::block_on(eval::dump_rankings(&serving, &queries, &config, path))?;
            println!("raw rankings written to {}", path.display());
        }

        if run_grid && profile == Profile::Quality {
            run_tuning_grid(&reader, &queries, &config, &reports)?;
        } else if run_grid {
            println!("lite profile: coverage calibration of the static table's cosines");
            run_calibration(&reader, &config, &reports)?;
        }

        if gated.is_empty() {
            gated.extend(reports.first().cloned());
        }
        let floors = if profile == Profile::Lite { &lite_floors } else { &floors };
        for (i, r) in gated.iter().enumerate() {
            let name = format!("{}{}", if profile == Profile::Lite { "lite " } else { "" }, if i > 0 { "(ann) " } else { "" });
            if r.recall_at_5 < floors.recall_at_5 {
                failures.push(format!("{name}recall@5 {:.3} < floor {:.3}", r.recall_at_5, floors.recall_at_5));
            }
            if r.recall_at_20 < floors.recall_at_20 {
                failures.push(format!("{name}recall@20 {:.3} < floor {:.3}", r.recall_at_20, floors.recall_at_20));
            }
            if r.mrr < floors.mrr {
                failures.push(format!("{name}MRR {:.3} < floor {:.3}", r.mrr, floors.mrr));
            }
        }
        summary.push((profile, encoder_ms, reports));
    }
    if has_model {
        println!("summary by profile (hybrid gated; encoder = native CPU per query, p50):");
        println!("{:<8} {:<8} {:>9} {:>10} {:>7} {:>12}", "profile", "mode", "recall@5", "recall@20", "MRR", "encoder ms");
        for (profile, encoder_ms, reports) in &summary {
            for r in reports {
                let enc = if r.mode == RetrievalMode::Lexical { "-".to_string() } else { encoder_ms.map_or("-".into(), |m| format!("{m:.3}")) };
                println!(
                    "{:<8} {:<8} {:>9.3} {:>10.3} {:>7.3} {:>12}",
                    format!("{profile:?}").to_lowercase(),
                    format!("{:?}", r.mode).to_lowercase(),
                    r.recall_at_5,
                    r.recall_at_20,
                    r.mrr,
                    enc
                );
            }
        }
    }
    if !failures.is_empty() {
        return Err(wikantik_index_builder::error::BuildError::Invalid(format!("retrieval quality regressed: {}", failures.join("; "))));
    }
    Ok(())
}


/// CPU time of the calling thread in milliseconds (wall time where there is no such clock).
fn thread_cpu_ms() -> f64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime writes into the timespec we own.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as f64 * 1000.0 + ts.tv_nsec as f64 / 1e6;
        }
    }
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1000.0
}

fn new_key(scopes: &str, principals: &str, label: Option<&str>) -> Result<()> {
    use wikantik::auth::{mint_key_with, Scope};
    use wikantik_index_builder::error::BuildError;
    let scopes: Vec<Scope> = scopes
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<Scope>().map_err(|_| BuildError::Invalid(format!("unknown scope '{s}' (use mcp_read, mcp, tools, all)"))))
        .collect::<Result<_>>()?;
    let principals: Vec<&str> = principals.split(',').map(str::trim).filter(|p| !p.is_empty()).collect();
    let mut random = [0u8; 32];
    getrandom::fill(&mut random).map_err(|e| BuildError::Invalid(format!("no randomness available: {e}")))?;
    let (key, line) = mint_key_with(random, &scopes, &principals, label).map_err(|e| BuildError::Invalid(e.to_string()))?;
    println!("key:  {key}");
    println!("line: {line}");
    eprintln!("Give the key to its holder now; it is not stored anywhere. Add the line to the deployment's");
    eprintln!("WIKANTIK_API_KEYS secret (one line per key; see docs/PUBLISHING.md and the README).");
    Ok(())
}

/// The tuning method, printed in full: (1) BM25 field boosts on `lexical`, (2) RRF k and the
/// dense:BM25 weight ratio on `hybrid` with the chosen boosts, (3) coverage thresholds from
/// the dense cosines of the eval queries and of off-topic queries. Each grid keeps the
/// configuration with the best recall@5 + recall@20 + MRR.
fn run_tuning_grid<S: wikantik::reader::ShardStore>(
    reader: &wikantik::reader::IndexReader<S>,
    queries: &[wikantik_index_builder::eval::EvalQuery],
    base: &wikantik::bundle::BundleConfig,
    reports: &[wikantik_index_builder::eval::ModeReport],
) -> Result<()> {
    use wikantik::bundle::RetrievalMode;
    use wikantik_index_builder::eval;

    let mut boosts = Vec::new();
    for title in [1.0, 2.0, 4.0] {
        for heading in [1.0, 2.0] {
            for tags in [1.0, 2.0] {
                for summary in [1.0, 2.5] {
                    let mut c = *base;
                    c.bm25.boosts.title = title;
                    c.bm25.boosts.heading = heading;
                    c.bm25.boosts.tags = tags;
                    c.bm25.boosts.summary = summary;
                    boosts.push((format!("title {title} heading {heading} tags {tags} summary {summary}"), c));
                }
            }
        }
    }
    let rows = pollster::block_on(eval::grid(reader, queries, RetrievalMode::Lexical, boosts))?;
    println!("{}", eval::render_grid("grid 1: BM25 field boosts (lexical mode)", &rows));
    let chosen = eval::best(&rows).map(|r| r.config).unwrap_or(*base);

    if reader.manifest().dense.is_none() {
        println!("(no vectors: fusion grid and coverage calibration skipped)");
        return Ok(());
    }
    let mut fusion = Vec::new();
    for k in [5.0, 10.0, 20.0, 60.0] {
        for ratio in [0.5, 1.0, 2.0, 3.0, 4.0] {
            let mut c = chosen;
            c.fusion.method = wikantik::fusion::FusionMethod::Rrf;
            c.fusion.k = k;
            c.fusion.bm25_weight = 0.5;
            c.fusion.dense_weight = 0.5 * ratio;
            fusion.push((format!("rrf k {k} bm25 0.5 dense {}", 0.5 * ratio), c));
        }
    }
    for card_weight in [0.0, 0.3, 0.5, 0.7] {
        for dense_share in [0.5, 0.6, 0.7, 0.8, 0.9] {
            for pool in [50, 100, 200] {
                let mut c = chosen;
                c.fusion.method = wikantik::fusion::FusionMethod::Convex;
                c.fusion.card_weight = card_weight;
                c.fusion.dense_share = dense_share;
                c.fusion.pool = pool;
                fusion.push((format!("convex card {card_weight} dense {dense_share} pool {pool}"), c));
            }
        }
    }
    let rows = pollster::block_on(eval::grid(reader, queries, RetrievalMode::Hybrid, fusion))?;
    println!("{}", eval::render_grid("grid 2: fusion method and parameters (hybrid mode, boosts from grid 1)", &rows));

    run_calibration(reader, base, reports)
}

/// The coverage-threshold calibration (`eval::calibrate`) of this index's query encoder.
fn run_calibration<S: wikantik::reader::ShardStore>(
    reader: &wikantik::reader::IndexReader<S>,
    base: &wikantik::bundle::BundleConfig,
    reports: &[wikantik_index_builder::eval::ModeReport],
) -> Result<()> {
    use wikantik::access::Caller;
    use wikantik::bundle::{ranked_sections, RetrievalMode};
    use wikantik_index_builder::eval;
    let caller = Caller::anonymous();
    let mut off_topic = Vec::new();
    for q in eval::OFF_TOPIC_QUERIES {
        let (_, top) = pollster::block_on(ranked_sections(reader, q, RetrievalMode::Dense, base, &caller, 5))?;
        off_topic.push(top);
    }
    if let Some(dense) = reports.iter().find(|r| r.mode == RetrievalMode::Dense) {
        let (_, table) = eval::calibrate(dense, &off_topic);
        println!("{table}");
    }
    Ok(())
}

fn run_publish(
    index_dir: &std::path::Path,
    to: &str,
    endpoint: Option<String>,
    keep_builds: usize,
    concurrency: usize,
    dry_run: bool,
    quiet: bool,
) -> Result<()> {
    let started = Instant::now();
    // Open the target first so a bad URL or missing credentials fail before any reading.
    let target = store::open(to, &S3Settings::from_env(endpoint))?;
    let build = BuildObjects::load_local(index_dir)?;
    let options = PublishOptions {
        keep_builds,
        concurrency,
        dry_run,
        fail_after_uploads: PublishOptions::fail_after_from_env()?,
    };
    let report = publish(target.as_ref(), &build, &options)?;
    if !quiet {
        print_publish_report(&report, index_dir, started.elapsed().as_secs_f64());
    }
    Ok(())
}

fn print_publish_report(r: &PublishReport, index_dir: &std::path::Path, seconds: f64) {
    let (verb, upload, remove) = if r.dry_run { ("Plan (dry run, nothing written):", "to upload", "to remove") } else { ("Published", "uploaded", "removed") };
    println!("{verb} build {} from {} to {}", r.build_id, index_dir.display(), r.target);
    println!(
        "  objects    {} {upload}, {} already present  ({} {upload} of {} in all)",
        r.uploaded.len(),
        r.skipped,
        human_bytes(r.bytes_uploaded),
        human_bytes(r.total_bytes)
    );
    if r.dry_run {
        for name in &r.uploaded {
            println!("    + {name}");
        }
    }
    println!("  manifest   {}  ({})", r.manifest_name, if r.manifest_uploaded { upload } else { "already present" });
    let old = r.previous_build_id.as_deref().unwrap_or("(none)");
    if r.pointer_written {
        println!("  pointer    current.json {old} -> {}{}", r.build_id, if r.dry_run { "  (would swap)" } else { "" });
    } else {
        println!("  pointer    current.json unchanged (already {})", r.build_id);
    }
    println!("  builds     {} kept", r.builds_kept.len());
    match &r.gc_skipped {
        Some(reason) => println!("  gc         nothing removed: {reason}"),
        None => {
            println!("  gc         {} old objects {remove}", r.removed.len());
            if r.dry_run {
                for name in &r.removed {
                    println!("    - {name}");
                }
            }
        }
    }
    if !r.dry_run {
        println!("  time       {seconds:.1} s");
    }
}

fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}
