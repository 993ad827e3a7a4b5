//! `index-builder eval`: builds the wiki once per query-encoder profile and reports, for
//! lexical / dense / hybrid and for the plain baselines, section-level recall per category
//! through the served bundle, page-level figures of the bundle's page order and of
//! `retrieve_context`, and k-fold cross-validated figures of every tuned default beside the
//! in-sample ones; then fails when a cross-validated figure falls below its floor.

use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::ProgressBar;
use wikantik::bundle::{BundleConfig, RetrievalMode};
use wikantik::compile::{CompileOptions, CompiledIndex};
use wikantik::reader::{IndexReader, MemoryStore, ShardCache};
use wikantik::shard::ShardKind;

use super::diagnostics;
use super::folds::{self, FOLDS};
use super::outcome::{objective, Outcomes, Scores};
use super::report::{pages_table, sections_table};
use super::sections::{read_section_questions, Category};
use super::systems::{self, DevSets};
use super::tuning::{self, GridPoint};
use crate::error::{BuildError, Result};
use crate::indexing::{compile_index, DenseArgs, Profile};
use crate::source;

/// What `index-builder eval` was asked.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    pub wiki: PathBuf,
    /// Page-level queries (`query,ideal_page,notes`).
    pub queries: PathBuf,
    /// Section-level questions (`sections-dev.csv` format).
    pub sections: Option<PathBuf>,
    pub dense: DenseArgs,
    /// Floors of the cross-validated hybrid figures (see [`read_floors`]).
    pub floors: Option<PathBuf>,
    /// The baseline command: run with a directory holding the exported sections and questions,
    /// it writes `rankings.jsonl` there (scripts/eval/baselines.py).
    pub baseline_command: Option<String>,
    /// Also print the probe grid and the coverage calibration.
    pub diagnostics: bool,
    /// Write the raw rankings of every dev question here (one file per profile: the path with
    /// the extension `<profile>.jsonl`).
    pub dump_rankings: Option<PathBuf>,
    /// How the index is built (the defaults, or an ablation); the wiki's entity sidecar and
    /// the ANN threshold of `dense` are added.
    pub compile: CompileOptions,
}

/// The figures a floor can hold, of the cross-validated hybrid (the served mode).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Figure {
    /// Section recall@n, overall (`None`) or of one category.
    Sections(usize, Option<Category>),
    PagesRecall(usize),
    PagesMrr,
    /// `retrieve_context` recall@n (in-sample: it serves the defaults).
    ContextRecall(usize),
}

impl Figure {
    fn parse(raw: &str) -> Option<Figure> {
        let parts: Vec<&str> = raw.split('.').collect();
        let at = |p: &str| p.strip_prefix('r').and_then(|n| n.parse::<usize>().ok());
        match parts[..] {
            ["sections", n, "overall"] => Some(Figure::Sections(at(n)?, None)),
            ["sections", n, c] => Some(Figure::Sections(at(n)?, Some(Category::ALL.into_iter().find(|k| k.name().eq_ignore_ascii_case(c))?))),
            ["pages", "mrr"] => Some(Figure::PagesMrr),
            ["pages", n] => Some(Figure::PagesRecall(at(n)?)),
            ["context", n] => Some(Figure::ContextRecall(at(n)?)),
            _ => None,
        }
    }

    fn value(self, cv: &Scores, served: &Scores) -> Option<f64> {
        match self {
            Figure::Sections(n, None) => Some(cv.section_recall(n)),
            Figure::Sections(n, Some(c)) => Some(cv.category_recall(c, n).0),
            Figure::PagesRecall(n) => Some(cv.page_recall(n)),
            Figure::PagesMrr => Some(cv.page_mrr()),
            Figure::ContextRecall(n) => served.context_recall(n),
        }
    }
}

/// One floor: `profile figure minimum` (a line of the floors file).
#[derive(Debug, Clone, PartialEq)]
pub struct Floor {
    pub profile: String,
    pub name: String,
    pub figure: Figure,
    pub min: f64,
}

