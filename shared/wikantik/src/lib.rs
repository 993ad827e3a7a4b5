//! Wikantik at the edge — the portable core as one crate.
//!
//! The core is split by concept into the crates under `shared/` (ARCHITECTURE.md):
//! `wikantik-format` (the shard format), `wikantik-text` (page text analysis),
//! `wikantik-encoder`, `wikantik-sparql`, `wikantik-compiler` (the index build), `wikantik-http`,
//! `wikantik-access`, `wikantik-mcp` and `wikantik-serve` (what a function runs). This facade
//! re-exports them under one module tree for the native index-builder, the native host, the
//! tests and the examples; the edge functions depend on `wikantik-serve` alone.

pub use wikantik_access::{access, auth};
pub use wikantik_compiler::{ann_build, ivf_build, kg_build};
pub use wikantik_format::{analysis, catalog, clusters, dates, error, graph, hashing, lexical, manifest, markup, payload, relations, shard, spine, tokens, vectors};
pub use wikantik_http as http;
pub use wikantik_mcp as mcp;
pub use wikantik_serve::{briefing, bundle, coverage, fusion, graph_api, kg_catalog, reader, rest, retrieval, routes, service, settings, sparql_access, tools};
pub use wikantik_sparql::ontology;
pub use wikantik_text::{chunk, entity_sidecar, html, links, markdown, page};

pub use wikantik_format::{Error, Result};

/// Page ACLs: the stored model and decision ([`wikantik_format::acl`]) and the markup scanner
/// ([`wikantik_text::acl_markup`]).
pub mod acl {
    pub use wikantik_format::acl::*;
    pub use wikantik_text::acl_markup::*;
}

/// `cite://` citations: parsing and grading, and the stored grade.
pub mod citation {
    pub use wikantik_format::payload::CitationStatus;
    pub use wikantik_text::citation::*;
}

/// The build and the payloads it produces ([`wikantik_compiler::compile`] re-exports them).
pub use wikantik_compiler::compile;

/// Dense retrieval: the vector format and the query side.
pub mod dense {
    pub use wikantik_format::vectors::*;
    pub use wikantik_serve::dense::*;
}

/// The encoders, with the model shard's types and kernels from the format.
pub mod encoder {
    pub use wikantik_encoder::*;
    #[cfg(feature = "test-model")]
    pub mod testing {
        pub use wikantik_compiler::testing::*;
        pub use wikantik_encoder::testing::*;
    }
}

/// The vector lists: format and probe, and their build.
pub mod ivf {
    pub use wikantik_compiler::ivf_build::build;
    pub use wikantik_format::ivf::*;
}

/// The HNSW graph: format and search, and its build.
pub mod ann {
    pub use wikantik_compiler::ann_build::{build, build_with};
    pub use wikantik_format::ann::*;
}

/// The knowledge graph: model and build.
pub mod kg {
    pub use wikantik_compiler::kg_build::build;
    pub use wikantik_format::kg::*;
    pub use wikantik_format::kg_parts::*;
}

/// SPARQL-lite.
pub mod sparql {
    pub use wikantik_sparql::*;
}
