//! The whole HTTP surface of a function: `/knowledge-mcp` (MCP) and the REST routes.
//! Platform adapters call [`handle`] with the request and the reader pinned for it.

use wikantik_format::error::Error;
use wikantik_http::{Request, Response};
use wikantik_mcp::McpConfig;
use crate::reader::{IndexReader, ShardStore};
use crate::rest::{self, RestConfig};
#[cfg(feature = "mcp")]
use crate::{rest::INDEX_HEADER, tools::KnowledgeTools};
use wikantik_mcp as mcp;

/// Path of the MCP endpoint.
pub const MCP_PATH: &str = "/knowledge-mcp";

/// Settings of every surface.
#[derive(Debug, Clone, Default)]
pub struct ServiceConfig {
    pub rest: RestConfig,
    pub mcp: McpConfig,
}

/// Status and message of a route whose function this build leaves out.
pub const NOT_SERVED_STATUS: u16 = 404;
pub const NOT_SERVED_MESSAGE: &str = "route not served by this function";

/// The surfaces a function build serves. Per-function deployments build the core with only
/// their cargo feature (`bundle`, `briefing`, `graph`, `sparql`, `mcp`; ARCHITECTURE.md,
/// "Per-function deployment"): the dispatch to a switched-off surface is compiled out, so its
/// code (and engine: SPARQL, query encoder) is not linked, and its routes answer
/// [`NOT_SERVED_STATUS`] before any shard is read. `/health` and unknown routes always pass
/// (unknown routes then get the ordinary 404).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Surfaces {
    pub bundle: bool,
    pub briefing: bool,
    pub graph: bool,
    pub sparql: bool,
    pub mcp: bool,
}

impl Surfaces {
    /// What this build of the core serves, from its cargo features.
    pub const BUILT: Surfaces = Surfaces {
        bundle: cfg!(feature = "bundle"),
        briefing: cfg!(feature = "briefing"),
        graph: cfg!(feature = "graph"),
        sparql: cfg!(feature = "sparql"),
        mcp: cfg!(feature = "mcp"),
    };

    /// Does this build serve `path`?
    pub fn serves(&self, path: &str) -> bool {
        match path.trim_end_matches('/') {
            "/api/bundle" => self.bundle,
            "/api/briefing" => self.briefing,
            "/sparql" => self.sparql,
            MCP_PATH => self.mcp,
            p if crate::graph_api::is_graph_path(p) => self.graph,
            _ => true,
        }
    }
}

/// Route one request. Routes of surfaces this build leaves out ([`Surfaces::BUILT`]) answer
/// [`NOT_SERVED_STATUS`] (adapters check [`Surfaces::serves`] earlier still, before reading
/// the pointer).
pub async fn handle<S: ShardStore>(reader: Result<&IndexReader<S>, &Error>, request: &Request, config: &ServiceConfig) -> Response {
    if !Surfaces::BUILT.serves(&request.path) {
        return Response::error(NOT_SERVED_STATUS, NOT_SERVED_MESSAGE);
    }
    if request.path.trim_end_matches('/') != MCP_PATH {
        return rest::handle(reader, request, &config.rest).await;
    }
    mcp_handle(reader, request, config).await
}

#[cfg(feature = "mcp")]
async fn mcp_handle<S: ShardStore>(reader: Result<&IndexReader<S>, &Error>, request: &Request, config: &ServiceConfig) -> Response {
    match reader {
        Err(e) => Response::error(503, &e.index_unavailable()),
        Ok(reader) => {
            let tools = KnowledgeTools { reader, bundle: &config.rest.bundle, briefing: &config.rest.briefing };
            mcp::handle(request, &tools, &config.mcp).await.with_header(INDEX_HEADER, reader.build_id())
        }
    }
}

#[cfg(not(feature = "mcp"))]
async fn mcp_handle<S: ShardStore>(_reader: Result<&IndexReader<S>, &Error>, _request: &Request, _config: &ServiceConfig) -> Response {
    Response::error(NOT_SERVED_STATUS, NOT_SERVED_MESSAGE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switched_off_surfaces_are_not_served() {
        let bundle_only = Surfaces { bundle: true, briefing: false, graph: false, sparql: false, mcp: false };
        assert!(bundle_only.serves("/api/bundle") && bundle_only.serves("/api/bundle/"));
        assert!(!bundle_only.serves("/api/briefing") && !bundle_only.serves(MCP_PATH));
        assert!(!bundle_only.serves("/sparql") && !bundle_only.serves("/api/graph/clusters"));
        assert!(bundle_only.serves("/health") && bundle_only.serves("/no/such/route"));
        let graph_only = Surfaces { bundle: false, briefing: false, graph: true, sparql: false, mcp: false };
        assert!(graph_only.serves("/api/graph/pages/X/neighbours") && graph_only.serves("/api/graph/kg/traverse"));
        assert!(!graph_only.serves("/sparql") && !graph_only.serves("/api/bundle"));
    }
}
