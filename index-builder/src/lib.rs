//! The index-builder's library: reading a wiki directory and writing an index directory.
//! The `index-builder` binary (main.rs) is a thin command-line front over it.

pub mod error;
pub mod eval;
pub mod output;
pub mod source;
