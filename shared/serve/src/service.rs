//! The whole HTTP surface of a function, dispatched through the one route table
//! ([`crate::routes`]): `/knowledge-mcp` (MCP), the REST routes, the graph and SPARQL routes.
//! Platform adapters call [`handle`] with the request and the reader pinned for it.

use wikantik_access::auth::rest_access;
use wikantik_format::error::Error;
use wikantik_http::{Request, Response};

use crate::reader::{IndexReader, ShardStore};
use crate::routes::{self, Route, INDEX_HEADER, MAX_QUERY_STRING_BYTES, MAX_TEXT_PARAM_CHARS};
pub use crate::routes::{Surfaces, MCP_PATH, NOT_SERVED_MESSAGE, NOT_SERVED_STATUS};
pub use crate::settings::ServiceConfig;
use crate::{console, graph_api, llms, rest};

/// Route one request. `reader` is `Err` when the index cannot be opened: 503 on every route
/// but `/health`, which reports it as its status. Routes of surfaces this build leaves out
/// answer [`NOT_SERVED_STATUS`] (adapters check [`Surfaces::serves`] earlier still, before
/// reading the pointer).
pub async fn handle<S: ShardStore>(reader: Result<&IndexReader<S>, &Error>, request: &Request, config: &ServiceConfig) -> Response {
    let Some(route) = Route::of(&request.path) else {
        return Response::error(404, "not found");
    };
    if !route.built() {
        return routes::not_served();
    }
    if !route.takes(&request.method) {
        return Response::error(405, "method not allowed").with_header("allow", route.allow().unwrap_or("GET"));
    }
    match route {
        Route::Health => rest::health(reader).await,
        Route::Console => console::page(),
        Route::Mcp => mcp(reader, request, config).await,
        _ => rest_route(route, reader, request, config).await,
    }
}

/// The REST, graph and SPARQL routes: request limits, the index, the caller, then the handler.
async fn rest_route<S: ShardStore>(route: Route, reader: Result<&IndexReader<S>, &Error>, request: &Request, config: &ServiceConfig) -> Response {
    if request.query.len() > MAX_QUERY_STRING_BYTES {
        return Response::error(414, &format!("query string longer than {MAX_QUERY_STRING_BYTES} bytes"));
    }
    for name in ["q", "prompt"] {
        if request.query_param(name).is_some_and(|v| v.chars().count() > MAX_TEXT_PARAM_CHARS) {
            return Response::error(400, &format!("{name} must be at most {MAX_TEXT_PARAM_CHARS} characters"));
        }
    }
    let reader = match reader {
        Ok(r) => r,
        Err(e) => return routes::unavailable(e),
    };
    let config = &config.rest;
    let caller = match rest_access(&config.keys, !config.deny_anonymous, request.header("authorization")) {
        Ok(c) => c,
        Err(response) => return response,
    };
    #[cfg(feature = "acl-mutation")]
    let caller = {
        use wikantik_access::access::mutation::{caller_for, Mutation};
        let surface = match route {
            Route::Sparql => Mutation::Sparql,
            Route::Graph => Mutation::Graph,
            _ => Mutation::RestBundles,
        };
        caller_for(surface, &caller)
    };
    // Each arm exists only in builds with its function's cargo feature (see `Surfaces`), so a
    // per-function build links only its own route's code.
    let response = match route {
        #[cfg(feature = "sparql")]
        Route::Sparql => graph_api::sparql(reader, request, &caller).await,
        #[cfg(feature = "graph")]
        Route::Graph => graph_api::handle(reader, request, request.path.trim_end_matches('/'), config, &caller).await,
        #[cfg(feature = "bundle")]
        Route::Bundle => rest::bundle(reader, request, config, &caller).await,
        #[cfg(feature = "briefing")]
        Route::Briefing => rest::briefing(reader, request, config, &caller).await,
        Route::LlmsTxt => llms::llms_txt(reader, &caller).await,
        Route::PageMarkdown => llms::page_markdown(reader, request.path.trim_end_matches('/'), &caller).await,
        _ => routes::not_served(),
    };
    response.with_header(INDEX_HEADER, reader.build_id())
}

#[cfg(feature = "mcp")]
async fn mcp<S: ShardStore>(reader: Result<&IndexReader<S>, &Error>, request: &Request, config: &ServiceConfig) -> Response {
    match reader {
        Err(e) => routes::unavailable(e),
        Ok(reader) => {
            let tools = crate::tools::KnowledgeTools { reader, bundle: &config.rest.bundle, briefing: &config.rest.briefing };
            wikantik_mcp::handle(request, &tools, &config.mcp).await.with_header(INDEX_HEADER, reader.build_id())
        }
    }
}

#[cfg(not(feature = "mcp"))]
async fn mcp<S: ShardStore>(_reader: Result<&IndexReader<S>, &Error>, _request: &Request, _config: &ServiceConfig) -> Response {
    routes::not_served()
}
