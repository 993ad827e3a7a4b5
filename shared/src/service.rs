//! The whole HTTP surface of a function: `/knowledge-mcp` (MCP) and the REST routes.
//! Platform adapters call [`handle`] with the request and the reader pinned for it.

use crate::error::Error;
use crate::http::{Request, Response};
use crate::mcp::{self, McpConfig};
use crate::reader::{IndexReader, ShardStore};
use crate::rest::{self, RestConfig, INDEX_HEADER};
use crate::tools::KnowledgeTools;

/// Path of the MCP endpoint.
pub const MCP_PATH: &str = "/knowledge-mcp";

/// Settings of every surface.
#[derive(Debug, Clone, Default)]
pub struct ServiceConfig {
    pub rest: RestConfig,
    pub mcp: McpConfig,
}

/// The surfaces a function build serves: per-function deployments are built with cargo
/// features that switch surfaces off (ARCHITECTURE.md, "Per-function deployment"); routes of
/// a switched-off surface answer 404 in the adapter. `/health` and unknown routes always pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Surfaces {
    pub bundle: bool,
    pub briefing: bool,
    pub mcp: bool,
}

impl Surfaces {
    /// Does this build serve `path`?
    pub fn serves(&self, path: &str) -> bool {
        match path.trim_end_matches('/') {
            "/api/bundle" => self.bundle,
            "/api/briefing" => self.briefing,
            MCP_PATH => self.mcp,
            _ => true,
        }
    }
}

/// Route one request.
pub async fn handle<S: ShardStore>(reader: Result<&IndexReader<S>, &Error>, request: &Request, config: &ServiceConfig) -> Response {
    if request.path.trim_end_matches('/') != MCP_PATH {
        return rest::handle(reader, request, &config.rest).await;
    }
    match reader {
        Err(e) => Response::error(503, &format!("index unavailable: {e}")),
        Ok(reader) => {
            let tools = KnowledgeTools { reader, bundle: &config.rest.bundle, briefing: &config.rest.briefing };
            mcp::handle(request, &tools, &config.mcp).await.with_header(INDEX_HEADER, reader.build_id())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switched_off_surfaces_are_not_served() {
        let bundle_only = Surfaces { bundle: true, briefing: false, mcp: false };
        assert!(bundle_only.serves("/api/bundle") && bundle_only.serves("/api/bundle/"));
        assert!(!bundle_only.serves("/api/briefing") && !bundle_only.serves(MCP_PATH));
        assert!(bundle_only.serves("/health") && bundle_only.serves("/no/such/route"));
    }
}