/// Read a floors file: `#` comments, then lines `profile figure minimum`, where the figure is
/// `sections.r5|r12.overall|similarity|relational|boundary|identifier`, `pages.r5|r20|mrr` or
/// `context.r5|r20`. Errors name the file and line.
pub fn read_floors(path: &Path) -> Result<Vec<Floor>> {
    let text = std::fs::read_to_string(path).map_err(|e| BuildError::io(path, e))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let invalid = |what: String| BuildError::Invalid(format!("{}:{}: {what}", path.display(), i + 1));
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [profile, name, min] = fields[..] else { return Err(invalid("expected `profile figure minimum`".into())) };
        if !matches!(profile, "quality" | "lite") {
            return Err(invalid(format!("unknown profile {profile:?} (quality or lite)")));
        }
        let figure = Figure::parse(name).ok_or_else(|| invalid(format!("unknown figure {name:?}")))?;
        let min = min.parse::<f64>().ok().filter(|m| (0.0..=1.0).contains(m)).ok_or_else(|| invalid(format!("{min:?} is not a number in [0, 1]")))?;
        out.push(Floor { profile: profile.to_string(), name: name.to_string(), figure, min });
    }
    Ok(out)
}

/// A reader over `compiled` without its shards of the `dropped` kinds (e.g. without `ann`
/// and `vector-lists`: the exact scan), optionally with the vector lists' probe replaced.
pub fn view(compiled: &CompiledIndex, dropped: &[ShardKind], probe: Option<u32>) -> Result<IndexReader<MemoryStore>> {
    use wikantik::shard::{decode_shard, encode_shard};
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
    // The dropped kinds are single shards the manifest lists; its directories stay as they are.
    let (name, bytes, pointer) = m.clone().with_rows(shards)?.encode()?;
    store.put(&name, bytes);
    Ok(pollster::block_on(IndexReader::open_at(store, pointer, std::sync::Arc::new(ShardCache::new(1 << 30))))?)
}

