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
