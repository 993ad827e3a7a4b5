//! The one route table every host dispatches through: which paths exist, which methods they
//! take, which function build serves them, and how a failure becomes a status.
//!
//! [`crate::service::handle`] is the only dispatcher; the handlers in [`crate::rest`] and
//! [`crate::graph_api`] and the MCP endpoint are leaves that never route themselves.

use wikantik_format::error::Error;
use wikantik_http::Response;

/// Path of the MCP endpoint.
pub const MCP_PATH: &str = "/knowledge-mcp";

/// Header naming the build every response came from.
pub const INDEX_HEADER: &str = "x-wikantik-index";

/// Status and message of a route whose function this build leaves out.
pub const NOT_SERVED_STATUS: u16 = 404;
pub const NOT_SERVED_MESSAGE: &str = "route not served by this function";

/// Longest raw query string a REST route reads (longer → 414).
pub const MAX_QUERY_STRING_BYTES: usize = 16 * 1024;
/// Longest `q` and `prompt`, in characters (longer → 400).
pub const MAX_TEXT_PARAM_CHARS: usize = 4096;

/// A route of the HTTP surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `GET /health`: the index's build and whether its shards are reachable.
    Health,
    /// `GET /api/bundle`: a context bundle.
    Bundle,
    /// `GET /api/briefing`: a session briefing (JSON or markdown).
    Briefing,
    /// `GET /api/graph/…`: neighbours, clusters, knowledge-graph nodes and traversal.
    Graph,
    /// `GET|POST /sparql`: the SPARQL 1.1 protocol.
    Sparql,
    /// `/knowledge-mcp`: the MCP endpoint (its transport rules decide methods).
    Mcp,
    /// `GET /`: the console, a static page that shows what an agent gets.
    Console,
    /// `GET /llms.txt`: the wiki as llms.txt (a link per viewable page, by cluster).
    LlmsTxt,
    /// `GET /pages/{slug}.md`: one page's markdown.
    PageMarkdown,
}

impl Route {
    /// The route of `path` (a trailing `/` is ignored), `None` for an unknown path.
    pub fn of(path: &str) -> Option<Route> {
        match path.trim_end_matches('/') {
            "" => Some(Route::Console),
            "/llms.txt" => Some(Route::LlmsTxt),
            p if p.starts_with("/pages/") && p.ends_with(".md") => Some(Route::PageMarkdown),
            "/health" => Some(Route::Health),
            "/api/bundle" => Some(Route::Bundle),
            "/api/briefing" => Some(Route::Briefing),
            "/sparql" => Some(Route::Sparql),
            MCP_PATH => Some(Route::Mcp),
            p if p.starts_with("/api/graph/") => Some(Route::Graph),
            _ => None,
        }
    }

    /// The methods the route answers (`HEAD` goes with `GET`), as an `allow` header value;
    /// `None` for MCP, whose transport answers every method itself.
    pub fn allow(self) -> Option<&'static str> {
        match self {
            Route::Mcp => None,
            Route::Sparql => Some("GET, POST"),
            _ => Some("GET"),
        }
    }

    /// Does the route take `method`?
    pub fn takes(self, method: &str) -> bool {
        match self.allow() {
            None => true,
            Some(allow) => (method == "HEAD" && allow.contains("GET")) || allow.split(", ").any(|m| m == method),
        }
    }

    /// Does this build serve the route? Per-function builds compile only their function's
    /// routes in (cargo features `bundle`, `briefing`, `graph`, `sparql`, `mcp`; ARCHITECTURE.md,
    /// "Per-function deployment"); `/health`, the console, `/llms.txt` and the page markdown
    /// are always served.
    pub fn built(self) -> bool {
        Surfaces::BUILT.serves_route(self)
    }
}

/// The surfaces a function build serves: a route of a surface this build leaves out answers
/// [`NOT_SERVED_STATUS`] before any shard is read (adapters ask [`Surfaces::serves`] before
/// they even read the index pointer). `/health` and unknown routes always pass (unknown routes
/// then get the ordinary 404).
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
        Route::of(path).is_none_or(|route| self.serves_route(route))
    }

    fn serves_route(&self, route: Route) -> bool {
        match route {
            Route::Health | Route::Console | Route::LlmsTxt | Route::PageMarkdown => true,
            Route::Bundle => self.bundle,
            Route::Briefing => self.briefing,
            Route::Graph => self.graph,
            Route::Sparql => self.sparql,
            Route::Mcp => self.mcp,
        }
    }
}

/// The answer to a route this build leaves out.
pub fn not_served() -> Response {
    Response::error(NOT_SERVED_STATUS, NOT_SERVED_MESSAGE)
}

/// The answer to a request body over [`wikantik_http::MAX_BODY_BYTES`], which every host
/// checks while reading the body; `None` when the body fits.
pub fn body_too_large(len: usize) -> Option<Response> {
    (len > wikantik_http::MAX_BODY_BYTES)
        .then(|| Response::error(413, &format!("request body larger than {} bytes", wikantik_http::MAX_BODY_BYTES)))
}

/// The answer to a request when the index cannot be opened (the pointer, manifest or page
/// table is missing, unreadable or corrupt): 503 naming the object.
pub fn unavailable(e: &Error) -> Response {
    Response::error(503, &e.index_unavailable())
}

/// How a failure to answer becomes a status, on every route: an index fault
/// ([`Error::is_index_fault`]: the pointer, manifest or a shard missing, unreadable or corrupt)
/// is the deployment's, not the caller's — 503 naming the object; anything else is a 500 with
/// `what` failed, never the error's internals.
pub fn failure(e: &Error, what: &str) -> Response {
    if e.is_index_fault() {
        unavailable(e)
    } else {
        Response::error(500, &format!("{what} failed"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_has_one_route() {
        assert_eq!(Route::of("/api/bundle/"), Some(Route::Bundle));
        assert_eq!(Route::of("/api/graph/pages/X/neighbours"), Some(Route::Graph));
        assert_eq!(Route::of("/api/graph/clusters"), Some(Route::Graph));
        assert_eq!(Route::of("/sparql"), Some(Route::Sparql));
        assert_eq!(Route::of(MCP_PATH), Some(Route::Mcp));
        assert_eq!(Route::of("/api/graphs"), None);
        assert_eq!(Route::of("/"), Some(Route::Console));
        assert_eq!(Route::of("/llms.txt"), Some(Route::LlmsTxt));
        assert_eq!(Route::of("/pages/Some%20Page.md"), Some(Route::PageMarkdown));
        assert_eq!(Route::of("/pages/Some"), None);
    }

    #[test]
    fn methods_per_route() {
        assert!(Route::Bundle.takes("GET") && Route::Bundle.takes("HEAD") && !Route::Bundle.takes("POST"));
        assert!(Route::Sparql.takes("POST") && Route::Sparql.takes("HEAD") && !Route::Sparql.takes("DELETE"));
        assert!(Route::Mcp.takes("DELETE"));
    }

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

    #[test]
    fn failures_are_classified_once() {
        assert_eq!(failure(&Error::Invalid("boom".into()), "bundle assembly").status, 500);
        assert_eq!(body_too_large(wikantik_http::MAX_BODY_BYTES).map(|r| r.status), None);
        assert_eq!(body_too_large(wikantik_http::MAX_BODY_BYTES + 1).map(|r| r.status), Some(413));
    }
}
