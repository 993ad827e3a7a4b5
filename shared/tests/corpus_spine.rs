//! The spine projected from the real checkout corpus must show REFERENCE §9's taxonomy facts.
//!
//! The corpus is found through `WIKANTIK_CORPUS`, else
//! `$CARGO_MANIFEST_DIR/../../shared/corpus/wikantik-pages`; without it the test prints a skip
//! message and passes. The frontmatter read here is deliberately minimal (only `type`,
//! `cluster`, `canonical_id`) and exists for this test only: the real page reader lives elsewhere.
#![cfg(not(target_arch = "wasm32"))]

use std::path::PathBuf;

use serde_yaml_ng::Value;
use wikantik::spine::{ConflictKind, PageFacts, Spine};

fn corpus_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("WIKANTIK_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/wikantik-pages")
        });
    dir.is_dir().then_some(dir)
}

/// The page name of a file stem: `+` → space, `%XX` decoded (REFERENCE §4.1), enough for
/// the corpus's names.
fn page_name(stem: &str) -> String {
    let bytes = stem.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (b, hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(decoded)) => {
                out.push(decoded);
                i += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                i += 1;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The YAML between an opening `---` line at offset 0 and the next `---` line.
fn frontmatter_block(text: &str) -> Option<&str> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end_matches(['\r', '\n']) == "---" {
            return rest.get(..offset);
        }
        offset += line.len();
    }
    None
}

fn scalar_string(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn facts(slug: String, text: &str) -> Result<PageFacts, String> {
    let mut page = PageFacts {
        slug,
        page_type: None,
        clusters: Vec::new(),
        has_canonical_id: false,
        updated: 0,
    };
    let Some(block) = frontmatter_block(text) else {
        return Ok(page);
    };
    let yaml: Value = serde_yaml_ng::from_str(block).map_err(|e| e.to_string())?;
    page.page_type = yaml.get("type").and_then(scalar_string);
    page.clusters = match yaml.get("cluster") {
        Some(Value::Sequence(items)) => items.iter().filter_map(scalar_string).collect(),
        Some(other) => scalar_string(other).into_iter().collect(),
        None => Vec::new(),
    };
    page.has_canonical_id = yaml
        .get("canonical_id")
        .and_then(scalar_string)
        .is_some_and(|id| !id.trim().is_empty());
    Ok(page)
}

#[test]
fn corpus_taxonomy_matches_reference_section_9() {
    let Some(dir) = corpus_dir() else {
        println!(
            "SKIP corpus_taxonomy_matches_reference_section_9: no corpus (set WIKANTIK_CORPUS or \
             provide ../../shared/corpus/wikantik-pages)"
        );
        return;
    };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus directory is readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    entries.sort();

    let mut pages = Vec::new();
    let mut unreadable = Vec::new();
    for path in &entries {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let text = std::fs::read_to_string(path).expect("page is UTF-8");
        match facts(page_name(stem), &text) {
            Ok(page) => pages.push(page),
            Err(e) => unreadable.push(format!("{stem}: {e}")),
        }
    }

    let spine = Spine::project(&pages);
    let top_level = spine
        .clusters
        .iter()
        .filter(|c| !c.name.contains('/'))
        .count();
    let multi = pages
        .iter()
        .filter(|p| wikantik::spine::memberships(&p.clusters).len() > 1)
        .count();
    let largest = spine
        .clusters
        .iter()
        .filter(|c| !c.name.contains('/'))
        .map(|c| (spine.members(&c.name).len(), c.name.clone()))
        .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let count = |kind| spine.conflicts_of(kind).count();

    println!(
        "corpus: {} ({} pages, {} unparseable frontmatter)",
        dir.display(),
        pages.len(),
        unreadable.len()
    );
    for u in &unreadable {
        println!("  unparseable: {u}");
    }
    println!("cluster paths: {}", spine.clusters.len());
    println!("hubs: {}", spine.hubs());
    println!("top-level clusters: {top_level}");
    println!("sub-clusters: {}", spine.sub_cluster_count());
    println!("headless: {:?}", spine.headless());
    println!(
        "computer-science members: {}",
        spine.members("computer-science").len()
    );
    println!("largest top-level cluster: {largest:?}");
    println!("pages with several memberships: {multi}");
    for kind in [
        ConflictKind::MissingCanonicalId,
        ConflictKind::DuplicateClusterDeclaration,
        ConflictKind::ClusterlessHub,
        ConflictKind::MultiClusterHub,
        ConflictKind::HeadlessCluster,
        ConflictKind::UndeclaredCluster,
        ConflictKind::InvalidClusterPath,
    ] {
        println!("conflicts {kind:?}: {}", count(kind));
    }
    for c in &spine.conflicts {
        if c.kind != ConflictKind::MissingCanonicalId {
            println!("  {:?} {:?} {:?}", c.kind, c.cluster, c.slugs);
        }
    }

    assert_eq!(spine.hubs(), 75, "hubs");
    assert_eq!(spine.sub_cluster_count(), 24, "sub-clusters");
    assert_eq!(top_level, 52, "top-level clusters");
    assert_eq!(spine.clusters.len(), 76, "cluster paths referenced");
    assert_eq!(
        spine.headless(),
        vec!["computer-science".to_owned()],
        "headless clusters"
    );
    assert_eq!(
        spine.cluster("computer-science").map(|c| c.hub.clone()),
        Some(None)
    );
    assert_eq!(
        count(ConflictKind::DuplicateClusterDeclaration),
        0,
        "duplicate declarations"
    );
    assert_eq!(
        count(ConflictKind::UndeclaredCluster),
        0,
        "all sub-cluster parents declared"
    );
    assert_eq!(
        spine.members("computer-science").len(),
        33,
        "computer-science members"
    );
    assert_eq!(
        largest,
        Some((103, "wikantik-development".to_owned())),
        "largest top-level cluster"
    );
    assert_eq!(multi, 51, "pages with list-valued cluster");
    let missing: Vec<&str> = spine
        .conflicts_of(ConflictKind::MissingCanonicalId)
        .filter_map(|c| c.slugs.first().map(String::as_str))
        .collect();
    assert_eq!(
        missing,
        [
            "ArtHistory",
            "CSSThemeDark",
            "ConnectingClaudeCodeToWikantikMcp",
            "News"
        ]
    );
}
