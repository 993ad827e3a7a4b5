//! The few JSON-RPC 2.0 wire shapes MCP needs, hand-written over `serde_json::Value`.
//!
//! Messages are classified from a parsed `Value` rather than deserialized into structs so that
//! every malformed shape maps to the exact JSON-RPC error the specification asks for (a serde
//! derive would collapse them into one parse failure) and so that the request `id` can still be
//! echoed when the rest of the message is bad.

use serde_json::{json, Map, Value};

/// Invalid JSON.
pub const PARSE_ERROR: i64 = -32700;
/// Valid JSON that is not a valid JSON-RPC request.
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist or is not available.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters (also: unknown tool, missing per-request `_meta`).
pub const INVALID_PARAMS: i64 = -32602;
/// Internal JSON-RPC error.
pub const INTERNAL_ERROR: i64 = -32603;
/// 2026-07-28: HTTP headers do not match the body, or a required header is missing/malformed.
pub const HEADER_MISMATCH: i64 = -32020;
/// 2026-07-28: the request needs a client capability the client did not declare.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// 2026-07-28: the requested protocol version is not served here.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError { code, message: message.into(), data: None }
    }

    pub fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }

    pub fn parse_error(detail: impl std::fmt::Display) -> RpcError {
        RpcError::new(PARSE_ERROR, format!("Parse error: {detail}"))
    }

    pub fn invalid_request(detail: impl std::fmt::Display) -> RpcError {
        RpcError::new(INVALID_REQUEST, format!("Invalid Request: {detail}"))
    }

    pub fn method_not_found(method: &str) -> RpcError {
        RpcError::new(METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }

    pub fn invalid_params(detail: impl std::fmt::Display) -> RpcError {
        RpcError::new(INVALID_PARAMS, format!("Invalid params: {detail}"))
    }

    pub fn header_mismatch(detail: impl std::fmt::Display) -> RpcError {
        RpcError::new(HEADER_MISMATCH, format!("Header mismatch: {detail}"))
    }

    /// `UnsupportedProtocolVersionError` with `data: {supported, requested}`.
    pub fn unsupported_version(requested: &str, supported: &[&str]) -> RpcError {
        RpcError::new(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
            .with_data(json!({ "supported": supported, "requested": requested }))
    }

    fn to_value(&self) -> Value {
        let mut error = Map::new();
        error.insert("code".into(), Value::from(self.code));
        error.insert("message".into(), Value::from(self.message.clone()));
        if let Some(data) = &self.data {
            error.insert("data".into(), data.clone());
        }
        Value::Object(error)
    }
}

/// One classified JSON-RPC message from a client.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// Has an `id`: must be answered.
    Request { id: Value, method: String, params: Option<Map<String, Value>> },
    /// No `id`: never answered.
    Notification { method: String, params: Option<Map<String, Value>> },
    /// A client's response to a server request (this server sends none).
    Response { id: Value },
}

/// A message that could not be classified: the error and, when it could be read, the id.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    pub id: Option<Value>,
    pub error: RpcError,
}

/// Classify one element of a request body.
pub fn classify(value: &Value) -> Result<Message, Rejected> {
    let Some(object) = value.as_object() else {
        return Err(Rejected { id: None, error: RpcError::invalid_request("a JSON-RPC message must be an object") });
    };
    // Read the id first so later errors can echo it.
    let id = match object.get("id") {
        None => None,
        Some(v) if is_valid_id(v) => Some(v.clone()),
        Some(Value::Null) => {
            return Err(Rejected { id: None, error: RpcError::invalid_request("'id' must be a string or an integer, not null") })
        }
        Some(_) => return Err(Rejected { id: None, error: RpcError::invalid_request("'id' must be a string or an integer") }),
    };
    let reject = |error: RpcError| Rejected { id: id.clone(), error };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(reject(RpcError::invalid_request("'jsonrpc' must be \"2.0\"")));
    }
    match object.get("method") {
        Some(Value::String(method)) => {
            let params = match object.get("params") {
                None => None,
                Some(Value::Object(p)) => Some(p.clone()),
                Some(Value::Array(_)) => {
                    return Err(reject(RpcError::invalid_params("MCP params must be an object, not an array")))
                }
                Some(_) => return Err(reject(RpcError::invalid_request("'params' must be an object"))),
            };
            Ok(match id {
                Some(id) => Message::Request { id, method: method.clone(), params },
                None => Message::Notification { method: method.clone(), params },
            })
        }
        Some(_) => Err(reject(RpcError::invalid_request("'method' must be a string"))),
        None => {
            let has_result = object.contains_key("result");
            let has_error = object.contains_key("error");
            match id {
                Some(id) if has_result != has_error => Ok(Message::Response { id }),
                _ => Err(reject(RpcError::invalid_request("missing 'method'"))),
            }
        }
    }
}

/// MCP ids are strings or integers (never null, never fractional).
fn is_valid_id(value: &Value) -> bool {
    match value {
        Value::String(_) => true,
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

/// A success response.
pub fn success(id: &Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// An error response. Without an id (unreadable or absent) the `id` member is omitted, as the
/// MCP transports describe ("a JSON-RPC error response that has no `id`").
pub fn failure(id: Option<&Value>, error: &RpcError) -> Value {
    let mut out = Map::new();
    out.insert("jsonrpc".into(), Value::from("2.0"));
    if let Some(id) = id {
        out.insert("id".into(), id.clone());
    }
    out.insert("error".into(), error.to_value());
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_messages() {
        assert_eq!(
            classify(&json!({"jsonrpc":"2.0","id":1,"method":"ping"})),
            Ok(Message::Request { id: json!(1), method: "ping".into(), params: None })
        );
        assert_eq!(
            classify(&json!({"jsonrpc":"2.0","method":"notifications/initialized"})),
            Ok(Message::Notification { method: "notifications/initialized".into(), params: None })
        );
        assert_eq!(classify(&json!({"jsonrpc":"2.0","id":"a","result":{}})), Ok(Message::Response { id: json!("a") }));
        let bad = |v: Value| classify(&v).unwrap_err();
        assert_eq!(bad(json!(3)).error.code, INVALID_REQUEST);
        assert_eq!(bad(json!({"jsonrpc":"1.0","id":7,"method":"x"})), Rejected { id: Some(json!(7)), error: RpcError::invalid_request("'jsonrpc' must be \"2.0\"") });
        assert_eq!(bad(json!({"jsonrpc":"2.0","id":null,"method":"x"})).error.code, INVALID_REQUEST);
        assert_eq!(bad(json!({"jsonrpc":"2.0","id":1.5,"method":"x"})).error.code, INVALID_REQUEST);
        assert_eq!(bad(json!({"jsonrpc":"2.0","id":1,"method":5})).error.code, INVALID_REQUEST);
        assert_eq!(bad(json!({"jsonrpc":"2.0","id":1})).error.code, INVALID_REQUEST);
        assert_eq!(bad(json!({"jsonrpc":"2.0","id":1,"method":"x","params":[1]})).error.code, INVALID_PARAMS);
        assert_eq!(bad(json!({"jsonrpc":"2.0","id":1,"method":"x","params":"s"})).error.code, INVALID_REQUEST);
    }

    #[test]
    fn error_without_id_omits_the_member() {
        let v = failure(None, &RpcError::parse_error("eof"));
        assert!(v.get("id").is_none());
        assert_eq!(v["error"]["code"], PARSE_ERROR);
    }
}
