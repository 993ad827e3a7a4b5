//! Running the dev questions through a system and recording its [`Outcomes`]: the product
//! (one retrieval mode under one configuration, through the surfaces an agent calls) and the
//! plain baselines (section rankings computed outside, scored the same way).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};
use wikantik::access::Caller;
use wikantik::bundle::{ranked_sections, BundleConfig, RetrievalMode};
use wikantik::lexical::{ScoredSection, SectionKey};
use wikantik::mcp::{ToolHost, ToolOutcome};
use wikantik::reader::{IndexReader, ShardStore};
use wikantik::retrieval::hydrate;

use super::outcome::Outcomes;
use super::sections::{first_hit, SectionQuestion};
use super::EvalQuery;
use crate::error::{BuildError, Result};

/// Sections a bundle returns by default (the section set's recall@12 is measured on them).
pub const BUNDLE_SECTIONS: usize = 12;
/// How deep the bundle's ranking is read for the page-level figures (pages in order of their
/// best section; recall@20 needs more pages than a 12-section bundle holds).
pub const PAGE_DEPTH_SECTIONS: usize = 200;
/// Pages asked of `retrieve_context` (its maximum).
pub const CONTEXT_PAGES: usize = 20;

/// The dev questions: section-level and page-level.
#[derive(Debug, Clone, Default)]
pub struct DevSets {
    pub sections: Vec<SectionQuestion>,
    pub pages: Vec<EvalQuery>,
}

impl DevSets {
    fn empty_outcomes(&self) -> Outcomes {
        Outcomes { categories: self.sections.iter().map(|q| q.category).collect(), ..Outcomes::default() }
    }
}

/// A returned section as the scoring rule reads it.
type Returned = (String, Vec<String>);

fn hits(question: &SectionQuestion, returned: &[Returned]) -> Vec<Option<usize>> {
    question.golds.iter().map(|gold| first_hit(gold, returned.iter().map(|(s, p)| (s.as_str(), p.as_slice())))).collect()
}

/// Pages in order of first appearance.
fn page_order<'a>(slugs: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen = BTreeSet::new();
    slugs.into_iter().filter(|s| seen.insert(*s)).collect()
}

fn rank_of(pages: &[&str], ideal: &str) -> Option<usize> {
    pages.iter().position(|p| *p == ideal).map(|i| i + 1)
}

/// The rank of the question's first gold page among the pages of `returned`, in order.
fn first_gold_page(question: &SectionQuestion, returned: &[Returned]) -> Option<usize> {
    let golds: BTreeSet<String> = question.golds.iter().map(|g| super::sections::normalise(&g.slug)).collect();
    page_order(returned.iter().map(|r| r.0.as_str())).iter().position(|p| golds.contains(&super::sections::normalise(p))).map(|i| i + 1)
}

/// The product in one mode under `config`: each section question's bundle (the default 12
/// sections), each page query's bundle ranking read [`PAGE_DEPTH_SECTIONS`] deep and, when
/// `with_context`, its `retrieve_context` page list (the MCP tool, [`CONTEXT_PAGES`] pages).
pub async fn product<S: ShardStore>(reader: &IndexReader<S>, sets: &DevSets, mode: RetrievalMode, config: &BundleConfig, with_context: bool) -> Result<Outcomes> {
    let caller = Caller::anonymous();
    let mut out = sets.empty_outcomes();
    for q in &sets.sections {
        let (sections, _) = ranked_sections(reader, &q.query, mode, config, &caller, BUNDLE_SECTIONS).await?;
        let returned: Vec<Returned> = sections.into_iter().map(|s| (s.slug, s.heading_path)).collect();
        out.sections.push(hits(q, &returned));
        out.question_pages.push(first_gold_page(q, &returned));
    }
    for q in &sets.pages {
        let (sections, top) = ranked_sections(reader, &q.query, mode, config, &caller, PAGE_DEPTH_SECTIONS).await?;
        out.pages.bundle.push(rank_of(&page_order(sections.iter().map(|s| s.slug.as_str())), &q.ideal_page));
        out.pages.top_similarity.push(top);
    }
    if with_context {
        for q in &sets.pages {
            let pages = retrieve_context(reader, config, &q.query).await?;
            out.pages.retrieve_context.push(rank_of(&pages.iter().map(String::as_str).collect::<Vec<_>>(), &q.ideal_page));
        }
    }
    Ok(out)
}

