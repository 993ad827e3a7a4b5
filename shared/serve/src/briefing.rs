//! Session briefings (REFERENCE §1, CONTRACT §3.1): budgeted standing context for the start
//! of an agent session — prompt-relevant sections, pinned pages, and cluster members, in that
//! order, within a token budget.
//!
//! The ACL gate is applied *before* assembly (the reference applied it after): restricted
//! pages never take part, so they cannot consume budget, turn later items into pointers, count
//! as cluster members, or shift the member order. The visible result is therefore exactly the
//! briefing the caller would get if the restricted pages did not exist.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use wikantik_access::access::Caller;
use crate::bundle::{assemble_bundle, BundleConfig, BundleRequest, BundleSection, RetrievalMode};
use wikantik_format::payload::BodyPartition;
use crate::coverage::Coverage;
use wikantik_format::error::{Error, Result};
use crate::reader::{IndexReader, ShardStore};
use crate::page_catalog::{ListedPage, PageCatalog};
use wikantik_format::tokens::estimate_tokens;

/// `prefer` (in-scope sections first) | `strict` (in-scope sections only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScopeMode {
    #[default]
    Prefer,
    Strict,
}

impl ScopeMode {
    /// Blank = prefer; otherwise `prefer`/`strict`, case-insensitive.
    pub fn parse(raw: Option<&str>) -> Result<ScopeMode> {
        match raw.map(str::trim) {
            None | Some("") => Ok(ScopeMode::Prefer),
            Some(s) if s.eq_ignore_ascii_case("prefer") => Ok(ScopeMode::Prefer),
            Some(s) if s.eq_ignore_ascii_case("strict") => Ok(ScopeMode::Strict),
            Some(_) => Err(Error::Invalid(format!("Unknown scope_mode: {}", raw.unwrap_or_default()))),
        }
    }
}

/// Limits and defaults (REFERENCE §1.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BriefingConfig {
    pub default_budget: i64,
    pub max_budget: i64,
    pub min_budget: i64,
    pub max_pins: usize,
    pub max_clusters: usize,
    pub max_cluster_members: usize,
    /// Once fewer tokens than this remain, cluster members become pointers unread.
    pub pointer_only_floor: i64,
}

impl Default for BriefingConfig {
    fn default() -> Self {
        BriefingConfig {
            default_budget: 6000,
            max_budget: 24_000,
            min_budget: 200,
            max_pins: 25,
            max_clusters: 10,
            max_cluster_members: 200,
            pointer_only_floor: 50,
        }
    }
}

/// A briefing request. At least one of pins, clusters, prompt is required.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BriefingRequest {
    /// Page slugs or canonical ids, in request order.
    pub pins: Vec<String>,
    pub clusters: Vec<String>,
    pub prompt: Option<String>,
    pub budget: Option<i64>,
    pub scope_mode: ScopeMode,
}

impl BriefingRequest {
    pub fn has_any_source(&self) -> bool {
        !self.pins.is_empty() || !self.clusters.is_empty() || self.prompt.as_deref().is_some_and(|p| !p.trim().is_empty())
    }
}

/// `pin` | `cluster`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    Pin,
    Cluster,
}

/// A pinned or cluster page: its body when included, else a pointer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BriefingItem {
    pub slug: String,
    pub canonical_id: String,
    pub title: String,
    pub summary: String,
    pub origin: Origin,
    pub included: bool,
    /// The raw page text (frontmatter included) when included; `null` for a pointer.
    pub content: Option<String>,
}

/// The briefing (REFERENCE §1.7 shape, plus `indexBuild`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextBriefing {
    pub prompt: Option<String>,
    pub sections: Vec<BundleSection>,
    pub coverage: Coverage,
    pub items: Vec<BriefingItem>,
    pub warnings: Vec<String>,
    pub budget_tokens: i64,
    pub used_tokens: i64,
    pub index_build: String,
}

