//! Wikantik at the edge — the portable core.
//!
//! Everything here is pure computation over bytes and strings: no file system, no network,
//! no platform crate. The index-builder (native) feeds it pages and writes what it returns;
//! the functions (WASM and native) feed it shards and serve what it returns.
//! See `ARCHITECTURE.md` at the repository root for the map.

pub mod encoder;
pub mod error;
pub mod hashing;
pub mod tokens;

pub use error::{Error, Result};
