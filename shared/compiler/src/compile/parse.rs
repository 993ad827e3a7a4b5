//! Phases 1 and 2 of a build: source files to parsed pages (frontmatter, body, the ACL of the
//! raw text), duplicate slugs dropped (the first file name wins), canonical ids resolved.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wikantik_format::acl::{Acl, AclScan};
use wikantik_format::error::{Error, Result};
use wikantik_format::payload::{BuildWarning, Stage};
use wikantik_text::acl_markup::{scan_html, scan_markdown};
use wikantik_text::html::{html_title, html_to_text, reduce_html_blocks};
use wikantik_text::page::{derived_canonical_id, is_usable_canonical_id, is_valid_ulid, slug_from_file_name, split_frontmatter, Frontmatter, MAX_CANONICAL_ID_CHARS};

use super::{CompileOptions, ParsedPage, SourcePage};

/// Every source parsed, in file-name order, without duplicate slugs.
pub(super) fn parse_sources(
    sources: Vec<SourcePage>,
    options: &CompileOptions,
    warnings: &mut Vec<BuildWarning>,
    progress: &mut dyn FnMut(Stage, usize, usize),
) -> Result<Vec<ParsedPage>> {
    // 1. Parse, dropping duplicate slugs (the first file name wins).
    let total = sources.len();
    let mut by_slug: BTreeMap<String, ParsedPage> = BTreeMap::new();
    for (i, source) in sources.into_iter().enumerate() {
        progress(Stage::Parse, i + 1, total);
        let Some(page) = parse_page(source, options, warnings)? else { continue };
        if let Some(existing) = by_slug.get(&page.slug) {
            warnings.push(BuildWarning {
                kind: "DUPLICATE_SLUG".into(),
                file: Some(page.file_name.clone()),
                line: None,
                message: format!("page name '{}' is already taken by {}; this file is skipped", page.slug, existing.file_name),
            });
            continue;
        }
        by_slug.insert(page.slug.clone(), page);
    }
    Ok(by_slug.into_values().collect())

}

fn parse_page(source: SourcePage, options: &CompileOptions, warnings: &mut Vec<BuildWarning>) -> Result<Option<ParsedPage>> {
    let slug = slug_from_file_name(&source.file_name);
    if slug.trim().is_empty() {
        warnings.push(BuildWarning {
            kind: "INVALID_FILE_NAME".into(),
            file: Some(source.file_name.clone()),
            line: None,
            message: "the file name gives an empty page name; skipped".into(),
        });
        return Ok(None);
    }
    let is_html = {
        let lower = source.file_name.to_ascii_lowercase();
        lower.ends_with(".html") || lower.ends_with(".htm")
    };
    let (frontmatter, body) = if is_html {
        let mut fm = Frontmatter { title: html_title(&source.text), ..Frontmatter::default() };
        if let Some(title) = &fm.title {
            fm.fields.insert("title".into(), Value::String(title.clone()));
        }
        let body = html_to_text(&source.text).map_err(|e| Error::Invalid(format!("{}: {e}", source.file_name)))?;
        (fm, body)
    } else {
        let split = split_frontmatter(&source.text);
        let fm = match split.yaml {
            None => Frontmatter::default(),
            Some(yaml) => match Frontmatter::parse(yaml, &source.file_name, split.yaml_first_line) {
                Ok(fm) => fm,
                Err(err) if options.strict_frontmatter => return Err(err),
                Err(err) => {
                    let (line, message) = match &err {
                        Error::Frontmatter { line, message, .. } => (Some(*line), message.clone()),
                        other => (None, other.to_string()),
                    };
                    warnings.push(BuildWarning {
                        kind: "MALFORMED_FRONTMATTER".into(),
                        file: Some(source.file_name.clone()),
                        line,
                        message: format!("{message}; page skipped"),
                    });
                    return Ok(None);
                }
            },
        };
        if fm.fields.contains_key("version") && fm.version.is_none() {
            warnings.push(BuildWarning {
                kind: "IGNORED_VERSION".into(),
                file: Some(source.file_name.clone()),
                line: None,
                message: format!(
                    "frontmatter version {} is not a positive whole number; the page version comes from git or defaults to 1",
                    fm.fields.get("version").map(|v| v.to_string()).unwrap_or_default()
                ),
            });
        }
        let body = reduce_html_blocks(split.body);
        (fm, body)
    };
    let acl = page_acl(&source, is_html, warnings);
    Ok(Some(ParsedPage {
        file_name: source.file_name,
        slug,
        text: source.text,
        frontmatter,
        body,
        acl,
        updated: source.updated,
        git_version: source.git_version,
    }))
}

