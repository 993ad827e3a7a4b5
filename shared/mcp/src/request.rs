//! What every method handler shares: one request's [`Context`], how listed objects begin, the
//! 2026-07-28 cache hints, single-page lists, required string parameters and the mapping of
//! host errors onto JSON-RPC errors.

use serde_json::{json, Map, Value};

use super::jsonrpc::{RpcError, INTERNAL_ERROR};
use super::version::ProtocolVersion;
use super::{Caller, McpConfig};
use wikantik_format::error::Error;

/// One request's view of the server: the host, the caller (ACL principals from the API key),
/// the configuration and the revision the request speaks.
pub(super) struct Context<'a, H> {
    pub host: &'a H,
    pub caller: &'a Caller,
    pub config: &'a McpConfig,
    pub version: ProtocolVersion,
}

/// `name`, `title` (from 2025-06-18 on) and `description`: how every listed object begins
/// (tools, prompts and their arguments, resource templates).
pub(super) fn named(version: ProtocolVersion, name: &str, title: &str, description: &str) -> Map<String, Value> {
    let mut object = Map::new();
    object.insert("name".into(), json!(name));
    if version.has_titles_and_structured_content() {
        object.insert("title".into(), json!(title));
    }
    object.insert("description".into(), json!(description));
    object
}

/// Who may reuse a cached result (2026-07-28 `cacheScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CacheScope {
    /// The same for every caller (tool, prompt and template lists).
    Public,
    /// Depends on the caller's view of the wiki (resource lists and reads).
    Private,
}

/// Add `ttlMs` and `cacheScope` to a modern result; older revisions have no cache hints.
pub(super) fn cache_hints(result: &mut Map<String, Value>, version: ProtocolVersion, ttl_ms: u64, scope: CacheScope) {
    if version.is_modern() {
        result.insert("ttlMs".into(), json!(ttl_ms));
        let scope = match scope {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        };
        result.insert("cacheScope".into(), json!(scope));
    }
}

/// A list that always fits one page never hands out a cursor, so any cursor is invalid.
pub(super) fn single_page(method: &str, params: Option<&Map<String, Value>>) -> Result<(), RpcError> {
    match params.and_then(|p| p.get("cursor")).filter(|c| !c.is_null()) {
        Some(cursor) => Err(RpcError::invalid_params(format!("invalid cursor {cursor}: {method} has a single page"))),
        None => Ok(()),
    }
}

/// A host failure as a JSON-RPC error: a fault of the index is an internal error worded as
/// every surface words it (`index unavailable: …`); anything else is the request's (invalid
/// params), with the host's message, which is already free of internals.
pub(super) fn host_error(e: Error) -> RpcError {
    if e.is_index_fault() {
        RpcError::new(INTERNAL_ERROR, e.index_unavailable())
    } else {
        RpcError::invalid_params(e)
    }
}

/// A string member of `params`, or the invalid-params error naming what `method` requires.
pub(super) fn required_str<'p>(params: &'p Map<String, Value>, method: &str, field: &str) -> Result<&'p str, RpcError> {
    params
        .get(field)
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params(format!("{method} requires params.{field} (a string)")))
}
