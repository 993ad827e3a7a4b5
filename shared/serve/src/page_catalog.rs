//! Page records read by part: what a request that needs a few pages' metadata (a page by slug
//! or key, a window of the page list, a page's related pages) reads, instead of the whole page
//! table.
//!
//! An index with `page-records` shards is read through its page index (slug → shard through
//! the shards' first slugs, key and position → shard through their starts, ACLs for counting
//! and for filtering what a caller may view); related pages come from the `page-relations`
//! shard beside each. An index written before them is read from its page table and link
//! graph, with the same answers. Listings in canonical-id order read the `page-listing`
//! shards (the records again, by id run) where the index has them.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::Arc;

use wikantik_access::access::Caller;
use wikantik_format::catalog::{PageIdPart, PageIndex, PageRecord, PageTable};
use wikantik_format::error::Result;
use wikantik_format::clusters::{ClusterCard, ClusterCards, ClusterPage, ClusterPart};
use wikantik_format::listing::ListingPart;
use wikantik_format::relations::{RelatedCandidate, Relatedness, MAX_RELATED};
use wikantik_format::shard::ShardKind;
use wikantik_format::spine::briefing_member_order;

use crate::reader::{IndexReader, ShardStore};

/// Where the page records of an index are read from.
enum Source {
    /// The `page-records` shards, located through the page index.
    Records(Arc<PageIndex>),
    /// The whole page table (indexes without `page-records`).
    Table(Arc<PageTable>),
}

/// A page as a briefing lists it: what its item shows, what including it costs, and where
/// its body is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedPage {
    pub slug: String,
    pub canonical_id: String,
    pub title: String,
    pub summary: String,
    pub body_tokens: u32,
    pub key: u32,
    /// The `bodies` partition holding it.
    pub partition: u32,
}

impl ListedPage {
    pub fn of(record: &PageRecord) -> ListedPage {
        ListedPage {
            slug: record.slug.clone(),
            canonical_id: record.canonical_id.clone(),
            title: record.title.clone(),
            summary: record.summary.clone(),
            body_tokens: record.body_tokens,
            key: record.key,
            partition: record.partition,
        }
    }

    /// A member as its cluster's card lists it, located through the page index.
    fn of_card(page: &ClusterPage, index: &PageIndex) -> Option<ListedPage> {
        let listing = page.listing.as_ref()?;
        let key = *index.keys.get(page.position as usize)?;
        Some(ListedPage {
            slug: page.slug.clone(),
            canonical_id: page.canonical_id.clone(),
            title: page.title.clone(),
            summary: listing.summary.clone(),
            body_tokens: listing.body_tokens,
            key,
            partition: index.by_key(key)?.partition,
        })
    }
}

/// The page records of one pinned index.
pub struct PageCatalog<'r, S: ShardStore> {
    reader: &'r IndexReader<S>,
    source: Source,
}

