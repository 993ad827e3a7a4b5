//! API keys and the access decision for the Knowledge MCP endpoint and the REST API.
//!
//! # Keys
//!
//! A key is `wkk_` followed by 43 base64url characters (32 random bytes, no padding), e.g.
//! `wkk_3q2-7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`. The deployment never holds a key itself,
//! only the lowercase hex SHA-256 of the whole key string (prefix included) together with the
//! key's scopes, the ACL principals it carries and an optional label. [`mint_key`] makes a key
//! and its line from 32 random bytes the caller supplies, so this module stays pure.
//!
//! # The key-ring format (one env/secret value)
//!
//! ```text
//! # comment lines and blank lines are ignored
//! <sha256hex>:<scope>[+<scope>...][:<principal>[,<principal>...][:<label>]]
//! ```
//!
//! Entries are separated by newlines or `;`. Fields are trimmed. Scopes are `mcp_read`, `mcp`,
//! `tools` and `all`. The principal list may be empty (`<hash>:mcp_read:` or `<hash>:mcp_read`).
//! The label is everything after the third `:` (so it may itself contain `:`), and is only
//! echoed back for logging. Principal names cannot contain `,`, `:`, `;` or line breaks. Two
//! entries with the same hash are an error, so a typo cannot silently shadow a key. Example:
//!
//! ```text
//! 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08:mcp_read:Admin,editors:ci-bot
//! ```
//!
//! # Access decisions
//!
//! [`mcp_access`] implements the `/knowledge-mcp` filter (CONTRACT §3.6, REFERENCE §3.1): fail
//! closed with 503 when nothing is configured, 401 for missing or bad credentials, 403 for a key
//! without an MCP scope, otherwise the [`Caller`] whose principals the ACL gate uses.
//! [`rest_access`] is the REST counterpart: anonymous reads allowed unless configured off.
//!
//! Hash comparison is constant-time ([`subtle`]) and always walks the whole ring, so neither
//! the position of a matching entry nor the length of a common prefix leaks through timing.

use std::fmt;
use std::str::FromStr;

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use subtle::{Choice, ConditionallySelectable, ConstantTimeEq};
use thiserror::Error;

use wikantik_format::hashing::{sha256, to_hex};
use wikantik_http::Response;

/// The env/secret variable the platform adapters read the key ring from (one name everywhere,
/// so operators learn it once).
pub const KEY_RING_ENV: &str = "WIKANTIK_API_KEYS";

/// The prefix every key starts with.
pub const KEY_PREFIX: &str = "wkk_";
/// Number of base64url characters after the prefix (32 bytes, unpadded).
pub const KEY_BODY_LEN: usize = 43;

/// Principals every caller holds (JSPWiki's built-in role `All`).
pub const PRINCIPAL_ALL: &str = "All";
/// Principals of an anonymous caller besides `All`.
pub const PRINCIPAL_ANONYMOUS: &str = "Anonymous";
pub const PRINCIPAL_GUEST: &str = "Guest";
/// Principal every key holder gets besides `All`.
pub const PRINCIPAL_AUTHENTICATED: &str = "Authenticated";

/// What a key may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// Read-only MCP access (MCP-family rank 1).
    McpRead,
    /// Full MCP access (MCP-family rank 3, the reference's admin scope).
    Mcp,
    /// The reference's tool-server scope: not part of the MCP family.
    Tools,
    /// Everything.
    All,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::McpRead => "mcp_read",
            Scope::Mcp => "mcp",
            Scope::Tools => "tools",
            Scope::All => "all",
        }
    }

    /// Rank within the MCP family (`None` for scopes outside it).
    pub fn mcp_rank(self) -> Option<u8> {
        match self {
            Scope::McpRead => Some(1),
            Scope::Mcp => Some(3),
            Scope::Tools | Scope::All => None,
        }
    }
}

impl FromStr for Scope {
    type Err = KeyRingError;

