//! The entity sidecar (CONTRACT §3.8): named entities written by any extractor beside the wiki,
//! merged at build time with the pages' frontmatter `entities:`.
//!
//! The file is `<wiki>/.wikantik/entities.yaml` ([`SIDECAR_PATH`]):
//!
//! ```yaml
//! source: my-ner-tool          # optional: who wrote it (kept on the nodes and edges)
//! provenance: ai-inferred      # optional: ai-inferred (default), ai-reviewed, human-curated
//! pages:
//!   EdgeFunctions:             # page slug
//!     - name: Cloudflare Workers
//!       type: product          # the entity vocabulary of REFERENCE §5.1 (aliases mapped)
//!     - Fermyon                # a bare name: type `concept`
//! ```
//!
//! Sidecar entities become the same entity nodes and `related_to` edges as frontmatter ones,
//! backed by their page (so the page's ACL gates them). Provenance says where they came from:
//! an entity or edge that some page's frontmatter also declares stays `HUMAN_AUTHORED` / tier
//! `human`; one known only from the sidecar carries the sidecar's provenance (`AI_INFERRED`
//! by default; tier `machine` for `AI_*`, `human` for `HUMAN_CURATED`) in
//! `properties.sidecarProvenance`, and `properties.sidecarSource` when the file names one.

use std::collections::BTreeMap;

use serde_json::Value;

use wikantik_format::error::{Error, Result};

/// Where the sidecar lives, relative to the wiki directory.
pub const SIDECAR_PATH: &str = ".wikantik/entities.yaml";

/// One entity the sidecar declares on a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SidecarEntity {
    pub name: String,
    /// The declared type as written (`None`: `concept`).
    pub entity_type: Option<String>,
}

/// A parsed sidecar file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EntitySidecar {
    /// `AI_INFERRED`, `AI_REVIEWED` or `HUMAN_CURATED`.
    pub provenance: String,
    pub source: Option<String>,
    /// Entities by page slug.
    pub pages: BTreeMap<String, Vec<SidecarEntity>>,
    /// 1-based line of each page key (for warnings about unknown pages).
    pub lines: BTreeMap<String, usize>,
}

impl EntitySidecar {
    /// The tier of the sidecar's provenance: `machine` for `AI_*`, else `human`.
    pub fn tier(&self) -> &'static str {
        if self.provenance.starts_with("AI_") {
            "machine"
        } else {
            "human"
        }
    }
}