/// Malformed directives reported per page; the rest are counted in one more warning.
const MAX_MALFORMED_ACL_WARNINGS: usize = 10;

/// The page's ACL, from its raw text (frontmatter included, HTML not reduced: REFERENCE §4.5
/// and [`crate::acl`]); a malformed directive restricts the page to Admin and is reported as a
/// `MALFORMED_ACL` warning.
fn page_acl(source: &SourcePage, is_html: bool, warnings: &mut Vec<BuildWarning>) -> Acl {
    let scan: AclScan = if is_html { scan_html(&source.text) } else { scan_markdown(&source.text) };
    for directive in scan.malformed.iter().take(MAX_MALFORMED_ACL_WARNINGS) {
        warnings.push(BuildWarning {
            kind: "MALFORMED_ACL".into(),
            file: Some(source.file_name.clone()),
            line: Some(directive.line),
            message: format!("malformed ACL directive: {}; the page is restricted to Admin until it is fixed", directive.problem),
        });
    }
    if let Some(more) = scan.malformed.len().checked_sub(MAX_MALFORMED_ACL_WARNINGS).filter(|n| *n > 0) {
        warnings.push(BuildWarning {
            kind: "MALFORMED_ACL".into(),
            file: Some(source.file_name.clone()),
            line: None,
            message: format!("{more} more malformed ACL directives"),
        });
    }
    scan.into_acl()
}

/// Every page's canonical id, with whether it is the authored one. An authored id is kept as
/// written when it is usable ([`is_usable_canonical_id`]: it need not be a ULID, the wiki's
/// `cite://` links and relations use it as written; one that is not a ULID is kept with a
/// `MALFORMED_CANONICAL_ID` warning) and unique (on a duplicate, the lexicographically lowest
/// slug keeps it). Every other page — no id, an unusable one, the losers of a duplicate — gets
/// its derived id, with a warning.
pub(super) fn resolve_canonical_ids(pages: &[ParsedPage], warnings: &mut Vec<BuildWarning>) -> Vec<(String, bool)> {
    // Report every authored id (usable or not) that more than one page carries.
    let mut carriers: BTreeMap<&str, Vec<&ParsedPage>> = BTreeMap::new();
    for page in pages {
        if let Some(id) = page.frontmatter.canonical_id.as_deref() {
            carriers.entry(id).or_default().push(page);
        }
    }
    for (id, shared_by) in carriers.iter().filter(|(_, v)| v.len() > 1) {
        let slugs: Vec<&str> = shared_by.iter().map(|p| p.slug.as_str()).collect();
        warnings.push(BuildWarning {
            kind: "DUPLICATE_CANONICAL_ID".into(),
            file: shared_by.first().map(|p| p.file_name.clone()),
            line: None,
            message: format!("canonical_id {} is carried by {} pages: {}", shown_id(id), slugs.len(), slugs.join(", ")),
        });
    }
    let mut owners: BTreeMap<&str, &str> = BTreeMap::new();
    let mut taken: BTreeSet<String> = BTreeSet::new();
    for page in pages {
        if let Some(id) = page.frontmatter.canonical_id.as_deref().filter(|id| is_usable_canonical_id(id)) {
            owners.entry(id).or_insert(page.slug.as_str());
            taken.insert(id.to_string());
        }
    }
    pages
        .iter()
        .map(|page| {
            let derived = || {
                let mut id = derived_canonical_id(&page.slug);
                // Vanishingly unlikely, but never hand out an id another page owns.
                let mut salt = 0u32;
                while taken.contains(&id) {
                    salt += 1;
                    id = derived_canonical_id(&format!("{}#{salt}", page.slug));
                }
                id
            };
            let warn = |kind: &str, message: String| BuildWarning { kind: kind.into(), file: Some(page.file_name.clone()), line: None, message };
            match page.frontmatter.canonical_id.as_deref() {
                None => {
                    let id = derived();
                    warnings.push(warn("MISSING_CANONICAL_ID", format!("no canonical_id; using derived id {id}")));
                    (id, false)
                }
                Some(raw) if !is_usable_canonical_id(raw) => {
                    let id = derived();
                    let rule = format!("1 to {MAX_CANONICAL_ID_CHARS} characters of A-Z a-z 0-9 - . _ ~");
                    warnings.push(warn("MALFORMED_CANONICAL_ID", format!("canonical_id {} is not usable as an id ({rule}); using derived id {id}", shown_id(raw))));
                    (id, false)
                }
                Some(raw) if owners.get(raw).copied() != Some(page.slug.as_str()) => {
                    let owner = owners.get(raw).copied().unwrap_or_default();
                    let id = derived();
                    warnings.push(warn("DUPLICATE_CANONICAL_ID", format!("'{owner}' keeps canonical_id {raw}; this page gets derived id {id}")));
                    (id, false)
                }
                Some(raw) => {
                    if !is_valid_ulid(raw) {
                        warnings.push(warn("MALFORMED_CANONICAL_ID", format!("canonical_id {raw} is not a valid ULID; kept as written")));
                    }
                    (raw.to_string(), true)
                }
            }
        })
        .collect()
}

