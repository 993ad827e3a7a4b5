//! Deliberate ACL bugs for the mutation check of the leak suite (`scripts/acl-mutation.sh`).
//!
//! Only in builds with the `acl-mutation` feature, which nothing but that script enables:
//! normal builds do not contain this module or any of its call sites. The leak suite
//! (`tests/tests/acl_leaks.rs`) selects one mutation at start-up; it must then fail, which
//! proves it can see each kind of leak.

use std::sync::atomic::{AtomicU8, Ordering};

use crate::catalog::PageTable;

/// One deliberate weakening of the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Mutation {
    /// The gate as it ships.
    None = 0,
    /// `/api/bundle` and `/api/briefing` serve every page to every caller.
    RestBundles = 1,
    /// MCP tool calls run as a caller who may view every page.
    McpTools = 2,
    /// The `/api/graph/…` routes ignore the caller's permissions.
    Graph = 3,
    /// `/sparql` queries see the triples of every page.
    Sparql = 4,
    /// A restricted page is still hidden, but its "not found" answers name it as
    /// restricted (briefing pins, `get_page`, graph neighbours): restricted ≠ nonexistent.
    Wording = 5,
    /// Graph neighbour searches return only viewable pages but step through hidden ones
    /// (a hidden page's links then show up as shorter paths between visible pages).
    GraphSteps = 6,
    /// A sub-cluster's `part_of`/`contains` edges to its parent (knowledge graph and RDF)
    /// follow its alphabetically first member alone again, not every member.
    ClusterEdges = 7,
    /// The compiler finds ACLs in the page body after HTML blocks are reduced, as it once
    /// did: a directive inside an HTML comment is lost and its page becomes public.
    HtmlComments = 8,
}

/// Every mutation with its name on the command line.
pub const ALL: [(&str, Mutation); 8] = [
    ("rest-bundles", Mutation::RestBundles),
    ("mcp-tools", Mutation::McpTools),
    ("graph", Mutation::Graph),
    ("graph-steps", Mutation::GraphSteps),
    ("sparql", Mutation::Sparql),
    ("wording", Mutation::Wording),
    ("cluster-edges", Mutation::ClusterEdges),
    ("html-comments", Mutation::HtmlComments),
];

static ACTIVE: AtomicU8 = AtomicU8::new(0);

/// Switch a mutation on for the whole process.
pub fn set(mutation: Mutation) {
    ACTIVE.store(mutation as u8, Ordering::SeqCst);
}

/// The mutation switched on, if any.
pub fn active() -> Mutation {
    match ACTIVE.load(Ordering::SeqCst) {
        1 => Mutation::RestBundles,
        2 => Mutation::McpTools,
        3 => Mutation::Graph,
        4 => Mutation::Sparql,
        5 => Mutation::Wording,
        6 => Mutation::GraphSteps,
        7 => Mutation::ClusterEdges,
        8 => Mutation::HtmlComments,
        _ => Mutation::None,
    }
}

/// The mutation named `name` (`none` or a name of [`ALL`]).
pub fn parse(name: &str) -> Option<Mutation> {
    if name == "none" {
        return Some(Mutation::None);
    }
    ALL.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
}

/// Under [`Mutation::Wording`], the message that gives away a page which exists but is
/// hidden from the caller; `None` otherwise (the surface keeps its own wording).
pub fn restricted_wording(table: &PageTable, name: &str) -> Option<String> {
    let exists = table.by_slug(name).is_some() || table.by_canonical_id(name).is_some();
    (active() == Mutation::Wording && exists).then(|| format!("{name} is restricted"))
}
