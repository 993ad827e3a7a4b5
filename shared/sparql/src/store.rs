//! A dictionary-encoded, visibility-tagged RDF triple store built for shards.
//!
//! # Layout
//!
//! * **Dictionary**: every distinct [`Term`] once, sorted by `Term`'s order; a term's id is its
//!   position (`u32`). Looking a term up is a binary search, so a reader needs no hash map.
//! * **Indexes**: the triples three times, as id triples in the orders SPO, POS and OSP, each
//!   sorted. A triple pattern with any set of bound positions is a *prefix* of one of the three
//!   orders (s, s+p, s+p+o → SPO; p, p+o → POS; o, o+s → OSP; nothing → SPO), so it is answered
//!   by one range scan.
//! * **Visibility groups**: the triples are split by [`Visibility`] — one group of public
//!   triples, then one group per restricted page key — and each group has its own three
//!   indexes. A query first decides, once, which groups the caller may view and never touches
//!   the others: restricted triples cost a caller who cannot see them nothing, so neither
//!   results, counts, `ASK`, `OPTIONAL`, aggregates, nor the work-limit error can depend on
//!   them ("restricted and nonexistent look identical", CONTRACT §3.5). A triple asserted by a
//!   public source and by pages is stored only in the public group; one asserted by several
//!   pages is stored in each of their groups and yielded once if the caller can view any.
//! * **Partitions**: each index is a list of [`Partition`]s, consecutive runs of its sorted
//!   entries with their first and last key. [`Store::partitions_for`] says which partitions
//!   (of which groups) a pattern touches, so a reader can fetch only those. Partitions are cut
//!   where the leading component changes, so POS partitions hold whole predicates and SPO
//!   partitions whole subjects (unless one value alone exceeds twice the target size).
//!   [`StoreBuilder::partition_size`] sets the target entries per partition; the default keeps
//!   one partition per index.
//! * **Entries** are packed little-endian `u32` triples `(a, b, c)` in a byte string
//!   (`serde_bytes`), 12 bytes each, so CBOR carries each partition as one byte string.
//! * **Shards**: the index stores the store split by predicate ([`Store::split`]): an
//!   [`RdfDirectory`] (the dictionary and which predicates each partition holds) and
//!   [`TriplePartition`]s of SPO entries per visibility group. A reader loads the directory
//!   and the partitions of the predicates a query names, and [`Store::assemble`]s a store
//!   whose patterns over those predicates see every triple (docs/SHARD-FORMAT.md).
//!
//! # RDFS entailment
//!
//! [`StoreBuilder::build`] materialises the RDFS rules rdfs2 (domain), rdfs3 (range), rdfs5
//! (subPropertyOf transitivity), rdfs7 (subPropertyOf propagation), rdfs9 (type through
//! subClassOf) and rdfs11 (subClassOf transitivity). Each rule has two premises; the inferred
//! triple is visible only to a caller who can view **both**:
//! public + public → public; public + page k → page k; page k + page k → page k; page k + page
//! m (k ≠ m) → *not materialised*, because one tag cannot say "viewable only with both pages"
//! and a single page's tag would leak the other page's fact. (If the same conclusion also
//! follows from premises with a representable visibility it is kept with that one.)

use super::dictionary::{cut_terms, TermPart, TermPartRef};
use super::term::{Term, RDFS_DOMAIN, RDFS_RANGE, RDFS_SUB_CLASS_OF, RDFS_SUB_PROPERTY_OF, RDF_TYPE};
use super::{Budget, SparqlError};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// Who may see a triple.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Visibility {
    /// Anyone.
    Public,
    /// Whoever may view the page with this key.
    Page(u32),
}

/// The three sort orders of the indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum IndexOrder {
    /// subject, predicate, object
    Spo,
    /// predicate, object, subject
    Pos,
    /// object, subject, predicate
    Osp,
}

impl IndexOrder {
    /// Reorders an `(s, p, o)` triple into this index's key order.
    fn key(self, [s, p, o]: [u32; 3]) -> [u32; 3] {
        match self {
            IndexOrder::Spo => [s, p, o],
            IndexOrder::Pos => [p, o, s],
            IndexOrder::Osp => [o, s, p],
        }
    }

    /// Turns a key of this index back into `(s, p, o)`.
    fn triple(self, [a, b, c]: [u32; 3]) -> [u32; 3] {
        match self {
            IndexOrder::Spo => [a, b, c],
            IndexOrder::Pos => [c, a, b],
            IndexOrder::Osp => [b, c, a],
        }
    }
}

/// A triple pattern over term ids: `None` is a wildcard.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IdPattern {
    /// Subject id, if bound.
    pub subject: Option<u32>,
    /// Predicate id, if bound.
    pub predicate: Option<u32>,
    /// Object id, if bound.
    pub object: Option<u32>,
}

