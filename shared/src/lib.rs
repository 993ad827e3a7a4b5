//! Wikantik at the edge — the portable core.
//!
//! Everything here is pure computation over bytes and strings: no file system, no network,
//! no platform crate. The index-builder (native) feeds it pages and writes what it returns;
//! the functions (WASM and native) feed it shards and serve what it returns.
//! See `ARCHITECTURE.md` at the repository root for the map.
//!
//! Cargo features select the functions a build serves (`bundle`, `briefing`, `graph`,
//! `sparql`, `mcp`; default all) and the engines they need (`dense`; `sparql` brings the
//! SPARQL engine): see `Cargo.toml` and [`service::Surfaces`].

// A per-function build compiles the other functions' helpers without calling them (the
// linker drops them); unused-code lints are meaningful for the full build, which CI lints.
#![cfg_attr(
    not(all(feature = "bundle", feature = "briefing", feature = "graph", feature = "sparql", feature = "mcp")),
    allow(dead_code, unused_imports, unused_variables)
)]

pub mod access;
pub mod ann;
pub mod acl;
pub mod analysis;
pub mod auth;
pub mod briefing;
pub mod bundle;
pub mod catalog;
pub mod chunk;
pub mod citation;
pub mod compile;
pub mod coverage;
pub mod dates;
pub mod dense;
pub mod encoder;
pub mod error;
pub mod fusion;
pub mod graph;
pub mod graph_api;
pub mod hashing;
pub mod html;
pub mod http;
pub mod ivf;
pub mod entity_sidecar;
pub mod kg;
pub mod lexical;
pub mod links;
pub mod manifest;
pub mod markdown;
pub mod mcp;
pub mod ontology;
pub mod page;
pub mod reader;
pub mod rest;
pub mod retrieval;
pub mod service;
pub mod shard;
pub mod sparql;
pub mod spine;
pub mod tokens;
pub mod tools;

#[cfg(all(test, not(target_arch = "wasm32")))]
mod corpus_tests;

pub use error::{Error, Result};
