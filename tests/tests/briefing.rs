//! Briefing assembly over real shards: the reference's `DefaultBriefingAssemblyServiceTest`
//! and `BriefingAclGateTest` behaviours, ported as our own cases (with our cluster order and
//! our gate-before-assembly rule).

use wikantik::access::Caller;
use wikantik::briefing::{assemble_briefing, render_markdown, BriefingConfig, BriefingRequest, ContextBriefing, Origin, ScopeMode};
use wikantik::bundle::BundleConfig;
use wikantik::tokens::estimate_tokens;
use wikantik_tests::{block_on, build_sample, build_wiki, open, page};

fn brief(index: &std::path::Path, request: &BriefingRequest, caller: &Caller) -> ContextBriefing {
    let reader = open(index);
    block_on(assemble_briefing(&reader, request, &BriefingConfig::default(), &BundleConfig::default(), caller)).expect("briefing")
}

fn anon() -> Caller {
    Caller::anonymous()
}

fn pins(p: &[&str]) -> BriefingRequest {
    BriefingRequest { pins: p.iter().map(|s| s.to_string()).collect(), ..Default::default() }
}

#[test]
fn no_source_is_an_error() {
    let index = build_sample("brief-empty");
    let reader = open(&index);
    let err = block_on(assemble_briefing(&reader, &BriefingRequest::default(), &BriefingConfig::default(), &BundleConfig::default(), &anon()))
        .unwrap_err();
    assert_eq!(err.to_string(), "at least one of pins, clusters, prompt is required");
}

#[test]
fn budget_is_clamped_and_defaulted() {
    let index = build_sample("brief-budget");
    let mut r = pins(&["Glossary"]);
    assert_eq!(brief(&index, &r, &anon()).budget_tokens, 6000);
    r.budget = Some(10);
    assert_eq!(brief(&index, &r, &anon()).budget_tokens, 200);
    r.budget = Some(-5);
    assert_eq!(brief(&index, &r, &anon()).budget_tokens, 200);
    r.budget = Some(999_999);
    assert_eq!(brief(&index, &r, &anon()).budget_tokens, 24_000);
}

#[test]
fn a_pin_is_included_in_full_with_frontmatter_title_and_summary() {
    let index = build_sample("brief-pin");
    let b = brief(&index, &pins(&["Bm25Index"]), &anon());
    assert_eq!(b.items.len(), 1);
    let item = &b.items[0];
    assert_eq!((item.origin, item.included), (Origin::Pin, true));
    let raw = std::fs::read_to_string(wikantik_tests::sample_wiki().join("Bm25Index.md")).unwrap();
    assert_eq!(item.content.as_deref(), Some(raw.as_str()), "the raw page, frontmatter included");
    assert!(item.title.len() > 3 && item.title != "Bm25Index", "frontmatter title");
    assert!(!item.summary.is_empty());
    assert_eq!(b.used_tokens, estimate_tokens(&raw) as i64);
    assert!(b.warnings.is_empty());
    assert_eq!(b.coverage.confidence.as_str(), "unknown");
}

#[test]
fn a_pin_over_budget_becomes_a_pointer_after_the_budget_is_clamped() {
    let long = "word ".repeat(2000);
    let index = build_wiki("brief-long-pin", &[page("Long.md", "title: Long page\nsummary: A long page.", &format!("# Long\n\n{long}"))]);
    let mut r = pins(&["Long"]);
    r.budget = Some(10);
    let b = brief(&index, &r, &anon());
    assert_eq!(b.budget_tokens, 200);
    assert_eq!(b.items.len(), 1);
    assert!(!b.items[0].included);
    assert_eq!(b.items[0].content, None);
    assert_eq!(b.used_tokens, 0);
    assert!(render_markdown(&b).contains("## Available on request\n\n- **Long page** (`Long`) — A long page.\n"));
}

#[test]
fn unknown_and_canonical_id_pins() {
    let index = build_sample("brief-pin-ids");
    let b = brief(&index, &pins(&["Nope", "01KXYJ69GESA102WH3JCNCHN9X", "Nope"]), &anon());
    assert_eq!(b.items.len(), 1);
    assert_eq!(b.items[0].slug, "Bm25Index", "a canonical id resolves to its page");
    assert_eq!(b.warnings, vec!["unknown pin: Nope"], "one warning per distinct unknown pin");
}

