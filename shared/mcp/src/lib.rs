//! The Knowledge MCP server: a stateless Streamable-HTTP endpoint (`POST /knowledge-mcp`) with
//! 21 read-only tools, pure and runtime-free so it runs unchanged on Cloudflare Workers
//! (wasm32-unknown-unknown), Spin (wasm32-wasip2) and the native host.
//!
//! # Shape
//!
//! - [`handle`] is the whole endpoint: HTTP checks, the API-key gate ([`crate::auth`]), JSON-RPC
//!   and MCP. [`handle_authorized`] is the same without the key gate, for hosts that authenticate
//!   differently.
//! - [`ToolHost`] is the seam to retrieval: it lists tool definitions and runs a tool. Its
//!   `call` returns a future with no `Send` bound and no runtime, so a Worker can await R2
//!   reads inside it and tests can drive it with `pollster`.
//! - [`catalog`] holds the 21 tool definitions and the routing `instructions`.
//! - Beyond tools, a host may serve every page the caller may view as a resource
//!   (`wiki://page/{slug}`, [`resources`]), prompts ([`prompts`]: `briefing`, `ground`) and
//!   completion of their arguments ([`completion`]); the capabilities follow what the host
//!   serves, so a tools-only host stays tools-only.
//!
//! # Protocol revisions
//!
//! One endpoint serves both eras, chosen per request with no server state:
//!
//! - **2026-07-28 (modern, stateless).** A request whose `params._meta` carries
//!   `io.modelcontextprotocol/protocolVersion`. The `MCP-Protocol-Version` header must be present
//!   and equal to it, `io.modelcontextprotocol/clientCapabilities` must be present, the
//!   `Mcp-Method` header must equal `method`, and for `tools/call` the `Mcp-Name` header
//!   (plain, or `=?base64?…?=`) must equal `params.name`; violations are HTTP 400 with
//!   `HeaderMismatch` (-32020) or `Invalid params` (-32602). An unknown version is HTTP 400
//!   `UnsupportedProtocolVersion` (-32022) with `data.supported`/`data.requested`; an unknown
//!   method, including those the revision removed (`initialize`, `ping`, `logging/setLevel`),
//!   is HTTP 404 with -32601. `server/discover` answers supported versions, capabilities,
//!   identity and instructions; every result carries `resultType: "complete"` and
//!   `_meta["io.modelcontextprotocol/serverInfo"]`; `server/discover` and `tools/list` carry
//!   `ttlMs` and `cacheScope: "public"` (the tool list is the same for every caller).
//! - **2025-11-25, 2025-06-18, 2025-03-26 (handshake era).** `initialize` is answered with the
//!   requested version when we serve it, else with 2025-11-25 (so 2024-11-05 clients get
//!   2025-11-25), and never with an `Mcp-Session-Id`: later requests are served from their
//!   `MCP-Protocol-Version` header alone (absent → 2025-03-26; unsupported → 400). JSON-RPC
//!   batches are accepted only under 2025-03-26, the one revision that allowed them.
//!
//! Responses are always `application/json`, never SSE: no tool streams progress, and a single
//! JSON object is the cheapest thing for a WASM function to produce and for an edge to cache.
//! `GET`/`DELETE` (and anything but `POST`) are 405 with `Allow: POST`; a present `Origin` that
//! is not allowed is 403; notifications and client responses are 202 with an empty body.
//!
//! # Example
//!
//! A host serving the catalog (a real one maps each tool onto retrieval over shards):
//!
//! ```
//! use serde_json::{json, Value};
//! use wikantik_http::Request;
//! use wikantik_mcp::{self as mcp, catalog, Caller, McpConfig, ToolDefinition, ToolHost, ToolOutcome};
//!
//! struct Echo;
//!
//! impl ToolHost for Echo {
//!     fn tools(&self) -> Vec<ToolDefinition> {
//!         catalog::tools()
//!     }
//!     async fn call(&self, name: &str, args: &Value, _caller: &Caller) -> ToolOutcome {
//!         ToolOutcome::Json(json!({ "tool": name, "args": args }))
//!     }
//! }
//!
//! let config = McpConfig::from_settings(None, true, None).unwrap(); // anonymous access
//! let request = Request::new("POST", "/knowledge-mcp")
//!     .with_header("content-type", "application/json")
//!     .with_body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}"#);
//! let response = pollster::block_on(mcp::handle(&request, &Echo, &config));
//! assert_eq!(response.status, 200);
//! let body: Value = serde_json::from_slice(&response.body).unwrap();
//! assert_eq!(body["result"]["protocolVersion"], "2025-11-25");
//! ```
//!
//! # Wire types
//!
//! Hand-written over `serde_json::Value` ([`jsonrpc`]): `rmcp` (the official Rust SDK) depends
//! on `tokio` unconditionally and models the stateful transports; `jsonschema` pulls regex
//! engines and resolvers into every function, so [`schema`] validates the closed subset our
//! schemas use.

