//! Resources: every page the caller may view is the resource `wiki://page/{slug}` (the slug
//! percent-encoded as one URI path segment), and the template of that URI.
//!
//! - `resources/list` pages through the caller's pages in slug order,
//!   [`McpConfig::resource_page_size`](super::McpConfig::resource_page_size) at a time; the
//!   cursor is the last slug of the page (base64url), so paging is stable and an index change
//!   between two pages never repeats or skips a page that stayed.
//! - `resources/read` answers the page's raw text (frontmatter included, as `read_pages` does)
//!   as `text/markdown` (`text/html` for an exported HTML page), with its version pinned in
//!   `_meta` ([`META_VERSION`], [`META_CANONICAL_ID`]) — the `slug @ version` to cite.
//! - A page that does not exist and a page the caller may not view give the same error: -32002
//!   "Resource not found" with `data.uri` before 2026-07-28, -32602 from 2026-07-28 on (SEP-2164).
//! - `resources/templates/list` lists [`PAGE_URI_TEMPLATE`]; its `slug` is completed by
//!   [`super::completion`].
//! - 2026-07-28 cache hints: lists and reads follow the wiki and the caller's view, so they are
//!   `private` with [`McpConfig::resource_ttl_ms`](super::McpConfig::resource_ttl_ms); the
//!   template list is `public` with the list TTL.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde_json::{json, Map, Value};

use super::request::{cache_hints, host_error, named, required_str, single_page, CacheScope, Context};
use super::jsonrpc::{RpcError, INVALID_PARAMS};
use super::version::ProtocolVersion;
use super::ToolHost;

/// Scheme and path of every page resource; the slug follows, percent-encoded.
pub const PAGE_URI_PREFIX: &str = "wiki://page/";
/// The RFC 6570 template of page resources (level 1: `{slug}` expands percent-encoded).
pub const PAGE_URI_TEMPLATE: &str = "wiki://page/{slug}";
/// The one variable of [`PAGE_URI_TEMPLATE`].
pub const SLUG_ARGUMENT: &str = "slug";
/// `_meta` key of the page version a read or listing reflects (cite as `slug @ version`).
pub const META_VERSION: &str = "com.wikantik/version";
/// `_meta` key of the page's canonical id.
pub const META_CANONICAL_ID: &str = "com.wikantik/canonicalId";
/// "Resource not found" before 2026-07-28; from 2026-07-28 on it is -32602 (SEP-2164).
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// One page as a resource: what `resources/list` shows and completion matches.
#[derive(Debug, Clone, PartialEq)]
pub struct PageResource {
    pub slug: String,
    /// Display title (the slug when the page has none).
    pub title: String,
    /// The page summary, if it has one.
    pub description: Option<String>,
    pub mime_type: String,
    pub canonical_id: String,
    pub version: u32,
    /// ISO-8601 instant of the page's last change.
    pub last_modified: Option<String>,
}

/// A page resource with its text (`resources/read`).
#[derive(Debug, Clone, PartialEq)]
pub struct PageContents {
    pub resource: PageResource,
    pub text: String,
}

/// The resource URI of page `slug`.
pub fn page_uri(slug: &str) -> String {
    format!("{PAGE_URI_PREFIX}{}", wikantik_format::markup::path_segment(slug))
}

/// The slug a page URI names: exactly one percent-encoded path segment after
/// [`PAGE_URI_PREFIX`], no query or fragment. `None` for anything else.
pub fn slug_of(uri: &str) -> Option<String> {
    let segment = uri.strip_prefix(PAGE_URI_PREFIX)?;
    if segment.is_empty() || segment.contains(['/', '?', '#']) {
        return None;
    }
    let slug = wikantik_format::markup::url_decode(segment, false);
    (!slug.trim().is_empty()).then_some(slug)
}

impl PageResource {
    fn meta(&self) -> Value {
        json!({ META_VERSION: self.version, META_CANONICAL_ID: self.canonical_id })
    }

    /// The `Resource` object of `resources/list` (`title` and `annotations.lastModified` exist
    /// from 2025-06-18 on).
    pub fn to_wire(&self, version: ProtocolVersion) -> Value {
        let mut r = Map::new();
        r.insert("uri".into(), json!(page_uri(&self.slug)));
        r.insert("name".into(), json!(self.slug));
        let titled = version.has_titles_and_structured_content();
        if titled {
            r.insert("title".into(), json!(self.title));
        }
        if let Some(description) = &self.description {
            r.insert("description".into(), json!(description));
        }
        r.insert("mimeType".into(), json!(self.mime_type));
        if let (true, Some(at)) = (titled, &self.last_modified) {
            r.insert("annotations".into(), json!({ "lastModified": at }));
        }
        r.insert("_meta".into(), self.meta());
        Value::Object(r)
    }
}

impl PageContents {
    /// The `TextResourceContents` of `resources/read`.
    pub fn to_wire(&self) -> Value {
        json!({
            "uri": page_uri(&self.resource.slug),
            "mimeType": self.resource.mime_type,
            "text": self.text,
            "_meta": self.resource.meta(),
        })
    }
}