    fn from_str(s: &str) -> Result<Scope, KeyRingError> {
        match s {
            "mcp_read" => Ok(Scope::McpRead),
            "mcp" => Ok(Scope::Mcp),
            "tools" => Ok(Scope::Tools),
            "all" => Ok(Scope::All),
            other => Err(KeyRingError::UnknownScope { line: 0, scope: other.to_string() }),
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// True if `scopes` grant read access to the MCP endpoint: `all`, or any MCP-family scope of
/// rank ≥ 1 (`mcp_read`, `mcp`). `tools` alone does not.
pub fn satisfies_mcp_read(scopes: &[Scope]) -> bool {
    satisfies_mcp_rank(scopes, 1)
}

/// True if `scopes` include `all` or an MCP-family scope of at least `required_rank`.
pub fn satisfies_mcp_rank(scopes: &[Scope], required_rank: u8) -> bool {
    scopes.iter().any(|s| *s == Scope::All || s.mcp_rank().is_some_and(|r| r >= required_rank))
}

/// A malformed key-ring value. Line numbers are 1-based entry numbers (after splitting on
/// newlines and `;`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum KeyRingError {
    #[error("key ring entry {line}: expected '<sha256hex>:<scopes>[:<principals>[:<label>]]'")]
    MissingField { line: usize },
    #[error("key ring entry {line}: '{hash}' is not a 64-character hex SHA-256")]
    BadHash { line: usize, hash: String },
    #[error("key ring entry {line}: unknown scope '{scope}' (expected mcp_read, mcp, tools or all)")]
    UnknownScope { line: usize, scope: String },
    #[error("key ring entry {line}: no scopes")]
    NoScopes { line: usize },
    #[error("key ring entry {line}: empty principal name in '{principals}'")]
    EmptyPrincipal { line: usize, principals: String },
    #[error("key ring entry {line}: the same key hash is already listed in entry {first}")]
    DuplicateHash { line: usize, first: usize },
    #[error("principal '{0}' cannot be written in a key-ring line (no ',', ':', ';' or line breaks)")]
    UnwritablePrincipal(String),
    #[error("label '{0}' cannot be written in a key-ring line (no ';' or line breaks)")]
    UnwritableLabel(String),
}

/// One configured key: its hash and what it grants.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyEntry {
    hash: [u8; 32],
    pub scopes: Vec<Scope>,
    pub principals: Vec<String>,
    pub label: Option<String>,
}

impl fmt::Debug for KeyEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The hash is not secret, but keep logs short.
        f.debug_struct("KeyEntry")
            .field("hash", &format_args!("{}…", &to_hex(&self.hash)[..8]))
            .field("scopes", &self.scopes)
            .field("principals", &self.principals)
            .field("label", &self.label)
            .finish()
    }
}

impl KeyEntry {
    /// Lowercase hex of the key's SHA-256.
    pub fn hash_hex(&self) -> String {
        to_hex(&self.hash)
    }
}

/// The configured keys of a deployment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyRing {
    entries: Vec<KeyEntry>,
}

/// Result of looking at a request's `Authorization` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthOutcome {
    /// No credentials were sent.
    Anonymous,
    /// A configured key.
    Key { scopes: Vec<Scope>, principals: Vec<String>, label: Option<String> },
    /// Credentials were sent but are malformed or unknown.
    Invalid,
}

impl KeyRing {
    /// A ring with no keys.
    pub fn empty() -> KeyRing {
        KeyRing::default()
    }

    /// Parse the key-ring format described in the module docs.
    pub fn parse(text: &str) -> Result<KeyRing, KeyRingError> {
        let mut entries: Vec<(usize, KeyEntry)> = Vec::new();
        for (index, raw) in text.split(['\n', ';']).enumerate() {
            let line_no = index + 1;
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let entry = parse_entry(line, line_no)?;
            if let Some((first, _)) = entries.iter().find(|(_, e)| e.hash == entry.hash) {
                return Err(KeyRingError::DuplicateHash { line: line_no, first: *first });
            }
            entries.push((line_no, entry));
        }
        Ok(KeyRing { entries: entries.into_iter().map(|(_, e)| e).collect() })
    }

