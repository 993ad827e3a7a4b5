//! Transport checks, version selection and method dispatch. See the module docs of
//! [`crate::mcp`] for the rules; each function below names the rule it implements.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::{json, Map, Value};

use super::offerings;
use super::request::{cache_hints, single_page, CacheScope, Context};
use super::jsonrpc::{self, classify, failure, success, Message, RpcError};
use super::schema::{apply_defaults, validate};
use super::version::{negotiate_initialize, ProtocolVersion};
use super::{Caller, McpConfig, ToolHost, ToolOutcome, SERVER_NAME, SERVER_TITLE, SERVER_VERSION};
use wikantik_access::auth;
use wikantik_http::{Request, Response};

/// `_meta` key of the per-request protocol version (2026-07-28).
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the per-request client capabilities (2026-07-28).
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the server identity on results (2026-07-28).
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The whole `/knowledge-mcp` endpoint: HTTP method and `Origin` checks, then the API-key gate
/// of [`auth::mcp_access`] (503/401/403), then [`handle_authorized`].
pub async fn handle<H: ToolHost>(request: &Request, host: &H, config: &McpConfig) -> Response {
    if let Some(rejection) = check_method_and_origin(request, config) {
        return rejection;
    }
    match auth::mcp_access(&config.access, request.header("authorization")) {
        Ok(caller) => handle_authorized(request, host, config, &caller).await,
        Err(response) => response,
    }
}

/// The endpoint for an already-authenticated `caller`: every transport rule and the JSON-RPC /
/// MCP layer, without the key gate.
pub async fn handle_authorized<H: ToolHost>(request: &Request, host: &H, config: &McpConfig, caller: &Caller) -> Response {
    if let Some(rejection) = check_method_and_origin(request, config) {
        return rejection;
    }
    if let Some(rejection) = check_body_headers(request, config) {
        return rejection;
    }
    let value: Value = match serde_json::from_slice(&request.body) {
        Ok(v) => v,
        Err(e) => return reply(400, &failure(None, &RpcError::parse_error(e))),
    };
    let server = Server { host, config, caller, request };
    match value {
        Value::Array(batch) => server.batch(batch).await,
        single => server.single(single).await,
    }
}

/// POST only (GET/DELETE and the rest → 405 `Allow: POST`); a present `Origin` must be allowed
/// (→ 403, DNS-rebinding protection).
fn check_method_and_origin(request: &Request, config: &McpConfig) -> Option<Response> {
    if request.method != "POST" {
        let error = RpcError::new(
            jsonrpc::INVALID_REQUEST,
            format!("Method Not Allowed: this stateless MCP endpoint accepts only POST (got {})", request.method),
        );
        return Some(reply(405, &failure(None, &error)).with_header("allow", "POST"));
    }
    if let Some(origin) = request.header("origin") {
        if !origin_allowed(origin, config) {
            let error = RpcError::new(jsonrpc::INVALID_REQUEST, format!("Forbidden: origin '{origin}' is not allowed"));
            return Some(reply(403, &failure(None, &error)));
        }
    }
    None
}

fn origin_allowed(origin: &str, config: &McpConfig) -> bool {
    let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
    if config.allowed_origins.iter().any(|o| o == "*" || o.trim().trim_end_matches('/').eq_ignore_ascii_case(&origin)) {
        return true;
    }
    config.allow_loopback_origins && is_loopback_origin(&origin)
}

/// `http(s)://localhost`, `127.0.0.1` or `[::1]`, with an optional numeric port and nothing else.
fn is_loopback_origin(origin: &str) -> bool {
    let Some(rest) = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://")) else {
        return false;
    };
    let (host, port) = match rest.strip_prefix("[::1]") {
        Some(after) => ("[::1]", after),
        None => match rest.find(':') {
            Some(colon) => (&rest[..colon], &rest[colon..]),
            None => (rest, ""),
        },
    };
    let port_ok = port.is_empty()
        || port.strip_prefix(':').is_some_and(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()));
    matches!(host, "localhost" | "127.0.0.1" | "[::1]") && port_ok
}

