//! What the server offers besides tools — resources ([`super::resources`]), prompts
//! ([`super::prompts`]) and argument completion ([`super::completion`]): which of their
//! methods a host answers, the capabilities that follow from it, and the dispatch to them.

use serde_json::{json, Map, Value};

use super::jsonrpc::RpcError;
use super::request::Context;
use super::{completion, prompts, resources, ToolHost};

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