/// Parses a sidecar; errors name `file` and the line.
pub fn parse_entity_sidecar(text: &str, file: &str) -> Result<EntitySidecar> {
    let bad = |line: usize, message: String| Error::EntitySidecar { file: file.to_string(), line, message };
    let line_of = |needle: &str| -> usize {
        text.lines().position(|l| l.trim_start().trim_start_matches("- ").trim_start().starts_with(needle)).map_or(1, |i| i + 1)
    };
    let parsed: serde_yaml_ng::Value = serde_yaml_ng::from_str(text)
        .map_err(|e| bad(e.location().map_or(1, |l| l.line()), crate::page::strip_location(&e.to_string())))?;
    let root = match crate::page::yaml_to_json(parsed) {
        Value::Object(map) => map,
        Value::Null => return Ok(EntitySidecar { provenance: "AI_INFERRED".into(), ..EntitySidecar::default() }),
        _ => return Err(bad(1, "the file must be a mapping with a `pages:` key".into())),
    };
    if let Some(key) = root.keys().find(|k| !matches!(k.as_str(), "source" | "provenance" | "pages")) {
        return Err(bad(line_of(&format!("{key}:")), format!("unknown key `{key}` (expected source, provenance, pages)")));
    }
    let provenance = match root.get("provenance") {
        None | Some(Value::Null) => "AI_INFERRED".to_string(),
        Some(Value::String(p)) => match p.trim().to_lowercase().replace('_', "-").as_str() {
            "ai-inferred" => "AI_INFERRED".into(),
            "ai-reviewed" => "AI_REVIEWED".into(),
            "human-curated" => "HUMAN_CURATED".into(),
            other => return Err(bad(line_of("provenance:"), format!("provenance `{other}` is not ai-inferred, ai-reviewed or human-curated"))),
        },
        Some(_) => return Err(bad(line_of("provenance:"), "provenance must be a string".into())),
    };
    let source = match root.get("source") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Some(_) => return Err(bad(line_of("source:"), "source must be a non-empty string".into())),
    };
    let mut sidecar = EntitySidecar { provenance, source, ..EntitySidecar::default() };
    let pages = match root.get("pages") {
        None | Some(Value::Null) => return Ok(sidecar),
        Some(Value::Object(pages)) => pages,
        Some(_) => return Err(bad(line_of("pages:"), "pages must map page slugs to lists of entities".into())),
    };
    for (slug, items) in pages {
        let line = line_of(&format!("{slug}:"));
        let Value::Array(items) = items else {
            return Err(bad(line, format!("page {slug}: expected a list of entities")));
        };
        let mut entities = Vec::with_capacity(items.len());
        for item in items {
            let (name, entity_type) = match item {
                Value::String(name) => (name.trim().to_string(), None),
                Value::Object(o) => {
                    if let Some(key) = o.keys().find(|k| !matches!(k.as_str(), "name" | "type")) {
                        return Err(bad(line_of(&format!("{key}:")), format!("page {slug}: unknown entity key `{key}` (expected name, type)")));
                    }
                    let name = o.get("name").and_then(Value::as_str).unwrap_or("").trim().to_string();
                    let entity_type = match o.get("type") {
                        None | Some(Value::Null) => None,
                        Some(Value::String(t)) => Some(t.trim().to_string()),
                        Some(_) => return Err(bad(line_of("type:"), format!("page {slug}: entity {name}: type must be a string"))),
                    };
                    (name, entity_type)
                }
                _ => return Err(bad(line, format!("page {slug}: an entity is a name or a mapping {{name, type}}"))),
            };
            if name.is_empty() {
                return Err(bad(line, format!("page {slug}: an entity has an empty name")));
            }
            entities.push(SidecarEntity { name, entity_type });
        }
        sidecar.lines.insert(slug.clone(), line);
        sidecar.pages.insert(slug.clone(), entities);
    }
    Ok(sidecar)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_types_and_provenance() {
        let text = "source: ner-v2\nprovenance: human-curated\npages:\n  EdgeFunctions:\n    - name: Wasmtime\n      type: technology\n    - Fermyon\n  Glossary: []\n";
        let s = parse_entity_sidecar(text, SIDECAR_PATH).unwrap();
        assert_eq!(s.provenance, "HUMAN_CURATED");
        assert_eq!(s.tier(), "human");
        assert_eq!(s.source.as_deref(), Some("ner-v2"));
        assert_eq!(
            s.pages["EdgeFunctions"],
            vec![
                SidecarEntity { name: "Wasmtime".into(), entity_type: Some("technology".into()) },
                SidecarEntity { name: "Fermyon".into(), entity_type: None }
            ]
        );
        assert_eq!(s.lines["EdgeFunctions"], 4);
        assert_eq!(s.lines["Glossary"], 8);
        let plain = parse_entity_sidecar("pages:\n  A:\n    - X\n", "f").unwrap();
        assert_eq!((plain.provenance.as_str(), plain.tier()), ("AI_INFERRED", "machine"));
        assert!(parse_entity_sidecar("", "f").unwrap().pages.is_empty());
    }

    #[test]
    fn bad_input_names_file_and_line() {
        let err = |text: &str| parse_entity_sidecar(text, ".wikantik/entities.yaml").unwrap_err().to_string();
        let yaml = err("pages:\n  A:\n    - name: x\n      type: a: b\n  B: []\n");
        assert!(yaml.starts_with(".wikantik/entities.yaml:4: bad entity sidecar: mapping values"), "{yaml}");
        assert_eq!(err("pages:\n  A: nope\n"), ".wikantik/entities.yaml:2: bad entity sidecar: page A: expected a list of entities");
        assert_eq!(err("source: x\nextractor: y\n"), ".wikantik/entities.yaml:2: bad entity sidecar: unknown key `extractor` (expected source, provenance, pages)");
        assert_eq!(err("provenance: guess\n"), ".wikantik/entities.yaml:1: bad entity sidecar: provenance `guess` is not ai-inferred, ai-reviewed or human-curated");
        assert_eq!(err("pages:\n  A:\n    - name: X\n      kind: y\n"), ".wikantik/entities.yaml:4: bad entity sidecar: page A: unknown entity key `kind` (expected name, type)");
        assert_eq!(err("pages:\n  A:\n    - name: ' '\n"), ".wikantik/entities.yaml:2: bad entity sidecar: page A: an entity has an empty name");
        assert_eq!(err("- a\n- b\n"), ".wikantik/entities.yaml:1: bad entity sidecar: the file must be a mapping with a `pages:` key");
    }
}