/// Body size (413), `Content-Type` (415 unless JSON; absent is tolerated) and `Accept`
/// (406 when present and JSON is not acceptable: we only ever answer JSON).
fn check_body_headers(request: &Request, config: &McpConfig) -> Option<Response> {
    if request.body.len() > config.max_body_bytes {
        let error = RpcError::invalid_request(format!("request body exceeds the limit of {} bytes", config.max_body_bytes));
        return Some(reply(413, &failure(None, &error)));
    }
    if let Some(content_type) = request.header("content-type") {
        if !media_type_is(content_type, |t| t == "application/json") {
            let error = RpcError::invalid_request(format!("Content-Type must be application/json, got '{content_type}'"));
            return Some(reply(415, &failure(None, &error)));
        }
    }
    if let Some(accept) = request.header("accept") {
        if !media_type_is(accept, |t| matches!(t, "application/json" | "application/*" | "*/*")) {
            let error = RpcError::invalid_request("this server answers application/json; the Accept header must include it");
            return Some(reply(406, &failure(None, &error)));
        }
    }
    None
}

/// True if any comma-separated media range of `header` (parameters ignored) satisfies `pred`.
fn media_type_is(header: &str, pred: impl Fn(&str) -> bool) -> bool {
    header.split(',').any(|part| {
        let media = part.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
        pred(&media)
    })
}

/// A JSON response with `status`.
fn reply(status: u16, body: &Value) -> Response {
    Response::json(status, body)
}

/// 202 with an empty body: the answer to notifications and client responses.
fn accepted() -> Response {
    Response::new(202)
}

/// One request's answer before it becomes HTTP: status and JSON-RPC response object.
struct Answer {
    status: u16,
    body: Value,
}

impl Answer {
    fn ok(id: &Value, result: Value) -> Answer {
        Answer { status: 200, body: success(id, result) }
    }

    fn err(status: u16, id: Option<&Value>, error: &RpcError) -> Answer {
        Answer { status, body: failure(id, error) }
    }
}

struct Server<'a, H> {
    host: &'a H,
    config: &'a McpConfig,
    caller: &'a Caller,
    request: &'a Request,
}

