//! Prompts: user-selected message templates that pull context out of the wiki, gated by the
//! caller's view exactly like the tools.
//!
//! - `briefing` (arguments `pins`, `clusters`, `prompt`; at least one): the agent-session
//!   briefing of `get_briefing`, as one user message of Markdown.
//! - `ground` (argument `question`, required): the context bundle for the question as sections
//!   with `slug @ version` citations and the coverage confidence, with instructions to cite and
//!   to escalate when the coverage is not strong.
//!
//! Arguments are checked here before the host sees them: `arguments` must be an object of
//! strings naming declared arguments, every required one present and non-blank, none longer
//! than [`crate::MAX_ARGUMENT_CHARS`]; blank values count as absent. A bad argument or
//! an unknown prompt is a JSON-RPC invalid-params error (-32602), never a panic. `prompts/list`
//! is the same for every caller (`public` cache hints in 2026-07-28).

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::request::{cache_hints, host_error, named, required_str, single_page, CacheScope, Context};
use super::jsonrpc::RpcError;
use super::version::ProtocolVersion;
use super::ToolHost;
use crate::MAX_ARGUMENT_CHARS;

/// Name of the briefing prompt.
pub const BRIEFING: &str = "briefing";
/// Name of the grounding prompt.
pub const GROUND: &str = "ground";

/// One argument of a prompt (`prompts/list`).
#[derive(Debug, Clone, PartialEq)]
pub struct PromptArgument {
    pub name: String,
    pub title: String,
    pub description: String,
    pub required: bool,
}

/// One prompt as `prompts/list` advertises it.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptDefinition {
    pub name: String,
    pub title: String,
    pub description: String,
    pub arguments: Vec<PromptArgument>,
}

/// What a host renders for a prompt: a description and the text of the one user message.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptReply {
    pub description: String,
    pub text: String,
}

fn argument(name: &str, title: &str, description: &str, required: bool) -> PromptArgument {
    PromptArgument { name: name.into(), title: title.into(), description: description.into(), required }
}

/// The prompts of the Knowledge server, in `prompts/list` order.
pub fn catalog() -> Vec<PromptDefinition> {
    vec![
        PromptDefinition {
            name: BRIEFING.into(),
            title: "Wiki context briefing".into(),
            description: "Standing wiki context for the start of a task: the sections relevant to the request, the pinned pages and \
                          cluster members within a token budget, and pointers to the rest (the get_briefing tool as a prompt). \
                          Give at least one of pins, clusters, prompt."
                .into(),
            arguments: vec![
                argument("pins", "Pinned pages", "Page slugs or canonical ids to include, comma-separated (at most 25).", false),
                argument("clusters", "Clusters", "Cluster paths whose members to include, comma-separated (e.g. operations/runbooks).", false),
                argument("prompt", "Request", "The task or first request, verbatim: selects the task-relevant sections.", false),
            ],
        },
        PromptDefinition {
            name: GROUND.into(),
            title: "Ground an answer in the wiki".into(),
            description: "The wiki's context bundle for a question: the best sections with `slug @ version` citations and the \
                          coverage confidence, and instructions to answer only from them, cite each claim, and escalate when \
                          the coverage is not strong."
                .into(),
            arguments: vec![argument("question", "Question", "The question to ground, in natural language.", true)],
        },
    ]
}

impl PromptArgument {
    fn to_wire(&self, version: ProtocolVersion) -> Value {
        let mut a = named(version, &self.name, &self.title, &self.description);
        a.insert("required".into(), json!(self.required));
        Value::Object(a)
    }
}

impl PromptDefinition {
    /// The `Prompt` object of `prompts/list` (`title` exists from 2025-06-18 on).
    pub fn to_wire(&self, version: ProtocolVersion) -> Value {
        let mut p = named(version, &self.name, &self.title, &self.description);
        p.insert("arguments".into(), self.arguments.iter().map(|a| a.to_wire(version)).collect());
        Value::Object(p)
    }
}

/// The host's prompt named `name`, or the invalid-params error for an unknown one.
pub(super) fn find<H: ToolHost>(host: &H, name: &str) -> Result<PromptDefinition, RpcError> {
    host.prompts().into_iter().find(|p| p.name == name).ok_or_else(|| RpcError::invalid_params(format!("unknown prompt: {name}")))
}

