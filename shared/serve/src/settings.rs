//! The settings every edge host reads from the same `WIKANTIK_*` variables, parsed and
//! validated once per instance (the Worker's isolate, the Spin component's instance): the
//! adapters only say where a variable comes from (Workers: secrets, then vars; Spin: component
//! variables) and add their own store's settings.
//!
//! | variable | default | what |
//! |---|---|---|
//! | `WIKANTIK_POINTER_TTL_SECS` | 2 | how long the pinned build is kept before the pointer is re-read |
//! | `WIKANTIK_CACHE_MIB` | 64 | decoded-shard cache of the instance |
//! | `WIKANTIK_API_KEYS` | none | the key ring (REST and MCP), `docs/SECURITY.md` |
//! | `WIKANTIK_DENY_ANONYMOUS` | off | refuse callers without a key on the REST routes |
//! | `WIKANTIK_MCP_ALLOW_UNRESTRICTED` | off | serve MCP without keys |
//! | `WIKANTIK_MCP_ALLOWED_ORIGINS` | none | browser origins MCP accepts |

use wikantik_access::auth::KeyRing;
use wikantik_format::error::{Error, Result};
use wikantik_mcp::McpConfig;

use crate::briefing::BriefingConfig;
use crate::bundle::BundleConfig;

/// Settings of the REST, graph and SPARQL routes.
#[derive(Debug, Clone, Default)]
pub struct RestConfig {
    pub bundle: BundleConfig,
    pub briefing: BriefingConfig,
    /// API keys (the same key ring as MCP); any valid key adds its principals.
    pub keys: KeyRing,
    /// Refuse callers without a key (by default anonymous callers see public pages, CONTRACT §3.6).
    pub deny_anonymous: bool,
}

/// Settings of every surface.
#[derive(Debug, Clone, Default)]
pub struct ServiceConfig {
    pub rest: RestConfig,
    pub mcp: McpConfig,
}

/// An instance's settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Milliseconds the pinned build is served before the pointer is read again.
    pub pointer_ttl_ms: u64,
    /// Byte budget of the decoded-shard cache.
    pub cache_bytes: u64,
    /// The surfaces' settings.
    pub service: ServiceConfig,
}

impl Settings {
    /// Reads and validates every setting through `var` (the platform's lookup of one variable;
    /// unset and blank are the same). An error names the variable and what is wrong with it.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Settings> {
        let var = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let flag = |name: &str| matches!(var(name).as_deref().map(str::trim), Some("1" | "true" | "yes" | "on"));
        let number = |name: &str, default: u64| -> Result<u64> {
            match var(name) {
                None => Ok(default),
                Some(v) => v.trim().parse().map_err(|_| Error::Invalid(format!("{name}: not a number: {v:?}"))),
            }
        };
        let pointer_ttl_ms = number("WIKANTIK_POINTER_TTL_SECS", 2)?.saturating_mul(1000);
        let cache_mib = number("WIKANTIK_CACHE_MIB", 64)?;
        let cache_bytes = cache_mib.saturating_mul(1 << 20);
        let api_keys = var("WIKANTIK_API_KEYS").unwrap_or_default();
        let keys = KeyRing::parse(&api_keys).map_err(|e| Error::Invalid(format!("WIKANTIK_API_KEYS: {e}")))?;
        let origins = var("WIKANTIK_MCP_ALLOWED_ORIGINS").unwrap_or_default();
        let mcp = McpConfig::from_settings(Some(&api_keys), flag("WIKANTIK_MCP_ALLOW_UNRESTRICTED"), Some(&origins))
            .map_err(|e| Error::Invalid(format!("MCP settings: {e}")))?;
        let rest = RestConfig { keys, deny_anonymous: flag("WIKANTIK_DENY_ANONYMOUS"), ..RestConfig::default() };
        Ok(Settings { pointer_ttl_ms, cache_bytes, service: ServiceConfig { rest, mcp } })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn from(pairs: &[(&str, &str)]) -> Result<Settings> {
        let vars: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Settings::from_vars(|name| vars.get(name).cloned())
    }

    #[test]
    fn defaults_without_variables() {
        let s = from(&[]).expect("defaults");
        assert_eq!((s.pointer_ttl_ms, s.cache_bytes), (2000, 64 << 20));
        assert!(!s.service.rest.deny_anonymous);
    }

    #[test]
    fn values_are_read_and_blank_is_unset() {
        let s = from(&[("WIKANTIK_POINTER_TTL_SECS", " 30 "), ("WIKANTIK_CACHE_MIB", " "), ("WIKANTIK_DENY_ANONYMOUS", "yes")]).expect("settings");
        assert_eq!((s.pointer_ttl_ms, s.cache_bytes), (30_000, 64 << 20));
        assert!(s.service.rest.deny_anonymous);
    }

    #[test]
    fn bad_values_name_their_variable() {
        let e = from(&[("WIKANTIK_CACHE_MIB", "lots")]).expect_err("not a number").to_string();
        assert!(e.contains("WIKANTIK_CACHE_MIB"), "{e}");
        let e = from(&[("WIKANTIK_API_KEYS", "not a key ring")]).expect_err("bad keys").to_string();
        assert!(e.contains("WIKANTIK_API_KEYS"), "{e}");
    }
}
