//! Text analysis of wiki pages, at build time: the page model and its frontmatter ([`page`]),
//! Markdown and HTML reduced to headed text ([`markdown`], [`html`]), the section chunker
//! ([`chunk`]), wikilinks ([`links`]), ACL directives ([`acl_markup`]), `cite://` citations
//! ([`citation`]) and entity sidecars ([`entity_sidecar`]). The only crate that parses
//! Markdown, HTML or YAML; no serving crate depends on it.

pub mod acl_markup;
pub mod chunk;
pub mod citation;
pub mod entity_sidecar;
pub mod html;
pub mod links;
pub mod markdown;
pub mod page;

#[cfg(all(test, not(target_arch = "wasm32")))]
mod corpus_tests;

pub use wikantik_format::{Error, Result};