/// Assemble a briefing for `caller`.
pub async fn assemble_briefing<S: ShardStore>(
    reader: &IndexReader<S>,
    request: &BriefingRequest,
    config: &BriefingConfig,
    bundle_config: &BundleConfig,
    caller: &Caller,
) -> Result<ContextBriefing> {
    if !request.has_any_source() {
        return Err(Error::Invalid("at least one of pins, clusters, prompt is required".into()));
    }
    let mut warnings = Vec::new();
    let pins: Vec<&String> = request.pins.iter().take(config.max_pins).collect();
    if request.pins.len() > config.max_pins {
        warnings.push(format!("too many pins; first {} included", config.max_pins));
    }
    let clusters: Vec<&String> = request.clusters.iter().take(config.max_clusters).collect();
    if request.clusters.len() > config.max_clusters {
        warnings.push(format!("too many clusters; first {} included", config.max_clusters));
    }
    let budget = request.budget.unwrap_or(config.default_budget).clamp(config.min_budget, config.max_budget);

    // The prompt's bundle, and what pins and clusters need — their pages' records, and each
    // cluster's members in briefing order (from its card) — are fetched concurrently; a
    // prompt-only briefing (what the hooks send by default) reads none of them.
    let prompt = request.prompt.as_deref().filter(|p| !p.trim().is_empty());
    let standing = async {
        if pins.is_empty() && clusters.is_empty() {
            return Ok(Standing::default());
        }
        let catalog = PageCatalog::open(reader).await?;
        let pinned = resolve_pins(&catalog, caller, &pins).await?;
        let orders = futures_util::future::try_join_all(clusters.iter().map(|cluster| catalog.briefing_members(caller, cluster))).await?;
        let members: BTreeMap<&str, Vec<ListedPage>> = clusters.iter().map(|cluster| cluster.as_str()).zip(orders).collect();
        Ok::<_, Error>(Standing { pinned, members })
    };
    let bundle = async {
        let query = prompt?;
        let bundle_request = BundleRequest { query: query.to_string(), mode: RetrievalMode::Hybrid, k: None, budget: None };
        Some(assemble_bundle(reader, &bundle_request, bundle_config, caller).await)
    };
    let (standing, bundle) = futures_util::join!(standing, bundle);
    let Standing { pinned, members } = standing?;
    let mut unknown_clusters: BTreeSet<String> = BTreeSet::new();

    let mut ledger = Ledger { budget, used: 0, sections: Vec::new(), coverage: Coverage::empty(), items: Vec::new() };

    // Phase 1: prompt-refined sections.
    if let Some(bundle) = bundle {
        match bundle {
            // A damaged or unreadable shard is the deployment's problem: report it (503)
            // rather than serve a briefing silently missing its prompt sections.
            Err(e) if e.is_index_fault() => return Err(e),
            Err(_) => warnings.push("bundle assembly failed; briefing degraded to pins/clusters".into()),
            Ok(bundle) => {
                let mut ordered = bundle.sections.clone();
                if !clusters.is_empty() {
                    let mut scope: BTreeSet<&str> = BTreeSet::new();
                    for cluster in &clusters {
                        let list = members.get(cluster.as_str()).map(Vec::as_slice).unwrap_or_default();
                        if list.is_empty() && unknown_clusters.insert(cluster.to_string()) {
                            warnings.push(format!("unknown cluster: {cluster}"));
                        }
                        scope.extend(list.iter().map(|page| page.slug.as_str()));
                    }
                    let (inside, outside): (Vec<BundleSection>, Vec<BundleSection>) =
                        ordered.into_iter().partition(|s| scope.contains(s.slug.as_str()));
                    ordered = match request.scope_mode {
                        ScopeMode::Strict => inside,
                        ScopeMode::Prefer => inside.into_iter().chain(outside).collect(),
                    };
                }
                for section in ordered {
                    let est = estimate_tokens(&section.text) as i64;
                    if ledger.used + est > ledger.budget {
                        break;
                    }
                    ledger.used += est;
                    ledger.sections.push(section);
                }
                ledger.coverage = bundle.coverage.recount(&ledger.sections);
            }
        }
    }

    // Bodies are read lazily, one partition at a time.
    let mut bodies = Bodies { reader, loaded: BTreeMap::new() };

    // Phase 2: pins.
    for page in pinned.iter().flatten() {
        if ledger.emitted(&page.slug) {
            continue;
        }
        let est = i64::from(page.body_tokens);
        let own: i64 = ledger.sections.iter().filter(|s| s.slug == page.slug).map(|s| estimate_tokens(&s.text) as i64).sum();
        let has_own = ledger.sections.iter().any(|s| s.slug == page.slug);
        if has_own && ledger.used - own + est <= ledger.budget {
            ledger.sections.retain(|s| s.slug != page.slug);
            ledger.used -= own;
            ledger.coverage = ledger.coverage.recount(&ledger.sections);
            let body = bodies.text(page).await?;
            ledger.include(page, Origin::Pin, body, est);
        } else if ledger.used + est <= ledger.budget {
            let body = bodies.text(page).await?;
            ledger.include(page, Origin::Pin, body, est);
        } else {
            ledger.pointer(page, Origin::Pin);
        }
    }

    // Phase 3: cluster members, hub first.
    for cluster in &clusters {
        let list = members.get(cluster.as_str()).cloned().unwrap_or_default();
        if list.is_empty() {
            if unknown_clusters.insert(cluster.to_string()) {
                warnings.push(format!("unknown cluster: {cluster}"));
            }
            continue;
        }
        if list.len() > config.max_cluster_members {
            warnings.push(format!("too many members in cluster {cluster}; first {} included", config.max_cluster_members));
        }
        for page in list.iter().take(config.max_cluster_members) {
            if ledger.emitted(&page.slug) {
                continue;
            }
            if ledger.budget - ledger.used < config.pointer_only_floor {
                ledger.pointer(page, Origin::Cluster);
                continue;
            }
            let est = i64::from(page.body_tokens);
            if ledger.used + est <= ledger.budget {
                let body = bodies.text(page).await?;
                ledger.include(page, Origin::Cluster, body, est);
            } else {
                ledger.pointer(page, Origin::Cluster);
            }
        }
    }

    // The gate's bookkeeping: unknown pins (nonexistent, restricted and cap-dropped look the
    // same), and the token total recomputed from what is returned.
    let mut warned: BTreeSet<&str> = BTreeSet::new();
    for pin in &request.pins {
        let matched = ledger.items.iter().any(|i| &i.slug == pin || &i.canonical_id == pin);
        if !matched && warned.insert(pin.as_str()) {
            let warning = format!("unknown pin: {pin}");
            #[cfg(feature = "acl-mutation")]
            let warning = wikantik_format::mutation::restricted_wording(&*reader.pages().await?, pin).unwrap_or(warning);
            warnings.push(warning);
        }
    }
    let used_tokens = ledger.sections.iter().map(|s| estimate_tokens(&s.text) as i64).sum::<i64>()
        + ledger.items.iter().filter_map(|i| i.content.as_deref()).map(|c| estimate_tokens(c) as i64).sum::<i64>();
    Ok(ContextBriefing {
        prompt: prompt.map(str::to_string),
        sections: ledger.sections,
        coverage: ledger.coverage,
        items: ledger.items,
        warnings,
        budget_tokens: budget,
        used_tokens,
        index_build: reader.build_id().to_string(),
    })
}

