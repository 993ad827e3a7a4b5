//! The index build: source pages in, shards and a manifest out ([`compile`]), with the
//! knowledge graph ([`kg_build`]), the vector lists ([`ivf_build`]) and the HNSW graph
//! ([`ann_build`]). Pure and deterministic: the same pages and options always give
//! byte-identical shards. Build time only: no function links this crate.

pub mod ann_build;
pub mod compile;
pub mod ivf_build;
pub mod kg_build;
#[cfg(any(test, feature = "test-model"))]
pub mod testing;

pub use wikantik_format::{Error, Result};
