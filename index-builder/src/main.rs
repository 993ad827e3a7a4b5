//! `index-builder`: compiles a Markdown wiki into Wikantik's content-addressed CBOR shards.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use wikantik::compile::CompileOptions;

use wikantik_index_builder::commands::{build, new_key, publish_index, BuildOutput, Layout};
use wikantik_index_builder::eval;
use wikantik_index_builder::indexing::DenseArgs;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
        /// Print every warning (by default, past 40 warnings, a count per kind with the first
        /// few of each).
        #[arg(long)]
        all_warnings: bool,
        /// List a kind of more than this many shards (term, section, body, vector partitions)
        /// through manifest directories, which a request reads only for the partitions it
        /// opens.
        #[arg(long, default_value_t = wikantik::manifest::DIRECTORIES_FROM)]
        directories_from: usize,
        /// A list of more than twice this many postings is long: alone in its term partition,
        /// and when its tail would score little (a near-universal word), cut by impact, the
        /// rest going to a `term-tails` shard read only when the ranking could need it (0: no
        /// list is long).
        #[arg(long, value_name = "POSTINGS", default_value_t = wikantik::lexical::POSTINGS_HEAD)]
        postings_head: usize,
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
        /// Build without flags and absolute paths kept with their mark (`--out`, `/proc`) in
        /// the analyzer (an ablation: the analyzer of indexes built before it existed).
        #[arg(long)]
        no_marked_identifiers: bool,
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
        /// A list of more than twice this many postings is long: alone in its term partition,
        /// and cut by impact when its tail can be left unread (0: no list is long).
        #[arg(long, value_name = "POSTINGS", default_value_t = wikantik::lexical::POSTINGS_HEAD)]
        postings_head: usize,
        /// Cut a long list only when its tail would score at most this under the default BM25
        /// parameters (`inf`: cut every long list, to measure the ranking's tolerance).
        #[arg(long, value_name = "SCORE", default_value_t = wikantik::lexical::CUT_TAILS_BELOW)]
        cut_tails_below: f32,
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
        Command::Build { wiki, out, keep_builds, lenient, quiet, all_warnings, directories_from, postings_head, dense } => {
            let output = if quiet { BuildOutput::Quiet } else if all_warnings { BuildOutput::AllWarnings } else { BuildOutput::Summary };
            let layout = Layout { keep_builds, directories_from, postings_head };
            build(&wiki, &out, layout, lenient, output, &dense)
        }
        Command::Eval { wiki, queries, sections, floors, baseline_command, grid, no_whole_identifiers, no_marked_identifiers, page_fields, document_weights, dump_rankings, postings_head, cut_tails_below, dense } => {
            let mut compile = CompileOptions { postings_head, cut_tails_below, ..CompileOptions::default() };
            compile.analyzer.whole_identifiers = !no_whole_identifiers;
            compile.analyzer.marked_identifiers = !no_marked_identifiers;
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
            publish_index(&index_dir, &to, endpoint, keep_builds, concurrency, dry_run, quiet)
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
