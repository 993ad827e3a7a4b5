//! What a caller may see (CONTRACT §3.5).
//!
//! Every surface filters by the caller's view permission *before* it ranks, counts or
//! assembles anything, so a restricted page and a nonexistent one look identical in every
//! response: not in sections, items, counts, warnings, token totals or coverage. The caller's
//! identity ([`Caller`]) comes from [`crate::auth`].

use crate::acl::Action;
use crate::catalog::{PageRecord, PageTable};

pub use crate::auth::Caller;

impl Caller {
    /// May this caller view the page?
    pub fn can_view(&self, page: &PageRecord) -> bool {
        page.acl.permits(self.principals(), Action::View)
    }

    /// The viewable page with this slug, if any (restricted ≡ nonexistent).
    pub fn page<'a>(&self, table: &'a PageTable, slug: &str) -> Option<&'a PageRecord> {
        table.by_slug(slug).filter(|p| self.can_view(p))
    }

    /// The viewable page with this canonical id, if any.
    pub fn page_by_id<'a>(&self, table: &'a PageTable, canonical_id: &str) -> Option<&'a PageRecord> {
        table.by_canonical_id(canonical_id).filter(|p| self.can_view(p))
    }
}

#[cfg(test)]
mod tests {
    use crate::acl::{parse_acl, Action};
    use crate::auth::Caller;

    fn key(names: &[&str]) -> Caller {
        Caller::for_key(&names.iter().map(|n| n.to_string()).collect::<Vec<_>>(), None)
    }

    /// Every kind of caller a deployment has: anonymous, key holders with no principals, with
    /// names, with the built-in roles written in odd case, naming the not-logged-in principals,
    /// and Admin.
    fn every_kind_of_caller() -> Vec<(&'static str, Caller)> {
        vec![
            ("anonymous", Caller::anonymous()),
            ("key", key(&[])),
            ("Alice", key(&["Alice"])),
            ("Engineering", key(&["Engineering"])),
            ("authenticated", key(&["AUTHENTICATED"])),
            ("Anonymous", key(&["Anonymous"])),
            ("Guest", key(&["guest", "Alice"])),
            ("Admin", key(&["admin"])),
        ]
    }

    #[test]
    fn key_holders_never_hold_anonymous_or_guest() {
        for markup in ["[{ALLOW view Anonymous}]", "[{ALLOW view Guest}]", "[{ALLOW edit anonymous}]", "[{ALLOW view GUEST}]"] {
            let acl = parse_acl(markup);
            for (label, caller) in every_kind_of_caller() {
                let expected = matches!(label, "anonymous" | "Admin");
                assert_eq!(acl.permits(caller.principals(), Action::View), expected, "{markup}: {label}");
            }
        }
    }

    #[test]
    fn open_to_everyone_means_every_kind_of_caller_may_view() {
        for markup in [
            "",
            "[{ALLOW view All}]",
            "[{ALLOW edit all}]",
            "[{ALLOW view Anonymous,Authenticated}]",
            "[{ALLOW view Guest}] [{ALLOW comment Authenticated}]",
            "[{ALLOW view Anonymous}]",
            "[{ALLOW view Guest}]",
            "[{ALLOW view Authenticated}]",
            "[{ALLOW view Alice}]",
            "[{ALLOW view Admin}]",
            "[{ALLOW edit Admin}] [{ALLOW view All}]",
        ] {
            let acl = parse_acl(markup);
            let everyone = every_kind_of_caller().iter().all(|(_, c)| acl.permits(c.principals(), Action::View));
            assert_eq!(acl.is_open_to_everyone(), everyone, "{markup:?}");
        }
        assert!(parse_acl("[{ALLOW view Anonymous}]").is_public(), "is_public asks about anonymous callers only");
        assert!(!parse_acl("[{ALLOW view Anonymous}]").is_open_to_everyone());
    }
}

/// Deliberate ACL bugs for the mutation check of the leak suite (`scripts/acl-mutation.sh`).
///
/// Only in builds with the `acl-mutation` feature, which nothing but that script enables:
/// normal builds do not contain this module or any of its call sites. The leak suite
/// (`tests/tests/acl_leaks.rs`) selects one mutation at start-up; it must then fail, which
/// proves it can see each kind of leak.
#[cfg(feature = "acl-mutation")]
pub mod mutation {
    use std::sync::atomic::{AtomicU8, Ordering};

    use super::Caller;
    use crate::acl::Acl;
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

    /// The caller a surface uses: an all-seeing one when `surface`'s gate is mutated away.
    pub fn caller_for(surface: Mutation, caller: &Caller) -> Caller {
        if active() == surface {
            Caller::for_key(&["Admin".to_string()], caller.label().map(str::to_string))
        } else {
            caller.clone()
        }
    }

    /// The ACL the compiler gives a page: under [`Mutation::HtmlComments`], the one found in
    /// `reduced_body` (frontmatter gone, HTML blocks and their comments reduced to text)
    /// instead of the raw text's `acl`.
    pub fn page_acl(acl: Acl, reduced_body: &str) -> Acl {
        if active() == Mutation::HtmlComments {
            crate::acl::parse_acl(reduced_body)
        } else {
            acl
        }
    }

    /// Under [`Mutation::Wording`], the message that gives away a page which exists but is
    /// hidden from the caller; `None` otherwise (the surface keeps its own wording).
    pub fn restricted_wording(table: &PageTable, name: &str) -> Option<String> {
        let exists = table.by_slug(name).is_some() || table.by_canonical_id(name).is_some();
        (active() == Mutation::Wording && exists).then(|| format!("{name} is restricted"))
    }
}
