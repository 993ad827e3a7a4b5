//! The one error type of the index-builder.

use std::path::PathBuf;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum BuildError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },

    #[error("{0} is not a directory")]
    NotADirectory(PathBuf),

    #[error(transparent)]
    Core(#[from] wikantik::Error),

    #[error("{0}")]
    Invalid(String),

    /// A `--to` target that is not `s3://bucket[/prefix]` or `file://DIR`, or a bad endpoint.
    #[error("{url}: {reason}")]
    BadUrl { url: String, reason: String },

    /// An S3 target without the credentials it needs.
    #[error("missing S3 credentials: {0}")]
    MissingCredentials(String),

    /// A request to an object store failed (unreachable endpoint, denied, server error, …).
    #[error("{store}: cannot {op} {name}: {message}")]
    Store { store: String, op: &'static str, name: String, message: String },

    /// The local index to publish has no pointer.
    #[error("{0} holds no index (no current.json); build one first with `index-builder build <wiki> --out {0}`")]
    NoIndex(PathBuf),

    /// A local object whose bytes do not hash to what the manifest or pointer says.
    #[error("{path}: corrupt object: SHA-256 is {actual}, the {referrer} says {expected}; nothing was published")]
    CorruptObject { path: PathBuf, referrer: &'static str, expected: String, actual: String },

    /// An object name (from a manifest or pointer) that is not a plain index object name.
    #[error("refusing object name {0:?}: not of the form shards/<file> or manifests/<file>")]
    BadObjectName(String),

    /// The publish stopped on purpose (the `WIKANTIK_PUBLISH_FAIL_AFTER` test hook).
    #[error("publish interrupted after {0} uploads (WIKANTIK_PUBLISH_FAIL_AFTER); the pointer was not moved — run publish again to complete it")]
    Interrupted(usize),
}

impl BuildError {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> BuildError {
        BuildError::Io { path: path.into(), source }
    }
}

pub type Result<T, E = BuildError> = std::result::Result<T, E>;
