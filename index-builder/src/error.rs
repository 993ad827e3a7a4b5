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
}

impl BuildError {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> BuildError {
        BuildError::Io { path: path.into(), source }
    }
}

pub type Result<T, E = BuildError> = std::result::Result<T, E>;
