//! The page model: file name → slug, frontmatter split and parse, canonical ids.
//!
//! A page is a Markdown file (or an exported `.html` file) of a flat wiki directory. Its
//! *slug* is the URL-decoded file name without extension (REFERENCE §4.1); its frontmatter is
//! a YAML block at offset 0 (REFERENCE §4.2). Every key is kept: the well-known ones are
//! lifted into typed fields, and the whole block is also kept as JSON for
//! `list_metadata_values` and the agent projection.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use wikantik_format::error::{Error, Result};
pub use wikantik_format::markup::{split_frontmatter, FrontmatterSplit};

/// Parsed frontmatter: the well-known keys of REFERENCE §4.2 plus every key as JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Frontmatter {
    pub canonical_id: Option<String>,
    pub title: Option<String>,
    /// `type`, as written (hub, article, reference, runbook, design, or anything else).
    pub page_type: Option<String>,
    pub status: Option<String>,
    pub summary: Option<String>,
    pub date: Option<String>,
    pub author: Option<String>,
    /// `cluster`: a scalar becomes one element; lists keep their order (first = primary).
    pub clusters: Vec<String>,
    pub tags: Vec<String>,
    pub related: Vec<String>,
    pub kg_include: Option<bool>,
    pub audience: Vec<String>,
    pub verified_at: Option<String>,
    pub verified_by: Option<String>,
    pub confidence: Option<String>,
    /// `version`: only a positive integer is a page version; anything else is ignored.
    pub version: Option<u32>,
    /// `derived_from` present ⇒ the page is machine-derived.
    pub derived: bool,
    /// Every key of the block, converted to JSON (YAML dates stay strings).
    pub fields: Map<String, Value>,
}

impl Frontmatter {
    /// Parse the YAML of a frontmatter block. `file` and `first_line` are used to name the
    /// location of a syntax error (REFERENCE: malformed YAML is an error naming file and line).
    pub fn parse(yaml: &str, file: &str, first_line: usize) -> Result<Frontmatter> {
        if yaml.trim().is_empty() {
            return Ok(Frontmatter::default());
        }
        let parsed: serde_yaml_ng::Value = serde_yaml_ng::from_str(yaml).map_err(|e| {
            let line = e.location().map(|l| l.line()).unwrap_or(1);
            Error::Frontmatter {
                file: file.to_string(),
                line: first_line + line.saturating_sub(1),
                message: strip_location(&e.to_string()),
            }
        })?;
        let fields = match yaml_to_json(parsed) {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            _ => {
                return Err(Error::Frontmatter {
                    file: file.to_string(),
                    line: first_line,
                    message: "frontmatter must be a mapping of keys to values".to_string(),
                })
            }
        };
        Ok(Frontmatter::from_fields(fields))
    }

    fn from_fields(fields: Map<String, Value>) -> Frontmatter {
        let text = |key: &str| fields.get(key).and_then(scalar_text).filter(|s| !s.is_empty());
        let list = |key: &str| fields.get(key).map(text_list).unwrap_or_default();
        Frontmatter {
            canonical_id: text("canonical_id"),
            title: text("title"),
            page_type: text("type"),
            status: text("status"),
            summary: text("summary"),
            date: text("date"),
            author: text("author"),
            clusters: list("cluster"),
            tags: list("tags"),
            related: list("related"),
            kg_include: fields.get("kg_include").and_then(|v| match v {
                Value::Bool(b) => Some(*b),
                Value::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
                Value::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
                _ => None,
            }),
            audience: list("audience"),
            verified_at: text("verified_at"),
            verified_by: text("verified_by"),
            confidence: text("confidence"),
            version: fields.get("version").and_then(|v| match v {
                Value::Number(n) => n.as_u64().filter(|n| *n >= 1 && *n <= u32::MAX as u64).map(|n| n as u32),
                _ => None,
            }),
            derived: fields.get("derived_from").is_some_and(|v| !v.is_null()),
            fields,
        }
    }
}

/// serde_yaml_ng puts "at line N column M" into its messages; we report the line ourselves.
pub(crate) fn strip_location(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// Convert YAML to JSON: mapping keys become strings, tagged values lose their tag, and
/// non-finite floats become strings so nothing is lost silently.
pub(crate) fn yaml_to_json(value: serde_yaml_ng::Value) -> Value {
    use serde_yaml_ng::Value as Y;
    match value {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                serde_json::Number::from_f64(f).map(Value::Number).unwrap_or_else(|| Value::String(n.to_string()))
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(items) => Value::Array(items.into_iter().map(yaml_to_json).collect()),
        Y::Mapping(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                let key = match yaml_to_json(k) {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                out.insert(key, yaml_to_json(v));
            }
            Value::Object(out)
        }
        Y::Tagged(tagged) => yaml_to_json(tagged.value),
    }
}

/// A scalar as text (strings as-is, numbers and booleans printed); `None` for lists/maps/null.
pub fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A scalar or a list of scalars as a list of trimmed, non-blank strings.
pub fn text_list(value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) => items.iter().filter_map(scalar_text).filter(|s| !s.is_empty()).collect(),
        other => scalar_text(other).filter(|s| !s.is_empty()).into_iter().collect(),
    }
}

