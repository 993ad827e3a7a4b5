//! The REST surface over plain [`Request`]/[`Response`] values: `/api/bundle`,
//! `/api/briefing`, `/health`, and the graph and SPARQL routes of [`crate::graph_api`] (REFERENCE §1.1, §2.1; CONTRACT §2). Every platform adapter
//! calls [`handle`]; nothing here knows which platform it runs on.

use serde_json::json;

use wikantik_access::access::Caller;
use wikantik_access::auth::{rest_access, KeyRing};
use crate::briefing::{assemble_briefing, render_markdown, BriefingConfig, BriefingRequest, ScopeMode};
use crate::bundle::{assemble_bundle, rankings, BundleConfig, BundleRequest, RetrievalMode, MAX_SECTIONS};
use wikantik_format::error::Error;
use wikantik_http::{Request, Response};
use crate::reader::{IndexReader, ShardStore};

/// Settings of the REST surface.
#[derive(Debug, Clone, Default)]
pub struct RestConfig {
    pub bundle: BundleConfig,
    pub briefing: BriefingConfig,
    /// API keys (the same key ring as MCP); any valid key adds its principals.
    pub keys: KeyRing,
    /// Serve anonymous callers (public pages only). On by default (CONTRACT §3.6).
    pub deny_anonymous: bool,
}

/// Longest raw query string a REST route reads (longer → 414).
pub const MAX_QUERY_STRING_BYTES: usize = 16 * 1024;
/// Longest `q` and `prompt`, in characters (longer → 400).
pub const MAX_TEXT_PARAM_CHARS: usize = 4096;

/// Header naming the build every response came from.
pub const INDEX_HEADER: &str = "x-wikantik-index";

/// Route a REST request. `reader` is `Err` when the index cannot be opened (the error is
/// reported as 503 on every route but `/health`, which reports it as its status).
pub async fn handle<S: ShardStore>(reader: Result<&IndexReader<S>, &Error>, request: &Request, config: &RestConfig) -> Response {
    let path = request.path.trim_end_matches('/');
    let graph = crate::graph_api::is_graph_path(path);
    let known = graph || matches!(path, "/api/bundle" | "/api/briefing" | "/health");
    if !known {
        return Response::error(404, "not found");
    }
    let post_ok = path == "/sparql";
    if request.method != "GET" && request.method != "HEAD" && !(post_ok && request.method == "POST") {
        return Response::error(405, "method not allowed").with_header("allow", if post_ok { "GET, POST" } else { "GET" });
    }
    if path == "/health" {
        return health(reader).await;
    }
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
        Err(e) => return unavailable(e),
    };
    let caller = match rest_access(&config.keys, !config.deny_anonymous, request.header("authorization")) {
        Ok(c) => c,
        Err(response) => return response,
    };
    #[cfg(feature = "acl-mutation")]
    let caller = {
        use wikantik_access::access::mutation::{caller_for, Mutation};
        let surface = match path {
            "/sparql" => Mutation::Sparql,
            _ if graph => Mutation::Graph,
            _ => Mutation::RestBundles,
        };
        caller_for(surface, &caller)
    };
    // Each arm exists only in builds with its function's cargo feature (see
    // `service::Surfaces`), so a per-function build links only its own route's code.
    let response = match path {
        #[cfg(feature = "sparql")]
        "/sparql" => crate::graph_api::sparql(reader, request, &caller).await,
        #[cfg(feature = "graph")]
        _ if graph && path != "/sparql" => crate::graph_api::handle(reader, request, path, config, &caller).await,
        #[cfg(feature = "bundle")]
        "/api/bundle" => bundle(reader, request, config, &caller).await,
        #[cfg(feature = "briefing")]
        "/api/briefing" => briefing(reader, request, config, &caller).await,
        _ => Response::error(crate::service::NOT_SERVED_STATUS, crate::service::NOT_SERVED_MESSAGE),
    };
    response.with_header(INDEX_HEADER, reader.build_id())
}

async fn health<S: ShardStore>(reader: Result<&IndexReader<S>, &Error>) -> Response {
    match reader {
        Err(e) => Response::json(503, &json!({ "status": "unavailable", "error": e.to_string() })),
        Ok(reader) => {
            let m = reader.manifest();
            // Opening the page table proves the shards are reachable and intact.
            match reader.pages().await {
                Ok(_) => Response::json(
                    200,
                    &json!({
                        "status": "ok",
                        "buildId": m.build_id,
                        "generator": m.generator,
                        "stats": m.stats,
                        "shards": m.shards.len(),
                        "shardBytes": m.shards.iter().map(|s| s.size).sum::<u64>(),
                    }),
                ),
                Err(e) => Response::json(503, &json!({ "status": "unavailable", "buildId": m.build_id, "error": e.to_string() })),
            }
            .with_header(INDEX_HEADER, &m.build_id)
        }
    }
}

