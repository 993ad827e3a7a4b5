//! The shard format: what the build writes and every reader decodes, and the models both
//! sides must agree on to give the same answers.
//!
//! Envelopes and content-addressed names ([`shard`]), the per-build [`manifest`], the page
//! table ([`catalog`]), every shard payload ([`payload`], [`vectors`], [`ivf`], [`ann`],
//! [`model`], [`graph`], [`spine`], [`clusters`], [`kg`], [`relations`]), the lexical analyzer and BM25 model ([`analysis`],
//! [`lexical`]: a query must be analysed exactly as the build analysed the sections), page
//! ACLs ([`acl`]) and the small shared helpers ([`hashing`], [`dates`], [`tokens`],
//! [`markup`]). Pure computation: no file system, network, clock or platform crate.

pub mod acl;
pub mod analysis;
pub mod ann;
pub mod catalog;
pub mod clusters;
pub mod dates;
pub mod error;
pub mod graph;
pub mod hashing;
pub mod ivf;
pub mod kernels;
pub mod kg;
pub mod kg_parts;
pub mod lexical;
pub mod listing;
pub mod manifest;
pub mod markup;
pub mod metadata;
pub mod model;
#[cfg(feature = "acl-mutation")]
pub mod mutation;
pub mod payload;
pub mod relations;
pub mod shard;
pub mod spine;
pub mod tags;
pub mod tokens;
pub mod vectors;

pub use error::{Error, Result};