#[test]
fn a_restricted_pin_is_indistinguishable_from_a_nonexistent_one() {
    let index = build_sample("brief-restricted-pin");
    let restricted = brief(&index, &pins(&["EdgeRoadmap"]), &anon());
    let missing = brief(&index, &pins(&["NoSuchPage"]), &anon());
    assert_eq!(restricted.warnings, vec!["unknown pin: EdgeRoadmap"]);
    assert_eq!(missing.warnings, vec!["unknown pin: NoSuchPage"]);
    let strip = |b: &ContextBriefing| {
        let mut b = b.clone();
        b.warnings.clear();
        serde_json::to_string(&b).unwrap()
    };
    assert_eq!(strip(&restricted), strip(&missing));
    assert_eq!(restricted.used_tokens, 0);
    // A key holding the principal sees it.
    let alice = Caller::for_key(&["Alice".to_string()], None);
    let b = brief(&index, &pins(&["EdgeRoadmap"]), &alice);
    assert_eq!(b.items.len(), 1);
    assert!(b.items[0].included);
    assert!(b.warnings.is_empty());
}

#[test]
fn restricted_cluster_members_never_appear() {
    let index = build_sample("brief-restricted-members");
    let r = BriefingRequest { clusters: vec!["operations".into()], budget: Some(24_000), ..Default::default() };
    let b = brief(&index, &r, &anon());
    let json = serde_json::to_string(&b).unwrap();
    for codename in ["Nightjar", "NIGHTJAR", "nightjar", "Halcyon", "halcyon"] {
        assert!(!json.contains(codename), "{codename} leaked");
    }
    // (Public hub pages may mention the restricted slugs in their own text; the pages
    // themselves never appear as items.)
    assert!(b.items.iter().all(|i| i.slug != "IncidentReview2026Q3" && i.slug != "RotateAnApiKey"));
    assert_eq!(b.items.len(), 8, "10 transitive members, 2 restricted");
    let admin = brief(&index, &r, &Caller::for_key(&["Admin".to_string()], None));
    assert_eq!(admin.items.len(), 10);
}

#[test]
fn cluster_members_come_hub_first_then_by_intra_cluster_in_degree() {
    let index = build_sample("brief-order");
    for (cluster, expected) in [
        ("retrieval", vec!["RetrievalHub", "HybridFusion", "DenseEncoder", "CoverageConfidence", "Bm25Index", "DebugAWeakCoverageBundle"]),
        (
            "agent-surfaces",
            vec!["AgentSurfacesHub", "ContextBundles", "CoverageConfidence", "ApiKeysAndAcls", "Citations", "McpServer", "Briefings"],
        ),
    ] {
        let r = BriefingRequest { clusters: vec![cluster.into()], budget: Some(24_000), ..Default::default() };
        let b = brief(&index, &r, &anon());
        let order: Vec<&str> = b.items.iter().map(|i| i.slug.as_str()).collect();
        assert_eq!(order, expected, "{cluster}");
        assert!(b.items.iter().all(|i| i.origin == Origin::Cluster));
    }
}

#[test]
fn unknown_cluster_warns_once_and_a_headless_cluster_still_briefs() {
    let index = build_sample("brief-clusters");
    let r = BriefingRequest { clusters: vec!["nope".into(), "getting-started".into()], prompt: Some("glossary".into()), ..Default::default() };
    let b = brief(&index, &r, &anon());
    assert_eq!(b.warnings.iter().filter(|w| *w == "unknown cluster: nope").count(), 1);
    assert!(b.items.iter().any(|i| i.slug == "Onboarding"));
}