impl<H: ToolHost> Server<'_, H> {
    /// A single message (the only shape from 2025-06-18 on).
    async fn single(&self, value: Value) -> Response {
        match classify(&value) {
            Err(rejected) => reply(400, &failure(rejected.id.as_ref(), &rejected.error)),
            Ok(Message::Notification { .. }) => match self.header_version() {
                // Notifications carry no defined headers in 2026-07-28; only reject a version
                // header we cannot serve, as every revision requires.
                Err(error) => reply(400, &failure(None, &error)),
                Ok(_) => accepted(),
            },
            Ok(Message::Response { .. }) => match self.header_version() {
                Err(error) => reply(400, &failure(None, &error)),
                Ok(Some(v)) if v.is_modern() => {
                    reply(400, &failure(None, &RpcError::invalid_request("clients must not send JSON-RPC responses in 2026-07-28")))
                }
                Ok(_) => accepted(),
            },
            Ok(Message::Request { id, method, params }) => {
                let answer = self.request(&id, &method, params).await;
                reply(answer.status, &answer.body)
            }
        }
    }

    /// A JSON-RPC batch: allowed only by 2025-03-26 (the version assumed without a header).
    async fn batch(&self, batch: Vec<Value>) -> Response {
        let version = match self.header_version() {
            Err(error) => return reply(400, &failure(None, &error)),
            Ok(v) => v.unwrap_or(ProtocolVersion::ASSUMED_WITHOUT_HEADER),
        };
        if !version.allows_batches() {
            let error = RpcError::invalid_request(format!(
                "JSON-RPC batches are not supported in protocol version {version} (only 2025-03-26 allowed them); send one message per POST"
            ));
            return reply(400, &failure(None, &error));
        }
        if batch.is_empty() {
            return reply(400, &failure(None, &RpcError::invalid_request("empty batch")));
        }
        if batch.len() > self.config.max_batch_len {
            let error = RpcError::invalid_request(format!("batch of {} messages exceeds the limit of {}", batch.len(), self.config.max_batch_len));
            return reply(400, &failure(None, &error));
        }
        let mut responses = Vec::new();
        for value in batch {
            match classify(&value) {
                Err(rejected) => responses.push(failure(rejected.id.as_ref(), &rejected.error)),
                Ok(Message::Notification { .. } | Message::Response { .. }) => {}
                Ok(Message::Request { id, method, .. }) if method == "initialize" => responses.push(failure(
                    Some(&id),
                    &RpcError::invalid_request("initialize must not be part of a JSON-RPC batch"),
                )),
                Ok(Message::Request { id, method, params }) => {
                    responses.push(self.dispatch(version, &id, &method, params).await.body);
                }
            }
        }
        if responses.is_empty() {
            accepted()
        } else {
            reply(200, &Value::Array(responses))
        }
    }

    /// The `MCP-Protocol-Version` header: absent → `None`; a version we serve → it; else the
    /// `UnsupportedProtocolVersion` error (HTTP 400 in every revision).
    fn header_version(&self) -> Result<Option<ProtocolVersion>, RpcError> {
        match self.request.header("mcp-protocol-version").map(str::trim) {
            None => Ok(None),
            Some(h) => ProtocolVersion::parse(h)
                .map(Some)
                .ok_or_else(|| RpcError::unsupported_version(h, &ProtocolVersion::supported_strings())),
        }
    }

    /// A single (non-batched) request: `initialize` first (it precedes any version), then the version of this
    /// request, the standard-header checks, and dispatch.
    async fn request(&self, id: &Value, method: &str, params: Option<Map<String, Value>>) -> Answer {
        // A modern request has no handshake: its `initialize` is a removed method (404 below).
        if method == "initialize" && !self.declares_modern(params.as_ref()) {
            return self.initialize(id, params.as_ref());
        }
        let version = match self.request_version(params.as_ref()) {
            Ok(v) => v,
            Err(error) => return Answer::err(400, Some(id), &error),
        };
        if let Err(error) = self.check_standard_headers(version, method, params.as_ref()) {
            return Answer::err(400, Some(id), &error);
        }
        self.dispatch(version, id, method, params).await
    }

    /// True if the request says it speaks 2026-07-28 or later: `_meta` carries a protocol version,
    /// or the `MCP-Protocol-Version` header names a modern revision. Such an `initialize` is not
    /// a handshake but a method that revision removed.
    fn declares_modern(&self, params: Option<&Map<String, Value>>) -> bool {
        let meta_version = params.and_then(|p| p.get("_meta")).and_then(|m| m.get(META_PROTOCOL_VERSION)).is_some();
        let header_modern = self.request.header("mcp-protocol-version").and_then(|h| ProtocolVersion::parse(h.trim())).is_some_and(ProtocolVersion::is_modern);
        meta_version || header_modern
    }

    /// Which revision a (non-`initialize`) request speaks:
    ///
    /// - `_meta` protocol version present → the header must be present and equal (else
    ///   `HeaderMismatch`), the version must be served (else `UnsupportedProtocolVersion`), and a
    ///   modern request must also carry `clientCapabilities` (else -32602);
    /// - no `_meta` version, header present → that version if it is a handshake-era one; a
    ///   2026-07-28 header without `_meta` is a malformed modern request (-32602); unknown →
    ///   `UnsupportedProtocolVersion`;
    /// - neither → 2025-03-26.
    fn request_version(&self, params: Option<&Map<String, Value>>) -> Result<ProtocolVersion, RpcError> {
        let header = self.request.header("mcp-protocol-version").map(str::trim);
        let meta = params.and_then(|p| p.get("_meta"));
        let meta_version = match meta.and_then(|m| m.get(META_PROTOCOL_VERSION)) {
            None => None,
            Some(Value::String(v)) => Some(v.as_str()),
            Some(_) => return Err(RpcError::invalid_params(format!("_meta[\"{META_PROTOCOL_VERSION}\"] must be a string"))),
        };
        let supported = ProtocolVersion::supported_strings();
        match (meta_version, header) {
            (Some(mv), None) => Err(RpcError::header_mismatch(format!(
                "required MCP-Protocol-Version header is missing (body _meta declares '{mv}')"
            ))),
            (Some(mv), Some(h)) if h != mv => Err(RpcError::header_mismatch(format!(
                "MCP-Protocol-Version header value '{h}' does not match body value '{mv}'"
            ))),
            (Some(mv), Some(_)) => {
                let version = ProtocolVersion::parse(mv).ok_or_else(|| RpcError::unsupported_version(mv, &supported))?;
                if version.is_modern() && !meta.and_then(|m| m.get(META_CLIENT_CAPABILITIES)).is_some_and(Value::is_object) {
                    return Err(RpcError::invalid_params(format!(
                        "required _meta field '{META_CLIENT_CAPABILITIES}' is missing or not an object"
                    )));
                }
                Ok(version)
            }
            (None, Some(h)) => {
                let version = ProtocolVersion::parse(h).ok_or_else(|| RpcError::unsupported_version(h, &supported))?;
                if version.is_modern() {
                    return Err(RpcError::invalid_params(format!(
                        "protocol version {h} requires params._meta[\"{META_PROTOCOL_VERSION}\"] on every request"
                    )));
                }
                Ok(version)
            }
            (None, None) => Ok(ProtocolVersion::ASSUMED_WITHOUT_HEADER),
        }
    }

    /// `Mcp-Method` / `Mcp-Name` (2026-07-28): required on modern requests (`Mcp-Name` for
    /// `tools/call`, `resources/read`, `prompts/get`) and, whenever present, equal to the body.
    /// Mismatches are `HeaderMismatch`: a gateway routing on headers must see what runs.
    fn check_standard_headers(&self, version: ProtocolVersion, method: &str, params: Option<&Map<String, Value>>) -> Result<(), RpcError> {
        let modern = version.is_modern();
        match self.request.header("mcp-method").map(str::trim) {
            None if modern => return Err(RpcError::header_mismatch("required Mcp-Method header is missing")),
            Some(h) if h != method => {
                return Err(RpcError::header_mismatch(format!("Mcp-Method header value '{h}' does not match body value '{method}'")))
            }
            _ => {}
        }
        let name_field = match method {
            "tools/call" | "prompts/get" => Some("name"),
            "resources/read" => Some("uri"),
            _ => None,
        };
        let Some(field) = name_field else { return Ok(()) };
        let body_value = params.and_then(|p| p.get(field)).and_then(Value::as_str);
        match self.request.header("mcp-name") {
            None if modern && body_value.is_some() => Err(RpcError::header_mismatch("required Mcp-Name header is missing")),
            None => Ok(()),
            Some(raw) => {
                let decoded = decode_header_value(raw)
                    .ok_or_else(|| RpcError::header_mismatch(format!("Mcp-Name header value '{raw}' is not valid")))?;
                match body_value {
                    Some(b) if b == decoded => Ok(()),
                    Some(b) => Err(RpcError::header_mismatch(format!(
                        "Mcp-Name header value '{decoded}' does not match body value '{b}'"
                    ))),
                    None => Err(RpcError::header_mismatch(format!("Mcp-Name header is set but params.{field} is missing"))),
                }
            }
        }
    }

    async fn dispatch(&self, version: ProtocolVersion, id: &Value, method: &str, params: Option<Map<String, Value>>) -> Answer {
        let result = match method {
            // 2026-07-28 removed `ping` (changelog, SEP-2575): a modern `ping` is an unknown
            // method like any other (404, -32601), as the transport requires for removed methods.
            "ping" if !version.is_modern() => Ok(Map::new()),
            "server/discover" => return Answer::ok(id, self.discover()),
            "tools/list" => self.list_tools(version, params.as_ref()),
            "tools/call" => self.call_tool(version, params.unwrap_or_default()).await,
            m if offerings::serves(self.host, m) => {
                let caller = self.host_caller();
                let cx = Context { host: self.host, caller: &caller, config: self.config, version };
                offerings::dispatch(&cx, m, &params.unwrap_or_default()).await
            }
            _ => {
                // 2026-07-28 asks for HTTP 404 here; the handshake revisions answer in a 200.
                let status = if version.is_modern() { 404 } else { 200 };
                return Answer::err(status, Some(id), &RpcError::method_not_found(method));
            }
        };
        match result {
            Ok(map) => Answer::ok(id, finish(version, map)),
            Err(error) => Answer::err(200, Some(id), &error),
        }
    }

    /// `initialize` (handshake era): echo a served version, else the newest handshake version.
    /// No `Mcp-Session-Id` is minted: the server keeps no state.
    fn initialize(&self, id: &Value, params: Option<&Map<String, Value>>) -> Answer {
        let Some(requested) = params.and_then(|p| p.get("protocolVersion")).and_then(Value::as_str) else {
            return Answer::err(200, Some(id), &RpcError::invalid_params("initialize requires params.protocolVersion (a string)"));
        };
        let version = negotiate_initialize(requested);
        let result = json!({
            "protocolVersion": version.as_str(),
            "capabilities": offerings::capabilities(self.host),
            "serverInfo": server_info(version),
            "instructions": self.config.instructions,
        });
        Answer::ok(id, result)
    }

    /// `server/discover` (2026-07-28; answered in every era): versions, capabilities, identity,
    /// instructions, cache hints.
    fn discover(&self) -> Value {
        let mut result = Map::new();
        result.insert("supportedVersions".into(), json!(ProtocolVersion::supported_strings()));
        result.insert("capabilities".into(), offerings::capabilities(self.host));
        result.insert("instructions".into(), json!(self.config.instructions));
        cache_hints(&mut result, ProtocolVersion::V2026_07_28, self.config.list_ttl_ms, CacheScope::Public);
        finish(ProtocolVersion::V2026_07_28, result)
    }

    /// `tools/list`: the host's tools in its (stable) order, in one page. We never hand out a
    /// cursor, so any cursor is invalid (-32602). Modern results are cacheable and public: the
    /// list does not depend on the caller.
    fn list_tools(&self, version: ProtocolVersion, params: Option<&Map<String, Value>>) -> Result<Map<String, Value>, RpcError> {
        single_page("tools/list", params)?;
        let tools: Vec<Value> = self.host.tools().iter().map(|t| t.to_wire(version)).collect();
        let mut result = Map::new();
        result.insert("tools".into(), Value::Array(tools));
        cache_hints(&mut result, version, self.config.list_ttl_ms, CacheScope::Public);
        Ok(result)
    }

    /// `tools/call`: malformed params and unknown tools are protocol errors (-32602); arguments
    /// that break the tool's `inputSchema` are a tool result with `isError: true`; otherwise the
    /// defaulted arguments go to the host.
    async fn call_tool(&self, version: ProtocolVersion, params: Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Err(RpcError::invalid_params("tools/call requires params.name (a string)"));
        };
        let mut args = match params.get("arguments") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(v @ Value::Object(_)) => v.clone(),
            Some(_) => return Err(RpcError::invalid_params("tools/call params.arguments must be an object")),
        };
        let tools = self.host.tools();
        let Some(tool) = tools.iter().find(|t| t.name == name) else {
            return Err(RpcError::new(jsonrpc::INVALID_PARAMS, format!("Unknown tool: {name}")));
        };
        let violations = validate(&tool.input_schema, &args);
        if !violations.is_empty() {
            let list: Vec<String> = violations.iter().map(ToString::to_string).collect();
            let text = format!("input validation failed for tool '{name}': {}", list.join("; "));
            return Ok(text_result(text, true));
        }
        apply_defaults(&tool.input_schema, &mut args);
        let outcome = self.host.call(name, &args, &self.host_caller()).await;
        Ok(tool_result(version, outcome))
    }

    /// The caller every host call runs as (tools, resources, prompts, completion). Under
    /// `--features acl-mutation` the MCP gate can be switched off here for the leak suite's
    /// mutation check.
    fn host_caller(&self) -> Caller {
        #[cfg(feature = "acl-mutation")]
        return wikantik_access::access::mutation::caller_for(wikantik_access::access::mutation::Mutation::McpTools, self.caller);
        #[cfg(not(feature = "acl-mutation"))]
        self.caller.clone()
    }
}