impl IdPattern {
    /// The index whose order makes the bound positions a prefix, with that prefix.
    fn plan(&self) -> (IndexOrder, Vec<u32>) {
        match (self.subject, self.predicate, self.object) {
            (Some(s), Some(p), Some(o)) => (IndexOrder::Spo, vec![s, p, o]),
            (Some(s), Some(p), None) => (IndexOrder::Spo, vec![s, p]),
            (Some(s), None, None) => (IndexOrder::Spo, vec![s]),
            (None, None, None) => (IndexOrder::Spo, vec![]),
            (None, Some(p), Some(o)) => (IndexOrder::Pos, vec![p, o]),
            (None, Some(p), None) => (IndexOrder::Pos, vec![p]),
            (Some(s), None, Some(o)) => (IndexOrder::Osp, vec![o, s]),
            (None, None, Some(o)) => (IndexOrder::Osp, vec![o]),
        }
    }
}

/// One partition a pattern needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionRef {
    /// Position of the visibility group in [`Store::groups`].
    pub group: usize,
    /// That group's visibility.
    pub visibility: Visibility,
    /// Position of the partition in the group's index.
    pub partition: usize,
}

/// Which index, and which of its partitions, a pattern needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionSelection {
    /// The index to scan (in every group).
    pub index: IndexOrder,
    /// The needed partitions, by group then position.
    pub partitions: Vec<PartitionRef>,
}

/// A run of consecutive entries of one index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partition {
    /// Key of the first entry (in the index's order).
    pub first: [u32; 3],
    /// Key of the last entry.
    pub last: [u32; 3],
    /// Packed little-endian `(a, b, c)` `u32` triples, sorted, distinct.
    #[serde(with = "serde_bytes")]
    pub entries: Vec<u8>,
}

const ENTRY: usize = 12;

impl Partition {
    fn len(&self) -> usize {
        self.entries.len() / ENTRY
    }

    fn entry(&self, i: usize) -> Option<[u32; 3]> {
        let start = i.checked_mul(ENTRY)?;
        let bytes = self.entries.get(start..start.checked_add(ENTRY)?)?;
        let word = |k: usize| -> Option<u32> {
            let b: [u8; 4] = bytes.get(k * 4..k * 4 + 4)?.try_into().ok()?;
            Some(u32::from_le_bytes(b))
        };
        Some([word(0)?, word(1)?, word(2)?])
    }

    /// First position whose key is `>= lo` (binary search).
    fn lower_bound(&self, lo: &[u32; 3]) -> usize {
        let (mut a, mut b) = (0usize, self.len());
        while a < b {
            let mid = a + (b - a) / 2;
            match self.entry(mid) {
                Some(k) if k < *lo => a = mid + 1,
                _ => b = mid,
            }
        }
        a
    }

    /// First position whose key is `> hi` (binary search).
    fn upper_bound(&self, hi: &[u32; 3]) -> usize {
        let (mut a, mut b) = (0usize, self.len());
        while a < b {
            let mid = a + (b - a) / 2;
            match self.entry(mid) {
                Some(k) if k <= *hi => a = mid + 1,
                _ => b = mid,
            }
        }
        a
    }

    fn overlaps(&self, lo: &[u32; 3], hi: &[u32; 3]) -> bool {
        self.last >= *lo && self.first <= *hi
    }
}

/// One sorted permutation of a group's triples.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Index {
    /// Its order.
    pub order: IndexOrder,
    /// Its partitions, in key order.
    pub partitions: Vec<Partition>,
}

/// The triples of one visibility, three times indexed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    /// Who may see these triples.
    pub visibility: Visibility,
    /// SPO index.
    pub spo: Index,
    /// POS index.
    pub pos: Index,
    /// OSP index.
    pub osp: Index,
}

impl Group {
    fn index(&self, order: IndexOrder) -> &Index {
        match order {
            IndexOrder::Spo => &self.spo,
            IndexOrder::Pos => &self.pos,
            IndexOrder::Osp => &self.osp,
        }
    }
}

/// The store: dictionary plus visibility groups. Immutable; build it with [`StoreBuilder`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Store {
    /// Format version of this structure.
    pub version: u32,
    /// The dictionary, sorted; id = position.
    pub terms: Vec<Term>,
    /// Visibility groups: public first (if any), then pages by ascending key.
    pub groups: Vec<Group>,
    /// `Some(n)`: `terms` is empty and the dictionary of `n` terms is read by part
    /// ([`crate::dictionary`]); queries run with [`crate::execute_with_parts`].
    #[serde(skip)]
    pub terms_by_part: Option<u32>,
}

/// Format version written by this code.
pub const STORE_VERSION: u32 = 1;

