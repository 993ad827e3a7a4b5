//! The index-builder's library: reading a wiki directory, and writing or publishing an index
//! to a directory or an S3-compatible bucket through one protocol (`publish`) over one
//! object-store abstraction (`store`). The `index-builder` binary (main.rs) is a thin
//! command-line front over it.

pub mod commands;
pub mod embed;
pub mod error;
pub mod eval;
pub mod indexing;
pub mod lite;
pub mod model_import;
pub mod output;
pub mod publish;
pub mod s3;
pub mod source;
pub mod store;
pub mod target;