fn server_info(version: ProtocolVersion) -> Value {
    if version.has_titles_and_structured_content() {
        json!({ "name": SERVER_NAME, "title": SERVER_TITLE, "version": SERVER_VERSION })
    } else {
        json!({ "name": SERVER_NAME, "version": SERVER_VERSION })
    }
}

/// Modern results carry `resultType` and the server identity in `_meta`.
fn finish(version: ProtocolVersion, mut result: Map<String, Value>) -> Value {
    if version.has_result_type() {
        result.insert("resultType".into(), json!("complete"));
        let mut meta = match result.remove("_meta") {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        meta.insert(META_SERVER_INFO.into(), server_info(version));
        result.insert("_meta".into(), Value::Object(meta));
    }
    Value::Object(result)
}

fn text_result(text: String, is_error: bool) -> Map<String, Value> {
    let mut result = Map::new();
    result.insert("content".into(), json!([{ "type": "text", "text": text }]));
    result.insert("isError".into(), json!(is_error));
    result
}

/// A `CallToolResult` for `outcome`: JSON payloads as text plus `structuredContent` (an object
/// before 2026-07-28, any value after), text payloads as text, errors as the reference's
/// `{"error", "suggestion"?}` envelope with `isError: true`.
fn tool_result(version: ProtocolVersion, outcome: ToolOutcome) -> Map<String, Value> {
    let structured_allowed = |v: &Value| {
        version.has_titles_and_structured_content() && (v.is_object() || version.structured_content_may_be_any_value())
    };
    match outcome {
        ToolOutcome::Json(value) => {
            let text = serde_json::to_string(&value).unwrap_or_else(|_| String::from("null"));
            let mut result = text_result(text, false);
            if structured_allowed(&value) {
                result.insert("structuredContent".into(), value);
            }
            result
        }
        ToolOutcome::Markdown(text) => text_result(text, false),
        ToolOutcome::Error { message, suggestion } => {
            let message = if message.trim().is_empty() { String::from("internal error (see server log)") } else { message };
            let mut envelope = Map::new();
            envelope.insert("error".into(), json!(message));
            if let Some(s) = suggestion.filter(|s| !s.trim().is_empty()) {
                envelope.insert("suggestion".into(), json!(s));
            }
            let envelope = Value::Object(envelope);
            let text = serde_json::to_string(&envelope).unwrap_or(message);
            let mut result = text_result(text, true);
            if structured_allowed(&envelope) {
                result.insert("structuredContent".into(), envelope);
            }
            result
        }
    }
}

/// Decode an `Mcp-Name`/`Mcp-Param-*` value: `=?base64?…?=` → its UTF-8 text; a plain value
/// must be visible ASCII, space or tab (RFC 9110 field value). `None` if invalid.
fn decode_header_value(raw: &str) -> Option<String> {
    if let Some(inner) = raw.strip_prefix("=?base64?").and_then(|r| r.strip_suffix("?=")) {
        let bytes = STANDARD.decode(inner).ok()?;
        return String::from_utf8(bytes).ok();
    }
    raw.bytes().all(|b| b == b'\t' || (0x20..=0x7e).contains(&b)).then(|| raw.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_origins() {
        for ok in ["http://localhost", "http://localhost:6274", "https://127.0.0.1:8443", "http://[::1]:3000", "http://[::1]"] {
            assert!(is_loopback_origin(ok), "{ok}");
        }
        for bad in ["http://localhost.evil.com", "http://127.0.0.1.nip.io", "http://localhost:", "http://localhost:12a", "file://localhost", "null", "http://[::1]x"] {
            assert!(!is_loopback_origin(bad), "{bad}");
        }
    }

    #[test]
    fn header_value_decoding() {
        assert_eq!(decode_header_value("get_page").as_deref(), Some("get_page"));
        assert_eq!(decode_header_value("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(), Some("Hello, 世界"));
        assert_eq!(decode_header_value("=?base64?***?="), None);
        assert_eq!(decode_header_value("a\u{7f}"), None);
    }
}
