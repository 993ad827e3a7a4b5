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
