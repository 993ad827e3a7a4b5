//! MCP protocol revisions this server speaks, and what differs between them.

use std::fmt;

/// A protocol revision we serve. Ordered oldest → newest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    /// First Streamable-HTTP revision: JSON-RPC batches allowed, no `title`/`structuredContent`.
    V2025_03_26,
    /// Batches removed; `MCP-Protocol-Version` header; `title`, `outputSchema`, `structuredContent`.
    V2025_06_18,
    /// Last handshake (`initialize`) revision.
    V2025_11_25,
    /// Stateless revision: no `initialize`, per-request `_meta` version, `server/discover`,
    /// `Mcp-Method`/`Mcp-Name` headers, `resultType` and cacheable list results.
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every version we serve, newest first (the order `server/discover` and errors list).
    pub const SUPPORTED: [ProtocolVersion; 4] =
        [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_03_26];

    /// The newest revision reachable through the `initialize` handshake. An `initialize` asking
    /// for a version we do not serve (2024-11-05, or anything unknown) gets this one: the
    /// 2026-07-28 revision has no handshake, so answering a handshake with it would hand the
    /// client a version it cannot continue in.
    pub const NEWEST_HANDSHAKE: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The version assumed when a request carries neither `_meta` version nor header, as the
    /// 2025-06-18+ transports prescribe for older clients.
    pub const ASSUMED_WITHOUT_HEADER: ProtocolVersion = ProtocolVersion::V2025_03_26;

    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parse an exact version string (no trimming, no case folding: versions are identifiers).
    pub fn parse(text: &str) -> Option<ProtocolVersion> {
        ProtocolVersion::SUPPORTED.into_iter().find(|v| v.as_str() == text)
    }

    /// Per-request metadata era (2026-07-28 and later) rather than the `initialize` era.
    pub fn is_modern(self) -> bool {
        self >= ProtocolVersion::V2026_07_28
    }

    /// JSON-RPC batches (arrays) are allowed only in 2025-03-26.
    pub fn allows_batches(self) -> bool {
        self == ProtocolVersion::V2025_03_26
    }

    /// `title` on tools and implementations, `outputSchema` and `structuredContent` (2025-06-18+).
    pub fn has_titles_and_structured_content(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// Results carry `resultType` and `_meta` server identity (2026-07-28+).
    pub fn has_result_type(self) -> bool {
        self.is_modern()
    }

    /// `structuredContent` may be any JSON value (2026-07-28+); before, only an object.
    pub fn structured_content_may_be_any_value(self) -> bool {
        self.is_modern()
    }

    /// The supported version strings, newest first.
    pub fn supported_strings() -> Vec<&'static str> {
        ProtocolVersion::SUPPORTED.iter().map(|v| v.as_str()).collect()
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The version an `initialize` request gets: its own if it is a handshake revision we serve,
/// else [`ProtocolVersion::NEWEST_HANDSHAKE`].
pub fn negotiate_initialize(requested: &str) -> ProtocolVersion {
    match ProtocolVersion::parse(requested) {
        Some(v) if !v.is_modern() => v,
        _ => ProtocolVersion::NEWEST_HANDSHAKE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation() {
        assert_eq!(negotiate_initialize("2025-03-26"), ProtocolVersion::V2025_03_26);
        assert_eq!(negotiate_initialize("2025-06-18"), ProtocolVersion::V2025_06_18);
        assert_eq!(negotiate_initialize("2025-11-25"), ProtocolVersion::V2025_11_25);
        assert_eq!(negotiate_initialize("2024-11-05"), ProtocolVersion::V2025_11_25);
        assert_eq!(negotiate_initialize("2099-01-01"), ProtocolVersion::V2025_11_25);
        assert_eq!(negotiate_initialize("2026-07-28"), ProtocolVersion::V2025_11_25);
        assert_eq!(ProtocolVersion::supported_strings(), ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]);
        assert!(ProtocolVersion::V2025_03_26.allows_batches());
        assert!(!ProtocolVersion::V2025_06_18.allows_batches());
        assert_eq!(ProtocolVersion::parse(" 2025-06-18"), None);
    }
}
