//! A small JSON Schema (2020-12) validator for the subset our tool `inputSchema`s use, and the
//! filler that applies their `default`s.
//!
//! Why hand-written: the `jsonschema` crate, even without default features, brings regex
//! engines, `ahash`, `fraction`, `email_address`, `uuid-simd` and a `$ref` resolver into every
//! WASM function for schemas that use a dozen keywords. The catalog's schemas are ours, so the
//! subset is closed and tested.
//!
//! Enforced keywords: `type` (a name or a list of names; `integer` accepts `1.0`), `enum`,
//! `const`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `minLength`,
//! `maxLength` (in characters), `minItems`, `maxItems`, `uniqueItems`, `items` (one schema),
//! `properties`, `required`, `additionalProperties` (boolean or schema), `minProperties`,
//! `maxProperties`, `anyOf`. Annotations (`title`, `description`, `default`, `examples`,
//! `format`, `deprecated`, `$schema`, `x-…`) are ignored, as 2020-12 prescribes for `format`.
//! Any other keyword is ignored too; [`unsupported_keywords`] lets a test prove the catalog uses
//! none.

use serde_json::{Map, Value};

/// One reason an instance does not satisfy a schema. `path` is a readable location such as
/// `filters.tags[2]` (empty for the arguments object itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// Every violation of `schema` by `instance` (empty when valid), in schema order.
pub fn validate(schema: &Value, instance: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    check(schema, instance, "", &mut out);
    out
}

const KNOWN: &[&str] = &[
    "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
    "minItems", "maxItems", "uniqueItems", "items", "properties", "required", "additionalProperties", "minProperties",
    "maxProperties", "anyOf", "title", "description", "default", "examples", "format", "deprecated", "$schema",
];

/// Keywords in `schema` (recursively) that this validator neither enforces nor knows as an
/// annotation. Extension keywords starting with `x-` are allowed.
pub fn unsupported_keywords(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    collect_unsupported(schema, &mut out);
    out
}

fn collect_unsupported(schema: &Value, out: &mut Vec<String>) {
    let Some(obj) = schema.as_object() else { return };
    for (key, value) in obj {
        if !KNOWN.contains(&key.as_str()) && !key.starts_with("x-") {
            out.push(key.clone());
        }
        match key.as_str() {
            "items" | "additionalProperties" => collect_unsupported(value, out),
            "properties" => {
                if let Some(props) = value.as_object() {
                    props.values().for_each(|s| collect_unsupported(s, out));
                }
            }
            "anyOf" => {
                if let Some(list) = value.as_array() {
                    list.iter().for_each(|s| collect_unsupported(s, out));
                }
            }
            _ => {}
        }
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_integer(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.is_finite() && f.fract() == 0.0),
        _ => false,
    }
}

fn has_type(value: &Value, name: &str) -> bool {
    match name {
        "integer" => is_integer(value),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => false,
    }
}

fn show(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text
    }
}