/// An authored id as a warning shows it: as written when usable, else quoted, escaped, and
/// cut after 80 characters.
fn shown_id(raw: &str) -> String {
    const SHOWN: usize = 80;
    if is_usable_canonical_id(raw) {
        return raw.to_string();
    }
    let mut shown: String = raw.chars().take(SHOWN).collect();
    if raw.chars().nth(SHOWN).is_some() {
        shown.push('…');
    }
    format!("{shown:?}")
}

#[cfg(test)]
mod canonical_id_tests {
    use serde_json::json;

    use super::*;
    use crate::compile::{compile, CitationStatus, CompileOptions, CompiledIndex, SourcePage};
    use wikantik_access::access::Caller;
    use wikantik_mcp::{ToolHost, ToolOutcome};
    use wikantik_serve::reader::{IndexReader, MemoryStore, ShardCache};
    use wikantik_serve::tools::KnowledgeTools;

    fn page(file: &str, id: Option<&str>, body: &str) -> SourcePage {
        let id = id.map(|id| format!("canonical_id: '{id}'\n")).unwrap_or_default();
        SourcePage { file_name: file.into(), text: format!("---\n{id}title: {file}\n---\n{body}"), git_version: None, updated: 0 }
    }

    fn warnings_for<'a>(index: &'a CompiledIndex, kind: &str, file: &str) -> Vec<&'a str> {
        index.warnings.iter().filter(|w| w.kind == kind && w.file.as_deref() == Some(file)).map(|w| w.message.as_str()).collect()
    }

    /// `get_page_by_id` for `id`: the page's slug, or the tool's error.
    fn page_by_id(reader: &IndexReader<MemoryStore>, id: &str) -> Result<String, String> {
        let (bundle, briefing) = (wikantik_serve::bundle::BundleConfig::default(), wikantik_serve::briefing::BriefingConfig::default());
        let tools = KnowledgeTools { reader, bundle: &bundle, briefing: &briefing };
        match pollster::block_on(tools.call("get_page_by_id", &json!({ "id": id }), &Caller::anonymous())) {
            ToolOutcome::Json(v) => Ok(v["slug"].as_str().unwrap_or_default().to_string()),
            other => Err(format!("{other:?}")),
        }
    }

    /// Found on the real corpus: 18 authored ids that are not Crockford ULIDs (an I, L, O or U,
    /// or 25 characters) were replaced by derived ids, so `get_page_by_id` with the id the
    /// wiki's authors, relations and `cite://` links use found nothing.
    #[test]
    fn authored_ids_that_are_not_ulids_are_kept_not_replaced() {
        let with_i = "01KQ0P44IN1TTBPRAC78X9P1V2";
        let short = "01KQR44XMGA8E1E7GAT4AYV44";
        let shared = "01KS6S8Z8QYAS6P09AM61S5E2O";
        let pages = vec![
            page("Alpha.md", Some(with_i), "# Alpha\n\nThe alpha section says hello world.\n"),
            page("Short.md", Some(short), "# Short\n\nA page with a 25-character id.\n"),
            page("Kept.md", Some(shared), "# Kept\n\nThe lowest slug keeps a shared id.\n"),
            page("Loser.md", Some(shared), "# Loser\n\nThe other page gets a derived id.\n"),
            page("Spaced.md", Some("not an id"), "# Spaced\n\nAn id with spaces cannot be kept.\n"),
            page("Citing.md", None, &format!("# Citing\n\nSee [the greeting](cite://{with_i}/Alpha \"hello world\").\n")),
        ];
        let index = compile(pages, &CompileOptions::default(), &mut |_, _, _| {}).expect("compile");
        let reader = pollster::block_on(IndexReader::open(MemoryStore::from_compiled(&index), std::sync::Arc::new(ShardCache::default()))).expect("open");
        let table = pollster::block_on(reader.pages()).expect("pages");
        let record = |slug: &str| table.by_slug(slug).unwrap_or_else(|| panic!("{slug}"));

        for (slug, id) in [("Alpha", with_i), ("Short", short), ("Kept", shared)] {
            assert_eq!((record(slug).canonical_id.as_str(), record(slug).canonical_id_authored), (id, true), "{slug}");
            assert_eq!(page_by_id(&reader, id), Ok(slug.to_string()));
            let file = format!("{slug}.md");
            assert_eq!(warnings_for(&index, "MALFORMED_CANONICAL_ID", &file), vec![format!("canonical_id {id} is not a valid ULID; kept as written")]);
        }
        assert_eq!(record("Loser").canonical_id, derived_canonical_id("Loser"));
        assert!(!record("Loser").canonical_id_authored);
        assert!(warnings_for(&index, "MALFORMED_CANONICAL_ID", "Loser.md").is_empty(), "the loser's id is not kept");
        assert_eq!(
            warnings_for(&index, "DUPLICATE_CANONICAL_ID", "Loser.md"),
            vec![format!("'Kept' keeps canonical_id {shared}; this page gets derived id {}", derived_canonical_id("Loser"))]
        );
        assert_eq!(record("Spaced").canonical_id, derived_canonical_id("Spaced"));
        let [spaced] = warnings_for(&index, "MALFORMED_CANONICAL_ID", "Spaced.md")[..] else { panic!("one warning for Spaced") };
        assert!(spaced.starts_with("canonical_id \"not an id\" is not usable as an id (1 to 128 characters"), "{spaced}");
        assert!(page_by_id(&reader, "not an id").is_err());

        // The citation resolves to the page by its authored id.
        let citations = pollster::block_on(reader.citations()).expect("citations");
        let [citation] = citations.citations.as_slice() else { panic!("{:#?}", citations.citations) };
        assert_eq!((citation.target_canonical_id.as_str(), citation.status), (with_i, CitationStatus::Current));
    }

    #[test]
    fn an_unusable_id_is_shown_escaped_and_cut() {
        let long = "x y".repeat(100);
        let shown = shown_id(&long);
        assert!(shown.starts_with("\"x yx y") && shown.ends_with("…\""), "{shown}");
        assert_eq!(shown_id("tab\there"), "\"tab\\there\"");
        assert_eq!(shown_id("01KQ0P44IN1TTBPRAC78X9P1V2"), "01KQ0P44IN1TTBPRAC78X9P1V2");
    }
}
