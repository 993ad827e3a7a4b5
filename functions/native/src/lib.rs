//! The native host: the embedded default for development and self-hosting. It maps a
//! directory of shards onto the core's [`ShardStore`] and (later) serves the core's
//! handlers over HTTP on loopback.

pub mod store;

pub use store::DirStore;