fn check(schema: &Value, instance: &Value, path: &str, out: &mut Vec<Violation>) {
    let Some(s) = schema.as_object() else {
        if schema == &Value::Bool(false) {
            out.push(Violation { path: path.into(), message: "no value is allowed here".into() });
        }
        return;
    };
    let mut push = |message: String| out.push(Violation { path: path.to_string(), message });

    if let Some(t) = s.get("type") {
        let names: Vec<&str> = match t {
            Value::String(n) => vec![n.as_str()],
            Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !names.is_empty() && !names.iter().any(|n| has_type(instance, n)) {
            push(format!("expected {}, got {}", names.join(" or "), type_name(instance)));
            return; // Further keywords would only repeat the type error.
        }
    }
    if let Some(Value::Array(options)) = s.get("enum") {
        if !options.contains(instance) {
            let allowed: Vec<String> = options.iter().map(Value::to_string).collect();
            push(format!("{} is not one of {}", show(instance), allowed.join(", ")));
        }
    }
    if let Some(c) = s.get("const") {
        if c != instance {
            push(format!("expected {}, got {}", c, show(instance)));
        }
    }
    if let Some(x) = instance.as_f64() {
        let bound = |k: &str| s.get(k).and_then(Value::as_f64);
        if let Some(min) = bound("minimum") {
            if x < min {
                push(format!("{} is less than the minimum of {}", show(instance), num(min)));
            }
        }
        if let Some(max) = bound("maximum") {
            if x > max {
                push(format!("{} is greater than the maximum of {}", show(instance), num(max)));
            }
        }
        if let Some(min) = bound("exclusiveMinimum") {
            if x <= min {
                push(format!("{} must be greater than {}", show(instance), num(min)));
            }
        }
        if let Some(max) = bound("exclusiveMaximum") {
            if x >= max {
                push(format!("{} must be less than {}", show(instance), num(max)));
            }
        }
    }
    if let Some(text) = instance.as_str() {
        let len = text.chars().count() as u64;
        if let Some(min) = s.get("minLength").and_then(Value::as_u64) {
            if len < min {
                push(if min == 1 { "must not be empty".to_string() } else { format!("must be at least {min} characters long") });
            }
        }
        if let Some(max) = s.get("maxLength").and_then(Value::as_u64) {
            if len > max {
                push(format!("must be at most {max} characters long, got {len}"));
            }
        }
    }
    if let Some(items) = instance.as_array() {
        let len = items.len() as u64;
        if let Some(min) = s.get("minItems").and_then(Value::as_u64) {
            if len < min {
                push(format!("expected at least {min} item{}, got {len}", if min == 1 { "" } else { "s" }));
            }
        }
        if let Some(max) = s.get("maxItems").and_then(Value::as_u64) {
            if len > max {
                push(format!("expected at most {max} items, got {len}"));
            }
        }
        if s.get("uniqueItems") == Some(&Value::Bool(true)) {
            for (i, item) in items.iter().enumerate() {
                if items[..i].contains(item) {
                    push(format!("item {i} ({}) is a duplicate", show(item)));
                    break;
                }
            }
        }
        if let Some(item_schema) = s.get("items") {
            for (i, item) in items.iter().enumerate() {
                check(item_schema, item, &format!("{path}[{i}]"), out);
            }
        }
    }
    if let Some(object) = instance.as_object() {
        check_object(s, object, path, out);
    }
    if let Some(Value::Array(options)) = s.get("anyOf") {
        if !options.iter().any(|o| validate(o, instance).is_empty()) {
            out.push(Violation { path: path.to_string(), message: format!("{} matches none of the allowed forms", show(instance)) });
        }
    }
}

fn check_object(s: &Map<String, Value>, object: &Map<String, Value>, path: &str, out: &mut Vec<Violation>) {
    if let Some(Value::Array(required)) = s.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !object.contains_key(name) {
                out.push(Violation { path: path.to_string(), message: format!("required property '{name}' not found") });
            }
        }
    }
    let len = object.len() as u64;
    if let Some(min) = s.get("minProperties").and_then(Value::as_u64) {
        if len < min {
            out.push(Violation { path: path.to_string(), message: format!("expected at least {min} properties, got {len}") });
        }
    }
    if let Some(max) = s.get("maxProperties").and_then(Value::as_u64) {
        if len > max {
            out.push(Violation { path: path.to_string(), message: format!("expected at most {max} properties, got {len}") });
        }
    }
    let properties = s.get("properties").and_then(Value::as_object);
    for (name, value) in object {
        match properties.and_then(|p| p.get(name)) {
            Some(prop_schema) => check(prop_schema, value, &child(path, name), out),
            None => match s.get("additionalProperties") {
                Some(Value::Bool(false)) => {
                    let known: Vec<&str> = properties.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
                    let hint = if known.is_empty() { String::from("none are accepted") } else { format!("accepted: {}", known.join(", ")) };
                    out.push(Violation { path: path.to_string(), message: format!("unknown property '{name}' ({hint})") });
                }
                Some(extra @ Value::Object(_)) => check(extra, value, &child(path, name), out),
                _ => {}
            },
        }
    }
}