/// The page slugs `retrieve_context` answers for `query` (maxPages 20), through the MCP tool
/// host with `config` as its bundle settings.
pub async fn retrieve_context<S: ShardStore>(reader: &IndexReader<S>, config: &BundleConfig, query: &str) -> Result<Vec<String>> {
    let briefing = wikantik::briefing::BriefingConfig::default();
    let tools = wikantik::tools::KnowledgeTools { reader, bundle: config, briefing: &briefing };
    let args = json!({ "query": query, "maxPages": CONTEXT_PAGES, "chunksPerPage": 1 });
    match tools.call("retrieve_context", &args, &Caller::anonymous()).await {
        ToolOutcome::Json(value) => Ok(value["pages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("name").and_then(Value::as_str).map(str::to_string))
            .collect()),
        other => Err(BuildError::Invalid(format!("retrieve_context failed for {query:?}: {other:?}"))),
    }
}

/// The sections `/api/bundle` serves for every section question in `mode` (through
/// `service::handle`, as a function answers an agent). The evaluation checks them against
/// [`product`]'s, so the figures it reports are the served ones.
pub async fn served_bundles<S: ShardStore>(reader: &IndexReader<S>, sets: &DevSets, mode: RetrievalMode, config: &BundleConfig) -> Result<Vec<Vec<Returned>>> {
    let mut service = wikantik::service::ServiceConfig::default();
    service.rest.bundle = *config;
    let mode = format!("{mode:?}").to_lowercase();
    let mut out = Vec::with_capacity(sets.sections.len());
    for q in &sets.sections {
        let encoded: String = url::form_urlencoded::byte_serialize(q.query.as_bytes()).collect();
        let request = wikantik::http::Request::new("GET", &format!("/api/bundle?q={encoded}&mode={mode}"));
        let response = wikantik::service::handle(Ok(reader), &request, &service).await;
        let body: Value = serde_json::from_slice(&response.body).map_err(|e| BuildError::Invalid(format!("/api/bundle for {:?}: {e}", q.query)))?;
        if response.status != 200 {
            return Err(BuildError::Invalid(format!("/api/bundle for {:?} answered {}: {body}", q.query, response.status)));
        }
        let returned = body["sections"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| {
                let slug = s["slug"].as_str().unwrap_or_default().to_string();
                let path = s["headingPath"].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect();
                (slug, path)
            })
            .collect();
        out.push(returned);
    }
    Ok(out)
}

/// Check that the served bundles give exactly the outcomes [`product`] recorded.
pub fn check_served(sets: &DevSets, served: &[Vec<Returned>], recorded: &Outcomes, label: &str) -> Result<()> {
    for ((q, returned), golds) in sets.sections.iter().zip(served).zip(&recorded.sections) {
        if &hits(q, returned) != golds {
            return Err(BuildError::Invalid(format!("{label}: /api/bundle differs from the evaluated ranking for {} ({:?})", q.id, q.query)));
        }
    }
    Ok(())
}

/// A baseline's outcomes from its section rankings (keys best first, by question id: the
/// section questions' ids, and `p<n>` for the n-th page query), de-duplicated by page and
/// heading path exactly as bundles are.
pub async fn baseline<S: ShardStore>(reader: &IndexReader<S>, sets: &DevSets, rankings: &BTreeMap<String, Vec<SectionKey>>) -> Result<Outcomes> {
    let mut out = sets.empty_outcomes();
    let distinct = |keys: &[SectionKey], depth: usize| {
        let scored: Vec<ScoredSection> = keys.iter().map(|&key| ScoredSection { key, score: 0.0 }).collect();
        async move {
            let mut seen = BTreeSet::new();
            let hits = hydrate(reader, &scored).await?;
            Ok::<Vec<Returned>, BuildError>(hits.into_iter().map(|h| (h.slug, h.heading_path)).filter(|r| seen.insert(r.clone())).take(depth).collect())
        }
    };
    let none = Vec::new();
    for q in &sets.sections {
        let returned = distinct(rankings.get(&q.id).unwrap_or(&none), BUNDLE_SECTIONS).await?;
        out.sections.push(hits(q, &returned));
        out.question_pages.push(first_gold_page(q, &returned));
    }
    for (i, q) in sets.pages.iter().enumerate() {
        let returned = distinct(rankings.get(&page_query_id(i)).unwrap_or(&none), PAGE_DEPTH_SECTIONS).await?;
        out.pages.bundle.push(rank_of(&page_order(returned.iter().map(|r| r.0.as_str())), &q.ideal_page));
    }
    Ok(out)
}

/// The id of the i-th page-level query in the baseline files.
pub fn page_query_id(i: usize) -> String {
    format!("p{}", i + 1)
}

/// Write the baseline script's inputs into `dir`: every section of the index with its page's
/// title, summary, tags and primary cluster (`sections.jsonl`), and every dev question with its plain-cosine
/// section ranking (`queries.jsonl`: the query encoder's embedding against every section
/// vector, exactly, no page cards).
pub async fn export_baseline_inputs<S: ShardStore>(reader: &IndexReader<S>, sets: &DevSets, dir: &std::path::Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| BuildError::io(dir, e))?;
    let pages = reader.pages().await?;
    let mut sections = String::new();
    for record in &pages.pages {
        let shard = reader.sections(record.partition).await?;
        let Some(page) = shard.page(record.key) else { continue };
        for (i, section) in page.sections.iter().enumerate() {
            let line = json!({
                "key": format!("{:016x}", SectionKey::new(record.key, i as u32).0),
                "slug": record.slug,
                "title": record.title,
                "summary": record.summary,
                "tags": record.tags,
                "cluster": record.clusters.first(),
                "heading_path": section.heading_path,
                "text": section.text,
            });
            sections.push_str(&line.to_string());
            sections.push('\n');
        }
    }
    let partitions = reader.vectors().await?;
    let mut queries = String::new();
    let questions = sets.sections.iter().map(|q| (q.id.clone(), q.query.as_str())).chain(sets.pages.iter().enumerate().map(|(i, q)| (page_query_id(i), q.query.as_str())));
    for (id, query) in questions {
        let dense: Vec<String> = match wikantik::dense::query_vector(reader, query).await? {
            Some(vector) => wikantik::dense::scan_partitions(&partitions, &vector, PAGE_DEPTH_SECTIONS)?.into_iter().map(|(k, _)| format!("{:016x}", k.0)).collect(),
            None => Vec::new(),
        };
        queries.push_str(&json!({ "id": id, "query": query, "dense": dense }).to_string());
        queries.push('\n');
    }
    for (name, text) in [("sections.jsonl", sections), ("queries.jsonl", queries)] {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| BuildError::io(&path, e))?;
    }
    Ok(())
}

/// Read the baseline script's `rankings.jsonl`: per system, per question id, section keys.
pub fn read_baseline_rankings(path: &std::path::Path) -> Result<BTreeMap<String, BTreeMap<String, Vec<SectionKey>>>> {
    let text = std::fs::read_to_string(path).map_err(|e| BuildError::io(path, e))?;
    let mut out: BTreeMap<String, BTreeMap<String, Vec<SectionKey>>> = BTreeMap::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let invalid = |what: &str| BuildError::Invalid(format!("{}:{}: {what}", path.display(), i + 1));
        let value: Value = serde_json::from_str(line).map_err(|e| invalid(&e.to_string()))?;
        let (Some(id), Some(system), Some(ranking)) = (value["id"].as_str(), value["system"].as_str(), value["ranking"].as_array()) else {
            return Err(invalid("expected {\"id\", \"system\", \"ranking\"}"));
        };
        let keys = ranking
            .iter()
            .map(|k| k.as_str().and_then(|k| u64::from_str_radix(k, 16).ok()).map(SectionKey).ok_or_else(|| invalid("a section key is not a hex string")))
            .collect::<Result<Vec<_>>>()?;
        out.entry(system.to_string()).or_default().insert(id.to_string(), keys);
    }
    Ok(out)
}