fn prefix_range(prefix: &[u32]) -> ([u32; 3], [u32; 3]) {
    let mut lo = [0u32; 3];
    let mut hi = [u32::MAX; 3];
    for (i, v) in prefix.iter().enumerate().take(3) {
        if let (Some(l), Some(h)) = (lo.get_mut(i), hi.get_mut(i)) {
            *l = *v;
            *h = *v;
        }
    }
    (lo, hi)
}

impl Store {
    /// An empty store.
    pub fn empty() -> Self {
        Store { version: STORE_VERSION, terms: Vec::new(), groups: Vec::new(), terms_by_part: None }
    }

    /// Checks the invariants a reader relies on (sorted distinct dictionary, sorted distinct
    /// entries within bounds, partition keys, group order), e.g. after decoding a shard.
    pub fn validate(&self) -> Result<(), SparqlError> {
        let bad = |what: String| Err(SparqlError::Store(what));
        if self.version != STORE_VERSION {
            return bad(format!("format version {} (this reader understands {STORE_VERSION})", self.version));
        }
        if self.terms.windows(2).any(|w| w.first() >= w.get(1)) {
            return bad("dictionary is not sorted and distinct".into());
        }
        if self.groups.windows(2).any(|w| w.first().map(|g| g.visibility) >= w.get(1).map(|g| g.visibility)) {
            return bad("visibility groups are not in order".into());
        }
        let n = self.terms_by_part.map_or(self.terms.len(), |n| n as usize);
        for g in &self.groups {
            for index in [&g.spo, &g.pos, &g.osp] {
                let mut prev: Option<[u32; 3]> = None;
                for part in &index.partitions {
                    if part.entries.len() % ENTRY != 0 || part.entries.is_empty() {
                        return bad(format!("{:?} partition has a partial or no entry", index.order));
                    }
                    if part.entry(0) != Some(part.first) || part.entry(part.len() - 1) != Some(part.last) {
                        return bad(format!("{:?} partition bounds do not match its entries", index.order));
                    }
                    let mut i = 0;
                    while let Some(k) = part.entry(i) {
                        i += 1;
                        if prev.is_some_and(|p| p >= k) || k.iter().any(|&id| id as usize >= n) {
                            return bad(format!("{:?} index entries are unsorted or out of range", index.order));
                        }
                        prev = Some(k);
                    }
                }
            }
        }
        Ok(())
    }

    /// The id of a term, if the dictionary has it (a dictionary by part: `None`).
    pub fn id_of(&self, term: &Term) -> Option<u32> {
        self.terms.binary_search(term).ok().and_then(|i| u32::try_from(i).ok())
    }

    /// The term of an id (a dictionary by part: `None`).
    pub fn term(&self, id: u32) -> Option<&Term> {
        self.terms.get(usize::try_from(id).ok()?)
    }

    /// Number of stored entries (a triple asserted by several restricted pages counts once per page).
    pub fn entry_count(&self) -> usize {
        self.groups.iter().flat_map(|g| &g.spo.partitions).map(Partition::len).sum()
    }