    /// Parse an optional env/secret value; absent or blank means no keys.
    pub fn from_env_value(value: Option<&str>) -> Result<KeyRing, KeyRingError> {
        value.map_or(Ok(KeyRing::empty()), KeyRing::parse)
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn entries(&self) -> &[KeyEntry] {
        &self.entries
    }

    /// Add one entry (e.g. in tests or from a minting tool).
    pub fn push(&mut self, line: &str) -> Result<(), KeyRingError> {
        let entry = parse_entry(line.trim(), self.entries.len() + 1)?;
        if let Some(first) = self.entries.iter().position(|e| e.hash == entry.hash) {
            return Err(KeyRingError::DuplicateHash { line: self.entries.len() + 1, first: first + 1 });
        }
        self.entries.push(entry);
        Ok(())
    }

    /// Look at an `Authorization` header value. Accepts `Bearer <key>` and
    /// `Basic base64(user:key)` (the key as the password; the user name is ignored, so the
    /// hooks' `WIKANTIK_BASIC_AUTH=user:key` works). Scheme names are case-insensitive.
    /// A missing or blank header is [`AuthOutcome::Anonymous`]; anything else that is not a
    /// configured key is [`AuthOutcome::Invalid`].
    pub fn authenticate(&self, authorization_header: Option<&str>) -> AuthOutcome {
        let header = match authorization_header.map(str::trim) {
            None | Some("") => return AuthOutcome::Anonymous,
            Some(h) => h,
        };
        let Some(key) = extract_key(header) else {
            return AuthOutcome::Invalid;
        };
        if !is_well_formed_key(&key) {
            return AuthOutcome::Invalid;
        }
        match self.lookup(&sha256(key.as_bytes())) {
            Some(entry) => AuthOutcome::Key {
                scopes: entry.scopes.clone(),
                principals: entry.principals.clone(),
                label: entry.label.clone(),
            },
            None => AuthOutcome::Invalid,
        }
    }

    /// Find the entry whose hash equals `hash`, comparing every entry in constant time.
    fn lookup(&self, hash: &[u8; 32]) -> Option<&KeyEntry> {
        let mut found = Choice::from(0u8);
        let mut index: u64 = 0;
        for (i, entry) in self.entries.iter().enumerate() {
            let hit = entry.hash.ct_eq(hash);
            index = u64::conditional_select(&index, &(i as u64), hit);
            found |= hit;
        }
        if bool::from(found) {
            usize::try_from(index).ok().and_then(|i| self.entries.get(i))
        } else {
            None
        }
    }
}

impl FromStr for KeyRing {
    type Err = KeyRingError;

    fn from_str(s: &str) -> Result<KeyRing, KeyRingError> {
        KeyRing::parse(s)
    }
}

fn parse_entry(line: &str, line_no: usize) -> Result<KeyEntry, KeyRingError> {
    let mut fields = line.splitn(4, ':');
    let hash_text = fields.next().map(str::trim).unwrap_or_default();
    let scopes_text = fields.next().map(str::trim).ok_or(KeyRingError::MissingField { line: line_no })?;
    let principals_text = fields.next().map(str::trim).unwrap_or_default();
    let label = fields.next().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string);

    let hash = parse_hash(hash_text).ok_or_else(|| KeyRingError::BadHash { line: line_no, hash: hash_text.to_string() })?;