/// The opaque cursor that continues after `slug`.
fn cursor_after(slug: &str) -> String {
    URL_SAFE_NO_PAD.encode(slug.as_bytes())
}

/// The slug a cursor continues after; -32602 for anything [`cursor_after`] did not make.
fn decode_cursor(cursor: &str) -> Result<String, RpcError> {
    URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .filter(|slug| !slug.is_empty())
        .ok_or_else(|| RpcError::invalid_params(format!("invalid cursor '{cursor}': pass back a nextCursor of resources/list")))
}

/// The not-found error of `uri`, the same for a missing and a restricted page.
pub fn not_found(version: ProtocolVersion, uri: &str) -> RpcError {
    let code = if version.is_modern() { INVALID_PARAMS } else { RESOURCE_NOT_FOUND };
    RpcError::new(code, "Resource not found").with_data(json!({ "uri": uri }))
}

/// `resources/list`: the caller's pages in slug order, one page of them after the cursor.
pub(super) async fn list<H: ToolHost>(cx: &Context<'_, H>, params: &Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
    let after = match params.get("cursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(decode_cursor(c)?),
        Some(_) => return Err(RpcError::invalid_params("resources/list params.cursor must be a string")),
    };
    let size = cx.config.resource_page_size.max(1);
    let (page, more) = cx.host.list_resources_after(after.as_deref(), size, cx.caller).await.map_err(host_error)?;
    let mut result = Map::new();
    result.insert("resources".into(), page.iter().map(|p| p.to_wire(cx.version)).collect());
    if let (true, Some(last)) = (more, page.last()) {
        result.insert("nextCursor".into(), json!(cursor_after(&last.slug)));
    }
    cache_hints(&mut result, cx.version, cx.config.resource_ttl_ms, CacheScope::Private);
    Ok(result)
}

/// `resources/templates/list`: the page template, in one page.
pub(super) fn templates<H: ToolHost>(cx: &Context<'_, H>, params: &Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
    single_page("resources/templates/list", Some(params))?;
    let description = "A wiki page by slug: its raw text (Markdown with YAML frontmatter; an exported HTML page as HTML), \
                       its version in _meta to cite as `slug @ version`. Complete `slug` with completion/complete.";
    let mut template = named(cx.version, "page", "Wiki page", description);
    template.insert("uriTemplate".into(), json!(PAGE_URI_TEMPLATE));
    let mut result = Map::new();
    result.insert("resourceTemplates".into(), json!([Value::Object(template)]));
    cache_hints(&mut result, cx.version, cx.config.list_ttl_ms, CacheScope::Public);
    Ok(result)
}

/// `resources/read`: a page the caller may view, or the not-found error.
pub(super) async fn read<H: ToolHost>(cx: &Context<'_, H>, params: &Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
    let uri = required_str(params, "resources/read", "uri")?;
    let Some(slug) = slug_of(uri) else { return Err(not_found(cx.version, uri)) };
    let Some(contents) = cx.host.read_resource(&slug, cx.caller).await.map_err(host_error)? else {
        return Err(not_found(cx.version, uri));
    };
    let mut result = Map::new();
    result.insert("contents".into(), json!([contents.to_wire()]));
    cache_hints(&mut result, cx.version, cx.config.resource_ttl_ms, CacheScope::Private);
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_uris_round_trip_through_percent_encoding() {
        for slug in ["ShardFormat", "Architecture Hub", "Q&A", "a/b", "Ünïcode 100%", "x?y#z"] {
            let uri = page_uri(slug);
            assert!(uri.starts_with(PAGE_URI_PREFIX) && !uri[PAGE_URI_PREFIX.len()..].contains(['/', '?', '#', ' ']), "{uri}");
            assert_eq!(slug_of(&uri).as_deref(), Some(slug), "{uri}");
        }
        assert_eq!(page_uri("Architecture Hub"), "wiki://page/Architecture%20Hub");
        assert_eq!(slug_of("wiki://page/Q&A").as_deref(), Some("Q&A"));
        for bad in ["wiki://page/", "wiki://page/a/b", "wiki://page/a?v=1", "wiki://page/a#x", "wiki://page/%20", "file:///etc/passwd", "wiki://pages/A", ""] {
            assert_eq!(slug_of(bad), None, "{bad}");
        }
    }

    #[test]
    fn cursors_round_trip_and_garbage_is_invalid_params() {
        assert_eq!(decode_cursor(&cursor_after("Q&A")), Ok("Q&A".to_string()));
        for bad in ["", "***", "_w", "//8"] {
            assert_eq!(decode_cursor(bad).map_err(|e| e.code), Err(INVALID_PARAMS), "{bad}");
        }
    }

    #[test]
    fn not_found_code_follows_the_revision() {
        let old = not_found(ProtocolVersion::V2025_11_25, "wiki://page/X");
        assert_eq!((old.code, old.message.as_str()), (RESOURCE_NOT_FOUND, "Resource not found"));
        assert_eq!(old.data, Some(json!({ "uri": "wiki://page/X" })));
        assert_eq!(not_found(ProtocolVersion::V2026_07_28, "wiki://page/X").code, INVALID_PARAMS);
    }
}