#[test]
fn strict_scope_drops_and_prefer_reorders_out_of_cluster_sections() {
    let index = build_sample("brief-scope");
    let base = BriefingRequest {
        prompt: Some("shards manifest pointer publish".into()),
        clusters: vec!["retrieval".into()],
        budget: Some(24_000),
        ..Default::default()
    };
    let retrieval: Vec<&str> = vec!["RetrievalHub", "HybridFusion", "DenseEncoder", "CoverageConfidence", "Bm25Index", "DebugAWeakCoverageBundle"];
    let strict = brief(&index, &BriefingRequest { scope_mode: ScopeMode::Strict, ..base.clone() }, &anon());
    assert!(strict.sections.iter().all(|s| retrieval.contains(&s.slug.as_str())), "strict keeps in-scope only");
    let prefer = brief(&index, &base, &anon());
    assert!(prefer.sections.len() >= strict.sections.len());
    let first_out = prefer.sections.iter().position(|s| !retrieval.contains(&s.slug.as_str())).unwrap_or(prefer.sections.len());
    assert!(prefer.sections[first_out..].iter().all(|s| !retrieval.contains(&s.slug.as_str())), "in-scope first, then the rest");
    assert_eq!(prefer.coverage.section_count, prefer.sections.len());
}

#[test]
fn sections_fill_the_budget_as_a_prefix() {
    // Three pages, one section each of ~100 tokens; budget 250 keeps two (no skipping ahead).
    let body = |w: &str| format!("# {w}\n\n{}", format!("{w} topic text. ").repeat(28));
    let index = build_wiki(
        "brief-prefix",
        &[
            page("A.md", "title: A", &body("alpha")),
            page("B.md", "title: B", &body("alpha beta")),
            page("C.md", "title: C", &body("alpha beta gamma")),
        ],
    );
    let full = brief(&index, &BriefingRequest { prompt: Some("alpha".into()), budget: Some(24_000), ..Default::default() }, &anon());
    assert_eq!(full.sections.len(), 3);
    let each = estimate_tokens(&full.sections[0].text) as i64;
    assert!((90..=130).contains(&each), "{each}");
    let budget = 2 * each + each / 2;
    let b = brief(&index, &BriefingRequest { prompt: Some("alpha".into()), budget: Some(budget), ..Default::default() }, &anon());
    assert_eq!(b.sections.len(), 2);
    assert_eq!(b.coverage.section_count, 2);
    assert_eq!(b.used_tokens, b.sections.iter().map(|s| estimate_tokens(&s.text) as i64).sum::<i64>());
}

#[test]
fn a_pin_supersedes_its_own_sections() {
    let body = |w: &str| format!("# {w}\n\n{}", format!("{w} topic text. ").repeat(28));
    let index = build_wiki(
        "brief-supersede",
        &[page("A.md", "title: A", &body("alpha")), page("B.md", "title: B", &body("alpha beta"))],
    );
    let r = BriefingRequest { prompt: Some("alpha".into()), pins: vec!["A".into()], ..Default::default() };
    let b = brief(&index, &r, &anon());
    assert!(b.sections.iter().all(|s| s.slug != "A"), "A's sections are replaced by its body");
    assert_eq!(b.sections.len(), 1);
    assert!(b.items[0].included);
    let body_tokens = estimate_tokens(b.items[0].content.as_deref().unwrap()) as i64;
    assert_eq!(b.used_tokens, body_tokens + estimate_tokens(&b.sections[0].text) as i64);
    assert_eq!(b.coverage.section_count, 1);
}

