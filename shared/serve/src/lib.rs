//! Serving: everything a function runs per request.
//!
//! The index reader over the platform's [`reader::ShardStore`] ([`reader`]), retrieval with one
//! candidate pool for every surface ([`retrieval`], [`dense`], [`fusion`], [`coverage`]),
//! context bundles and briefings ([`bundle`], [`briefing`]), the MCP tool host ([`tools`]),
//! the REST, graph and SPARQL handlers ([`rest`], [`graph_api`]) and the one route table
//! every host dispatches through ([`service`]). Pure computation: I/O enters only through
//! `ShardStore`, which each platform adapter implements.
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

pub mod briefing;
pub mod bundle;
pub mod console;
pub mod coverage;
pub mod dense;
pub mod fusion;
pub mod graph_api;
pub mod kg_catalog;
pub mod llms;
pub mod page_catalog;
pub mod reader;
pub mod rest;
pub mod retrieval;
pub mod routes;
pub mod service;
pub mod settings;
pub mod sparql_access;
pub mod tools;

// What the platform adapters need besides the route table, from the crates below.
pub use wikantik_access::{access, auth};
pub use wikantik_format as format;
pub use wikantik_format::{Error, Result};
pub use wikantik_http as http;
pub use wikantik_mcp as mcp;