    let mut scopes = Vec::new();
    for s in scopes_text.split('+').map(str::trim).filter(|s| !s.is_empty()) {
        let scope = Scope::from_str(s).map_err(|_| KeyRingError::UnknownScope { line: line_no, scope: s.to_string() })?;
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    if scopes.is_empty() {
        return Err(KeyRingError::NoScopes { line: line_no });
    }

    let mut principals: Vec<String> = Vec::new();
    if !principals_text.is_empty() {
        for p in principals_text.split(',').map(str::trim) {
            if p.is_empty() {
                return Err(KeyRingError::EmptyPrincipal { line: line_no, principals: principals_text.to_string() });
            }
            if !principals.iter().any(|q| q == p) {
                principals.push(p.to_string());
            }
        }
    }
    Ok(KeyEntry { hash, scopes, principals, label })
}

fn parse_hash(text: &str) -> Option<[u8; 32]> {
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in bytes.chunks_exact(2).enumerate() {
        let hi = (pair[0] as char).to_digit(16)?;
        let lo = (pair[1] as char).to_digit(16)?;
        out[i] = u8::try_from(hi * 16 + lo).ok()?;
    }
    Some(out)
}

/// Pull the key out of a `Bearer` or `Basic` header value.
fn extract_key(header: &str) -> Option<String> {
    let (scheme, rest) = header.split_once(char::is_whitespace)?;
    let credentials = rest.trim();
    if scheme.eq_ignore_ascii_case("bearer") {
        Some(credentials.to_string())
    } else if scheme.eq_ignore_ascii_case("basic") {
        let decoded = STANDARD.decode(credentials).or_else(|_| STANDARD_NO_PAD.decode(credentials)).ok()?;
        let text = String::from_utf8(decoded).ok()?;
        let (_user, password) = text.split_once(':')?;
        Some(password.to_string())
    } else {
        None
    }
}

/// True if `key` has the shape `wkk_` + 43 base64url characters that decode to 32 bytes.
pub fn is_well_formed_key(key: &str) -> bool {
    let Some(body) = key.strip_prefix(KEY_PREFIX) else {
        return false;
    };
    body.len() == KEY_BODY_LEN
        && body.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && URL_SAFE_NO_PAD.decode(body).is_ok_and(|bytes| bytes.len() == 32)
}

/// Lowercase hex SHA-256 of a key, as stored in the key ring.
pub fn key_hash_hex(key: &str) -> String {
    to_hex(&sha256(key.as_bytes()))
}

/// Make a key from 32 random bytes (supplied by the caller: the core has no randomness) and the
/// key-ring line for it with the `mcp_read` scope and no principals.
/// Returns `(key, hash_line)`; give the key to its holder and put only the line in the secret.
pub fn mint_key(random_bytes: [u8; 32]) -> (String, String) {
    let key = format!("{KEY_PREFIX}{}", URL_SAFE_NO_PAD.encode(random_bytes));
    let line = format!("{}:{}:", key_hash_hex(&key), Scope::McpRead);
    (key, line)
}

/// Like [`mint_key`] with explicit scopes, principals and label.
pub fn mint_key_with(
    random_bytes: [u8; 32],
    scopes: &[Scope],
    principals: &[&str],
    label: Option<&str>,
) -> Result<(String, String), KeyRingError> {
    if scopes.is_empty() {
        return Err(KeyRingError::NoScopes { line: 1 });
    }
    for p in principals {
        if p.trim().is_empty() || p.contains([',', ':', ';', '\n', '\r']) {
            return Err(KeyRingError::UnwritablePrincipal((*p).to_string()));
        }
    }
    if let Some(l) = label {
        if l.contains([';', '\n', '\r']) {
            return Err(KeyRingError::UnwritableLabel(l.to_string()));
        }
    }
    let key = format!("{KEY_PREFIX}{}", URL_SAFE_NO_PAD.encode(random_bytes));
    let scopes_text: Vec<&str> = scopes.iter().map(|s| s.as_str()).collect();
    let mut line = format!("{}:{}:{}", key_hash_hex(&key), scopes_text.join("+"), principals.join(","));
    if let Some(l) = label {
        line.push(':');
        line.push_str(l);
    }
    Ok((key, line))
}

/// Who is calling, as the ACL gate sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    principals: Vec<String>,
    authenticated: bool,
    label: Option<String>,
}

