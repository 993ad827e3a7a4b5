//! Plain HTTP request and response types: what the platform adapters (Workers, Spin, native
//! host) map their own types to and from. Routing and handlers in the core speak only these.


/// Largest request body any host reads (larger → 413 on REST, a JSON-RPC error on MCP).
pub const MAX_BODY_BYTES: usize = 1 << 20;

use std::collections::BTreeMap;

use serde::Serialize;

/// An HTTP request as the core sees it. Header names are stored lower-cased.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    /// Path without the query string, e.g. `/api/bundle`.
    pub path: String,
    /// Raw query string without the `?` (still percent-encoded).
    pub query: String,
    headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

impl Request {
    /// Build a request; `target` is a path with an optional `?query`.
    pub fn new(method: &str, target: &str) -> Request {
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p.to_string(), q.to_string()),
            None => (target.to_string(), String::new()),
        };
        Request { method: method.to_ascii_uppercase(), path, query, headers: BTreeMap::new(), body: Vec::new() }
    }

    /// Add a header (name case-insensitive; a repeated header is joined with `, `).
    pub fn with_header(mut self, name: &str, value: &str) -> Request {
        self.set_header(name, value);
        self
    }

    pub fn with_body(mut self, body: impl Into<Vec<u8>>) -> Request {
        self.body = body.into();
        self
    }

    pub fn set_header(&mut self, name: &str, value: &str) {
        let key = name.to_ascii_lowercase();
        match self.headers.get_mut(&key) {
            Some(existing) => {
                existing.push_str(", ");
                existing.push_str(value);
            }
            None => {
                self.headers.insert(key, value.to_string());
            }
        }
    }

    /// A header's value (name case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_ascii_lowercase()).map(String::as_str)
    }

    pub fn headers(&self) -> impl Iterator<Item = (&str, &str)> {
        self.headers.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Decoded query parameters in order (`+` is a space; repeated names are kept).
    pub fn query_pairs(&self) -> Vec<(String, String)> {
        parse_form(&self.query)
    }

    /// The first value of a query parameter.
    pub fn query_param(&self, name: &str) -> Option<String> {
        self.query_pairs().into_iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }
}

/// Parse `application/x-www-form-urlencoded` text.
pub fn parse_form(text: &str) -> Vec<(String, String)> {
    text.split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (wikantik_format::markup::url_decode(k, true), wikantik_format::markup::url_decode(v, true))
        })
        .collect()
}

/// An HTTP response produced by the core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// Header names lower-cased, in a stable order.
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn new(status: u16) -> Response {
        Response { status, headers: BTreeMap::new(), body: Vec::new() }
    }

    /// A JSON response with `Content-Type: application/json; charset=UTF-8`.
    pub fn json<T: Serialize>(status: u16, value: &T) -> Response {
        let body = serde_json::to_vec(value).unwrap_or_else(|_| b"{\"error\":\"serialization failed\"}".to_vec());
        Response::new(status).with_header("content-type", "application/json; charset=UTF-8").with_body(body)
    }

    /// `{"error": message}` with the given status, as the reference's REST errors.
    pub fn error(status: u16, message: &str) -> Response {
        Response::json(status, &serde_json::json!({ "error": message }))
    }

    pub fn text(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Response {
        Response::new(status).with_header("content-type", content_type).with_body(body)
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Response {
        self.headers.insert(name.to_ascii_lowercase(), value.to_string());
        self
    }

    pub fn with_body(mut self, body: impl Into<Vec<u8>>) -> Response {
        self.body = body.into();
        self
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_ascii_lowercase()).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_target_and_decodes_query() {
        let r = Request::new("get", "/api/bundle?q=how+to%20deploy&mode=lexical&q=second");
        assert_eq!(r.method, "GET");
        assert_eq!(r.path, "/api/bundle");
        assert_eq!(r.query_param("q").as_deref(), Some("how to deploy"));
        assert_eq!(r.query_param("mode").as_deref(), Some("lexical"));
        assert_eq!(r.query_param("missing"), None);
        assert_eq!(r.query_pairs().len(), 3);
    }

    #[test]
    fn headers_are_case_insensitive() {
        let r = Request::new("POST", "/x").with_header("Content-Type", "a").with_header("ACCEPT", "b").with_header("accept", "c");
        assert_eq!(r.header("content-type"), Some("a"));
        assert_eq!(r.header("Accept"), Some("b, c"));
    }

    #[test]
    fn error_bodies_are_json() {
        let r = Response::error(400, "q (query) parameter required");
        assert_eq!(r.status, 400);
        assert_eq!(r.body, br#"{"error":"q (query) parameter required"}"#);
        assert_eq!(r.header("Content-Type"), Some("application/json; charset=UTF-8"));
    }
}