pub mod catalog;
pub mod completion;
mod offerings;
pub mod jsonrpc;
pub mod prompts;
mod request;
pub mod resources;
pub mod schema;
mod server;
pub mod version;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod offerings_tests;

use std::collections::BTreeMap;
use std::future::Future;

use serde_json::{json, Value};

pub use wikantik_access::access::Caller;
pub use prompts::{PromptArgument, PromptDefinition, PromptReply};
pub use resources::{PageContents, PageResource};
pub use server::{handle, handle_authorized};
pub use wikantik_format::{Error, Result};

/// Longest string argument (or array element) a tool or prompt accepts, in characters
/// (`sparql_query`'s `query` is bounded by the SPARQL engine instead, at 32 KiB).
pub const MAX_ARGUMENT_CHARS: usize = 4096;
pub use version::ProtocolVersion;

use wikantik_access::auth::AccessConfig;

/// `serverInfo.name`.
pub const SERVER_NAME: &str = "wikantik-knowledge";
/// `serverInfo.title`.
pub const SERVER_TITLE: &str = "Wikantik Knowledge Graph";
/// `serverInfo.version`: the crate version.
pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Behaviour hints of a tool (`annotations` in `tools/list`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolAnnotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

impl ToolAnnotations {
    /// What every Knowledge tool is: reads a closed, immutable index.
    pub const READ_ONLY: ToolAnnotations = ToolAnnotations { read_only: true, destructive: false, idempotent: true, open_world: false };
}

impl Default for ToolAnnotations {
    fn default() -> Self {
        ToolAnnotations::READ_ONLY
    }
}

/// One tool as `tools/list` advertises it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    pub name: String,
    pub title: String,
    pub description: String,
    /// JSON Schema of the `arguments` object (`type: "object"` at the root). Arguments are
    /// validated against it, and its `default`s filled in, before [`ToolHost::call`].
    pub input_schema: Value,
    /// Optional JSON Schema of `structuredContent` (advertised from 2025-06-18 on).
    pub output_schema: Option<Value>,
    pub annotations: ToolAnnotations,
}

impl ToolDefinition {
    /// A read-only tool without an output schema.
    pub fn new(name: &str, title: &str, description: &str, input_schema: Value) -> ToolDefinition {
        ToolDefinition {
            name: name.to_string(),
            title: title.to_string(),
            description: description.to_string(),
            input_schema,
            output_schema: None,
            annotations: ToolAnnotations::READ_ONLY,
        }
    }

    /// The `Tool` object of `tools/list` for `version` (`title` and `outputSchema` exist from
    /// 2025-06-18 on; `annotations.title` is always set so 2025-03-26 clients see it too).
    pub fn to_wire(&self, version: ProtocolVersion) -> Value {
        let mut tool = request::named(version, &self.name, &self.title, &self.description);
        tool.insert("inputSchema".into(), self.input_schema.clone());
        if let (Some(schema), true) = (&self.output_schema, version.has_titles_and_structured_content()) {
            tool.insert("outputSchema".into(), schema.clone());
        }
        let a = self.annotations;
        tool.insert(
            "annotations".into(),
            json!({
                "title": self.title,
                "readOnlyHint": a.read_only,
                "destructiveHint": a.destructive,
                "idempotentHint": a.idempotent,
                "openWorldHint": a.open_world,
            }),
        );
        Value::Object(tool)
    }
}

/// What a tool produced.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// A JSON payload: sent as text (the JSON string) and as `structuredContent`.
    Json(Value),
    /// A text payload (Markdown, SPARQL results text, Turtle): text content only.
    Markdown(String),
    /// A tool-level failure the model can read: `isError: true`, the envelope
    /// `{"error": message, "suggestion"?: …}` as text and as `structuredContent`. Messages must
    /// already be free of internals (no stack traces, paths or shard URLs).
    Error { message: String, suggestion: Option<String> },
}

impl ToolOutcome {
    /// A tool error without a suggestion.
    pub fn error(message: impl Into<String>) -> ToolOutcome {
        ToolOutcome::Error { message: message.into(), suggestion: None }
    }
}

/// The seam between the protocol core and retrieval. Implementations map validated, defaulted
/// arguments onto services and filter every result through the ACL gate with the [`Caller`]'s
/// principals (restricted and nonexistent must look the same).
///
/// `call` returns a plain future (no `Send` bound, no runtime), so it may await platform I/O
/// such as R2 or outbound HTTP reads of shards.
pub trait ToolHost {
    /// The tools this host serves, in a stable order (normally [`catalog::tools`], possibly
    /// minus groups whose shards the index lacks).
    fn tools(&self) -> Vec<ToolDefinition>;

    /// Run tool `name` (one of [`ToolHost::tools`]) with arguments that satisfied its
    /// `inputSchema` and carry its defaults.
    fn call(&self, name: &str, args: &Value, caller: &Caller) -> impl Future<Output = ToolOutcome>;

    /// Whether every page the caller may view is a resource (`resources/*` and completion of
    /// the `wiki://page/{slug}` template). Default: no, a tools-only host.
    fn serves_resources(&self) -> bool {
        false
    }