impl<'r, S: ShardStore> PageCatalog<'r, S> {
    /// Reads the page index (or, for an index without `page-records`, the page table).
    pub async fn open(reader: &'r IndexReader<S>) -> Result<PageCatalog<'r, S>> {
        let source = match reader.page_index().await? {
            Some(index) if index.has_record_groups() => Source::Records(index),
            _ => Source::Table(reader.pages().await?),
        };
        Ok(PageCatalog { reader, source })
    }

    /// The records of `slugs`, in the order asked (`None` for a slug no page has); each
    /// `page-records` shard they need is read once, concurrently.
    pub async fn by_slugs(&self, slugs: &[&str]) -> Result<Vec<Option<PageRecord>>> {
        match &self.source {
            Source::Table(table) => Ok(slugs.iter().map(|s| table.by_slug(s).cloned()).collect()),
            Source::Records(index) => {
                let groups: Vec<Option<u32>> = slugs.iter().map(|s| index.record_group_of_slug(s)).collect();
                let loaded = self.groups(groups.iter().flatten().copied()).await?;
                Ok(slugs
                    .iter()
                    .zip(&groups)
                    .map(|(slug, group)| group.and_then(|g| loaded.get(&g)).and_then(|records| records.by_slug(slug)).cloned())
                    .collect())
            }
        }
    }

    /// The record of the page with canonical id `id` (the first by slug, should two share it).
    pub async fn by_canonical_id(&self, id: &str) -> Result<Option<PageRecord>> {
        Ok(self.by_canonical_ids(&[id]).await?.into_iter().next().flatten())
    }

    /// The records of the pages with canonical ids `ids`, in the order asked (the first by
    /// slug, should two share an id); each `page-ids` and `page-records` shard they need is
    /// read once, concurrently.
    pub async fn by_canonical_ids(&self, ids: &[&str]) -> Result<Vec<Option<PageRecord>>> {
        match &self.source {
            Source::Records(index) if !index.id_first.is_empty() => {
                let parts: Vec<Option<u32>> = ids.iter().map(|id| index.id_part_of(id)).collect();
                let wanted = distinct(parts.iter().flatten().copied());
                let entries = self.reader.entries(ShardKind::PageIds, &wanted).await?;
                let loaded: Vec<Arc<PageIdPart>> = self.reader.load_many(&entries.iter().collect::<Vec<_>>()).await?;
                let by_part: BTreeMap<u32, &Arc<PageIdPart>> = wanted.iter().copied().zip(&loaded).collect();
                let keys: Vec<Option<u32>> = ids
                    .iter()
                    .zip(&parts)
                    .map(|(id, part)| {
                        let position = by_part.get(&(*part)?)?.position_of(id)?;
                        index.keys.get(position).copied()
                    })
                    .collect();
                let records = self.by_keys(&keys.iter().flatten().copied().collect::<Vec<_>>()).await?;
                let mut records = records.into_iter();
                Ok(ids
                    .iter()
                    .zip(&keys)
                    .map(|(id, key)| key.and_then(|_| records.next().flatten()).filter(|p| p.canonical_id == *id))
                    .collect())
            }
            _ => {
                let table = self.table().await?;
                Ok(ids.iter().map(|id| table.by_canonical_id(id).cloned()).collect())
            }
        }
    }

    /// The card of cluster `name` (hub, members, links between them), if the spine has it.
    pub async fn cluster(&self, name: &str) -> Result<Option<ClusterCard>> {
        if let Source::Records(index) = &self.source {
            if !index.cluster_first.is_empty() {
                let Some(part) = index.cluster_part_of(name) else { return Ok(None) };
                return Ok(self.reader.cluster_cards(part).await?.card(name).cloned());
            }
        }
        let (table, spine, graph) = futures_util::join!(self.table(), self.reader.spine(), self.reader.graph());
        let (table, spine, graph) = (table?, spine?, graph?);
        Ok(ClusterCards::new(&table, &spine.spine, &graph.graph).card(name))
    }

    /// Calls `visit` with every cluster's card, by name, reading the `cluster-cards` shards
    /// [`SCAN_BATCH`] at a time without keeping them; `Ok(false)`, visiting none, for an index
    /// without cards.
    pub async fn scan_cluster_cards(&self, mut visit: impl FnMut(&ClusterCard)) -> Result<bool> {
        let Source::Records(index) = &self.source else { return Ok(false) };
        if index.cluster_first.is_empty() {
            return Ok(false);
        }
        let parts: Vec<u32> = (0..index.cluster_first.len() as u32).collect();
        for batch in parts.chunks(SCAN_BATCH) {
            let loaded: Vec<Arc<ClusterPart>> = self.reader.passing_of(ShardKind::ClusterCards, batch).await?;
            loaded.iter().flat_map(|part| part.clusters.iter()).for_each(&mut visit);
        }
        Ok(true)
    }

    /// The members of cluster `name` that `caller` may view, in the briefing's order
    /// ([`briefing_member_order`]; empty for a cluster the spine does not have): from the
    /// cluster's card alone, or for an index without cards (or with cards written before they
    /// listed their members) from the spine, link graph and page table.
    pub async fn briefing_members(&self, caller: &Caller, name: &str) -> Result<Vec<ListedPage>> {
        if let Source::Records(index) = &self.source {
            if !index.cluster_first.is_empty() {
                let Some(card) = self.cluster(name).await? else { return Ok(Vec::new()) };
                let order = card.briefing_order(|page| self.can_view_position(caller, page.position));
                if let Some(listed) = order.and_then(|order| order.into_iter().map(|page| ListedPage::of_card(page, index)).collect::<Option<Vec<_>>>()) {
                    return Ok(listed);
                }
            }
        }
        let (table, spine, graph) = futures_util::join!(self.table(), self.reader.spine(), self.reader.graph());
        let (table, spine, graph) = (table?, spine?, graph?);
        let visible = |slug: &str| caller.page(&table, slug).is_some();
        let updated = |slug: &str| table.by_slug(slug).map_or(0, |p| p.updated);
        let order = briefing_member_order(&spine.spine, &graph.graph, name, &updated, &visible);
        Ok(order.iter().filter_map(|slug| table.by_slug(slug)).map(ListedPage::of).collect())
    }

    /// Whether `caller` may view the page at `position` (slug order).
    pub fn can_view_position(&self, caller: &Caller, position: u32) -> bool {
        match &self.source {
            Source::Records(index) => index.acl_at(position as usize).is_some_and(|acl| caller.can_view_under(acl)),
            Source::Table(table) => table.pages.get(position as usize).is_some_and(|p| caller.can_view(p)),
        }
    }

    /// The latest change among the pages `caller` may view (`None` when it may view none).
    pub async fn latest_viewable(&self, caller: &Caller) -> Result<Option<i64>> {
        if let Source::Records(index) = &self.source {
            if !index.acl_latest.is_empty() {
                return Ok(index.latest_viewable(|acl| caller.can_view_under(acl)));
            }
        }
        Ok(self.table().await?.pages.iter().filter(|p| caller.can_view(p)).map(|p| p.updated).max())
    }

    /// The whole page table (what an index without the parts answers from).
    async fn table(&self) -> Result<Arc<PageTable>> {
        match &self.source {
            Source::Table(table) => Ok(Arc::clone(table)),
            Source::Records(_) => self.reader.pages().await,
        }
    }

    /// The records of the pages with `keys`, in the order asked (`None` for a key no page has).
    pub async fn by_keys(&self, keys: &[u32]) -> Result<Vec<Option<PageRecord>>> {
        match &self.source {
            Source::Table(table) => Ok(keys.iter().map(|&k| table.by_key(k).cloned()).collect()),
            Source::Records(index) => {
                let groups: Vec<Option<u32>> = keys.iter().map(|&k| index.position(k).and_then(|i| index.record_group_of_position(i))).collect();
                let loaded = self.groups(groups.iter().flatten().copied()).await?;
                Ok(keys
                    .iter()
                    .zip(&groups)
                    .map(|(&key, group)| group.and_then(|g| loaded.get(&g)).and_then(|records| records.by_key(key)).cloned())
                    .collect())
            }
        }
    }

    /// The related pages of each of `pages` that `caller` may view: at most [`MAX_RELATED`],
    /// best first ([`wikantik_format::relations`]).
    pub async fn related(&self, pages: &[&PageRecord], caller: &Caller) -> Result<Vec<Vec<RelatedCandidate>>> {
        let viewable_first = |candidates: &[RelatedCandidate]| -> Vec<RelatedCandidate> {
            candidates.iter().filter(|c| self.can_view_position(caller, c.position)).take(MAX_RELATED).cloned().collect()
        };
        if let Source::Records(index) = &self.source {
            if self.reader.manifest().count_of(ShardKind::PageRelations) > 0 {
                let positions: Vec<Option<usize>> = pages.iter().map(|p| index.position(p.key)).collect();
                let groups: Vec<Option<u32>> = positions.iter().map(|i| i.and_then(|i| index.record_group_of_position(i))).collect();
                let wanted = distinct(groups.iter().flatten().copied());
                let loaded: BTreeMap<u32, _> = wanted.iter().copied().zip(self.reader.page_relations_of(&wanted).await?).collect();
                return Ok(positions
                    .iter()
                    .zip(&groups)
                    .map(|(position, group)| {
                        let candidates = position.zip(group.and_then(|g| loaded.get(&g))).and_then(|(i, part)| part.candidates_at(i));
                        viewable_first(candidates.unwrap_or_default())
                    })
                    .collect());
            }
        }
        // An index without `page-relations`: ranked from the whole page table and link graph
        // (whose positions are the page index's: both are in slug order).
        let table = self.table().await?;
        let graph = self.reader.graph().await?;
        let relatedness = Relatedness::new(&table, &graph.graph);
        let mut scratch = relatedness.scratch();
        Ok(pages
            .iter()
            .map(|page| match table.key_index().get(&page.key) {
                Some(&position) => viewable_first(&relatedness.candidates(position, &mut scratch)),
                None => Vec::new(),
            })
            .collect())
    }

    /// The record of `slug`, if a page has it.
    pub async fn by_slug(&self, slug: &str) -> Result<Option<PageRecord>> {
        Ok(self.by_slugs(&[slug]).await?.into_iter().next().flatten())
    }

    /// The page with this slug if `caller` may view it (restricted ≡ nonexistent).
    pub async fn viewable(&self, caller: &Caller, slug: &str) -> Result<Option<PageRecord>> {
        Ok(self.by_slug(slug).await?.filter(|p| caller.can_view(p)))
    }

    /// The page with this canonical id if `caller` may view it (restricted ≡ nonexistent).
    pub async fn viewable_by_id(&self, caller: &Caller, id: &str) -> Result<Option<PageRecord>> {
        Ok(self.by_canonical_id(id).await?.filter(|p| caller.can_view(p)))
    }

    /// The pages `caller` may view, in slug order: how many there are, and the records of
    /// those from `offset`, at most `limit`. Counting reads only the page index's ACLs; the
    /// records come from the shards holding the window.
    pub async fn viewable_window(&self, caller: &Caller, offset: usize, limit: usize) -> Result<(usize, Vec<PageRecord>)> {
        match &self.source {
            Source::Table(table) => {
                let viewable: Vec<&PageRecord> = table.pages.iter().filter(|p| caller.can_view(p)).collect();
                Ok((viewable.len(), viewable.iter().skip(offset).take(limit).map(|p| (*p).clone()).collect()))
            }
            Source::Records(index) => {
                let positions: Vec<usize> =
                    index.keys_and_acls().enumerate().filter(|(_, (_, acl))| caller.can_view_under(acl)).map(|(i, _)| i).collect();
                let window: Vec<usize> = positions.iter().skip(offset).take(limit).copied().collect();
                Ok((positions.len(), self.records_at(index, &window, caller).await?))
            }
        }
    }

    /// The pages `caller` may view whose slug sorts after `after` (from the first without it),
    /// in slug order: the records of at most `limit` of them, and whether more follow. Reads
    /// the page index and the shards holding the window (and `after`'s).
    pub async fn viewable_after(&self, caller: &Caller, after: Option<&str>, limit: usize) -> Result<(Vec<PageRecord>, bool)> {
        match &self.source {
            Source::Table(table) => {
                let start = after.map_or(0, |a| table.pages.partition_point(|p| p.slug.as_str() <= a));
                let mut viewable = table.pages.iter().skip(start).filter(|p| caller.can_view(p));
                let records: Vec<PageRecord> = viewable.by_ref().take(limit).cloned().collect();
                Ok((records, viewable.next().is_some()))
            }
            Source::Records(index) => {
                let start = match after.and_then(|a| Some((a, index.record_group_of_slug(a)?))) {
                    None => 0,
                    Some((after, group)) => {
                        let records = self.groups(std::iter::once(group)).await?;
                        let first = index.record_starts.get(group as usize).copied().unwrap_or(0) as usize;
                        first + records.get(&group).map_or(0, |part| part.pages.partition_point(|p| p.slug.as_str() <= after))
                    }
                };
                let mut viewable = index.keys_and_acls().enumerate().skip(start).filter(|(_, (_, acl))| caller.can_view_under(acl)).map(|(i, _)| i);
                let window: Vec<usize> = viewable.by_ref().take(limit).collect();
                let more = viewable.next().is_some();
                Ok((self.records_at(index, &window, caller).await?, more))
            }
        }
    }

    /// Calls `visit` with every page `caller` may view, in slug order. With record shards, the
    /// shards are read [`SCAN_BATCH`] at a time and not kept (a shard none of whose pages the
    /// caller may view is not read), so a scan's memory is a batch's, not the page table's.
    pub async fn scan_viewable(&self, caller: &Caller, mut visit: impl FnMut(&PageRecord)) -> Result<()> {
        match &self.source {
            Source::Table(table) => table.pages.iter().filter(|p| caller.can_view(p)).for_each(visit),
            Source::Records(index) => {
                let viewable: Vec<bool> = index.keys_and_acls().map(|(_, acl)| caller.can_view_under(acl)).collect();
                let groups: Vec<u32> = index
                    .record_groups()
                    .into_iter()
                    .enumerate()
                    .filter(|(_, range)| viewable.get(range.clone()).is_some_and(|v| v.contains(&true)))
                    .map(|(g, _)| g as u32)
                    .collect();
                for batch in groups.chunks(SCAN_BATCH) {
                    let parts: Vec<Arc<PageTable>> = self.reader.passing_of(ShardKind::PageRecords, batch).await?;
                    parts.iter().flat_map(|part| part.pages.iter()).filter(|p| caller.can_view(p)).for_each(&mut visit);
                }
            }
        }
        Ok(())
    }

    /// Calls `visit` with the pages `caller` may view of the `page-listing` parts numbered
    /// `parts` (ascending), in canonical-id order (ties by slug), until it answers
    /// [`ControlFlow::Break`]. Parts are read one, then two, then up to [`SCAN_BATCH`] at a
    /// time and not kept, so a listing that fills early reads few. `Ok(false)` (nothing
    /// visited) when the index has no listing parts.
    pub async fn scan_listing(&self, caller: &Caller, parts: &[u32], mut visit: impl FnMut(&PageRecord) -> ControlFlow<()>) -> Result<bool> {
        if !self.has_listing() {
            return Ok(false);
        }
        let (mut next, mut batch) = (0, 1);
        while next < parts.len() {
            let wanted = parts.get(next..(next + batch).min(parts.len())).unwrap_or_default();
            let loaded: Vec<Arc<ListingPart>> = self.reader.passing_of(ShardKind::PageListing, wanted).await?;
            for page in loaded.iter().flat_map(|part| part.pages.iter()).filter(|p| caller.can_view(p)) {
                if visit(page).is_break() {
                    return Ok(true);
                }
            }
            next += wanted.len();
            batch = (batch * 2).min(SCAN_BATCH);
        }
        Ok(true)
    }

    /// Whether the index has `page-listing` parts (then [`PageCatalog::listing_latest`] says
    /// when each last changed).
    pub fn has_listing(&self) -> bool {
        matches!(&self.source, Source::Records(index) if !index.id_latest.is_empty()) && self.reader.manifest().count_of(ShardKind::PageListing) > 0
    }

    /// The latest change of each `page-listing` part (empty without them).
    pub fn listing_latest(&self) -> &[i64] {
        match &self.source {
            Source::Records(index) if self.has_listing() => &index.id_latest,
            _ => &[],
        }
    }

    /// The records of the pages at `positions` that `caller` may view, from the shards
    /// holding them (each read once).
    async fn records_at(&self, index: &PageIndex, positions: &[usize], caller: &Caller) -> Result<Vec<PageRecord>> {
        let window: Vec<(usize, u32)> = positions.iter().filter_map(|&i| Some((i, *index.keys.get(i)?))).collect();
        let loaded = self.groups(window.iter().filter_map(|&(i, _)| index.record_group_of_position(i))).await?;
        Ok(window
            .iter()
            .filter_map(|&(i, key)| {
                let records = loaded.get(&index.record_group_of_position(i)?)?;
                records.by_key(key).filter(|p| caller.can_view(p)).cloned()
            })
            .collect())
    }

    /// The `page-records` shards numbered `groups` (each once), by number.
    async fn groups(&self, groups: impl Iterator<Item = u32>) -> Result<BTreeMap<u32, Arc<PageTable>>> {
        let wanted = distinct(groups);
        let loaded = self.reader.page_records_of(&wanted).await?;
        Ok(wanted.into_iter().zip(loaded).collect())
    }
}

/// How many `page-records` or `cluster-cards` shards a scan reads at once (they are a few tens
/// of KB, so twice as many as [`crate::kg_catalog::SCAN_BATCH`] knowledge-graph parts).
const SCAN_BATCH: usize = 8;

/// Shard numbers, each once, ascending.
fn distinct(numbers: impl Iterator<Item = u32>) -> Vec<u32> {
    let mut wanted: Vec<u32> = numbers.collect();
    wanted.sort_unstable();
    wanted.dedup();
    wanted
}
