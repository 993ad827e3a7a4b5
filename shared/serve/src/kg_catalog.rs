//! The knowledge graph read by part: what the knowledge-graph tools read, a part at a time,
//! so that a request holds one part (a few hundred kilobytes) and not the whole graph (237 MB
//! inflated at 120k pages, beyond a Workers isolate).
//!
//! An index with a `kg-index` shard is read through it (a node's part by its number, a name's
//! parts by the parts' first names, an id's part by the id parts' first ids); an index written
//! before the split holds the whole graph in `kg` and `mentions`, which are split in memory
//! into one part of each kind ([`wikantik_format::kg_parts::KgSplit`]), with the same answers.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use wikantik_format::error::{Error, Result};
use wikantik_format::kg::{KnowledgeGraph, MentionIndex, NodeKind};
use wikantik_format::kg_parts::{
    part_of, KgCardPart, KgIdPart, KgIndex, KgNodePart, KgSplit, MentionPart, PartSizes,
};
use wikantik_format::shard::{ShardEntry, ShardKind};

use crate::reader::{IndexReader, ShardStore};
use crate::retrieval::PageLookup;

/// Node parts read at once by a pass over many parts: enough to keep fetches overlapping,
/// few enough that a pass holds a bounded number of parts.
pub const SCAN_BATCH: usize = 4;

/// Most mention parts one lookup keeps in the shard cache (about 5 MB compressed): a lookup
/// needing more reads them a batch at a time instead.
pub const MENTION_PARTS_KEPT: usize = 32;

/// The graph of an index written before the split, as one part of each kind.
struct WholeGraph {
    nodes: Arc<KgNodePart>,
    ids: Arc<KgIdPart>,
    node_mentions: Arc<MentionPart>,
    page_mentions: Arc<MentionPart>,
}

enum Source {
    Parts,
    Whole(Arc<WholeGraph>),
}

/// The knowledge graph of one pinned index.
pub struct KgCatalog<'r, S: ShardStore> {
    reader: &'r IndexReader<S>,
    index: Arc<KgIndex>,
    source: Source,
}