/// `prompts/list`: the host's prompts, in one page.
pub(super) fn list<H: ToolHost>(cx: &Context<'_, H>, params: &Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
    single_page("prompts/list", Some(params))?;
    let mut result = Map::new();
    result.insert("prompts".into(), cx.host.prompts().iter().map(|p| p.to_wire(cx.version)).collect());
    cache_hints(&mut result, cx.version, cx.config.list_ttl_ms, CacheScope::Public);
    Ok(result)
}

/// The arguments of a `prompts/get` checked against `prompt`'s declaration.
fn checked_arguments(prompt: &PromptDefinition, params: &Map<String, Value>) -> Result<BTreeMap<String, String>, RpcError> {
    let name = &prompt.name;
    let given = match params.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(_) => return Err(RpcError::invalid_params("prompts/get params.arguments must be an object of strings")),
    };
    let mut args = BTreeMap::new();
    for (key, value) in given {
        if !prompt.arguments.iter().any(|a| a.name == key) {
            let known: Vec<&str> = prompt.arguments.iter().map(|a| a.name.as_str()).collect();
            return Err(RpcError::invalid_params(format!("prompt {name} has no argument '{key}' (it takes: {})", known.join(", "))));
        }
        let text = match value {
            Value::Null => continue,
            Value::String(s) => s,
            _ => return Err(RpcError::invalid_params(format!("argument '{key}' of prompt {name} must be a string"))),
        };
        if text.chars().count() > MAX_ARGUMENT_CHARS {
            return Err(RpcError::invalid_params(format!("argument '{key}' of prompt {name} is longer than {MAX_ARGUMENT_CHARS} characters")));
        }
        if !text.trim().is_empty() {
            args.insert(key, text.trim().to_string());
        }
    }
    if let Some(missing) = prompt.arguments.iter().find(|a| a.required && !args.contains_key(&a.name)) {
        return Err(RpcError::invalid_params(format!("prompt {name} requires the argument '{}'", missing.name)));
    }
    Ok(args)
}

/// `prompts/get`: check the arguments, render for the caller, answer one user message.
pub(super) async fn get<H: ToolHost>(cx: &Context<'_, H>, params: &Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
    let prompt = find(cx.host, required_str(params, "prompts/get", "name")?)?;
    let args = checked_arguments(&prompt, params)?;
    let reply = cx.host.get_prompt(&prompt.name, &args, cx.caller).await.map_err(host_error)?;
    let mut result = Map::new();
    result.insert("description".into(), json!(reply.description));
    result.insert("messages".into(), json!([{ "role": "user", "content": { "type": "text", "text": reply.text } }]));
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::INVALID_PARAMS;

    fn ground() -> PromptDefinition {
        catalog().into_iter().find(|p| p.name == GROUND).unwrap()
    }

    fn check(args: Value) -> Result<BTreeMap<String, String>, i64> {
        let mut params = Map::new();
        params.insert("arguments".into(), args);
        checked_arguments(&ground(), &params).map_err(|e| e.code)
    }

    #[test]
    fn arguments_are_checked_against_the_declaration() {
        assert_eq!(check(json!({ "question": "  how? " })).unwrap().get("question").map(String::as_str), Some("how?"));
        for bad in [
            json!({}),
            json!({ "question": "   " }),
            json!({ "question": null }),
            json!({ "question": 3 }),
            json!({ "question": "q", "other": "x" }),
            json!(["question"]),
            json!({ "question": "x".repeat(MAX_ARGUMENT_CHARS + 1) }),
        ] {
            assert_eq!(check(bad.clone()), Err(INVALID_PARAMS), "{bad}");
        }
        let briefing = catalog().into_iter().find(|p| p.name == BRIEFING).unwrap();
        assert_eq!(checked_arguments(&briefing, &Map::new()).map(|a| a.len()), Ok(0));
    }

    #[test]
    fn every_prompt_and_argument_is_described() {
        let names: Vec<String> = catalog().into_iter().map(|p| p.name).collect();
        assert_eq!(names, [BRIEFING, GROUND]);
        for p in catalog() {
            let old = p.to_wire(ProtocolVersion::V2025_03_26);
            assert!(old.get("title").is_none() && old["arguments"][0].get("title").is_none());
            let wire = p.to_wire(ProtocolVersion::V2026_07_28);
            assert!(wire["description"].as_str().is_some_and(|d| d.len() > 60), "{wire}");
            for a in wire["arguments"].as_array().unwrap() {
                assert!(a["title"].is_string() && a["description"].is_string() && a["required"].is_boolean(), "{a}");
            }
        }
    }
}
