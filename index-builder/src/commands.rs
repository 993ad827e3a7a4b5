//! What each `index-builder` command does: `build`, `keys new` and `publish` (`eval` is
//! [`crate::eval`]). The binary (main.rs) parses the command line and calls these.

use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use wikantik::compile::{CompileOptions, Stage};

use crate::error::{BuildError, Result};
use crate::indexing::{compile_index, DenseArgs};
use crate::publish::{publish, BuildObjects, PublishOptions, PublishReport};
use crate::s3::S3Settings;
use crate::{output, source, target};

/// How often a build without a terminal prints a progress line within one stage.
const PROGRESS_LINE_EVERY: Duration = Duration::from_secs(15);

fn stage_name(stage: Stage) -> &'static str {
    match stage {
        Stage::Parse => "parse",
        Stage::Chunk => "chunk",
        Stage::Index => "index",
        Stage::Embed => "embed",
        Stage::Encode => "encode",
    }
}

/// Progress as plain lines on stderr, for logs: one when a stage starts, then at most one every
/// [`PROGRESS_LINE_EVERY`] (a long embedding pass reports itself, so a CI log is never silent
/// for minutes).
struct ProgressLines {
    enabled: bool,
    started: Instant,
    stage: Option<&'static str>,
    last_line: Instant,
}

impl ProgressLines {
    fn new(enabled: bool) -> ProgressLines {
        ProgressLines { enabled, started: Instant::now(), stage: None, last_line: Instant::now() }
    }

    fn report(&mut self, stage: &'static str, done: usize, total: usize) {
        if !self.enabled {
            return;
        }
        let new_stage = self.stage != Some(stage);
        if new_stage || self.last_line.elapsed() >= PROGRESS_LINE_EVERY || (done == total && total > 1) {
            eprintln!("index-builder: {stage:<6} {done}/{total}  ({:.0} s)", self.started.elapsed().as_secs_f64());
            self.stage = Some(stage);
            self.last_line = Instant::now();
        }
    }
}

/// What `build` prints besides errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildOutput {
    /// Nothing.
    Quiet,
    /// The report, with the warnings summarised past [`WARNINGS_IN_FULL`].
    Summary,
    /// The report with every warning.
    AllWarnings,
}

/// Up to this many warnings are printed one per line; past it, a count per kind and the first
/// [`EXAMPLES_PER_KIND`] of each (a 12k-page wiki without canonical ids warns on every page).
pub const WARNINGS_IN_FULL: usize = 40;
const EXAMPLES_PER_KIND: usize = 3;

/// The warning lines to print: every one, or (past [`WARNINGS_IN_FULL`] unless `all`) a line
/// per kind with its count, its first examples and how many more there are.
pub fn warning_lines(warnings: &[(String, String)], all: bool) -> Vec<String> {
    if all || warnings.len() <= WARNINGS_IN_FULL {
        return warnings.iter().map(|(_, line)| line.clone()).collect();
    }
    let mut by_kind: std::collections::BTreeMap<&str, Vec<&str>> = std::collections::BTreeMap::new();
    for (kind, line) in warnings {
        by_kind.entry(kind).or_default().push(line);
    }
    let mut out = Vec::new();
    for (kind, lines) in by_kind {
        out.push(format!("{kind}: {} warning{}", lines.len(), if lines.len() == 1 { "" } else { "s" }));
        out.extend(lines.iter().take(EXAMPLES_PER_KIND).map(|l| format!("  {l}")));
        if lines.len() > EXAMPLES_PER_KIND {
            out.push(format!("  … and {} more", lines.len() - EXAMPLES_PER_KIND));
        }
    }
    out.push("(--all-warnings prints every one)".to_string());
    out
}

/// How a build is laid out in its output directory.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// Builds kept in the output directory.
    pub keep_builds: usize,
    /// Kinds of more shards than this are listed through manifest directories.
    pub directories_from: usize,
    /// Postings a long list keeps in its term partition (`CompileOptions::postings_head`).
    pub postings_head: usize,
}