impl Caller {
    /// An anonymous caller: holds `All`, `Anonymous` and `Guest`.
    pub fn anonymous() -> Caller {
        Caller {
            principals: vec![PRINCIPAL_ALL.into(), PRINCIPAL_ANONYMOUS.into(), PRINCIPAL_GUEST.into()],
            authenticated: false,
            label: None,
        }
    }

    /// A key holder: holds `All`, `Authenticated` and the key's own principals.
    pub fn for_key(principals: &[String], label: Option<String>) -> Caller {
        let mut all: Vec<String> = vec![PRINCIPAL_ALL.into(), PRINCIPAL_AUTHENTICATED.into()];
        for p in principals {
            if !all.contains(p) {
                all.push(p.clone());
            }
        }
        Caller { principals: all, authenticated: true, label }
    }

    /// Every principal the caller holds (exact, case-sensitive names).
    pub fn principals(&self) -> &[String] {
        &self.principals
    }

    /// True if the caller holds `principal` (exact match).
    pub fn holds(&self, principal: &str) -> bool {
        self.principals.iter().any(|p| p == principal)
    }

    pub fn is_authenticated(&self) -> bool {
        self.authenticated
    }

    /// The key's label, for logs.
    pub fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }
}

/// How an endpoint treats callers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccessConfig {
    pub keys: KeyRing,
    /// `/knowledge-mcp`: let anonymous callers in (the reference's
    /// `mcp.access.allowUnrestricted`). Without it and without keys the endpoint fails closed.
    pub allow_unrestricted: bool,
}

/// The body `detail` of the fail-closed 503.
pub const UNCONFIGURED_DETAIL: &str = "No API keys are configured for the MCP endpoint and unrestricted access is not enabled. \
Configure key hashes in the WIKANTIK_API_KEYS secret, or enable unrestricted access to serve anonymous callers.";

/// The access decision for `/knowledge-mcp` (required scope `mcp_read`):
///
/// - no keys configured and not `allow_unrestricted` → 503, `Retry-After: 86400`,
///   `{"error":"mcp_access_unconfigured","detail":…}` (fail closed, whatever was sent);
/// - credentials sent but malformed/unknown → 401 `{"error":"Invalid API key"}` (even when
///   unrestricted: a wrong key is reported, never silently downgraded to anonymous);
/// - a valid key without `mcp_read`/`mcp`/`all` → 403 `{"error":"Key not authorized for MCP"}`;
/// - a valid key → its [`Caller`];
/// - no credentials → the anonymous caller if `allow_unrestricted`, else 401.
///
/// Every 401 carries `WWW-Authenticate: Bearer realm="wikantik"`.
pub fn mcp_access(config: &AccessConfig, authorization_header: Option<&str>) -> Result<Caller, Response> {
    if config.keys.is_empty() && !config.allow_unrestricted {
        return Err(Response::json(
            503,
            &serde_json::json!({ "error": "mcp_access_unconfigured", "detail": UNCONFIGURED_DETAIL }),
        )
        .with_header("retry-after", "86400"));
    }
    match config.keys.authenticate(authorization_header) {
        AuthOutcome::Key { scopes, principals, label } => {
            if satisfies_mcp_read(&scopes) {
                Ok(Caller::for_key(&principals, label))
            } else {
                Err(Response::error(403, "Key not authorized for MCP"))
            }
        }
        AuthOutcome::Invalid => Err(unauthorized("Invalid API key")),
        AuthOutcome::Anonymous if config.allow_unrestricted => Ok(Caller::anonymous()),
        AuthOutcome::Anonymous => {
            Err(unauthorized("Authentication required: send 'Authorization: Bearer wkk_…' with an API key"))
        }
    }
}