/// What pins and clusters contribute: the pinned pages (`None` for a pin naming no page the
/// caller may view) and each requested cluster's visible members in briefing order.
#[derive(Default)]
struct Standing<'q> {
    pinned: Vec<Option<ListedPage>>,
    members: BTreeMap<&'q str, Vec<ListedPage>>,
}

/// Each pin's page: the one with that slug if `caller` may view it, else the one with that
/// canonical id if `caller` may view it.
async fn resolve_pins<S: ShardStore>(catalog: &PageCatalog<'_, S>, caller: &Caller, pins: &[&String]) -> Result<Vec<Option<ListedPage>>> {
    let slugs: Vec<&str> = pins.iter().map(|p| p.as_str()).collect();
    let by_slug = catalog.by_slugs(&slugs).await?;
    let mut pinned = Vec::with_capacity(pins.len());
    for (pin, page) in slugs.iter().zip(by_slug) {
        let page = match page.filter(|p| caller.can_view(p)) {
            Some(page) => Some(page),
            None => catalog.viewable_by_id(caller, pin).await?,
        };
        pinned.push(page.as_ref().map(ListedPage::of));
    }
    Ok(pinned)
}

struct Ledger {
    budget: i64,
    used: i64,
    sections: Vec<BundleSection>,
    coverage: Coverage,
    items: Vec<BriefingItem>,
}