fn num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// Fill in `default`s of declared properties that are absent from `instance`, recursing into
/// nested objects that are present. Call after [`validate`] succeeds, so that tool hosts see
/// every defaulted argument without repeating the catalog's defaults.
pub fn apply_defaults(schema: &Value, instance: &mut Value) {
    let (Some(props), Some(object)) = (schema.get("properties").and_then(Value::as_object), instance.as_object_mut()) else {
        return;
    };
    for (name, prop_schema) in props {
        match object.get_mut(name) {
            Some(value) => apply_defaults(prop_schema, value),
            None => {
                if let Some(default) = prop_schema.get("default") {
                    object.insert(name.clone(), default.clone());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(schema: &Value, instance: Value) -> Vec<String> {
        validate(schema, &instance).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn types_required_bounds_and_nesting() {
        let schema = json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1},
                "maxPages": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
                "budget": {"type": "number"},
                "slugs": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
                "mode": {"type": "string", "enum": ["standard", "compact"]},
                "tag": {"type": ["array", "string"], "items": {"type": "string"}},
                "filters": {"type": "object", "properties": {"cluster": {"type": "string"}}, "additionalProperties": false}
            },
            "required": ["query"]
        });
        assert!(messages(&schema, json!({"query": "x"})).is_empty());
        assert_eq!(messages(&schema, json!({})), ["required property 'query' not found"]);
        assert_eq!(messages(&schema, json!({"query": 3})), ["query: expected string, got integer"]);
        assert_eq!(messages(&schema, json!({"query": ""})), ["query: must not be empty"]);
        assert_eq!(messages(&schema, json!({"query": "q", "maxPages": 25})), ["maxPages: 25 is greater than the maximum of 20"]);
        assert_eq!(messages(&schema, json!({"query": "q", "maxPages": 0})), ["maxPages: 0 is less than the minimum of 1"]);
        assert!(messages(&schema, json!({"query": "q", "maxPages": 3.0})).is_empty());
        assert_eq!(messages(&schema, json!({"query": "q", "maxPages": 2.5})), ["maxPages: expected integer, got number"]);
        assert!(messages(&schema, json!({"query": "q", "budget": 2.5})).is_empty());
        assert_eq!(messages(&schema, json!({"query": "q", "slugs": []})), ["slugs: expected at least 1 item, got 0"]);
        assert_eq!(messages(&schema, json!({"query": "q", "slugs": ["a", "b", "c"]})), ["slugs: expected at most 2 items, got 3"]);
        assert_eq!(messages(&schema, json!({"query": "q", "slugs": ["a", 1]})), ["slugs[1]: expected string, got integer"]);
        assert_eq!(messages(&schema, json!({"query": "q", "mode": "fancy"})), [r#"mode: "fancy" is not one of "standard", "compact""#]);
        assert!(messages(&schema, json!({"query": "q", "tag": "x"})).is_empty());
        assert!(messages(&schema, json!({"query": "q", "tag": ["x"]})).is_empty());
        assert_eq!(messages(&schema, json!({"query": "q", "tag": 1})), ["tag: expected array or string, got integer"]);
        assert_eq!(
            messages(&schema, json!({"query": "q", "filters": {"clutser": "x"}})),
            ["filters: unknown property 'clutser' (accepted: cluster)"]
        );
        // Several violations are all reported.
        assert_eq!(messages(&schema, json!({"maxPages": "5"})).len(), 2);
        // Unknown top-level properties are allowed when additionalProperties is not declared.
        assert!(messages(&schema, json!({"query": "q", "extra": true})).is_empty());
    }

    #[test]
    fn defaults_are_filled_recursively_without_overwriting() {
        let schema = json!({"type": "object", "properties": {
            "limit": {"type": "integer", "default": 50},
            "offset": {"type": "integer", "default": 0},
            "filters": {"type": "object", "properties": {"deep": {"type": "integer", "default": 2}}}
        }});
        let mut args = json!({"offset": 10, "filters": {}});
        apply_defaults(&schema, &mut args);
        assert_eq!(args, json!({"limit": 50, "offset": 10, "filters": {"deep": 2}}));
    }

    #[test]
    fn unsupported_keywords_are_listed() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "^x"}}, "x-mcp-header": "A"});
        assert_eq!(unsupported_keywords(&schema), ["pattern"]);
    }
}