#[test]
fn caps_on_pins_clusters_and_members() {
    let mut pages = vec![page("Big+Hub.md", "title: Big Hub\ntype: hub\ncluster: big", "# Big Hub\n\nThe hub.")];
    for i in 0..201 {
        pages.push(page(&format!("M{i:03}.md"), &format!("title: M{i}\ncluster: big"), &format!("# M{i}\n\nMember {i}.")));
    }
    pages.push(page("Outsider.md", "title: Outsider", "# Outsider\n\nNot in the cluster."));
    let index = build_wiki("brief-caps", &pages);
    let mut many_pins: Vec<String> = (0..25).map(|i| format!("M{i:03}")).collect();
    many_pins.push("Outsider".into());
    let many_clusters: Vec<String> = (0..11).map(|i| if i == 0 { "big".to_string() } else { format!("c{i}") }).collect();
    let r = BriefingRequest { pins: many_pins, clusters: many_clusters, budget: Some(200), ..Default::default() };
    let b = brief(&index, &r, &anon());
    assert_eq!(b.warnings[0], "too many pins; first 25 included");
    assert_eq!(b.warnings[1], "too many clusters; first 10 included");
    assert!(b.warnings.contains(&"too many members in cluster big; first 200 included".to_string()));
    assert!(b.warnings.contains(&"unknown pin: Outsider".to_string()), "cap-dropped pins are unknown");
    assert!(b.warnings.contains(&"unknown cluster: c1".to_string()));
    // 25 pins, then members up to the 200 cap (hub first; pins already emitted are skipped).
    let members = b.items.iter().filter(|i| i.origin == Origin::Cluster).count();
    assert_eq!(b.items.iter().filter(|i| i.origin == Origin::Pin).count(), 25);
    assert_eq!(members, 200 - 25);
    // With 200 tokens, nearly everything is a pointer built without reading bodies.
    assert!(b.items.iter().filter(|i| !i.included).count() > 150);
    assert!(b.used_tokens <= 200);
}

#[test]
fn same_request_gives_byte_identical_output() {
    let index = build_sample("brief-determinism");
    let r = BriefingRequest { prompt: Some("rotate keys".into()), clusters: vec!["operations".into()], pins: vec!["Glossary".into()], ..Default::default() };
    let a = serde_json::to_vec(&brief(&index, &r, &anon())).unwrap();
    let b = serde_json::to_vec(&brief(&index, &r, &anon())).unwrap();
    assert_eq!(a, b);
}

/// What a briefing reads: a prompt-only briefing (the hooks' default) reads no page records
/// or cluster cards; pins add their pages' records; clusters add their cards (which list
/// their members) and the bodies of the members included. None reads the whole page table,
/// the spine or the link graph.
#[test]
fn a_briefing_reads_the_records_and_cards_of_its_pins_and_clusters_only() {
    use std::sync::Arc;
    use wikantik::reader::{IndexReader, MemoryStore, ShardCache};
    use wikantik::shard::ShardKind;
    use wikantik_tests::faults::FaultStore;
    let index = wikantik_tests::compile_dir_with_vectors(&wikantik_tests::sample_wiki());
    let kinds_read = |request: &BriefingRequest| -> Vec<ShardKind> {
        let store = FaultStore::new(MemoryStore::from_compiled(&index));
        let reader = block_on(IndexReader::open_at(store.clone(), index.pointer.clone(), Arc::new(ShardCache::default()))).expect("open");
        let briefing = block_on(assemble_briefing(&reader, request, &BriefingConfig::default(), &BundleConfig::default(), &anon())).expect("briefing");
        assert!(!briefing.sections.is_empty() || !briefing.items.is_empty());
        let names = store.read_names();
        index.manifest.shards.iter().filter(|s| names.contains(&s.name)).map(|s| s.kind).collect()
    };
    let whole = [ShardKind::Pages, ShardKind::Spine, ShardKind::Graph];
    let prompt_only = BriefingRequest { prompt: Some("how are shards published".into()), ..Default::default() };
    let read = kinds_read(&prompt_only);
    assert!(read.contains(&ShardKind::Terms), "{read:?}");
    assert!(!read.contains(&ShardKind::PageRecords) && !read.contains(&ShardKind::ClusterCards), "{read:?}");
    let with_pin = BriefingRequest { pins: vec!["Glossary".into()], ..prompt_only.clone() };
    let read = kinds_read(&with_pin);
    assert!(read.contains(&ShardKind::PageRecords) && read.contains(&ShardKind::Bodies) && !read.contains(&ShardKind::ClusterCards), "{read:?}");
    let with_cluster = BriefingRequest { clusters: vec!["getting-started".into()], ..prompt_only };
    let read = kinds_read(&with_cluster);
    assert!(read.contains(&ShardKind::ClusterCards) && read.contains(&ShardKind::Bodies) && !read.contains(&ShardKind::PageRecords), "{read:?}");
    for read in [kinds_read(&with_pin), read] {
        assert!(whole.iter().all(|k| !read.contains(k)), "{read:?}");
    }
}
