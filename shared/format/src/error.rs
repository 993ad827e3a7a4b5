//! The one error type of the core crate.

use thiserror::Error;

/// Every failure the core can report. Messages are meant for humans: they name the file,
/// line or shard involved so an operator can act on them.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum Error {
    /// Frontmatter YAML that does not parse. `line` is 1-based within the page file.
    #[error("{file}:{line}: malformed YAML frontmatter: {message}")]
    Frontmatter { file: String, line: usize, message: String },

    /// An entity sidecar file that does not parse or has the wrong shape. `line` is 1-based.
    #[error("{file}:{line}: bad entity sidecar: {message}")]
    EntitySidecar { file: String, line: usize, message: String },

    /// A shard whose bytes do not hash to what the manifest promises.
    #[error("shard {name} is corrupt: expected sha256 {expected}, got {actual}")]
    ShardHashMismatch { name: String, expected: String, actual: String },

    /// A shard or manifest written by a format this reader does not understand.
    #[error("{name} has format version {found}; this reader understands version {supported}")]
    UnsupportedFormat { name: String, found: u32, supported: u32 },

    /// Bytes that are not valid CBOR of the expected shape, or shards that decode but do not
    /// fit together (a vectors shard whose codes do not match its keys, a model whose
    /// dimension is not the vectors').
    #[error("{name} cannot be decoded: {message}")]
    Decode { name: String, message: String },

    /// A shard the manifest does not list, or a kind the request needs but the index lacks.
    #[error("shard {name} is missing")]
    MissingShard { name: String },

    /// The store failed to read an object (network, permission): the deployment's problem.
    /// The store's own message (paths, URLs) is kept for logs, never shown to callers.
    #[error("object {name} cannot be read from the store")]
    StoreUnavailable { name: String, message: String },

    /// Anything else the caller supplied that cannot be used.
    #[error("{0}")]
    Invalid(String),

    /// Something the request names (a knowledge-graph node, a page) that does not exist, or
    /// that the caller may not see: the two look the same.
    #[error("{0}")]
    NotFound(String),

    /// A SPARQL query that cannot be run: syntax, unsupported feature, or a work/size bound.
    #[error("{0}")]
    Sparql(String),

    /// A model shard that cannot be used, or an input the encoder cannot embed.
    #[error("encoder: {0}")]
    Encoder(String),
}

impl Error {
    /// Is this the index's fault rather than the request's? True when the stored index cannot
    /// serve a request that is itself fine: a shard (or the pointer or manifest) is missing,
    /// corrupt, undecodable, of a format this reader does not understand, or the store cannot
    /// read it. Every surface answers these the same way: REST 503 `index unavailable: …`
    /// ([`Error::index_unavailable`]), an MCP tool error with that text.
    ///
    /// Not index faults: [`Error::Invalid`], [`Error::NotFound`] and [`Error::Sparql`] (the
    /// request's), [`Error::Frontmatter`] and [`Error::EntitySidecar`] (build time only), and
    /// [`Error::Encoder`]: the build embedded every section with the model shard the manifest
    /// names (and its hash is checked on every read), so at query time an encoder error comes
    /// from the query text.
    pub fn is_index_fault(&self) -> bool {
        match self {
            Error::ShardHashMismatch { .. }
            | Error::UnsupportedFormat { .. }
            | Error::Decode { .. }
            | Error::MissingShard { .. }
            | Error::StoreUnavailable { .. } => true,
            Error::Frontmatter { .. }
            | Error::EntitySidecar { .. }
            | Error::Invalid(_)
            | Error::NotFound(_)
            | Error::Sparql(_)
            | Error::Encoder(_) => false,
        }
    }

    /// The message every surface gives for an index fault: `index unavailable: ` and this
    /// error (which names the object, never the store's own message).
    pub fn index_unavailable(&self) -> String {
        format!("index unavailable: {self}")
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_and_shard_failures_are_the_index_fault_and_request_failures_are_not() {
        let name = || "shards/pages-0.cbor".to_string();
        let faults = [
            Error::ShardHashMismatch { name: name(), expected: "a".into(), actual: "b".into() },
            Error::UnsupportedFormat { name: name(), found: 9, supported: 1 },
            Error::Decode { name: name(), message: "truncated".into() },
            Error::MissingShard { name: name() },
            Error::StoreUnavailable { name: name(), message: "connection reset by 10.0.0.7".into() },
        ];
        for e in &faults {
            assert!(e.is_index_fault(), "{e:?}");
            let message = e.index_unavailable();
            assert!(message.starts_with("index unavailable: ") && message.contains(&name()), "{message}");
            assert!(!message.contains("10.0.0.7"), "the store's own message stays in the logs: {message}");
        }
        let requests = [
            Error::Invalid("k must be positive".into()),
            Error::NotFound("Node not found: X".into()),
            Error::Sparql("syntax".into()),
            Error::Encoder("no tokens to embed".into()),
            Error::Frontmatter { file: "A.md".into(), line: 1, message: "bad".into() },
            Error::EntitySidecar { file: "e.yaml".into(), line: 1, message: "bad".into() },
        ];
        assert!(requests.iter().all(|e| !e.is_index_fault()));
    }
}