/// The page name a file name stands for (REFERENCE §4.1): the extension (`.md`, `.html`,
/// `.htm`) removed, `+` read as a space and `%xx` decoded. Invalid escapes are kept verbatim.
pub fn slug_from_file_name(file_name: &str) -> String {
    let stem = ["md", "markdown", "html", "htm"]
        .iter()
        .find_map(|ext| {
            let suffix_len = ext.len() + 1;
            let split = file_name.len().checked_sub(suffix_len)?;
            let (stem, suffix) = (file_name.get(..split)?, file_name.get(split..)?);
            (suffix.starts_with('.') && suffix[1..].eq_ignore_ascii_case(ext)).then_some(stem)
        })
        .unwrap_or(file_name);
    wikantik_format::markup::url_decode(stem, true)
}

/// Crockford base32 alphabet used by ULIDs (no I, L, O, U).
const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// Is `id` a well-formed ULID: 26 upper-case Crockford characters whose first is 0–7 (so the
/// value fits in 128 bits)?
pub fn is_valid_ulid(id: &str) -> bool {
    id.len() == 26
        && id.bytes().all(|b| CROCKFORD.contains(&b))
        && id.as_bytes().first().is_some_and(|b| (b'0'..=b'7').contains(b))
}

/// Longest authored canonical id kept, in characters.
pub const MAX_CANONICAL_ID_CHARS: usize = 128;

/// Can an authored `canonical_id` (trimmed) be kept as the page's id? 1 to
/// [`MAX_CANONICAL_ID_CHARS`] characters from the URI-unreserved set `A-Z a-z 0-9 - . _ ~`, at
/// least one of them a letter or digit. The id is written unescaped into `cite://` links (where
/// `/`, `)`, `"` and whitespace end it), page IRIs (`…/id/page/{id}`) and trimmed tool arguments,
/// so nothing else survives all three. Every ULID qualifies; a usable id that is not a ULID is
/// kept with a warning, the wiki's own links and citations use it.
pub fn is_usable_canonical_id(id: &str) -> bool {
    (1..=MAX_CANONICAL_ID_CHARS).contains(&id.len())
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
        && id.bytes().any(|b| b.is_ascii_alphanumeric())
}