impl<'r, S: ShardStore> KgCatalog<'r, S> {
    /// Reads the `kg-index` shard, or, for an index without it, the whole graph, its mentions
    /// and `pages` (whose ACLs say which pages every caller may view).
    pub async fn open(reader: &'r IndexReader<S>, pages: &PageLookup) -> Result<KgCatalog<'r, S>> {
        if let Some(entry) = reader.manifest().find(ShardKind::KgIndex) {
            let index: Arc<KgIndex> = reader.load(entry).await?;
            if index.node_starts.first() != Some(&0) {
                return Err(Error::Decode {
                    name: entry.name.clone(),
                    message: "the knowledge graph's index names no first part".into(),
                });
            }
            return Ok(KgCatalog {
                reader,
                index,
                source: Source::Parts,
            });
        }
        let (kg, mentions) = futures_util::join!(reader.kg(), reader.mentions());
        let (kg, mentions): (Arc<KnowledgeGraph>, Arc<MentionIndex>) = (kg?, mentions?);
        let public: std::collections::HashSet<u32> = pages
            .keys_and_acls()
            .filter(|(_, acl)| acl.is_empty())
            .map(|(k, _)| k)
            .collect();
        let is_public = |k: u32| public.contains(&k);
        let split = KgSplit::new(&kg, &mentions, &is_public, PartSizes::whole());
        let whole = WholeGraph {
            nodes: Arc::new(split.node_part(0)),
            ids: Arc::new(split.id_part(0)),
            node_mentions: Arc::new(split.node_mention_part(0)),
            page_mentions: Arc::new(split.page_mention_part(0)),
        };
        Ok(KgCatalog {
            reader,
            index: Arc::new(split.index()),
            source: Source::Whole(Arc::new(whole)),
        })
    }

    /// How many nodes and edges the whole graph has.
    pub fn counts(&self) -> (u32, u32) {
        (self.index.nodes, self.index.edges)
    }

    fn node_part_count(&self) -> u32 {
        self.index.node_starts.len() as u32
    }

    /// The part that holds node `node`.
    pub fn part_of_node(&self, node: u32) -> Option<u32> {
        if node >= self.index.nodes {
            return None;
        }
        part_of(&self.index.node_starts, node)
    }

    /// The node parts numbered `parts`, in the order asked, fetched concurrently and kept in
    /// the shard cache.
    pub async fn node_parts(&self, parts: &[u32]) -> Result<Vec<Arc<KgNodePart>>> {
        self.read_node_parts(parts, true).await
    }

    /// The node parts numbered `parts`, for one pass: not kept in the shard cache.
    pub async fn passing_node_parts(&self, parts: &[u32]) -> Result<Vec<Arc<KgNodePart>>> {
        self.read_node_parts(parts, false).await
    }

    async fn read_node_parts(&self, parts: &[u32], keep: bool) -> Result<Vec<Arc<KgNodePart>>> {
        match &self.source {
            Source::Whole(whole) => Ok(parts.iter().map(|_| whole.nodes.clone()).collect()),
            Source::Parts => {
                let entries = self.reader.entries(ShardKind::KgNodes, parts).await?;
                let entries_ref: Vec<&ShardEntry> = entries.iter().collect();
                let loaded: Vec<Arc<KgNodePart>> = if keep {
                    self.reader.load_many(&entries_ref).await?
                } else {
                    self.reader.load_passing(&entries_ref).await?
                };
                for (part, (&p, entry)) in loaded.iter().zip(parts.iter().zip(&entries)) {
                    if self.index.node_starts.get(p as usize) != Some(&part.first) {
                        return Err(Error::Decode {
                            name: entry.name.clone(),
                            message: format!(
                                "knowledge-graph part {p} does not start where the index says"
                            ),
                        });
                    }
                }
                Ok(loaded)
            }
        }
    }

    /// The parts holding `nodes`, by part number, each read once.
    pub async fn parts_of_nodes(
        &self,
        nodes: impl IntoIterator<Item = u32>,
    ) -> Result<BTreeMap<u32, Arc<KgNodePart>>> {
        let wanted: BTreeSet<u32> = nodes
            .into_iter()
            .filter_map(|n| self.part_of_node(n))
            .collect();
        let wanted: Vec<u32> = wanted.into_iter().collect();
        let loaded = self.node_parts(&wanted).await?;
        Ok(wanted.into_iter().zip(loaded).collect())
    }

    /// Every node part in order, a few at a time, handed to `visit`; a scan holds no more
    /// than [`SCAN_BATCH`] parts and leaves the shard cache as it was.
    pub async fn scan(&self, mut visit: impl FnMut(&KgNodePart) -> Result<()>) -> Result<()> {
        let all: Vec<u32> = (0..self.node_part_count()).collect();
        for batch in all.chunks(SCAN_BATCH) {
            for part in self.passing_node_parts(batch).await? {
                visit(&part)?;
            }
        }
        Ok(())
    }

    /// Every node in graph order, without its edges but with the count of the edges it is the
    /// source of that each caller sees, a few parts at a time, handed to `visit`: the
    /// `kg-cards` parts (a tenth of the bytes of the `kg-nodes` parts), or, in an index
    /// without them, cards made from the node parts as they pass.
    pub async fn scan_cards(&self, mut visit: impl FnMut(&KgCardPart) -> Result<()>) -> Result<()> {
        if !self.has_cards() {
            return self.scan(|part| visit(&KgCardPart::of_node_part(part))).await;
        }
        let all: Vec<u32> = (0..self.index.card_starts.len() as u32).collect();
        for batch in all.chunks(SCAN_BATCH) {
            for card in self.passing_cards(batch).await? {
                visit(&card)?;
            }
        }
        Ok(())
    }

    /// Hands `visit` each of `nodes` with the node part holding it (edges included), a few
    /// parts at a time and none kept in the shard cache.
    pub async fn for_node_parts_of(&self, nodes: &[u32], mut visit: impl FnMut(&KgNodePart, u32)) -> Result<()> {
        let by_part = by_part(nodes, |n| self.part_of_node(n));
        let parts: Vec<u32> = by_part.keys().copied().collect();
        for batch in parts.chunks(SCAN_BATCH) {
            for (p, part) in batch.iter().zip(self.passing_node_parts(batch).await?) {
                by_part.get(p).into_iter().flatten().for_each(|&n| visit(&part, n));
            }
        }
        Ok(())
    }

    /// Hands `visit` each of `nodes` (without its edges) with the part holding it, a few parts
    /// at a time and none kept: the `kg-cards` parts, or, in an index without them, the node
    /// parts. What needs a node's name, properties and mentions, not its edges, reads this.
    pub async fn for_cards_of(&self, nodes: &[u32], mut visit: impl FnMut(&KgNodePart, u32)) -> Result<()> {
        if !self.has_cards() {
            return self.for_node_parts_of(nodes, visit).await;
        }
        let by_part = by_part(nodes, |n| if n < self.index.nodes { part_of(&self.index.card_starts, n) } else { None });
        let parts: Vec<u32> = by_part.keys().copied().collect();
        for batch in parts.chunks(SCAN_BATCH) {
            for (p, card) in batch.iter().zip(self.passing_cards(batch).await?) {
                by_part.get(p).into_iter().flatten().for_each(|&n| visit(&card.nodes, n));
            }
        }
        Ok(())
    }

    /// Whether the graph has `kg-cards` parts to read instead of node parts.
    fn has_cards(&self) -> bool {
        !self.index.card_starts.is_empty() && matches!(self.source, Source::Parts)
    }

    /// The card parts numbered `parts`, for one pass, each checked to hold the nodes the index
    /// says.
    async fn passing_cards(&self, parts: &[u32]) -> Result<Vec<Arc<KgCardPart>>> {
        let entries = self.reader.entries(ShardKind::KgCards, parts).await?;
        let cards: Vec<Arc<KgCardPart>> = self.reader.load_passing(&entries.iter().collect::<Vec<_>>()).await?;
        for (card, (&p, entry)) in cards.iter().zip(parts.iter().zip(&entries)) {
            let end = self.index.card_starts.get(p as usize + 1).copied().unwrap_or(self.index.nodes);
            if self.index.card_starts.get(p as usize) != Some(&card.nodes.first) || end.checked_sub(card.nodes.first) != Some(card.nodes.nodes.len() as u32) {
                return Err(Error::Decode {
                    name: entry.name.clone(),
                    message: format!("knowledge-graph card part {p} does not hold the nodes the index says"),
                });
            }
        }
        Ok(cards)
    }

    /// The visible node with this name (case-insensitive; page, then entity, then concept)
    /// or, failing that, this id, with the part that holds it.
    pub async fn find(
        &self,
        name_or_id: &str,
        can_view: &dyn Fn(u32) -> bool,
    ) -> Result<Option<(u32, Arc<KgNodePart>)>> {
        let lower = name_or_id.trim().to_lowercase();
        // The parts a name can be in: from the last part starting before it, through those
        // starting with it.
        let names = &self.index.first_names;
        let mut wanted = BTreeSet::new();
        for kind in [NodeKind::Page, NodeKind::Entity, NodeKind::Concept] {
            let key = (kind, lower.clone());
            let before = names.partition_point(|first| *first < key);
            let through = names.partition_point(|first| *first <= key);
            wanted.extend(
                (before.saturating_sub(1)..through.max(before))
                    .map(|p| p as u32)
                    .filter(|&p| p < self.node_part_count()),
            );
        }
        let wanted: Vec<u32> = wanted.into_iter().collect();
        for part in self.node_parts(&wanted).await? {
            for (i, node) in part.nodes.iter().enumerate() {
                let n = part.first + i as u32;
                if node.name.to_lowercase() == lower && part.node_visible(n, can_view) {
                    return Ok(Some((n, part.clone())));
                }
            }
        }
        let Some(node) = self.node_by_id(&lower).await? else {
            return Ok(None);
        };
        let parts = self.parts_of_nodes([node]).await?;
        Ok(parts
            .into_values()
            .next()
            .filter(|part| part.node_visible(node, can_view))
            .map(|part| (node, part)))
    }

    /// The node with this id, if any.
    async fn node_by_id(&self, id: &str) -> Result<Option<u32>> {
        let part = match &self.source {
            Source::Whole(whole) => whole.ids.clone(),
            Source::Parts => {
                let Some(p) = self
                    .index
                    .id_starts
                    .partition_point(|first| first.as_str() <= id)
                    .checked_sub(1)
                else {
                    return Ok(None);
                };
                let entry = self.reader.entry(ShardKind::KgIds, p as u32).await?;
                self.reader.load::<KgIdPart>(&entry).await?
            }
        };
        Ok(part
            .ids
            .binary_search_by(|(x, _)| x.as_str().cmp(id))
            .ok()
            .map(|i| part.ids[i].1))
    }

    /// The (page, section) pairs mentioning each of `nodes`.
    pub async fn node_mentions(
        &self,
        nodes: &BTreeSet<u32>,
    ) -> Result<BTreeMap<u32, Vec<(u32, u32)>>> {
        self.mention_pairs(ShardKind::KgNodeMentions, &self.index.node_mention_starts, nodes)
            .await
    }

    /// The (section, node) pairs of the mentions in each of `pages`.
    pub async fn page_mentions(
        &self,
        pages: &BTreeSet<u32>,
    ) -> Result<BTreeMap<u32, Vec<(u32, u32)>>> {
        self.mention_pairs(ShardKind::KgPageMentions, &self.index.page_mention_starts, pages)
            .await
    }

    /// Each key's pairs, read from the mention parts (of `kind`, starting at `starts`) that
    /// hold the keys: kept in the shard cache when they are at most [`MENTION_PARTS_KEPT`],
    /// else read [`SCAN_BATCH`] at a time and not kept, so that the mentions of many pages (a
    /// popular node's, in a large wiki) never sit in memory all at once — only the pairs asked
    /// for.
    async fn mention_pairs(
        &self,
        kind: ShardKind,
        starts: &[u32],
        keys: &BTreeSet<u32>,
    ) -> Result<BTreeMap<u32, Vec<(u32, u32)>>> {
        let wanted: BTreeSet<u32> = keys.iter().filter_map(|&k| part_of(starts, k)).collect();
        let wanted: Vec<u32> = wanted.into_iter().collect();
        let mut out = BTreeMap::new();
        let mut take = |p: u32, part: &MentionPart| {
            for &k in keys.iter().filter(|&&k| part_of(starts, k) == Some(p)) {
                out.insert(k, part.pairs(k).to_vec());
            }
        };
        match &self.source {
            Source::Whole(whole) => {
                let part = if kind == ShardKind::KgNodeMentions { &whole.node_mentions } else { &whole.page_mentions };
                wanted.iter().for_each(|&p| take(p, part));
            }
            Source::Parts => {
                let keep = wanted.len() <= MENTION_PARTS_KEPT;
                for batch in wanted.chunks(SCAN_BATCH) {
                    let entries = self.reader.entries(kind, batch).await?;
                    let entries: Vec<&ShardEntry> = entries.iter().collect();
                    let loaded: Vec<Arc<MentionPart>> = if keep { self.reader.load_many(&entries).await? } else { self.reader.load_passing(&entries).await? };
                    batch.iter().zip(&loaded).for_each(|(&p, part)| take(p, part));
                }
            }
        }
        Ok(out)
    }

    /// Every node's mention pairs, a part at a time, handed to `visit` as (node, pairs).
    pub async fn scan_node_mentions(
        &self,
        mut visit: impl FnMut(u32, &[(u32, u32)]) -> Result<()>,
    ) -> Result<()> {
        let parts = self.index.node_mention_starts.len() as u32;
        for p in 0..parts {
            let part = match &self.source {
                Source::Whole(whole) => whole.node_mentions.clone(),
                Source::Parts => {
                    let entry = self.reader.entry(ShardKind::KgNodeMentions, p).await?;
                    self.reader
                        .load_passing::<MentionPart>(&[&entry])
                        .await?
                        .remove(0)
                }
            };
            for (node, pairs) in &part.rows {
                visit(*node, pairs)?;
            }
        }
        Ok(())
    }
}

/// `nodes` grouped by the part `part_of` puts each in (nodes in no part left out).
fn by_part(nodes: &[u32], part_of: impl Fn(u32) -> Option<u32>) -> BTreeMap<u32, Vec<u32>> {
    let mut grouped: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for &n in nodes {
        if let Some(p) = part_of(n) {
            grouped.entry(p).or_default().push(n);
        }
    }
    grouped
}