    /// The groups a caller may view: the public one and those of pages `can_view` allows.
    /// `can_view` is asked once per restricted group.
    pub fn viewable_groups(&self, can_view: &dyn Fn(u32) -> bool) -> Vec<usize> {
        self.groups
            .iter()
            .enumerate()
            .filter(|(_, g)| match g.visibility {
                Visibility::Public => true,
                Visibility::Page(k) => can_view(k),
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// Which index, and which partitions of the groups the caller may view, answer `pattern`.
    pub fn partitions_for(&self, pattern: &IdPattern, can_view: &dyn Fn(u32) -> bool) -> PartitionSelection {
        let (order, prefix) = pattern.plan();
        let (lo, hi) = prefix_range(&prefix);
        let mut partitions = Vec::new();
        for gi in self.viewable_groups(can_view) {
            let Some(group) = self.groups.get(gi) else { continue };
            for (pi, p) in group.index(order).partitions.iter().enumerate() {
                if p.overlaps(&lo, &hi) {
                    partitions.push(PartitionRef { group: gi, visibility: group.visibility, partition: pi });
                }
            }
        }
        PartitionSelection { index: order, partitions }
    }

    /// How many entries of the `groups` match `pattern` (duplicates across groups counted
    /// each time), by binary search: a cheap estimate for ordering joins.
    pub fn estimate(&self, groups: &[usize], pattern: &IdPattern) -> usize {
        let (order, prefix) = pattern.plan();
        let (lo, hi) = prefix_range(&prefix);
        groups
            .iter()
            .filter_map(|g| self.groups.get(*g))
            .flat_map(|g| &g.index(order).partitions)
            .filter(|p| p.overlaps(&lo, &hi))
            .map(|p| p.upper_bound(&hi).saturating_sub(p.lower_bound(&lo)))
            .sum()
    }

    /// Every triple of the `groups` matching `pattern`, as `(s, p, o)` ids, in index order,
    /// each once, until `out` returns `false`. Every index entry examined costs one step of `budget`, and so does probing
    /// each group when there are several.
    pub(crate) fn scan(
        &self,
        groups: &[usize],
        pattern: &IdPattern,
        budget: &mut Budget,
        out: &mut dyn FnMut([u32; 3]) -> Result<bool, SparqlError>,
    ) -> Result<(), SparqlError> {
        let (order, prefix) = pattern.plan();
        let (lo, hi) = prefix_range(&prefix);
        // Feeds `f` the group's matching keys until it returns false; false if stopped.
        let each = |group: &Group, f: &mut dyn FnMut([u32; 3]) -> Result<bool, SparqlError>, budget: &mut Budget| -> Result<bool, SparqlError> {
            for part in &group.index(order).partitions {
                if !part.overlaps(&lo, &hi) {
                    continue;
                }
                let mut i = part.lower_bound(&lo);
                while let Some(key) = part.entry(i) {
                    if key > hi {
                        break;
                    }
                    budget.step()?;
                    i += 1;
                    if !f(key)? {
                        return Ok(false);
                    }
                }
            }
            Ok(true)
        };
        match groups {
            [] => Ok(()),
            [only] => match self.groups.get(*only) {
                Some(g) => each(g, &mut |key| out(order.triple(key)), budget).map(|_| ()),
                None => Ok(()),
            },
            many => {
                // Several groups: gather, then merge into one sorted, duplicate-free sequence.
                let mut keys: Vec<[u32; 3]> = Vec::new();
                for gi in many {
                    // Probing a group costs a step even when it holds no match.
                    budget.step()?;
                    if let Some(g) = self.groups.get(*gi) {
                        each(g, &mut |key| {
                            keys.push(key);
                            Ok(true)
                        }, budget)?;
                    }
                }
                keys.sort_unstable();
                keys.dedup();
                for key in keys {
                    if !out(order.triple(key))? {
                        break;
                    }
                }
                Ok(())
            }
        }
    }

    /// Every stored entry as terms with visibility, by group then SPO order (for inspection).
    pub fn entries(&self) -> Vec<(Term, Term, Term, Visibility)> {
        let mut out = Vec::new();
        for g in &self.groups {
            for part in &g.spo.partitions {
                let mut i = 0;
                while let Some([s, p, o]) = part.entry(i) {
                    i += 1;
                    if let (Some(s), Some(p), Some(o)) = (self.term(s), self.term(p), self.term(o)) {
                        out.push((s.clone(), p.clone(), o.clone(), g.visibility));
                    }
                }
            }
        }
        out
    }
}

/// Splits sorted keys into partitions of about `size` entries, cutting where the leading
/// component changes (so POS partitions hold whole predicates and SPO partitions whole
/// subjects) unless one leading value alone exceeds `2 × size` entries.
fn split_runs(keys: &[[u32; 3]], size: usize) -> Vec<&[[u32; 3]]> {
    let mut out = Vec::new();
    let mut start = 0usize;
    for i in 1..keys.len() {
        let len = i - start;
        let lead_changes = keys.get(i - 1).map(|k| k[0]) != keys.get(i).map(|k| k[0]);
        if (len >= size && lead_changes) || len >= size.saturating_mul(2) {
            out.extend(keys.get(start..i));
            start = i;
        }
    }
    if start < keys.len() {
        out.extend(keys.get(start..));
    }
    out
}

/// One fact as the builder holds it: a triple and one visibility it is seen with.
type Fact = ([u32; 3], Visibility);

/// Facts are normalised once the list holds twice as many as after the last time (and at
/// least this many).
const NORMALISE_FROM: usize = 1 << 16;

/// Sorts `facts` and keeps each triple's visibilities normalised: public alone, or distinct
/// pages (whoever may view a page may see what anyone may).
fn normalise(facts: &mut Vec<Fact>) {
    facts.sort_unstable();
    facts.dedup();
    // Public sorts before every page, so it is a triple's first visibility when it has it.
    let mut public: Option<[u32; 3]> = None;
    facts.retain(|&(t, v)| {
        if v == Visibility::Public {
            public = Some(t);
            true
        } else {
            public != Some(t)
        }
    });
}

/// Collects triples and builds a [`Store`].
#[derive(Debug, Clone)]
pub struct StoreBuilder {
    ids: HashMap<Term, u32>,
    terms: Vec<Term>,
    /// Every fact added: a flat list, sorted and normalised whenever it doubles, so a triple
    /// added many times (a concept's, once per page naming it) costs little. A map from triple
    /// to visibilities cost about three times the bytes (and twice that while it grew): the
    /// largest structure of a 120k-page build's RDF stage.
    facts: Vec<Fact>,
    normalised: usize,
    partition_size: usize,
    entailment: bool,
}

impl Default for StoreBuilder {
    fn default() -> Self {
        Self::new()
    }
}

/// Visibility of a conclusion from two premises (see the module docs); `None` when unrepresentable.
fn meet(a: Visibility, b: Visibility) -> Option<Visibility> {
    match (a, b) {
        (Visibility::Public, x) | (x, Visibility::Public) => Some(x),
        (x, y) if x == y => Some(x),
        _ => None,
    }
}

impl StoreBuilder {
    /// A builder with RDFS entailment on and one partition per index.
    pub fn new() -> Self {
        StoreBuilder { ids: HashMap::new(), terms: Vec::new(), facts: Vec::new(), normalised: 0, partition_size: usize::MAX, entailment: true }
    }

    /// Target entries per partition (at least 1; see the module docs for where cuts fall);
    /// the default is one partition per index.
    pub fn partition_size(mut self, entries: usize) -> Self {
        self.partition_size = entries.max(1);
        self
    }

    /// Turns RDFS entailment on (the default) or off.
    pub fn entailment(mut self, on: bool) -> Self {
        self.entailment = on;
        self
    }

    fn intern(&mut self, term: Term) -> u32 {
        if let Some(id) = self.ids.get(&term) {
            return *id;
        }
        let id = u32::try_from(self.terms.len()).unwrap_or(u32::MAX);
        self.terms.push(term.clone());
        self.ids.insert(term, id);
        id
    }

    /// Adds one triple seen by whoever `visibility` allows. Duplicates are merged.
    pub fn add(&mut self, subject: Term, predicate: Term, object: Term, visibility: Visibility) {
        let t = [self.intern(subject), self.intern(predicate), self.intern(object)];
        self.facts.push((t, visibility));
        if self.facts.len() >= self.normalised.saturating_mul(2).max(NORMALISE_FROM) {
            normalise(&mut self.facts);
            self.normalised = self.facts.len();
        }
    }

    /// Materialises the RDFS closure into `self.facts` (naive fixpoint; hierarchies are shallow).
    fn entail(&mut self) {
        let ty = self.intern(Term::iri(RDF_TYPE));
        let sub_class = self.intern(Term::iri(RDFS_SUB_CLASS_OF));
        let sub_prop = self.intern(Term::iri(RDFS_SUB_PROPERTY_OF));
        let domain = self.intern(Term::iri(RDFS_DOMAIN));
        let range = self.intern(Term::iri(RDFS_RANGE));
        let literal: Vec<bool> = self.terms.iter().map(Term::is_literal).collect();
        let is_literal = |id: u32| literal.get(id as usize).copied().unwrap_or(false);
        // Each round derives from the facts of the previous one, keeping only what they do not
        // already hold; the closure is reached when a round derives nothing new. Rounds are
        // bounded by the hierarchies' depth; the cap is a guard.
        for _round in 0..256 {
            normalise(&mut self.facts);
            let facts = &self.facts;
            let mut schema: HashMap<(u32, u32), Vec<(u32, Visibility)>> = HashMap::new();
            for &([s, p, o], v) in facts {
                if p == sub_class || p == sub_prop || p == domain || p == range {
                    schema.entry((p, s)).or_default().push((o, v));
                }
            }
            let none: Vec<(u32, Visibility)> = Vec::new();
            let get = |p: u32, s: u32| schema.get(&(p, s)).unwrap_or(&none);
            // Held already: publicly, or with this very visibility.
            let held = |t: [u32; 3], v: Visibility| facts.binary_search(&(t, Visibility::Public)).is_ok() || facts.binary_search(&(t, v)).is_ok();
            let mut derived: Vec<Fact> = Vec::new();
            for &([s, p, o], v) in facts {
                let mut push = |t: [u32; 3], v2: Visibility| {
                    if let Some(m) = meet(v, v2).filter(|&m| !held(t, m)) {
                        derived.push((t, m));
                    }
                };
                if p == sub_prop || p == sub_class {
                    for &(o2, v2) in get(p, o) {
                        push([s, p, o2], v2); // rdfs5 / rdfs11
                    }
                }
                for &(q, v2) in get(sub_prop, p) {
                    push([s, q, o], v2); // rdfs7
                }
                if p == ty {
                    for &(d, v2) in get(sub_class, o) {
                        push([s, ty, d], v2); // rdfs9
                    }
                }
                for &(c, v2) in get(domain, p) {
                    push([s, ty, c], v2); // rdfs2
                }
                if !is_literal(o) {
                    for &(c, v2) in get(range, p) {
                        push([o, ty, c], v2); // rdfs3
                    }
                }
            }
            if derived.is_empty() {
                break;
            }
            self.facts.extend(derived);
        }
    }

    /// Builds the store (entailment, dictionary sort, visibility groups, indexes).
    pub fn build(self) -> Result<Store, SparqlError> {
        let size = self.partition_size;
        let (terms, by_vis) = self.finish()?;
        let groups = groups_of(by_vis, size);
        Ok(Store { version: STORE_VERSION, terms, groups, terms_by_part: None })
    }

    /// What [`StoreBuilder::build`] then [`Store::split`] make, without the store's three
    /// indexes: the facts go straight into their predicates' partitions (the index build's
    /// way, where the store is only written out).
    pub fn build_split(self, target: usize) -> Result<(RdfDirectory, Vec<TriplePartition>), SparqlError> {
        let (terms, by_vis) = self.finish()?;
        let mut by_predicate: BTreeMap<u32, BTreeMap<Visibility, Vec<[u32; 3]>>> = BTreeMap::new();
        for (visibility, triples) in by_vis {
            for t in triples {
                by_predicate.entry(t[1]).or_default().entry(visibility).or_default().push(t);
            }
        }
        Ok(split_by_predicate(terms, by_predicate, target))
    }

    /// Entailment, then the dictionary sorted (id = position) and the facts renumbered and
    /// grouped by visibility (each fact once per visibility, in no order).
    #[allow(clippy::type_complexity)]
    fn finish(mut self) -> Result<(Vec<Term>, BTreeMap<Visibility, Vec<[u32; 3]>>), SparqlError> {
        if self.entailment && !self.facts.is_empty() {
            self.entail();
        }
        normalise(&mut self.facts);
        // Nothing is interned from here on: the second copy of every term goes.
        self.ids = HashMap::new();
        // Sort the dictionary and renumber, keeping only terms that occur in a triple.
        let mut used = vec![false; self.terms.len()];
        for (t, _) in &self.facts {
            for id in t {
                if let Some(u) = used.get_mut(*id as usize) {
                    *u = true;
                }
            }
        }
        let mut order: Vec<u32> = (0..self.terms.len()).filter(|&i| used.get(i).copied().unwrap_or(false)).filter_map(|i| u32::try_from(i).ok()).collect();
        order.sort_unstable_by(|a, b| self.terms.get(*a as usize).cmp(&self.terms.get(*b as usize)));
        let mut remap = vec![u32::MAX; self.terms.len()];
        for (new, old) in order.iter().enumerate() {
            if let Some(r) = remap.get_mut(*old as usize) {
                *r = u32::try_from(new).map_err(|_| SparqlError::Store("too many terms".into()))?;
            }
        }
        // The terms move into the sorted dictionary (not copied).
        let mut unsorted: Vec<Option<Term>> = std::mem::take(&mut self.terms).into_iter().map(Some).collect();
        let terms: Vec<Term> = order.iter().filter_map(|&old| unsorted.get_mut(old as usize).and_then(Option::take)).collect();
        drop(unsorted);
        let map = |id: u32| remap.get(id as usize).copied().unwrap_or(u32::MAX);
        let mut by_vis: BTreeMap<Visibility, Vec<[u32; 3]>> = BTreeMap::new();
        // The facts are consumed as they are grouped.
        for (t, v) in std::mem::take(&mut self.facts) {
            by_vis.entry(v).or_default().push([map(t[0]), map(t[1]), map(t[2])]);
        }
        Ok((terms, by_vis))
    }
}

/// Format version of the split layout ([`RdfDirectory`] + [`TriplePartition`]s) with the
/// dictionary by part (`rdf-terms` shards, [`RdfDirectory::cut_dictionary`]).
pub const SPLIT_VERSION: u32 = 3;

/// The split layout with the whole dictionary in the directory: what [`Store::split`] makes,
/// and what indexes written before the dictionary was cut hold. Still read.
pub const WHOLE_DICTIONARY_VERSION: u32 = 2;

/// Payload of the `rdf` shard: the dictionary and the directory of triple partitions. A query
/// loads it, then only the `rdf-triples` partitions holding the predicates it names
/// ([`RdfDirectory::partitions_for`]), and [`Store::assemble`]s a store from them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RdfDirectory {
    /// [`SPLIT_VERSION`], or [`WHOLE_DICTIONARY_VERSION`].
    pub version: u32,
    /// The whole dictionary, sorted; id = position (as [`Store::terms`]). Empty when the
    /// dictionary is by part.
    pub terms: Vec<Term>,
    /// Partition `i` (the `rdf-triples` shard with partition number `i`): its predicate ids,
    /// ascending; every predicate is in exactly one partition.
    pub partitions: Vec<Vec<u32>>,
    /// Which rules the projection that filled the store followed
    /// (`ontology::PROJECTION_VERSION`); 0 — the key is absent — in indexes written before
    /// it existed. [`Store::split`] leaves it 0, the build sets it.
    #[serde(default)]
    pub projection: u32,
    /// The dictionary by part ([`SPLIT_VERSION`]): part `i` is the `rdf-terms` shard with
    /// partition number `i`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub term_parts: Vec<TermPartRef>,
    /// Number of terms of the dictionary by part.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub term_count: u32,
    /// With the dictionary by part: every predicate of the partitions with its id, by term,
    /// so [`RdfDirectory::partitions_for`] needs no part.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub predicates: Vec<(Term, u32)>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Payload of an `rdf-triples` shard: every stored entry whose predicate is one of
/// `predicates`, per visibility group, as packed little-endian SPO `u32` triples (sorted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriplePartition {
    /// Predicate ids, ascending (as in the directory).
    pub predicates: Vec<u32>,
    /// Visibilities ascending.
    pub groups: Vec<TripleGroup>,
}

/// The entries of one visibility in a [`TriplePartition`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TripleGroup {
    pub visibility: Visibility,
    /// Packed little-endian SPO `u32` triples, sorted, distinct.
    #[serde(with = "serde_bytes")]
    pub entries: Vec<u8>,
}

impl RdfDirectory {
    /// The partitions holding these predicates (`None`: every partition). Predicates absent
    /// from the dictionary need no partition. With the dictionary by part a predicate's id is
    /// not known here, so this is every partition; [`RdfDirectory::partitions_for_ids`] takes
    /// the ids instead.
    pub fn partitions_for(&self, predicates: Option<&[Term]>) -> Vec<u32> {
        let Some(predicates) = predicates else { return (0..self.partitions.len() as u32).collect() };
        let ids: Vec<u32> = if self.term_parts.is_empty() {
            predicates.iter().filter_map(|t| self.terms.binary_search(t).ok()).filter_map(|i| u32::try_from(i).ok()).collect()
        } else {
            predicates.iter().filter_map(|t| self.predicates.binary_search_by(|(p, _)| p.cmp(t)).ok()).filter_map(|i| self.predicates.get(i).map(|(_, id)| *id)).collect()
        };
        (0..self.partitions.len())
            .filter(|&i| self.partitions.get(i).is_some_and(|ps| ids.iter().any(|id| ps.binary_search(id).is_ok())))
            .filter_map(|i| u32::try_from(i).ok())
            .collect()
    }

