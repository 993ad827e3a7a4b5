//! The native host: the embedded default for development and self-hosting. It maps a
//! directory of shards onto the core's [`wikantik::reader::ShardStore`] and serves the core's
//! handlers over HTTP on loopback, through exactly the calls the WASM adapters make.

pub mod server;
pub mod store;

pub use store::DirStore;
