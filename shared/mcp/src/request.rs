//! What the server offers besides tools — resources ([`super::resources`]), prompts
//! ([`super::prompts`]) and argument completion ([`super::completion`]) — and the pieces every
//! method shares: which methods a host answers, the capabilities that follow from it, the
//! 2026-07-28 cache hints and the mapping of host errors onto JSON-RPC errors.

use serde_json::{json, Map, Value};

use super::jsonrpc::{RpcError, INTERNAL_ERROR};
use super::version::ProtocolVersion;
use super::{completion, prompts, resources, Caller, McpConfig, ToolHost};
use wikantik_format::error::Error;

/// One request's view of the server: the host, the caller (ACL principals from the API key),
/// the configuration and the revision the request speaks.
pub(super) struct Context<'a, H> {
    pub host: &'a H,
    pub caller: &'a Caller,
    pub config: &'a McpConfig,
    pub version: ProtocolVersion,
}

/// Does `host` answer `method`? Methods of a capability the host does not offer stay unknown
/// (-32601), as the specification asks.
pub(super) fn serves<H: ToolHost>(host: &H, method: &str) -> bool {
    match method {
        "resources/list" | "resources/read" | "resources/templates/list" => host.serves_resources(),
        "prompts/list" | "prompts/get" => !host.prompts().is_empty(),
        "completion/complete" => host.serves_resources() || !host.prompts().is_empty(),
        _ => false,
    }
}

/// Answer one of the methods [`serves`] accepts.
pub(super) async fn dispatch<H: ToolHost>(cx: &Context<'_, H>, method: &str, params: &Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
    match method {
        "resources/list" => resources::list(cx, params).await,
        "resources/templates/list" => resources::templates(cx, params),
        "resources/read" => resources::read(cx, params).await,
        "prompts/list" => prompts::list(cx, params),
        "prompts/get" => prompts::get(cx, params).await,
        "completion/complete" => completion::complete(cx, params).await,
        other => Err(RpcError::method_not_found(other)),
    }
}

/// The capabilities of `initialize` and `server/discover`. The server is stateless and never
/// pushes notifications, so nothing is `listChanged` and resources have no subscriptions;
/// clients rely on the 2026-07-28 `ttlMs` hints instead.
pub(super) fn capabilities<H: ToolHost>(host: &H) -> Value {
    let mut caps = Map::new();
    caps.insert("tools".into(), json!({ "listChanged": false }));
    if host.serves_resources() {
        caps.insert("resources".into(), json!({ "subscribe": false, "listChanged": false }));
    }
    let prompts = !host.prompts().is_empty();
    if prompts {
        caps.insert("prompts".into(), json!({ "listChanged": false }));
    }
    if prompts || host.serves_resources() {
        caps.insert("completions".into(), json!({}));
    }
    Value::Object(caps)
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
