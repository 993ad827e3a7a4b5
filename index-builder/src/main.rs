//! `index-builder`: compiles a Markdown wiki into Wikantik's content-addressed CBOR shards.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use wikantik::compile::{CompileOptions, Stage};

use wikantik_index_builder::error::Result;
use wikantik_index_builder::eval;
use wikantik_index_builder::indexing::{compile_index, DenseArgs};
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
    /// Build a wiki in memory and report retrieval quality on the dev sets: section-level
    /// recall per category through the served bundle, page-level figures of the bundle and of
    /// retrieve_context, per mode and query-encoder profile, in-sample and cross-validated,
    /// beside the plain baselines.
    Eval {
        /// The wiki directory.
        wiki: PathBuf,
        /// Page-level queries: `query,ideal_page,notes` CSV.
        #[arg(long)]
        queries: PathBuf,
        /// Section-level questions: `query_id,query,category,gold_slug,gold_heading_path,notes` CSV.
        #[arg(long, value_name = "CSV")]
        sections: Option<PathBuf>,
        /// Floors of the cross-validated hybrid figures, one `profile figure minimum` per line;
        /// the eval fails when a figure falls below its floor.
        #[arg(long, value_name = "FILE")]
        floors: Option<PathBuf>,
        /// The plain baselines: a command run with a directory of exported sections and
        /// questions that writes rankings.jsonl there (scripts/eval/baselines.py).
        #[arg(long, value_name = "COMMAND")]
        baseline_command: Option<String>,
        /// Also print the vector-list probe grid and the coverage calibration.
        #[arg(long)]
        grid: bool,
        /// Build without whole compound identifiers in the analyzer (an ablation: the analyzer
        /// of indexes built before it existed).
        #[arg(long)]
        no_whole_identifiers: bool,
        /// Build BM25 over page fields instead of section documents (an ablation: the lexical
        /// index of indexes built before section documents).
        #[arg(long)]
        page_fields: bool,
        /// Repeat counts of a section document's parts, `title,summary,tags,heading,body`
        /// (default 1,1,1,1,1).
        #[arg(long, value_name = "T,S,G,H,B")]
        document_weights: Option<String>,
        /// Also write each dev question's raw BM25 and dense section rankings (300 deep, with
        /// page slugs, heading paths, scores and page-card cosines; serving path) as JSON lines,
        /// one file per profile (FILE with the extension `<profile>.jsonl`), for studying fusion
        /// offline.
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Build { wiki, out, keep_builds, lenient, quiet, dense } => build(&wiki, &out, keep_builds, lenient, quiet, &dense),
        Command::Eval { wiki, queries, sections, floors, baseline_command, grid, no_whole_identifiers, page_fields, document_weights, dump_rankings, dense } => {
            let mut compile = CompileOptions::default();
            compile.analyzer.whole_identifiers = !no_whole_identifiers;
            if page_fields {
                compile.lexical_document = wikantik::lexical::DocumentModel::PageFields;
            }
            if let Some(raw) = document_weights {
                let w: Vec<u32> = raw.split(',').filter_map(|n| n.trim().parse().ok()).collect();
                let [title, summary, tags, heading, body] = w[..] else {
                    eprintln!("error: --document-weights takes five counts: title,summary,tags,heading,body");
                    return ExitCode::FAILURE;
                };
                compile.lexical_document = wikantik::lexical::DocumentModel::Section { weights: wikantik::lexical::DocumentWeights { title, summary, tags, heading, body } };
            }
            eval::run::run(&eval::run::EvalOptions { wiki, queries, sections, dense, floors, baseline_command, diagnostics: grid, dump_rankings, compile })
        }
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