    /// The parts of the dictionary by part that would hold these terms (none for a whole
    /// dictionary; terms before the first part are in none).
    pub fn term_parts_for(&self, terms: &[Term]) -> Vec<usize> {
        let mut parts: Vec<usize> = terms.iter().filter_map(|t| self.term_parts.partition_point(|r| r.first <= *t).checked_sub(1)).collect();
        parts.sort_unstable();
        parts.dedup();
        parts
    }

    /// Moves the whole dictionary into parts of `per_part` terms ([`SPLIT_VERSION`]); the
    /// parts are the `rdf-terms` shards, in order.
    pub fn cut_dictionary(&mut self, per_part: usize) -> Vec<TermPart> {
        let mut ids: Vec<u32> = self.partitions.iter().flatten().copied().collect();
        ids.sort_unstable();
        ids.dedup();
        self.predicates = ids.into_iter().filter_map(|id| Some((self.terms.get(id as usize)?.clone(), id))).collect();
        self.term_count = u32::try_from(self.terms.len()).unwrap_or(u32::MAX);
        let (refs, parts) = cut_terms(std::mem::take(&mut self.terms), per_part);
        self.term_parts = refs;
        self.version = SPLIT_VERSION;
        parts
    }
}

/// The directory and partitions of [`Store::split`] from the entries per predicate and
/// visibility; each predicate's entries are dropped once in their partition.
fn split_by_predicate(terms: Vec<Term>, mut by_predicate: BTreeMap<u32, BTreeMap<Visibility, Vec<[u32; 3]>>>, target: usize) -> (RdfDirectory, Vec<TriplePartition>) {
    let mut plan: Vec<Vec<u32>> = Vec::new();
    let mut open: (Vec<u32>, usize) = (Vec::new(), 0);
    for (&p, groups) in &by_predicate {
        let n: usize = groups.values().map(Vec::len).sum();
        if n >= target {
            plan.push(vec![p]);
            continue;
        }
        open.0.push(p);
        open.1 += n;
        if open.1 >= target {
            plan.push(std::mem::take(&mut open.0));
            open.1 = 0;
        }
    }
    if !open.0.is_empty() {
        plan.push(open.0);
    }
    let partitions = plan
        .iter()
        .map(|predicates| {
            let mut groups: BTreeMap<Visibility, Vec<[u32; 3]>> = BTreeMap::new();
            for p in predicates {
                for (v, entries) in by_predicate.remove(p).into_iter().flatten() {
                    groups.entry(v).or_default().extend(entries);
                }
            }
            let groups = groups
                .into_iter()
                .map(|(visibility, mut keys)| {
                    keys.sort_unstable();
                    keys.dedup();
                    TripleGroup { visibility, entries: pack(&keys) }
                })
                .collect();
            TriplePartition { predicates: predicates.clone(), groups }
        })
        .collect();
    (RdfDirectory { version: WHOLE_DICTIONARY_VERSION, terms, partitions: plan, projection: 0, term_parts: Vec::new(), term_count: 0, predicates: Vec::new() }, partitions)
}

/// The visibility groups of these triples, each index cut into partitions of about `size`
/// entries (`usize::MAX`: one).
fn groups_of(by_vis: BTreeMap<Visibility, Vec<[u32; 3]>>, size: usize) -> Vec<Group> {
    let build_index = |order: IndexOrder, triples: &[[u32; 3]]| -> Index {
        let mut keyed: Vec<[u32; 3]> = triples.iter().map(|t| order.key(*t)).collect();
        keyed.sort_unstable();
        keyed.dedup();
        let partitions = split_runs(&keyed, size)
            .into_iter()
            .filter_map(|chunk| {
                let first = *chunk.first()?;
                let last = *chunk.last()?;
                Some(Partition { first, last, entries: pack(chunk) })
            })
            .collect();
        Index { order, partitions }
    };
    by_vis
        .into_iter()
        .map(|(visibility, triples)| Group {
            visibility,
            spo: build_index(IndexOrder::Spo, &triples),
            pos: build_index(IndexOrder::Pos, &triples),
            osp: build_index(IndexOrder::Osp, &triples),
        })
        .collect()
}

fn pack(keys: &[[u32; 3]]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(keys.len() * ENTRY);
    for k in keys {
        for w in k {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
    }
    bytes
}

impl Store {
    /// Splits the store into the `rdf` directory and `rdf-triples` partitions by predicate:
    /// predicates in id order, a predicate with at least `target` entries alone, smaller ones
    /// packed together until a partition reaches `target` entries.
    pub fn split(&self, target: usize) -> (RdfDirectory, Vec<TriplePartition>) {
        // Entries per predicate, per group, in SPO order (a group's SPO index filtered).
        let mut by_predicate: BTreeMap<u32, BTreeMap<Visibility, Vec<[u32; 3]>>> = BTreeMap::new();
        for g in &self.groups {
            for part in &g.spo.partitions {
                let mut i = 0;
                while let Some(t) = part.entry(i) {
                    i += 1;
                    by_predicate.entry(t[1]).or_default().entry(g.visibility).or_default().push(t);
                }
            }
        }
        split_by_predicate(self.terms.clone(), by_predicate, target)
    }

    /// A store over the directory's dictionary and the triples of `parts` (each index one
    /// partition), validated: patterns whose predicate is in `parts` see all their triples.
    /// With the dictionary by part the store holds no term ([`Store::terms_by_part`]).
    pub fn assemble(directory: &RdfDirectory, parts: &[&TriplePartition]) -> Result<Store, SparqlError> {
        let by_part = match directory.version {
            WHOLE_DICTIONARY_VERSION => false,
            SPLIT_VERSION if directory.terms.is_empty() => true,
            SPLIT_VERSION => return Err(SparqlError::Store("rdf directory by part also holds a whole dictionary".into())),
            other => {
                return Err(SparqlError::Store(format!(
                    "rdf directory version {other} (this reader understands {WHOLE_DICTIONARY_VERSION} and {SPLIT_VERSION})"
                )))
            }
        };
        let mut by_vis: BTreeMap<Visibility, Vec<[u32; 3]>> = BTreeMap::new();
        for part in parts {
            for group in &part.groups {
                if group.entries.len() % ENTRY != 0 {
                    return Err(SparqlError::Store("rdf-triples partition has a partial entry".into()));
                }
                let keys = by_vis.entry(group.visibility).or_default();
                for bytes in group.entries.chunks_exact(ENTRY) {
                    let word = |k: usize| u32::from_le_bytes([bytes[k], bytes[k + 1], bytes[k + 2], bytes[k + 3]]);
                    let t = [word(0), word(4), word(8)];
                    if !part.predicates.contains(&t[1]) {
                        return Err(SparqlError::Store("rdf-triples partition holds a predicate it does not list".into()));
                    }
                    keys.push(t);
                }
            }
        }
        let groups = groups_of(by_vis, usize::MAX);
        let store = if by_part {
            Store { version: STORE_VERSION, terms: Vec::new(), groups, terms_by_part: Some(directory.term_count) }
        } else {
            Store { version: STORE_VERSION, terms: directory.terms.clone(), groups, terms_by_part: None }
        };
        store.validate()?;
        Ok(store)
    }
}
