//! `assemble_bundle` and `get_briefing` (REFERENCE §2.1, §1.2).

use serde_json::Value;

use super::{list_arg, text_arg, KnowledgeTools};
use wikantik_access::access::Caller;
use wikantik_format::error::{Error, Result};
use crate::briefing::{assemble_briefing, render_markdown, BriefingRequest, ScopeMode};
use crate::bundle::{self, BundleRequest, RetrievalMode};
use wikantik_mcp::ToolOutcome;
use crate::reader::ShardStore;

pub(super) async fn assemble_bundle<S: ShardStore>(
    tools: &KnowledgeTools<'_, S>,
    args: &Value,
    caller: &Caller,
) -> Result<ToolOutcome> {
    let query = text_arg(args, "query").ok_or_else(|| Error::Invalid("query argument is required".into()))?;
    let mode = RetrievalMode::parse(args.get("mode").and_then(Value::as_str))?;
    // `k` (1-50) and `budget` (>= 1) were validated against the tool's inputSchema.
    let count = |name: &str| args.get(name).and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok());
    let request = BundleRequest { query, mode, k: count("k"), budget: count("budget") };
    let bundle = bundle::assemble_bundle(tools.reader, &request, tools.bundle, caller).await?;
    serde_json::to_value(&bundle).map(ToolOutcome::Json).map_err(|e| Error::Invalid(e.to_string()))
}

pub(super) async fn get_briefing<S: ShardStore>(
    tools: &KnowledgeTools<'_, S>,
    args: &Value,
    caller: &Caller,
) -> Result<ToolOutcome> {
    let request = BriefingRequest {
        pins: list_arg(args, "pins"),
        clusters: list_arg(args, "clusters"),
        prompt: text_arg(args, "prompt"),
        // A JSON number, truncated toward zero like Java's intValue().
        budget: args.get("budget").and_then(Value::as_f64).map(|b| b.trunc().clamp(i32::MIN as f64, i32::MAX as f64) as i64),
        scope_mode: ScopeMode::parse(args.get("scope_mode").and_then(Value::as_str))?,
    };
    if !request.has_any_source() {
        return Err(Error::Invalid("at least one of pins, clusters, prompt is required".into()));
    }
    let briefing = assemble_briefing(tools.reader, &request, tools.briefing, tools.bundle, caller).await?;
    Ok(ToolOutcome::Markdown(render_markdown(&briefing)))
}
