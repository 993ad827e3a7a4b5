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

    /// Bytes that are not valid CBOR of the expected shape.
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

    /// A SPARQL query that cannot be run: syntax, unsupported feature, or a work/size bound.
    #[error("{0}")]
    Sparql(String),

    /// A model shard that cannot be used, or an input the encoder cannot embed.
    #[error("encoder: {0}")]
    Encoder(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