/// The access decision for REST reads: any valid key (whatever its scopes) adds its principals;
/// bad credentials → 401; no credentials → anonymous if `allow_anonymous`, else 401.
pub fn rest_access(keys: &KeyRing, allow_anonymous: bool, authorization_header: Option<&str>) -> Result<Caller, Response> {
    match keys.authenticate(authorization_header) {
        AuthOutcome::Key { principals, label, .. } => Ok(Caller::for_key(&principals, label)),
        AuthOutcome::Invalid => Err(unauthorized("Invalid API key")),
        AuthOutcome::Anonymous if allow_anonymous => Ok(Caller::anonymous()),
        AuthOutcome::Anonymous => Err(unauthorized("Authentication required")),
    }
}

fn unauthorized(message: &str) -> Response {
    Response::error(401, message).with_header("www-authenticate", "Bearer realm=\"wikantik\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(n: u8) -> [u8; 32] {
        let mut b = [0u8; 32];
        for (i, x) in b.iter_mut().enumerate() {
            *x = n.wrapping_mul(31).wrapping_add(i as u8);
        }
        b
    }

    fn basic(user: &str, password: &str) -> String {
        format!("Basic {}", STANDARD.encode(format!("{user}:{password}")))
    }

    #[test]
    fn minted_keys_have_the_documented_shape_and_round_trip() {
        let (key, line) = mint_key(bytes(1));
        assert!(key.starts_with("wkk_"));
        assert_eq!(key.len(), 4 + 43);
        assert!(is_well_formed_key(&key));
        assert_eq!(line, format!("{}:mcp_read:", key_hash_hex(&key)));
        let ring = KeyRing::parse(&line).unwrap();
        assert_eq!(
            ring.authenticate(Some(&format!("Bearer {key}"))),
            AuthOutcome::Key { scopes: vec![Scope::McpRead], principals: vec![], label: None }
        );
        // A different key of the same shape is unknown.
        let (other, _) = mint_key(bytes(2));
        assert_eq!(ring.authenticate(Some(&format!("Bearer {other}"))), AuthOutcome::Invalid);
    }

    #[test]
    fn mint_with_scopes_principals_and_label() {
        let (key, line) = mint_key_with(bytes(3), &[Scope::Mcp, Scope::Tools], &["Admin", "editors"], Some("ci: nightly")).unwrap();
        let ring: KeyRing = line.parse().unwrap();
        assert_eq!(
            ring.authenticate(Some(&format!("bearer  {key} "))),
            AuthOutcome::Key {
                scopes: vec![Scope::Mcp, Scope::Tools],
                principals: vec!["Admin".into(), "editors".into()],
                label: Some("ci: nightly".into())
            }
        );
        assert!(mint_key_with(bytes(3), &[Scope::Mcp], &["a,b"], None).is_err());
        assert!(mint_key_with(bytes(3), &[], &[], None).is_err());
    }

    #[test]
    fn basic_auth_uses_the_password_as_key() {
        let (key, line) = mint_key(bytes(4));
        let ring = KeyRing::parse(&line).unwrap();
        assert!(matches!(ring.authenticate(Some(&basic("anyone", &key))), AuthOutcome::Key { .. }));
        assert!(matches!(ring.authenticate(Some(&basic("", &key))), AuthOutcome::Key { .. }));
        assert_eq!(ring.authenticate(Some(&basic(&key, "nope"))), AuthOutcome::Invalid);
        assert_eq!(ring.authenticate(Some("Basic !!!not-base64")), AuthOutcome::Invalid);
        assert_eq!(ring.authenticate(Some(&format!("Basic {}", STANDARD.encode(&key)))), AuthOutcome::Invalid);
    }

    #[test]
    fn header_shapes() {
        let (key, line) = mint_key(bytes(5));
        let ring = KeyRing::parse(&line).unwrap();
        assert_eq!(ring.authenticate(None), AuthOutcome::Anonymous);
        assert_eq!(ring.authenticate(Some("   ")), AuthOutcome::Anonymous);
        assert_eq!(ring.authenticate(Some("Bearer")), AuthOutcome::Invalid);
        assert_eq!(ring.authenticate(Some(&format!("Token {key}"))), AuthOutcome::Invalid);
        assert_eq!(ring.authenticate(Some(&format!("Bearer {}", &key[..key.len() - 1]))), AuthOutcome::Invalid);
        assert_eq!(ring.authenticate(Some(&format!("Bearer {key}x"))), AuthOutcome::Invalid);
        assert_eq!(ring.authenticate(Some("Bearer wkk_!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!")), AuthOutcome::Invalid);
    }

    #[test]
    fn ring_parsing_accepts_newlines_semicolons_comments_and_reports_errors() {
        let (_, a) = mint_key_with(bytes(6), &[Scope::McpRead], &[], None).unwrap();
        let (_, b) = mint_key_with(bytes(7), &[Scope::All], &["Admin"], Some("ops")).unwrap();
        let (_, c) = mint_key(bytes(8));
        let text = format!("# keys\n{a}\n\n  {b} ;{}", c.to_uppercase().replace("MCP_READ", "mcp_read"));
        let ring = KeyRing::parse(&text).unwrap();
        assert_eq!(ring.len(), 3);
        assert_eq!(ring.entries()[1].principals, vec!["Admin".to_string()]);
        assert_eq!(ring.entries()[1].label.as_deref(), Some("ops"));

        let hash = key_hash_hex("x");
        assert_eq!(KeyRing::parse("abc"), Err(KeyRingError::MissingField { line: 1 }));
        assert!(matches!(KeyRing::parse("zz:mcp"), Err(KeyRingError::BadHash { line: 1, .. })));
        assert!(matches!(KeyRing::parse(&format!("\n{hash}:root")), Err(KeyRingError::UnknownScope { line: 2, .. })));
        assert!(matches!(KeyRing::parse(&format!("{hash}:")), Err(KeyRingError::NoScopes { line: 1 })));
        assert!(matches!(KeyRing::parse(&format!("{hash}:mcp:a,,b")), Err(KeyRingError::EmptyPrincipal { .. })));
        assert_eq!(
            KeyRing::parse(&format!("{hash}:mcp;{hash}:all")),
            Err(KeyRingError::DuplicateHash { line: 2, first: 1 })
        );
        assert_eq!(KeyRing::from_env_value(None).unwrap(), KeyRing::empty());
        assert!(KeyRing::from_env_value(Some(" \n ; ")).unwrap().is_empty());
        // Errors read well.
        let msg = KeyRing::parse(&format!("{hash}:admin")).unwrap_err().to_string();
        assert!(msg.contains("unknown scope 'admin'"), "{msg}");
    }

    #[test]
    fn scope_ranks() {
        assert!(satisfies_mcp_read(&[Scope::McpRead]));
        assert!(satisfies_mcp_read(&[Scope::Mcp]));
        assert!(satisfies_mcp_read(&[Scope::All]));
        assert!(satisfies_mcp_read(&[Scope::Tools, Scope::McpRead]));
        assert!(!satisfies_mcp_read(&[Scope::Tools]));
        assert!(!satisfies_mcp_read(&[]));
        assert!(satisfies_mcp_rank(&[Scope::Mcp], 3));
        assert!(!satisfies_mcp_rank(&[Scope::McpRead], 3));
    }

    #[test]
    fn constant_time_lookup_finds_any_position() {
        let mut ring = KeyRing::empty();
        let keys: Vec<String> = (10..20u8)
            .map(|n| {
                let (k, line) = mint_key_with(bytes(n), &[Scope::McpRead], &[], Some(&format!("k{n}"))).unwrap();
                ring.push(&line).unwrap();
                k
            })
            .collect();
        for (i, k) in keys.iter().enumerate() {
            match ring.authenticate(Some(&format!("Bearer {k}"))) {
                AuthOutcome::Key { label, .. } => assert_eq!(label, Some(format!("k{}", i + 10))),
                other => panic!("{other:?}"),
            }
        }
        // The lookup is the subtle-based one: a hash differing only in its last byte misses.
        let mut near = sha256(keys[0].as_bytes());
        near[31] ^= 1;
        assert!(ring.lookup(&near).is_none());
        assert!(ring.lookup(&sha256(keys[9].as_bytes())).is_some());
    }

    #[test]
    fn mcp_access_decisions() {
        let (read_key, read_line) = mint_key_with(bytes(30), &[Scope::McpRead], &["editors"], None).unwrap();
        let (tools_key, tools_line) = mint_key_with(bytes(31), &[Scope::Tools], &[], None).unwrap();
        let (all_key, all_line) = mint_key_with(bytes(32), &[Scope::All], &[], None).unwrap();
        let keys = KeyRing::parse(&format!("{read_line}\n{tools_line}\n{all_line}")).unwrap();
        let closed = AccessConfig { keys: keys.clone(), allow_unrestricted: false };

        // Unconfigured: 503 whatever is sent.
        let unconfigured = AccessConfig::default();
        for header in [None, Some(format!("Bearer {read_key}"))] {
            let r = mcp_access(&unconfigured, header.as_deref()).unwrap_err();
            assert_eq!(r.status, 503);
            assert_eq!(r.header("retry-after"), Some("86400"));
            let body: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
            assert_eq!(body["error"], "mcp_access_unconfigured");
            assert!(body["detail"].as_str().is_some_and(|d| !d.is_empty()));
        }

        // No key → 401 with a challenge.
        let r = mcp_access(&closed, None).unwrap_err();
        assert_eq!(r.status, 401);
        assert!(r.header("www-authenticate").is_some_and(|v| v.starts_with("Bearer")));
        assert!(serde_json::from_slice::<serde_json::Value>(&r.body).unwrap()["error"].is_string());

        // Bad key → 401.
        let (stranger, _) = mint_key(bytes(33));
        assert_eq!(mcp_access(&closed, Some(&format!("Bearer {stranger}"))).unwrap_err().status, 401);

        // Wrong scope → 403 with the reference's message.
        let r = mcp_access(&closed, Some(&format!("Bearer {tools_key}"))).unwrap_err();
        assert_eq!(r.status, 403);
        assert_eq!(r.body, br#"{"error":"Key not authorized for MCP"}"#);

        // Allowed: principals are All + Authenticated + the key's.
        let caller = mcp_access(&closed, Some(&format!("Bearer {read_key}"))).unwrap();
        assert_eq!(caller.principals(), ["All", "Authenticated", "editors"]);
        assert!(caller.is_authenticated());
        assert!(!caller.holds("Anonymous"));
        let caller = mcp_access(&closed, Some(&basic("hook", &all_key))).unwrap();
        assert!(caller.holds("Authenticated"));

        // Unrestricted: anonymous allowed (All, Anonymous, Guest); bad keys still rejected.
        let open = AccessConfig { keys: KeyRing::empty(), allow_unrestricted: true };
        let caller = mcp_access(&open, None).unwrap();
        assert_eq!(caller.principals(), ["All", "Anonymous", "Guest"]);
        assert!(!caller.is_authenticated());
        assert_eq!(mcp_access(&open, Some("Bearer nonsense")).unwrap_err().status, 401);
    }

    #[test]
    fn rest_access_decisions() {
        let (key, line) = mint_key_with(bytes(40), &[Scope::Tools], &["staff"], None).unwrap();
        let keys = KeyRing::parse(&line).unwrap();
        assert!(!rest_access(&keys, true, None).unwrap().is_authenticated());
        assert_eq!(rest_access(&keys, false, None).unwrap_err().status, 401);
        assert!(rest_access(&keys, true, Some(&format!("Bearer {key}"))).unwrap().holds("staff"));
        assert_eq!(rest_access(&keys, true, Some("Bearer wkk_x")).unwrap_err().status, 401);
    }
}