pub fn build(wiki: &Path, out: &Path, layout: Layout, lenient: bool, output: BuildOutput, dense: &DenseArgs) -> Result<()> {
    let Layout { keep_builds, directories_from, postings_head } = layout;
    let quiet = output == BuildOutput::Quiet;
    let started = Instant::now();
    let (sources, skipped, from_git) = source::read_wiki(wiki)?;
    let options = CompileOptions {
        strict_frontmatter: !lenient,
        generator: format!("wikantik-index-builder {}", env!("CARGO_PKG_VERSION")),
        entity_sidecar: source::read_entity_sidecar(wiki)?,
        ann_threshold: dense.ann_threshold,
        directories_from: Some(directories_from),
        postings_head,
        ..CompileOptions::default()
    };
    let bar = if quiet || !std::io::stderr().is_terminal() { ProgressBar::hidden() } else { ProgressBar::new(sources.len() as u64) };
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg:8} [{bar:40}] {pos}/{len}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    // Without a terminal (CI logs), a line per stage and then at most every PROGRESS_LINE_EVERY.
    let mut lines = ProgressLines::new(!quiet && !std::io::stderr().is_terminal());
    let mut last_stage = None;
    let mut on_progress = |stage: Stage, done: usize, total: usize| {
        lines.report(stage_name(stage), done, total);
        if last_stage != Some(stage) {
            last_stage = Some(stage);
            bar.set_message(stage_name(stage));
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
    let mut warnings: Vec<(String, String)> =
        skipped.iter().map(|f| ("SKIPPED_FILE".to_string(), format!("{}: SKIPPED_FILE: {}", f.file, f.reason))).collect();
    warnings.extend(compiled.warnings.iter().map(|w| (w.kind.clone(), w.to_string())));
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
    for line in warning_lines(&warnings, output == BuildOutput::AllWarnings) {
        println!("    {line}");
    }
    Ok(())
}

pub fn new_key(scopes: &str, principals: &str, label: Option<&str>) -> Result<()> {
    use wikantik::auth::{mint_key_with, Scope};
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

pub fn publish_index(
    index_dir: &Path,
    to: &str,
    endpoint: Option<String>,
    keep_builds: usize,
    concurrency: usize,
    dry_run: bool,
    quiet: bool,
) -> Result<()> {
    let started = Instant::now();
    // Open the target first so a bad URL or missing credentials fail before any reading.
    let target = target::open(to, &S3Settings::from_env(endpoint))?;
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

fn print_publish_report(r: &PublishReport, index_dir: &Path, seconds: f64) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn warnings(n: usize) -> Vec<(String, String)> {
        (0..n).map(|i| {
            let kind = if i % 4 == 0 { "HEADLESS_CLUSTER" } else { "MISSING_CANONICAL_ID" };
            (kind.to_string(), format!("Page{i}.md: {kind}: something"))
        }).collect()
    }

    #[test]
    fn few_warnings_are_printed_in_full_and_many_are_counted_by_kind() {
        assert_eq!(warning_lines(&warnings(WARNINGS_IN_FULL), false).len(), WARNINGS_IN_FULL);
        let many = warnings(1000);
        assert_eq!(warning_lines(&many, true).len(), 1000, "--all-warnings");
        let summary = warning_lines(&many, false);
        assert_eq!(summary[0], "HEADLESS_CLUSTER: 250 warnings");
        assert_eq!(summary[1], "  Page0.md: HEADLESS_CLUSTER: something");
        assert_eq!(summary[4], "  … and 247 more");
        assert_eq!(summary[5], "MISSING_CANONICAL_ID: 750 warnings");
        assert_eq!(summary.last().map(String::as_str), Some("(--all-warnings prints every one)"));
        assert_eq!(summary.len(), 11);
    }
}