impl Ledger {
    fn emitted(&self, slug: &str) -> bool {
        self.items.iter().any(|i| i.slug == slug)
    }

    fn include(&mut self, page: &ListedPage, origin: Origin, body: String, est: i64) {
        self.used += est;
        self.items.push(item(page, origin, Some(body)));
    }

    fn pointer(&mut self, page: &ListedPage, origin: Origin) {
        self.items.push(item(page, origin, None));
    }
}

fn item(page: &ListedPage, origin: Origin, content: Option<String>) -> BriefingItem {
    BriefingItem {
        slug: page.slug.clone(),
        canonical_id: page.canonical_id.clone(),
        title: page.title.clone(),
        summary: page.summary.clone(),
        origin,
        included: content.is_some(),
        content,
    }
}

struct Bodies<'r, S> {
    reader: &'r IndexReader<S>,
    loaded: BTreeMap<u32, Arc<BodyPartition>>,
}

impl<S: ShardStore> Bodies<'_, S> {
    async fn text(&mut self, page: &ListedPage) -> Result<String> {
        if !self.loaded.contains_key(&page.partition) {
            let partition = self.reader.bodies(page.partition).await?;
            self.loaded.insert(page.partition, partition);
        }
        self.loaded
            .get(&page.partition)
            .and_then(|p| p.page(page.key))
            .map(|b| b.text.clone())
            .ok_or_else(|| Error::MissingShard { name: format!("body of {} (bodies partition {})", page.slug, page.partition) })
    }
}

