//! What a caller may see (CONTRACT §3.5).
//!
//! Every surface filters by the caller's view permission *before* it ranks, counts or
//! assembles anything, so a restricted page and a nonexistent one look identical in every
//! response: not in sections, items, counts, warnings, token totals or coverage. The caller's
//! identity ([`Caller`]) comes from [`crate::auth`].

use wikantik_format::acl::{Acl, Action};
use wikantik_format::catalog::{PageRecord, PageTable};

pub use crate::auth::Caller;

impl Caller {
    /// The caller holding an API key with `principals`, or the anonymous caller (`None`: no key).
    pub fn with_principals(principals: Option<&[&str]>) -> Caller {
        match principals {
            None => Caller::anonymous(),
            Some(names) => Caller::for_key(&names.iter().map(|n| n.to_string()).collect::<Vec<_>>(), None),
        }
    }

    /// May this caller view the page?
    pub fn can_view(&self, page: &PageRecord) -> bool {
        self.can_view_under(&page.acl)
    }

    /// May this caller view a page under `acl` (the same check as [`Caller::can_view`], for
    /// the page index, which carries a page's ACL without its record)?
    pub fn can_view_under(&self, acl: &Acl) -> bool {
        acl.permits(self.principals(), Action::View)
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
    use wikantik_format::acl::Action;
    use wikantik_text::acl_markup::parse_acl;
    use crate::access::Caller;

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

/// The deliberate ACL bugs of the leak suite's mutation check ([`wikantik_format::mutation`]),
/// with the caller a mutated surface uses.
#[cfg(feature = "acl-mutation")]
pub mod mutation {
    pub use wikantik_format::mutation::*;

    use super::Caller;

    /// The caller a surface uses: an all-seeing one when `surface`'s gate is mutated away.
    pub fn caller_for(surface: Mutation, caller: &Caller) -> Caller {
        if active() == surface {
            Caller::for_key(&["Admin".to_string()], caller.label().map(str::to_string))
        } else {
            caller.clone()
        }
    }
}
