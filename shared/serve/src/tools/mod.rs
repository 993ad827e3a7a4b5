//! The Knowledge MCP tools over an index: the [`ToolHost`] that maps each of the 21 tools of
//! [`wikantik_mcp::catalog`] onto the core's services. Every tool passes the ACL gate
//! (CONTRACT §3.5): it sees only pages the caller may view.
//!
//! One module per group of REFERENCE §3.2: [`retrieval`] (bundle, briefing), [`context`]
//! (`retrieve_context`), [`pages`] (`get_page`, `list_pages`, `list_metadata_values`,
//! `read_pages`), [`spine`] (`list_clusters`, `list_tags`, `list_pages_by_filter`,
//! `get_page_by_id`), [`agent`] (`get_page_for_agent`), [`citations`]
//! (`list_stale_citations`) and [`kg`] (the knowledge-graph and ontology tools); [`common`] holds the shared page shapes, filters and dates.
//! Beyond the tools, [`resources`] serves the caller's pages as MCP resources and [`prompts`]
//! renders the `briefing` and `ground` prompts, through the same gate.

mod agent;
mod citations;
mod common;
mod context;
mod kg;
mod pages;
mod prompts;
mod resources;
mod retrieval;
mod spine;

use std::collections::BTreeMap;

use serde_json::Value;


/// The message of a SPARQL query that cannot be run (the `/sparql` route's 400).
#[cfg(feature = "sparql")]
pub(crate) fn sparql_error_message(e: wikantik_sparql::SparqlError) -> String {
    kg::sparql_error(e).to_string()
}

use wikantik_access::access::Caller;
use crate::briefing::BriefingConfig;
use crate::bundle::BundleConfig;
use wikantik_format::error::{Error, Result};
use wikantik_mcp::{catalog, PageContents, PageResource, PromptDefinition, PromptReply, ToolDefinition, ToolHost, ToolOutcome};
use crate::reader::{IndexReader, ShardStore};

/// The tool host for one request: a pinned index reader plus the service settings.
pub struct KnowledgeTools<'r, S> {
    pub reader: &'r IndexReader<S>,
    pub bundle: &'r BundleConfig,
    pub briefing: &'r BriefingConfig,
}

impl<S: ShardStore> ToolHost for KnowledgeTools<'_, S> {
    fn tools(&self) -> Vec<ToolDefinition> {
        catalog::tools()
    }

    async fn call(&self, name: &str, args: &Value, caller: &Caller) -> ToolOutcome {
        if let Some(message) = oversized_argument(name, args) {
            return ToolOutcome::error(message);
        }
        let outcome: Result<ToolOutcome> = match name {
            "assemble_bundle" => retrieval::assemble_bundle(self, args, caller).await,
            "get_briefing" => retrieval::get_briefing(self, args, caller).await,
            "retrieve_context" => context::retrieve_context(self, args, caller).await,
            "get_page" => pages::get_page(self, args, caller).await,
            "list_pages" => pages::list_pages(self, args, caller).await,
            "list_metadata_values" => pages::list_metadata_values(self, args, caller).await,
            "read_pages" => pages::read_pages(self, args, caller).await,
            "list_clusters" => spine::list_clusters(self, args, caller).await,
            "list_tags" => spine::list_tags(self, args, caller).await,
            "list_pages_by_filter" => spine::list_pages_by_filter(self, args, caller).await,
            "get_page_by_id" => spine::get_page_by_id(self, args, caller).await,
            "get_page_for_agent" => agent::get_page_for_agent(self, args, caller).await,
            "list_stale_citations" => citations::list_stale_citations(self, args, caller).await,
            "discover_schema" => kg::discover_schema(self, args, caller).await,
            "query_nodes" => kg::query_nodes(self, args, caller).await,
            "get_node" => kg::get_node(self, args, caller).await,
            "traverse" => kg::traverse(self, args, caller).await,
            "search_knowledge" => kg::search_knowledge(self, args, caller).await,
            "find_similar" => kg::find_similar(self, args, caller).await,
            "get_ontology" => kg::get_ontology(self, args, caller).await,
            #[cfg(feature = "sparql")]
            "sparql_query" => kg::sparql_query(self, args, caller).await,
            other => Err(Error::Invalid(format!("{other} is not available in this build"))),
        };
        outcome.unwrap_or_else(|e| ToolOutcome::error(tool_message(&e)))
    }

    fn serves_resources(&self) -> bool {
        true
    }

    async fn list_resources(&self, caller: &Caller) -> Result<Vec<PageResource>> {
        resources::list(self, caller).await
    }

    async fn list_resources_after(&self, after: Option<&str>, limit: usize, caller: &Caller) -> Result<(Vec<PageResource>, bool)> {
        resources::list_after(self, after, limit, caller).await
    }

    async fn read_resource(&self, slug: &str, caller: &Caller) -> Result<Option<PageContents>> {
        resources::read(self, slug, caller).await
    }

    fn prompts(&self) -> Vec<PromptDefinition> {
        crate::mcp::prompts::catalog()
    }

    async fn get_prompt(&self, name: &str, args: &BTreeMap<String, String>, caller: &Caller) -> Result<PromptReply> {
        prompts::get(self, name, args, caller).await
    }
}

impl<S: ShardStore> KnowledgeTools<'_, S> {
    /// The tools behind the graph REST routes (`get_node`, `traverse`) without the whole
    /// catalogue's dispatch, so a graph-only build does not link every other tool. The error
    /// is kept as it is, so the route can answer an index fault 503 and an unknown node 404.
    pub(crate) async fn call_graph_tool(&self, name: &str, args: &Value, caller: &Caller) -> Result<ToolOutcome> {
        if let Some(message) = oversized_argument(name, args) {
            return Err(Error::Invalid(message));
        }
        match name {
            "get_node" => kg::get_node(self, args, caller).await,
            "traverse" => kg::traverse(self, args, caller).await,
            other => Err(Error::Invalid(format!("{other} is not a graph route's tool"))),
        }
    }
}

pub use wikantik_mcp::MAX_ARGUMENT_CHARS;

/// The error for the first string argument longer than [`MAX_ARGUMENT_CHARS`], if any.
fn oversized_argument(tool: &str, args: &Value) -> Option<String> {
    let Value::Object(map) = args else { return None };
    map.iter().find_map(|(key, value)| {
        if tool == "sparql_query" && key == "query" {
            return None;
        }
        let too_long = |v: &Value| v.as_str().is_some_and(|s| s.chars().count() > MAX_ARGUMENT_CHARS);
        let over = match value {
            Value::Array(items) => items.iter().any(too_long),
            other => too_long(other),
        };
        over.then(|| format!("{key} is longer than {MAX_ARGUMENT_CHARS} characters"))
    })
}

/// Text of a string argument, trimmed; `None` when absent or blank.
pub(crate) fn text_arg(args: &Value, name: &str) -> Option<String> {
    args.get(name).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
}

/// A string-array argument: each element stringified, trimmed, blanks dropped.
pub(crate) fn list_arg(args: &Value, name: &str) -> Vec<String> {
    match args.get(name) {
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => s.trim().to_string(),
                other => other.to_string(),
            })
            .filter(|s| !s.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

/// The message of a failed tool call: an index fault ([`Error::is_index_fault`]) as every
/// surface words it (`index unavailable: …`, naming the object), anything else (a bad
/// argument, an unknown node) as it is.
fn tool_message(e: &Error) -> String {
    if e.is_index_fault() {
        e.index_unavailable()
    } else {
        e.to_string()
    }
}
