//! `completion/complete`: suggestions for the arguments of the page template and of prompts,
//! drawn only from what the caller may view.
//!
//! - `ref/resource` [`PAGE_URI_TEMPLATE`](super::resources::PAGE_URI_TEMPLATE), argument `slug`:
//!   the caller's slugs that start with the typed value (case-insensitively), in slug order.
//! - `ref/prompt` `briefing`, argument `pins` (a comma-separated list): the last item is
//!   completed the same way, the items before it kept. Other prompt arguments have no
//!   suggestions (an empty list).
//!
//! At most [`MAX_VALUES`] values; `total` counts every match and `hasMore` says whether some
//! were left out. An unknown reference (another template, a concrete URI, an unknown prompt)
//! or an argument the reference does not declare is invalid params (-32602).

use serde_json::{json, Map, Value};

use super::request::{host_error, Context};
use super::jsonrpc::RpcError;
use super::prompts::{self, BRIEFING};
use super::resources::{PAGE_URI_TEMPLATE, SLUG_ARGUMENT};
use super::ToolHost;

/// Most values of one completion (the specification's cap).
pub const MAX_VALUES: usize = 100;

/// The caller's slugs starting with `prefix` (case-insensitively), in slug order.
async fn matching_slugs<H: ToolHost>(cx: &Context<'_, H>, prefix: &str) -> Result<Vec<String>, RpcError> {
    let prefix = prefix.to_lowercase();
    let mut slugs: Vec<String> = cx
        .host
        .list_resources(cx.caller)
        .await
        .map_err(host_error)?
        .into_iter()
        .map(|r| r.slug)
        .filter(|s| s.to_lowercase().starts_with(&prefix))
        .collect();
    slugs.sort();
    slugs.dedup();
    Ok(slugs)
}

/// The `completion` object: at most [`MAX_VALUES`] of `values`, with the total and `hasMore`.
fn completion(values: Vec<String>) -> Map<String, Value> {
    let total = values.len();
    let shown: Vec<String> = values.into_iter().take(MAX_VALUES).collect();
    let mut result = Map::new();
    result.insert("completion".into(), json!({ "values": shown, "total": total, "hasMore": total > MAX_VALUES }));
    result
}

/// Whether `argument` of the template or prompt in `reference` completes to page slugs.
fn completes_slugs<H: ToolHost>(host: &H, reference: &Map<String, Value>, argument: &str) -> Result<bool, RpcError> {
    let field = |name: &str| reference.get(name).and_then(Value::as_str);
    match field("type") {
        Some("ref/resource") => {
            let uri = field("uri").ok_or_else(|| RpcError::invalid_params("completion/complete ref/resource requires ref.uri (a string)"))?;
            if uri != PAGE_URI_TEMPLATE || !host.serves_resources() {
                return Err(RpcError::invalid_params(format!("unknown resource template: {uri}")));
            }
            if argument != SLUG_ARGUMENT {
                return Err(RpcError::invalid_params(format!("resource template {uri} has no argument '{argument}'")));
            }
            Ok(true)
        }
        Some("ref/prompt") => {
            let name = field("name").ok_or_else(|| RpcError::invalid_params("completion/complete ref/prompt requires ref.name (a string)"))?;
            let prompt = prompts::find(host, name)?;
            if !prompt.arguments.iter().any(|a| a.name == argument) {
                return Err(RpcError::invalid_params(format!("prompt {name} has no argument '{argument}'")));
            }
            Ok(name == BRIEFING && argument == "pins" && host.serves_resources())
        }
        Some(other) => Err(RpcError::invalid_params(format!("unknown completion reference type: {other}"))),
        None => Err(RpcError::invalid_params("completion/complete requires ref.type ('ref/resource' or 'ref/prompt')")),
    }
}

/// `completion/complete`.
pub(super) async fn complete<H: ToolHost>(cx: &Context<'_, H>, params: &Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
    let Some(Value::Object(reference)) = params.get("ref") else {
        return Err(RpcError::invalid_params("completion/complete requires params.ref (an object)"));
    };
    let argument = params.get("argument").and_then(Value::as_object);
    let (Some(name), Some(value)) = (
        argument.and_then(|a| a.get("name")).and_then(Value::as_str),
        argument.and_then(|a| a.get("value")).and_then(Value::as_str),
    ) else {
        return Err(RpcError::invalid_params("completion/complete requires params.argument with a string name and value"));
    };
    if !completes_slugs(cx.host, reference, name)? {
        return Ok(completion(Vec::new()));
    }
    // A list argument completes its last item; the items before it are kept as typed.
    let (head, last) = match (name, value.rfind(',')) {
        (SLUG_ARGUMENT, _) | (_, None) => ("", value),
        (_, Some(at)) => value.split_at(at + 1),
    };
    let head = if head.is_empty() { String::new() } else { format!("{} ", head.trim_end()) };
    let slugs = matching_slugs(cx, last.trim_start()).await?;
    Ok(completion(slugs.into_iter().map(|s| format!("{head}{s}")).collect()))
}
