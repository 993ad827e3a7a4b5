//! The end-to-end tests across the index-builder, the core and the function hosts, as one test
//! binary (one link, one process; each suite is a module). `cargo test -p wikantik-tests -- NAME::`
//! runs one suite, e.g. `acl_leaks::`.

mod acl_leaks;
mod briefing;
mod corpus_ids;
mod dense;
mod edge_parity;
mod faults;
mod graph;
mod graph_corpus;
mod hooks;
mod hostile_input;
mod kg_parts;
mod rdf_terms;
mod limits;
mod manifest_directories;
mod manifest_pins;
mod mcp_tools;
mod native_keepalive;
mod native_rest;
mod page_index;
mod postings_tails;
mod sample_wiki;
mod topic_lead;
mod vector_lists;