/// Render a briefing as markdown (REFERENCE §1.6).
pub fn render_markdown(briefing: &ContextBriefing) -> String {
    let c = &briefing.coverage;
    let mut out = String::new();
    out.push_str("# Wiki context briefing\n");
    out.push_str(&format!(
        "_Coverage: {} \u{2014} {} sections across {} pages. Deepen with `assemble_bundle(\"<question>\")`; fetch full pages with `read_pages`._\n",
        c.confidence.as_str(),
        c.section_count,
        c.distinct_page_count
    ));
    if !briefing.sections.is_empty() {
        out.push_str("\n## Task-relevant sections\n");
        for s in &briefing.sections {
            let mut heading = s.slug.clone();
            for h in &s.heading_path {
                heading.push_str(" \u{203a} ");
                heading.push_str(h);
            }
            out.push_str(&format!(
                "\n### {heading} ({} @ v{})\n\n{}\n",
                s.citation.canonical_id, s.citation.version, s.text
            ));
        }
    }
    let included: Vec<&BriefingItem> = briefing.items.iter().filter(|i| i.included).collect();
    if !included.is_empty() {
        out.push_str("\n## Standing context\n");
        for i in included {
            out.push_str(&format!("\n### {} (`{}`)\n\n{}\n", i.title, i.slug, i.content.as_deref().unwrap_or("")));
        }
    }
    let pointers: Vec<&BriefingItem> = briefing.items.iter().filter(|i| !i.included).collect();
    if !pointers.is_empty() {
        out.push_str("\n## Available on request\n\n");
        for p in pointers {
            out.push_str(&format!("- **{}** (`{}`)", p.title, p.slug));
            if !p.summary.trim().is_empty() {
                out.push_str(&format!(" \u{2014} {}", p.summary));
            }
            out.push('\n');
        }
    }
    if !briefing.warnings.is_empty() {
        out.push_str(&format!("\n> Briefing warnings: {}\n", briefing.warnings.join("; ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::Citation;
    use crate::coverage::Confidence;

    fn section(slug: &str, id: &str, path: &[&str], text: &str) -> BundleSection {
        let heading_path: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        BundleSection {
            canonical_id: id.into(),
            slug: slug.into(),
            heading_path: heading_path.clone(),
            text: text.into(),
            score: 0.7,
            citation: Citation {
                canonical_id: id.into(),
                version: 2,
                heading_path,
                span: text.into(),
                span_sha256: wikantik_format::hashing::sha256_hex(text.as_bytes()),
            },
        }
    }

    fn briefing() -> ContextBriefing {
        ContextBriefing {
            prompt: Some("how do we bill".into()),
            sections: vec![section("BillingProcess", "01KAAAAAAAAAAAAAAAAAAAAAAA", &["Billing Process", "Invoices"], "Invoices go out monthly.")],
            coverage: Coverage { section_count: 1, distinct_page_count: 1, top_similarity: 0.61, confidence: Confidence::Partial },
            items: vec![
                BriefingItem {
                    slug: "Runbook".into(),
                    canonical_id: "01KBBBBBBBBBBBBBBBBBBBBBBB".into(),
                    title: "The Runbook".into(),
                    summary: "Steps.".into(),
                    origin: Origin::Pin,
                    included: true,
                    content: Some("---\ntitle: The Runbook\n---\nDo it.".into()),
                },
                BriefingItem {
                    slug: "Later".into(),
                    canonical_id: "01KCCCCCCCCCCCCCCCCCCCCCCC".into(),
                    title: "Later Page".into(),
                    summary: "Read on demand.".into(),
                    origin: Origin::Cluster,
                    included: false,
                    content: None,
                },
                BriefingItem {
                    slug: "Bare".into(),
                    canonical_id: "01KDDDDDDDDDDDDDDDDDDDDDDD".into(),
                    title: "Bare".into(),
                    summary: " ".into(),
                    origin: Origin::Cluster,
                    included: false,
                    content: None,
                },
            ],
            warnings: vec!["unknown pin: Nope".into(), "unknown cluster: x".into()],
            budget_tokens: 6000,
            used_tokens: 20,
            index_build: "b".into(),
        }
    }

    #[test]
    fn markdown_golden_full() {
        let expected = "# Wiki context briefing\n\
_Coverage: partial \u{2014} 1 sections across 1 pages. Deepen with `assemble_bundle(\"<question>\")`; fetch full pages with `read_pages`._\n\
\n## Task-relevant sections\n\
\n### BillingProcess \u{203a} Billing Process \u{203a} Invoices (01KAAAAAAAAAAAAAAAAAAAAAAA @ v2)\n\nInvoices go out monthly.\n\
\n## Standing context\n\
\n### The Runbook (`Runbook`)\n\n---\ntitle: The Runbook\n---\nDo it.\n\
\n## Available on request\n\n\
- **Later Page** (`Later`) \u{2014} Read on demand.\n\
- **Bare** (`Bare`)\n\
\n> Briefing warnings: unknown pin: Nope; unknown cluster: x\n";
        assert_eq!(render_markdown(&briefing()), expected);
    }

    #[test]
    fn markdown_golden_empty() {
        let empty = ContextBriefing {
            prompt: None,
            sections: vec![],
            coverage: Coverage::empty(),
            items: vec![],
            warnings: vec![],
            budget_tokens: 6000,
            used_tokens: 0,
            index_build: "b".into(),
        };
        assert_eq!(
            render_markdown(&empty),
            "# Wiki context briefing\n_Coverage: unknown \u{2014} 0 sections across 0 pages. Deepen with `assemble_bundle(\"<question>\")`; fetch full pages with `read_pages`._\n"
        );
    }

    #[test]
    fn section_heading_without_path_is_just_the_slug() {
        let mut b = briefing();
        b.sections[0].heading_path.clear();
        assert!(render_markdown(&b).contains("\n### BillingProcess (01KAAAAAAAAAAAAAAAAAAAAAAA @ v2)\n"));
    }

    #[test]
    fn json_shape_matches_the_reference() {
        let json = serde_json::to_value(briefing()).unwrap();
        for key in ["prompt", "sections", "coverage", "items", "warnings", "budgetTokens", "usedTokens", "indexBuild"] {
            assert!(json.get(key).is_some(), "{key}");
        }
        assert_eq!(json["items"][1]["content"], serde_json::Value::Null, "pointers keep content: null");
        assert_eq!(json["items"][0]["origin"], "pin");
        assert_eq!(json["items"][1]["included"], false);
    }

    #[test]
    fn scope_mode_parsing() {
        assert_eq!(ScopeMode::parse(None).unwrap(), ScopeMode::Prefer);
        assert_eq!(ScopeMode::parse(Some("STRICT")).unwrap(), ScopeMode::Strict);
        assert_eq!(ScopeMode::parse(Some("wide")).unwrap_err().to_string(), "Unknown scope_mode: wide");
    }
}
