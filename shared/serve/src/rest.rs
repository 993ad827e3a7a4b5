//! The REST handlers over plain [`Request`]/[`Response`] values: `/api/bundle`,
//! `/api/briefing` and `/health` (REFERENCE §1.1, §2.1; CONTRACT §2). [`crate::service::handle`]
//! routes to them after the route table's checks; nothing here knows which platform it runs on.

use serde_json::json;

use wikantik_access::access::Caller;
use crate::briefing::{assemble_briefing, render_markdown, BriefingRequest, ScopeMode};
use crate::bundle::{assemble_bundle, rankings, BundleRequest, RetrievalMode, MAX_SECTIONS};
use wikantik_format::error::Error;
use wikantik_http::{Request, Response};
use crate::reader::{IndexReader, ShardStore};
use crate::routes::{self, INDEX_HEADER};
use crate::settings::RestConfig;

/// `GET /health`: the build and whether its page table is reachable; an index that cannot be
/// opened is reported as the status.
pub(crate) async fn health<S: ShardStore>(reader: Result<&IndexReader<S>, &Error>) -> Response {
    match reader {
        Err(e) => Response::json(503, &json!({ "status": "unavailable", "error": e.to_string() })),
        Ok(reader) => {
            let m = reader.manifest();
            // Opening the page index (an older index's page table) proves the shards are
            // reachable and intact, without decoding every page's record.
            match crate::page_catalog::PageCatalog::open(reader).await {
                Ok(_) => Response::json(
                    200,
                    &json!({
                        "status": "ok",
                        "buildId": m.build_id,
                        "generator": m.generator,
                        "stats": m.stats,
                        "shards": m.shard_count(),
                        "shardBytes": m.shard_bytes(),
                    }),
                ),
                Err(e) => Response::json(503, &json!({ "status": "unavailable", "buildId": m.build_id, "error": e.to_string() })),
            }
            .with_header(INDEX_HEADER, &m.build_id)
        }
    }
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
pub(crate) async fn bundle<S: ShardStore>(reader: &IndexReader<S>, request: &Request, config: &RestConfig, caller: &Caller) -> Response {
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
            Err(e) => routes::failure(&e, "bundle assembly"),
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
        Err(e) => routes::failure(&e, "bundle assembly"),
    }
}

/// Split a CSV parameter: trimmed, blanks dropped.
pub fn csv(raw: Option<String>) -> Vec<String> {
    raw.map(|r| r.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect())
        .unwrap_or_default()
}

#[cfg(feature = "briefing")]
pub(crate) async fn briefing<S: ShardStore>(reader: &IndexReader<S>, request: &Request, config: &RestConfig, caller: &Caller) -> Response {
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
        Err(e) => routes::failure(&e, "briefing assembly"),
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