/// The deterministic canonical id of a page that has no usable authored one (CONTRACT §3.4):
/// the first 128 bits of SHA-256 over `wikantik:derived-canonical-id:` + slug, written as a
/// ULID. It is stable across builds and machines for the same slug, and a valid ULID.
pub fn derived_canonical_id(slug: &str) -> String {
    let digest = wikantik_format::hashing::sha256(format!("wikantik:derived-canonical-id:{slug}").as_bytes());
    let mut value: u128 = 0;
    for b in &digest[..16] {
        value = (value << 8) | u128::from(*b);
    }
    let mut out = [b'0'; 26];
    for slot in out.iter_mut().rev() {
        *slot = CROCKFORD[(value & 31) as usize];
        value >>= 5;
    }
    out.iter().map(|b| *b as char).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_frontmatter_and_body() {
        let s = split_frontmatter("---\ntitle: A\n---\n# A\nbody\n");
        assert_eq!(s.yaml, Some("title: A\n"));
        assert_eq!(s.body, "# A\nbody\n");
        assert_eq!(s.yaml_first_line, 2);
    }

    #[test]
    fn crlf_and_bom_are_tolerated() {
        let s = split_frontmatter("\u{feff}---\r\ntitle: A\r\n---\r\nbody");
        assert_eq!(s.yaml, Some("title: A\r\n"));
        assert_eq!(s.body, "body");
    }

    #[test]
    fn no_block_or_unclosed_block_is_all_body() {
        assert_eq!(split_frontmatter("# Title\n").yaml, None);
        assert_eq!(split_frontmatter("---\ntitle: A\nno close").yaml, None);
        assert_eq!(split_frontmatter(" ---\nx\n---\n").yaml, None);
        assert_eq!(split_frontmatter("").body, "");
    }

    #[test]
    fn parses_known_keys_and_keeps_unknown_ones() {
        let yaml = "canonical_id: 01KQ0P44QZYNK9BZ0FV5NQ9CF8\ntitle: Hybrid Retrieval\ntype: article\n\
                    summary: >-\n  multi\n  line\ntags:\n- search\n- retrieval\ncluster: [a, b/c]\n\
                    related: [X]\ndate: 2026-05-15\nversion: 3\nkg_include: false\nfoo: {bar: 1}\n\
                    derived_from: connector-x\n";
        let fm = Frontmatter::parse(yaml, "P.md", 2).unwrap();
        assert_eq!(fm.canonical_id.as_deref(), Some("01KQ0P44QZYNK9BZ0FV5NQ9CF8"));
        assert_eq!(fm.title.as_deref(), Some("Hybrid Retrieval"));
        assert_eq!(fm.page_type.as_deref(), Some("article"));
        assert_eq!(fm.summary.as_deref(), Some("multi line"));
        assert_eq!(fm.tags, vec!["search", "retrieval"]);
        assert_eq!(fm.clusters, vec!["a", "b/c"]);
        assert_eq!(fm.related, vec!["X"]);
        assert_eq!(fm.date.as_deref(), Some("2026-05-15"));
        assert_eq!(fm.version, Some(3));
        assert_eq!(fm.kg_include, Some(false));
        assert!(fm.derived);
        assert_eq!(fm.fields["foo"]["bar"], 1);
    }

    #[test]
    fn scalar_cluster_is_one_membership_and_odd_versions_are_ignored() {
        let fm = Frontmatter::parse("cluster: ops\nversion: '3.7'\n", "P.md", 2).unwrap();
        assert_eq!(fm.clusters, vec!["ops"]);
        assert_eq!(fm.version, None);
        let fm = Frontmatter::parse("version: 0\n", "P.md", 2).unwrap();
        assert_eq!(fm.version, None);
    }

    #[test]
    fn malformed_yaml_names_file_and_page_line() {
        let err = Frontmatter::parse("title: ok\ntags: [a, b\nx: 1\n", "Broken.md", 2).unwrap_err();
        match err {
            Error::Frontmatter { file, line, .. } => {
                assert_eq!(file, "Broken.md");
                assert!((3..=5).contains(&line), "line {line}");
            }
            other => panic!("unexpected {other:?}"),
        }
        let msg = Frontmatter::parse("a: 1\na: 2\n", "Dup.md", 2).unwrap_err().to_string();
        assert!(msg.starts_with("Dup.md:"), "{msg}");
        assert!(msg.contains("duplicate"), "{msg}");
    }

    #[test]
    fn non_mapping_frontmatter_is_an_error() {
        assert!(Frontmatter::parse("- a\n- b\n", "L.md", 2).is_err());
        assert_eq!(Frontmatter::parse("  \n", "E.md", 2).unwrap(), Frontmatter::default());
    }

    #[test]
    fn slugs_from_file_names() {
        assert_eq!(slug_from_file_name("HybridRetrieval.md"), "HybridRetrieval");
        assert_eq!(slug_from_file_name("AgentLoops+Hub.md"), "AgentLoops Hub");
        assert_eq!(slug_from_file_name("Q%26A.md"), "Q&A");
        assert_eq!(slug_from_file_name("Legacy.html"), "Legacy");
        assert_eq!(slug_from_file_name("Bad%zz.md"), "Bad%zz");
        assert_eq!(slug_from_file_name("Trailing%2.md"), "Trailing%2");
        assert_eq!(slug_from_file_name("%2Ehidden.md"), ".hidden");
    }

    #[test]
    fn ulid_validation() {
        assert!(is_valid_ulid("01KQ0P44QZYNK9BZ0FV5NQ9CF8"));
        assert!(!is_valid_ulid("01KQ0P44QZYNK9BZ0FV5NQ9CF")); // 25 chars
        assert!(!is_valid_ulid("01KQ0P44QZYNK9BZ0FV5NQ9CFU")); // U
        assert!(!is_valid_ulid("01KQ0P44QZYNK9BZ0FV5NQ9CFI")); // I
        assert!(!is_valid_ulid("81KQ0P44QZYNK9BZ0FV5NQ9CF8")); // overflows 128 bits
        assert!(!is_valid_ulid("01kq0p44qzynk9bz0fv5nq9cf8")); // lower case
    }

    #[test]
    fn usable_canonical_ids_are_short_uri_unreserved_words() {
        for id in ["01KQ0P44QZYNK9BZ0FV5NQ9CF8", "01KQ0P44QZYNK9BZ0FV5NQ9CF", "01KQ0P44QZYNK9BZ0FV5NQ9CFU", "adr-001", "a.b_c~d", "7"] {
            assert!(is_usable_canonical_id(id), "{id}");
        }
        let longest = "A".repeat(MAX_CANONICAL_ID_CHARS);
        assert!(is_usable_canonical_id(&longest));
        for id in ["", "-", "..", "a b", "a/b", "a)b", "a\"b", "tab\there", "line\nbreak", "caf\u{e9}", "a:b", "a#b", "a?b", "a%20b"] {
            assert!(!is_usable_canonical_id(id), "{id:?}");
        }
        assert!(!is_usable_canonical_id(&format!("{longest}A")));
    }

    #[test]
    fn derived_ids_are_stable_valid_and_distinct() {
        let a = derived_canonical_id("ArtHistory");
        assert_eq!(a, derived_canonical_id("ArtHistory"));
        assert!(is_valid_ulid(&a), "{a}");
        assert_ne!(a, derived_canonical_id("News"));
    }
}