/// An index fault ([`Error::is_index_fault`]) is the deployment's, not the caller's: 503
/// naming the object. The graph and SPARQL routes answer the same.
pub(crate) fn unavailable(e: &Error) -> Response {
    Response::error(503, &e.index_unavailable())
}

/// `Integer.parseInt(trim)` semantics: optional sign, decimal digits, i32 range.
fn parse_int(raw: &str) -> Option<i64> {
    raw.trim().parse::<i32>().ok().map(i64::from)
}

/// A parameter that is present and not blank.
fn param(request: &Request, name: &str) -> Option<String> {
    request.query_param(name).filter(|v| !v.trim().is_empty())
}

#[cfg(feature = "bundle")]
async fn bundle<S: ShardStore>(reader: &IndexReader<S>, request: &Request, config: &RestConfig, caller: &Caller) -> Response {
    let Some(query) = param(request, "q") else {
        return Response::error(400, "q (query) parameter required");
    };
    let mode = match RetrievalMode::parse(request.query_param("mode").as_deref()) {
        Ok(m) => m,
        Err(e) => return Response::error(400, &e.to_string()),
    };
    if request.query_param("debug").as_deref() == Some("rankings") {
        let depth = param(request, "k").and_then(|k| parse_int(&k)).filter(|k| *k > 0).map_or(500, |k| k as usize);
        return match rankings(reader, &query, &config.bundle, caller, depth.min(1000)).await {
            Ok(r) => Response::json(200, &r),
            Err(e) if e.is_index_fault() => unavailable(&e),
            Err(_) => Response::error(500, "bundle assembly failed"),
        };
    }
    let k = match param(request, "k") {
        None => None,
        Some(raw) => match parse_int(&raw) {
            Some(k) if (1..=MAX_SECTIONS as i64).contains(&k) => Some(k as usize),
            _ => return Response::error(400, &format!("k must be an integer between 1 and {MAX_SECTIONS}")),
        },
    };
    let budget = match param(request, "budget") {
        None => None,
        Some(raw) => match parse_int(&raw) {
            Some(b) if b > 0 => Some(b as usize),
            _ => return Response::error(400, "invalid budget"),
        },
    };
    let bundle_request = BundleRequest { query, mode, k, budget };
    match assemble_bundle(reader, &bundle_request, &config.bundle, caller).await {
        Ok(b) => Response::json(200, &b),
        Err(e) if e.is_index_fault() => unavailable(&e),
        Err(_) => Response::error(500, "bundle assembly failed"),
    }
}

/// Split a CSV parameter: trimmed, blanks dropped.
pub fn csv(raw: Option<String>) -> Vec<String> {
    raw.map(|r| r.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect())
        .unwrap_or_default()
}

#[cfg(feature = "briefing")]
async fn briefing<S: ShardStore>(reader: &IndexReader<S>, request: &Request, config: &RestConfig, caller: &Caller) -> Response {
    let budget = match param(request, "budget") {
        None => None,
        Some(raw) => match parse_int(&raw) {
            Some(b) => Some(b),
            None => return Response::error(400, "invalid budget"),
        },
    };
    let scope_mode = match ScopeMode::parse(request.query_param("scope_mode").as_deref()) {
        Ok(s) => s,
        Err(e) => return Response::error(400, &e.to_string().replace('"', "'")),
    };
    let markdown = match request.query_param("format").as_deref().map(str::trim) {
        None | Some("") | Some("json") => false,
        Some("md") => true,
        Some(_) => return Response::error(400, "format must be 'json' or 'md'"),
    };
    let briefing_request = BriefingRequest {
        pins: csv(request.query_param("pins")),
        clusters: csv(request.query_param("clusters")),
        prompt: param(request, "prompt"),
        budget,
        scope_mode,
    };
    if !briefing_request.has_any_source() {
        return Response::error(400, "at least one of pins, clusters, prompt is required");
    }
    match assemble_briefing(reader, &briefing_request, &config.briefing, &config.bundle, caller).await {
        Ok(b) if markdown => Response::text(200, "text/markdown; charset=UTF-8", render_markdown(&b)),
        Ok(b) => Response::json(200, &b),
        Err(e) if e.is_index_fault() => unavailable(&e),
        Err(_) => Response::error(500, "briefing assembly failed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_parsing() {
        assert_eq!(csv(Some(" a, ,b ,".into())), vec!["a", "b"]);
        assert!(csv(None).is_empty());
    }

    #[test]
    fn parse_int_is_java_like() {
        assert_eq!(parse_int(" 42 "), Some(42));
        assert_eq!(parse_int("-5"), Some(-5));
        assert_eq!(parse_int("1e3"), None);
        assert_eq!(parse_int("99999999999"), None);
    }
}