/// CPU time of the calling thread in milliseconds (wall time where there is no such clock).
pub fn thread_cpu_ms() -> f64 {
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

const MODES: [RetrievalMode; 3] = [RetrievalMode::Lexical, RetrievalMode::Dense, RetrievalMode::Hybrid];

fn mode_name(mode: RetrievalMode) -> String {
    format!("{mode:?}").to_lowercase()
}

/// A grid cross-validated over every profile: per profile its held-out outcomes; which point
/// each fold chose, and the point the same choice makes on every question (what the default
/// should be).
struct GridResult {
    mode: RetrievalMode,
    cv: Vec<Outcomes>,
    chosen: Vec<String>,
    best: String,
    default: String,
}

/// `outcomes[c][p]`: grid point `c` on profile `p`.
fn cross_validate(mode: RetrievalMode, sets: &DevSets, grid: &[GridPoint], outcomes: &[Vec<Outcomes>]) -> Option<GridResult> {
    let section_folds = folds::assign(&sets.sections.iter().map(|q| q.category).collect::<Vec<_>>(), FOLDS);
    let page_folds = folds::assign(&vec![(); sets.pages.len()], FOLDS);
    let result = folds::cross_validate(outcomes, &section_folds, &page_folds, FOLDS, objective)?;
    let best = folds::best_on_all(outcomes, &section_folds, &page_folds, objective);
    Some(GridResult {
        mode,
        cv: result.outcomes,
        chosen: result.chosen.iter().map(|&c| grid[c].label.clone()).collect(),
        best: grid[best].label.clone(),
        default: grid[0].label.clone(),
    })
}

/// Everything measured on one profile's index.
struct ProfileReport {
    profile: Profile,
    encoder_ms: Option<f64>,
    /// In-sample outcomes of each mode under the defaults (hybrid with `retrieve_context`).
    modes: Vec<(RetrievalMode, Outcomes)>,
    /// Per mode, each grid point's outcomes (cross-validated over every profile afterwards).
    grids: Vec<(RetrievalMode, Vec<Outcomes>)>,
}

/// The tuning grid of each mode.
fn grids(config: &BundleConfig) -> [(RetrievalMode, Vec<GridPoint>); 3] {
    [
        (RetrievalMode::Lexical, tuning::lexical_grid(config)),
        (RetrievalMode::Dense, tuning::dense_grid(config)),
        (RetrievalMode::Hybrid, tuning::hybrid_grid(config)),
    ]
}

/// Run the evaluation.
pub fn run(options: &EvalOptions) -> Result<()> {
    let pages = super::read_queries(&options.queries)?;
    let sections = match &options.sections {
        Some(path) => read_section_questions(path)?,
        None => Vec::new(),
    };
    let sets = DevSets { sections, pages };
    println!("dev sets: {} section-level questions ({} golds), {} page-level queries; {FOLDS}-fold cross-validation", sets.sections.len(), sets.sections.iter().map(|q| q.golds.len()).sum::<usize>(), sets.pages.len());
    let floors = match &options.floors {
        Some(path) => read_floors(path)?,
        None => Vec::new(),
    };
    let (sources, _, _) = source::read_wiki(&options.wiki)?;
    let has_model = crate::embed::model_path(options.dense.model.clone()).is_some();
    let profiles: &[Profile] = if has_model { &[Profile::Quality, Profile::Lite] } else { &[Profile::Quality] };
    let config = BundleConfig::default();
    let mut reports = Vec::new();
    let mut baselines: Vec<(String, Outcomes)> = Vec::new();
    for &profile in profiles {
        let started = Instant::now();
        let args = DenseArgs { profile, ..options.dense.clone() };
        let compile_options = CompileOptions {
            entity_sidecar: source::read_entity_sidecar(&options.wiki)?,
            ann_threshold: options.dense.ann_threshold,
            ..options.compile.clone()
        };
        let compiled = compile_index(sources.clone(), &compile_options, &args, &ProgressBar::hidden(), &mut |_, _, _| {})?;
        println!(
            "\n== profile {}: indexed {} pages, {} sections{} in {:.1} s",
            mode_like(profile),
            compiled.manifest.stats.pages,
            compiled.manifest.stats.sections,
            compiled.manifest.dense.as_ref().map(|d| format!(" with {} vectors ({}, {} text{})", d.vectors, d.model_id, d.text_format, d.encoder_id.as_ref().map(|e| format!(", {e}")).unwrap_or_default())).unwrap_or_default(),
            started.elapsed().as_secs_f64()
        );
        // The served path below `ann::ANN_THRESHOLD`: the probed vector lists. The graph, when
        // forced into the build, and the exact scan are compared separately.
        let serving = view(&compiled, &[ShardKind::Ann], None)?;
        let exact = view(&compiled, &[ShardKind::Ann, ShardKind::VectorLists], None)?;
        let with_graph = pollster::block_on(IndexReader::open(MemoryStore::from_compiled(&compiled), std::sync::Arc::new(ShardCache::new(1 << 30))))?;
        let encoder_ms = encoder_cpu(&serving, &sets)?;

        let t = Instant::now();
        let mut modes = Vec::new();
        for mode in MODES {
            let outcomes = pollster::block_on(systems::product(&serving, &sets, mode, &config, mode == RetrievalMode::Hybrid))?;
            let served = pollster::block_on(systems::served_bundles(&serving, &sets, mode, &config))?;
            systems::check_served(&sets, &served, &outcomes, &format!("{} {}", mode_like(profile), mode_name(mode)))?;
            modes.push((mode, outcomes));
        }
        println!("(defaults measured in {:.1} s; /api/bundle served exactly the evaluated sections)", t.elapsed().as_secs_f64());

        if profile == Profile::Quality && baselines.is_empty() {
            if let Some(command) = &options.baseline_command {
                baselines = run_baselines(&exact, &sets, command)?;
            }
        }

        let t = Instant::now();
        let mut grid_outcomes = Vec::new();
        for (mode, grid) in grids(&config) {
            if compiled.manifest.dense.is_none() && mode != RetrievalMode::Lexical {
                continue;
            }
            let outcomes: Vec<Outcomes> = grid.iter().map(|p| pollster::block_on(systems::product(&serving, &sets, mode, &p.config, false))).collect::<Result<_>>()?;
            grid_outcomes.push((mode, outcomes));
        }
        println!("(tuning grids measured in {:.1} s)", t.elapsed().as_secs_f64());
        let report = ProfileReport { profile, encoder_ms, modes, grids: grid_outcomes };

        // Diagnostics: the probed lists and the graph against the exact scan.
        let exact_modes: Vec<(RetrievalMode, Scores)> = dense_modes_scores(&exact, &sets, &config)?;
        let probed: Vec<(RetrievalMode, Scores)> = report.modes.iter().filter(|(m, _)| *m != RetrievalMode::Lexical).map(|(m, o)| (*m, o.scores_all())).collect();
        let depths = [20, config.candidates];
        if let Some(ivf) = pollster::block_on(diagnostics::ivf_report(&serving, &exact, &sets.pages, &depths))? {
            println!("{}", diagnostics::render_ivf(&ivf, &probed, &exact_modes));
            if options.diagnostics {
                run_probe_grid(&compiled, &exact, &sets, &config, ivf.lists)?;
            }
        }
        if let Some(ann) = pollster::block_on(diagnostics::ann_report(&with_graph, &sets.pages, &depths))? {
            let graph_modes = dense_modes_scores(&with_graph, &sets, &config)?;
            println!("{}", diagnostics::render_ann(&ann, &graph_modes, &exact_modes));
        }
        if let Some(path) = &options.dump_rankings {
            let path = path.with_extension(format!("{}.jsonl", mode_like(profile)));
            pollster::block_on(diagnostics::dump_rankings(&serving, &sets, &config, &path))?;
            println!("raw rankings written to {}", path.display());
        }
        if options.diagnostics && compiled.manifest.dense.is_some() {
            run_calibration(&serving, &config, &report)?;
        }
        reports.push(report);
    }
    // One default serves every profile: each grid is cross-validated over all of them.
    let mut results = Vec::new();
    for (mode, grid) in grids(&config) {
        let per_point: Vec<Vec<Outcomes>> = (0..grid.len())
            .map(|c| reports.iter().filter_map(|r| r.grids.iter().find(|(m, _)| *m == mode).and_then(|(_, o)| o.get(c).cloned())).collect())
            .collect();
        if per_point.first().is_some_and(|p| p.len() == reports.len()) {
            results.extend(cross_validate(mode, &sets, &grid, &per_point));
        }
    }
    for (p, report) in reports.iter().enumerate() {
        print_profile(report, p, &results, &baselines);
    }
    for result in &results {
        println!("cv {}: the folds chose {}", mode_name(result.mode), result.chosen.join(" | "));
        let verdict = if result.best == result.default { "the default".to_string() } else { format!("the default is {}", result.default) };
        println!("cv {}: on every question (all profiles) the grid chooses {} ({verdict})", mode_name(result.mode), result.best);
    }
    print_summary(&reports, &results, &baselines);
    print_per_profile_choice(&reports, &sets, &config);
    check_floors(&floors, &reports, &results)
}

/// What the hybrid grid would give if each profile chose its own default (measured, not
/// served: one default serves every profile), cross-validated the same way.
fn print_per_profile_choice(reports: &[ProfileReport], sets: &DevSets, config: &BundleConfig) {
    if reports.len() < 2 {
        return;
    }
    let grid = tuning::hybrid_grid(config);
    for report in reports {
        let Some((_, outcomes)) = report.grids.iter().find(|(m, _)| *m == RetrievalMode::Hybrid) else { continue };
        let per_point: Vec<Vec<Outcomes>> = outcomes.iter().map(|o| vec![o.clone()]).collect();
        let Some(result) = cross_validate(RetrievalMode::Hybrid, sets, &grid, &per_point) else { continue };
        let Some(cv) = result.cv.first() else { continue };
        let s = cv.scores_all();
        let mut out = format!("{} hybrid, its own choice (not served): overall {:.3}", mode_like(report.profile), s.section_recall(12));
        for c in Category::ALL {
            out.push_str(&format!("  {} {:.3}", c.name().to_lowercase(), s.category_recall(c, 12).0));
        }
        out.push_str(&format!("  pages {:.3} / {:.3}; folds chose {}; on all: {}", s.page_recall(5), s.page_mrr(), result.chosen.join(" | "), result.best));
        println!("{out}");
    }
}

fn mode_like(profile: Profile) -> String {
    format!("{profile:?}").to_lowercase()
}

/// The query encoder's CPU time per query, natively (one thread; built before timing); p50.
fn encoder_cpu(reader: &IndexReader<MemoryStore>, sets: &DevSets) -> Result<Option<f64>> {
    let Some(encoder) = pollster::block_on(wikantik::dense::query_encoder(reader))? else { return Ok(None) };
    let queries = sets.sections.iter().map(|q| q.query.as_str()).chain(sets.pages.iter().map(|q| q.query.as_str()));
    let mut times: Vec<f64> = queries
        .map(|q| {
            let t = thread_cpu_ms();
            let _ = pollster::block_on(wikantik::dense::embed_query(reader, &encoder, q));
            thread_cpu_ms() - t
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let p50 = times.get(times.len() / 2).copied().unwrap_or(0.0);
    let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
    println!("query encoder, {} profile (native, one thread, CPU): p50 {p50:.3} ms, mean {mean:.3} ms over {} queries", encoder.profile(), times.len());
    Ok(Some(p50))
}

fn dense_modes_scores(reader: &IndexReader<MemoryStore>, sets: &DevSets, config: &BundleConfig) -> Result<Vec<(RetrievalMode, Scores)>> {
    [RetrievalMode::Dense, RetrievalMode::Hybrid]
        .into_iter()
        .map(|mode| Ok((mode, pollster::block_on(systems::product(reader, sets, mode, config, false))?.scores_all())))
        .collect()
}

/// Export the baseline inputs, run the baseline command on them, and score its rankings.
fn run_baselines(reader: &IndexReader<MemoryStore>, sets: &DevSets, command: &str) -> Result<Vec<(String, Outcomes)>> {
    let dir = std::env::temp_dir().join(format!("wikantik-baselines-{}", std::process::id()));
    pollster::block_on(systems::export_baseline_inputs(reader, sets, &dir))?;
    let mut words = command.split_whitespace();
    let program = words.next().ok_or_else(|| BuildError::Invalid("--baseline-command is empty".into()))?;
    let status = std::process::Command::new(program)
        .args(words)
        .arg(&dir)
        .status()
        .map_err(|e| BuildError::Invalid(format!("cannot run the baseline command {command:?}: {e}")))?;
    if !status.success() {
        return Err(BuildError::Invalid(format!("the baseline command {command:?} failed ({status})")));
    }
    let rankings = systems::read_baseline_rankings(&dir.join("rankings.jsonl"))?;
    let mut out = Vec::new();
    for (system, label) in [("bm25", "baseline: bm25s"), ("rrf", "baseline: RRF(bm25s, MiniLM)")] {
        let ranking = rankings.get(system).ok_or_else(|| BuildError::Invalid(format!("the baseline command wrote no {system} rankings")))?;
        out.push((label.to_string(), pollster::block_on(systems::baseline(reader, sets, ranking))?));
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(out)
}

fn print_profile(report: &ProfileReport, index: usize, results: &[GridResult], baselines: &[(String, Outcomes)]) {
    let mut rows: Vec<(String, Scores)> = Vec::new();
    for (mode, outcomes) in &report.modes {
        rows.push((format!("{} (in-sample)", mode_name(*mode)), outcomes.scores_all()));
        if let Some(cv) = results.iter().find(|r| r.mode == *mode).and_then(|r| r.cv.get(index)) {
            rows.push((format!("{} ({FOLDS}-fold cv)", mode_name(*mode)), cv.scores_all()));
        }
    }
    for (label, outcomes) in baselines {
        rows.push((label.clone(), outcomes.scores_all()));
    }
    let table: Vec<(&str, &Scores)> = rows.iter().map(|(l, s)| (l.as_str(), s)).collect();
    let profile = mode_like(report.profile);
    println!("\n{}", sections_table(&format!("section-level, served /api/bundle ({profile} profile):"), &table));
    println!("{}", pages_table(&format!("page-level ({profile} profile):"), &table));
}

fn hybrid_cv(results: &[GridResult], index: usize) -> Option<&Outcomes> {
    results.iter().find(|r| r.mode == RetrievalMode::Hybrid).and_then(|r| r.cv.get(index))
}

fn print_summary(reports: &[ProfileReport], results: &[GridResult], baselines: &[(String, Outcomes)]) {
    println!("\n== summary (hybrid, {FOLDS}-fold cross-validated; section recall@12 per category; pages recall@5 / MRR; the section questions' first gold page MRR; retrieve_context recall@20 in-sample)");
    let line = |label: &str, s: &Scores, context: Option<f64>, encoder: Option<f64>| {
        let mut out = format!("{label:<30} overall {:.3}", s.section_recall(12));
        for c in Category::ALL {
            out.push_str(&format!("  {} {:.3}", c.name().to_lowercase(), s.category_recall(c, 12).0));
        }
        out.push_str(&format!("  pages {:.3} / {:.3}", s.page_recall(5), s.page_mrr()));
        if let Some(m) = s.question_page_mrr() {
            out.push_str(&format!("  question pages {m:.3}"));
        }
        if let Some(c) = context {
            out.push_str(&format!("  retrieve_context@20 {c:.3}"));
        }
        if let Some(ms) = encoder {
            out.push_str(&format!("  encoder {ms:.3} ms"));
        }
        println!("{out}");
    };
    for (i, r) in reports.iter().enumerate() {
        let Some(cv) = hybrid_cv(results, i) else { continue };
        let served = r.modes.iter().find(|(m, _)| *m == RetrievalMode::Hybrid).map(|(_, o)| o.scores_all());
        line(&format!("{} hybrid", mode_like(r.profile)), &cv.scores_all(), served.and_then(|s| s.context_recall(20)), r.encoder_ms);
    }
    for (label, outcomes) in baselines {
        line(label, &outcomes.scores_all(), None, None);
    }
}

fn check_floors(floors: &[Floor], reports: &[ProfileReport], results: &[GridResult]) -> Result<()> {
    let mut failures = Vec::new();
    for floor in floors {
        let Some((i, report)) = reports.iter().enumerate().find(|(_, r)| mode_like(r.profile) == floor.profile) else { continue };
        let (Some(cv), Some((_, served))) = (hybrid_cv(results, i), report.modes.iter().find(|(m, _)| *m == RetrievalMode::Hybrid)) else {
            continue;
        };
        if let Some(value) = floor.figure.value(&cv.scores_all(), &served.scores_all()) {
            if value + 1e-9 < floor.min {
                failures.push(format!("{} {} {value:.3} < floor {:.3}", floor.profile, floor.name, floor.min));
            }
        }
    }
    if failures.is_empty() {
        if !floors.is_empty() {
            println!("floors: all {} held", floors.len());
        }
        return Ok(());
    }
    Err(BuildError::Invalid(format!("retrieval quality regressed: {}", failures.join("; "))))
}

/// `--grid`: page-level figures and vector bytes fetched per cold query for a range of
/// probes (how `ivf::PROBE_SHARE` was chosen).
fn run_probe_grid(compiled: &CompiledIndex, exact: &IndexReader<MemoryStore>, sets: &DevSets, config: &BundleConfig, lists: usize) -> Result<()> {
    println!("probe grid ({lists} lists): probe, vector bytes per cold query, candidate recall@20/@{} vs exact, hybrid sections r@12, pages r@5 r@20 MRR", config.candidates);
    for probe in [1usize, 2, 4, 8, 12, 16, 24, 32, 48].into_iter().filter(|&p| p <= lists) {
        let probed = view(compiled, &[ShardKind::Ann], Some(probe as u32))?;
        let Some(report) = pollster::block_on(diagnostics::ivf_report(&probed, exact, &sets.pages, &[20, config.candidates]))? else { return Ok(()) };
        let hybrid = pollster::block_on(systems::product(&probed, sets, RetrievalMode::Hybrid, config, false))?.scores_all();
        let recall: Vec<String> = report.candidate_recall.iter().map(|(_, r)| format!("{r:.3}")).collect();
        println!(
            "  probe {probe:>2}: {:>9.0} B  candidates {}  hybrid {:.3}  {:.3} {:.3} {:.3}",
            report.fetched_bytes,
            recall.join(" / "),
            hybrid.section_recall(12),
            hybrid.page_recall(5),
            hybrid.page_recall(20),
            hybrid.page_mrr()
        );
    }
    Ok(())
}

/// The coverage-threshold calibration (`diagnostics::calibrate`) of this index's encoder.
fn run_calibration(reader: &IndexReader<MemoryStore>, config: &BundleConfig, report: &ProfileReport) -> Result<()> {
    use wikantik::access::Caller;
    use wikantik::bundle::ranked_sections;
    let caller = Caller::anonymous();
    let mut off_topic = Vec::new();
    for q in diagnostics::OFF_TOPIC_QUERIES {
        let (_, top) = pollster::block_on(ranked_sections(reader, q, RetrievalMode::Dense, config, &caller, 5))?;
        off_topic.push(top);
    }
    if let Some((_, dense)) = report.modes.iter().find(|(m, _)| *m == RetrievalMode::Dense) {
        let (_, table) = diagnostics::calibrate(&dense.pages.bundle, &dense.pages.top_similarity, &off_topic);
        println!("{} profile: {table}", mode_like(report.profile));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floors_parse_and_name_the_bad_line() {
        let dir = std::env::temp_dir().join(format!("wk-floors-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("floors.txt");
        std::fs::write(&path, "# c\nquality sections.r12.overall 0.85\nlite sections.r12.identifier 0.9 # id\nquality pages.mrr 0.75\nquality context.r20 0.975\n").unwrap();
        let floors = read_floors(&path).unwrap();
        assert_eq!(floors.len(), 4);
        assert_eq!(floors[1].figure, Figure::Sections(12, Some(Category::Identifier)));
        assert_eq!(floors[3].figure, Figure::ContextRecall(20));
        std::fs::write(&path, "quality sections.r12.nope 0.5\n").unwrap();
        assert!(read_floors(&path).unwrap_err().to_string().ends_with("floors.txt:1: unknown figure \"sections.r12.nope\""));
        std::fs::write(&path, "heavy pages.r5 0.5\n").unwrap();
        assert!(read_floors(&path).unwrap_err().to_string().contains("floors.txt:1: unknown profile"));
        std::fs::write(&path, "quality pages.r5 1.5\n").unwrap();
        assert!(read_floors(&path).unwrap_err().to_string().contains("not a number in [0, 1]"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