    /// The pages `caller` may view, in a stable order (by slug): restricted pages are left out
    /// before anything is listed, paged or counted.
    fn list_resources(&self, _caller: &Caller) -> impl Future<Output = crate::Result<Vec<PageResource>>> {
        async { Ok(Vec::new()) }
    }

    /// One page of [`ToolHost::list_resources`]: at most `limit` of the caller's pages whose
    /// slug sorts after `after` (from the first without it), in slug order, and whether more
    /// follow. Default: cut from the whole list; a host over a large wiki reads the window only.
    fn list_resources_after(&self, after: Option<&str>, limit: usize, caller: &Caller) -> impl Future<Output = crate::Result<(Vec<PageResource>, bool)>> {
        async move {
            let mut pages = self.list_resources(caller).await?;
            pages.sort_by(|a, b| a.slug.cmp(&b.slug));
            pages.dedup_by(|a, b| a.slug == b.slug);
            let start = after.map_or(0, |a| pages.partition_point(|p| p.slug.as_str() <= a));
            let rest = pages.split_off(start.min(pages.len()));
            let more = rest.len() > limit;
            Ok((rest.into_iter().take(limit).collect(), more))
        }
    }

    /// Page `slug` with its text if `caller` may view it; `None` for a page that does not
    /// exist *and* for one the caller may not view (the two must be indistinguishable).
    fn read_resource(&self, _slug: &str, _caller: &Caller) -> impl Future<Output = crate::Result<Option<PageContents>>> {
        async { Ok(None) }
    }

    /// The prompts this host serves, in a stable order (normally [`prompts::catalog`]).
    /// Default: none.
    fn prompts(&self) -> Vec<PromptDefinition> {
        Vec::new()
    }

    /// Render prompt `name` (one of [`ToolHost::prompts`]) for `caller`. `args` passed the
    /// prompt's declaration: only declared names, every required one present, none blank.
    /// [`crate::Error::Invalid`] becomes a JSON-RPC invalid-params error.
    fn get_prompt(&self, name: &str, _args: &BTreeMap<String, String>, _caller: &Caller) -> impl Future<Output = crate::Result<PromptReply>> {
        let message = format!("prompt {name} is not served here");
        async move { Err(crate::Error::Invalid(message)) }
    }
}

/// Endpoint configuration (built once per instance from env/secrets).
#[derive(Debug, Clone, PartialEq)]
pub struct McpConfig {
    /// Keys and `allow_unrestricted` for the gate of [`handle`].
    pub access: AccessConfig,
    /// Allowed `Origin` values besides loopback ones, compared case-insensitively without a
    /// trailing `/` (e.g. `https://agent.example.com`); `*` allows every origin.
    pub allowed_origins: Vec<String>,
    /// Allow `http(s)://localhost`, `127.0.0.1` and `[::1]` origins on any port (default true).
    pub allow_loopback_origins: bool,
    /// Largest accepted request body (default 1 MiB); larger → 413.
    pub max_body_bytes: usize,
    /// Most messages in a 2025-03-26 batch (default 32).
    pub max_batch_len: usize,
    /// `ttlMs` of cacheable results (`tools/list`, `server/discover`); default one hour, as the
    /// tool list only changes with a deployment.
    pub list_ttl_ms: u64,
    /// `ttlMs` of results that follow the wiki (`resources/list`, `resources/read`, private to
    /// the caller); default 30 s, so with the 30 s pointer refresh a change is visible within
    /// a minute (CONTRACT §3.11).
    pub resource_ttl_ms: u64,
    /// Most resources in one `resources/list` page (default 100).
    pub resource_page_size: usize,
    /// `instructions` of `initialize` and `server/discover`.
    pub instructions: String,
}

impl McpConfig {
    /// Build a configuration from the raw settings a platform adapter reads: the key-ring
    /// secret ([`wikantik_access::auth::KEY_RING_ENV`], format in [`crate::auth`]), whether anonymous
    /// callers are allowed, and extra allowed origins as a comma- or whitespace-separated list.
    /// Everything else keeps its default.
    pub fn from_settings(
        key_ring: Option<&str>,
        allow_unrestricted: bool,
        allowed_origins: Option<&str>,
    ) -> Result<McpConfig, wikantik_access::auth::KeyRingError> {
        let keys = wikantik_access::auth::KeyRing::from_env_value(key_ring)?;
        let allowed_origins = allowed_origins
            .unwrap_or_default()
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|o| !o.is_empty())
            .map(str::to_string)
            .collect();
        Ok(McpConfig { access: AccessConfig { keys, allow_unrestricted }, allowed_origins, ..McpConfig::default() })
    }
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            access: AccessConfig::default(),
            allowed_origins: Vec::new(),
            allow_loopback_origins: true,
            max_body_bytes: wikantik_http::MAX_BODY_BYTES,
            max_batch_len: 32,
            list_ttl_ms: 3_600_000,
            resource_ttl_ms: 30_000,
            resource_page_size: 100,
            instructions: catalog::INSTRUCTIONS.to_string(),
        }
    }
}
