//! Reading an index: pointer → manifest → the shards a request needs.
//!
//! The core does no I/O itself: a platform adapter implements [`ShardStore`] (a directory,
//! an R2 binding, an HTTP origin) and the [`IndexReader`] asks it for objects by name. The
//! reader pins one manifest for its whole life, so everything it returns comes from one
//! build. Decoded shards are kept in a [`ShardCache`] keyed by content hash, which can be
//! shared by successive readers (a new build reuses every shard it did not change) and is
//! bounded in bytes.

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures_util::future::join_all;
use serde::de::DeserializeOwned;

use wikantik_format::catalog::{PageIndex, PageTable};
use wikantik_format::payload::{BodyPartition, CitationTable, GraphShard, SectionPartition, SpineShard};
use wikantik_format::error::{Error, Result};
use wikantik_format::manifest::{DirectoryEntry, Manifest, ManifestDirectory, RowLocation};
use wikantik_format::shard::{decode_shard_sized, Pointer, ShardEntry, ShardKind, POINTER_NAME};

/// Where shards come from. `get` returns `Ok(None)` when the object does not exist.
#[allow(async_fn_in_trait)]
pub trait ShardStore {
    async fn get(&self, name: &str) -> Result<Option<Vec<u8>>>;

    /// Bytes `offset .. offset + len` of an object (`Ok(None)` when it does not exist), for
    /// blob objects read by block (`static-rows`). The default reads the whole object and
    /// slices it — correct, not cheap; stores that can read a range override it, and count
    /// only the bytes they fetched. Fewer bytes than asked for is an error (the reader also
    /// checks).
    async fn get_range(&self, name: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>> {
        match self.get(name).await? {
            Some(bytes) => slice_range(name, &bytes, offset, len).map(Some),
            None => Ok(None),
        }
    }
}

/// Bytes `offset .. offset + len` of `bytes` (the object `name`), or an error naming the
/// object when the range runs past its end.
pub fn slice_range(name: &str, bytes: &[u8], offset: u64, len: u64) -> Result<Vec<u8>> {
    let range = usize::try_from(offset)
        .ok()
        .zip(usize::try_from(len).ok())
        .and_then(|(start, len)| Some(start..start.checked_add(len)?));
    range.and_then(|r| bytes.get(r)).map(<[u8]>::to_vec).ok_or_else(|| Error::StoreUnavailable {
        name: name.to_string(),
        message: format!("range {offset}+{len} runs past the object's end ({} bytes)", bytes.len()),
    })
}

/// Read one object; a failure of the store itself becomes [`Error::StoreUnavailable`] naming
/// the object, so every surface reports it as the deployment's problem (503), not the caller's.
async fn fetch<S: ShardStore>(store: &S, name: &str) -> Result<Option<Vec<u8>>> {
    store.get(name).await.map_err(|e| store_error(name, e))
}

/// A failure of the store reading `name`, as [`Error::StoreUnavailable`] naming it.
fn store_error(name: &str, e: Error) -> Error {
    match e {
        e @ Error::StoreUnavailable { .. } => e,
        other => Error::StoreUnavailable { name: name.to_string(), message: other.to_string() },
    }
}

/// Read `len` bytes at `offset` of one object, like [`fetch`]; a missing object is
/// [`Error::MissingShard`] and a short answer is [`Error::StoreUnavailable`], both naming it.
async fn fetch_range<S: ShardStore>(store: &S, name: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
    let bytes = store
        .get_range(name, offset, len)
        .await
        .map_err(|e| store_error(name, e))?
        .ok_or_else(|| Error::MissingShard { name: name.to_string() })?;
    if bytes.len() as u64 != len {
        return Err(Error::StoreUnavailable {
            name: name.to_string(),
            message: format!("asked for {len} bytes at {offset}, got {}", bytes.len()),
        });
    }
    Ok(bytes)
}

/// Decoded shards keyed by SHA-256, evicting the least recently used past a byte budget
/// (measured as the shards' encoded sizes).
pub struct ShardCache {
    inner: Mutex<CacheInner>,
}

struct CacheInner {
    capacity_bytes: u64,
    used_bytes: u64,
    clock: u64,
    entries: BTreeMap<String, CacheSlot>,
}

struct CacheSlot {
    value: Arc<dyn Any + Send + Sync>,
    size: u64,
    last_used: u64,
}

impl ShardCache {
    pub fn new(capacity_bytes: u64) -> ShardCache {
        ShardCache {
            inner: Mutex::new(CacheInner { capacity_bytes, used_bytes: 0, clock: 0, entries: BTreeMap::new() }),
        }
    }

    fn get<T: Send + Sync + 'static>(&self, sha256: &str) -> Option<Arc<T>> {
        let mut inner = self.inner.lock().ok()?;
        inner.clock += 1;
        let now = inner.clock;
        let slot = inner.entries.get_mut(sha256)?;
        slot.last_used = now;
        slot.value.clone().downcast::<T>().ok()
    }

    fn insert<T: Send + Sync + 'static>(&self, sha256: &str, size: u64, value: Arc<T>) {
        let Ok(mut inner) = self.inner.lock() else { return };
        inner.clock += 1;
        let now = inner.clock;
        if let Some(old) = inner.entries.insert(sha256.to_string(), CacheSlot { value, size, last_used: now }) {
            inner.used_bytes = inner.used_bytes.saturating_sub(old.size);
        }
        inner.used_bytes += size;
        while inner.used_bytes > inner.capacity_bytes && inner.entries.len() > 1 {
            let oldest = inner
                .entries
                .iter()
                .filter(|(k, _)| k.as_str() != sha256)
                .min_by_key(|(_, s)| s.last_used)
                .map(|(k, _)| k.clone());
            match oldest.and_then(|k| inner.entries.remove(&k)) {
                Some(evicted) => inner.used_bytes = inner.used_bytes.saturating_sub(evicted.size),
                None => break,
            }
        }
    }

    /// Bytes currently held and number of shards.
    pub fn usage(&self) -> (u64, usize) {
        self.inner.lock().map(|i| (i.used_bytes, i.entries.len())).unwrap_or((0, 0))
    }
}

impl Default for ShardCache {
    /// 64 MiB: half a Workers isolate.
    fn default() -> Self {
        ShardCache::new(64 << 20)
    }
}

/// A reader pinned to one manifest.
pub struct IndexReader<S> {
    store: S,
    pointer: Pointer,
    manifest: Arc<Manifest>,
    cache: Arc<ShardCache>,
}

impl<S: ShardStore> IndexReader<S> {
    /// Read the pointer and the manifest it names.
    pub async fn open(store: S, cache: Arc<ShardCache>) -> Result<IndexReader<S>> {
        let pointer_bytes = fetch(&store, POINTER_NAME).await?.ok_or_else(|| Error::MissingShard { name: POINTER_NAME.into() })?;
        let pointer = Pointer::from_json(&pointer_bytes)?;
        IndexReader::open_at(store, pointer, cache).await
    }

    /// Open the manifest named by an already-read pointer.
    pub async fn open_at(store: S, pointer: Pointer, cache: Arc<ShardCache>) -> Result<IndexReader<S>> {
        let manifest = match cache.get::<Manifest>(&pointer.sha256) {
            Some(m) => m,
            None => {
                let bytes = fetch(&store, &pointer.manifest)
                    .await?
                    .ok_or_else(|| Error::MissingShard { name: pointer.manifest.clone() })?;
                let manifest = Arc::new(Manifest::decode(&pointer, &bytes)?);
                cache.insert(&pointer.sha256, bytes.len() as u64, manifest.clone());
                manifest
            }
        };
        Ok(IndexReader { store, pointer, manifest, cache })
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    pub fn pointer(&self) -> &Pointer {
        &self.pointer
    }

    pub fn build_id(&self) -> &str {
        &self.manifest.build_id
    }

    pub fn store(&self) -> &S {
        &self.store
    }

    /// Load and decode one shard (from the cache when possible).
    pub async fn load<T: DeserializeOwned + Send + Sync + 'static>(&self, entry: &ShardEntry) -> Result<Arc<T>> {
        if let Some(hit) = self.cache.get::<T>(&entry.sha256) {
            return Ok(hit);
        }
        let bytes = fetch(&self.store, &entry.name).await?.ok_or_else(|| Error::MissingShard { name: entry.name.clone() })?;
        let (value, decoded_size) = decode_shard_sized::<T>(entry, &bytes)?;
        let value = Arc::new(value);
        self.cache.insert(&entry.sha256, decoded_size.max(entry.size), value.clone());
        Ok(value)
    }

    /// Load and decode shards for one pass over many of them (a scan of every knowledge-graph
    /// part): a cached copy is used, but what is read is not kept, so a scan does not fill the
    /// cache (whose budget counts encoded bytes, a fraction of what decoded parts hold) with
    /// parts it will not read again.
    pub async fn load_passing<T: DeserializeOwned + Send + Sync + 'static>(&self, entries: &[&ShardEntry]) -> Result<Vec<Arc<T>>> {
        join_all(entries.iter().map(|entry| async move {
            if let Some(hit) = self.cache.get::<T>(&entry.sha256) {
                return Ok(hit);
            }
            let bytes = fetch(&self.store, &entry.name).await?.ok_or_else(|| Error::MissingShard { name: entry.name.clone() })?;
            Ok(Arc::new(decode_shard_sized::<T>(entry, &bytes)?.0))
        }))
        .await
        .into_iter()
        .collect()
    }

    /// The shards of `kind` numbered `partitions`, fetched concurrently for one pass
    /// ([`IndexReader::load_passing`]: not kept in the cache).
    pub async fn passing_of<T: DeserializeOwned + Send + Sync + 'static>(&self, kind: ShardKind, partitions: &[u32]) -> Result<Vec<Arc<T>>> {
        let entries = self.entries(kind, partitions).await?;
        self.load_passing(&entries.iter().collect::<Vec<_>>()).await
    }

    /// A value derived from one shard (e.g. the query encoder built from the `model` shard),
    /// computed once and kept in the cache under `<tag>:<sha256>` like a decoded shard. The
    /// raw bytes are fetched, verified and handed to `derive` as the decoded payload `P`,
    /// which is then dropped, so only the derived value stays in memory.
    pub async fn load_derived<P, T>(&self, entry: &ShardEntry, tag: &str, derive: impl FnOnce(P) -> Result<T>) -> Result<Arc<T>>
    where
        P: DeserializeOwned,
        T: Send + Sync + 'static,
    {
        let key = format!("{tag}:{}", entry.sha256);
        if let Some(hit) = self.cache.get::<T>(&key) {
            return Ok(hit);
        }
        let bytes = fetch(&self.store, &entry.name).await?.ok_or_else(|| Error::MissingShard { name: entry.name.clone() })?;
        let (payload, decoded_size) = decode_shard_sized::<P>(entry, &bytes)?;
        drop(bytes);
        let value = Arc::new(derive(payload)?);
        self.cache.insert(&key, decoded_size.max(entry.size), value.clone());
        Ok(value)
    }

    /// Block `block` of a blob object (`entry`, e.g. the `static-rows` of the lite encoder):
    /// bytes `offset .. offset + len` fetched by range, checked against `sha256` (the block's
    /// hash as its head lists it; a mismatch names the object and the block), decoded by
    /// `decode` and cached under `<object sha256>:<block>`, so warm queries reuse it and the
    /// cache's byte budget counts it.
    pub async fn load_block<T: Send + Sync + 'static>(
        &self,
        entry: &ShardEntry,
        block: u64,
        (offset, len): (u64, u64),
        sha256: &[u8; 32],
        decode: impl FnOnce(&[u8]) -> Result<T>,
    ) -> Result<Arc<T>> {
        let key = format!("{}:{block}", entry.sha256);
        if let Some(hit) = self.cache.get::<T>(&key) {
            return Ok(hit);
        }
        let bytes = fetch_range(&self.store, &entry.name, offset, len).await?;
        let actual = wikantik_format::hashing::sha256(&bytes);
        if &actual != sha256 {
            return Err(Error::ShardHashMismatch {
                name: format!("{} block {block}", entry.name),
                expected: wikantik_format::hashing::to_hex(sha256),
                actual: wikantik_format::hashing::to_hex(&actual),
            });
        }
        let value = Arc::new(decode(&bytes)?);
        self.cache.insert(&key, len, value.clone());
        Ok(value)
    }

    /// Load several shards of one type concurrently.
    pub async fn load_many<T: DeserializeOwned + Send + Sync + 'static>(&self, entries: &[&ShardEntry]) -> Result<Vec<Arc<T>>> {
        join_all(entries.iter().map(|e| self.load::<T>(e))).await.into_iter().collect()
    }

    /// A directory shard of the manifest (validated against what the manifest says it holds).
    async fn directory(&self, entry: &DirectoryEntry) -> Result<Arc<ManifestDirectory>> {
        self.load_derived::<ManifestDirectory, ManifestDirectory>(&entry.shard, "directory", |directory| {
            directory.validate(entry)?;
            Ok(directory)
        })
        .await
    }

    /// The manifest row of `kind` partition `partition`, from the manifest or its directory.
    pub async fn entry(&self, kind: ShardKind, partition: u32) -> Result<ShardEntry> {
        Ok(self.entries(kind, &[partition]).await?.remove(0))
    }

    /// The manifest rows of these partitions of `kind`, in the order asked; the directories
    /// they need are fetched concurrently, each once.
    pub async fn entries(&self, kind: ShardKind, partitions: &[u32]) -> Result<Vec<ShardEntry>> {
        let located: Vec<RowLocation<'_>> = partitions.iter().map(|&p| self.manifest.locate(kind, p)).collect::<Result<_>>()?;
        let directories = self.directories_for(&located).await?;
        located
            .iter()
            .zip(partitions)
            .map(|(location, &p)| match location {
                RowLocation::Listed(entry) => Ok((*entry).clone()),
                RowLocation::InDirectory(d) => directories
                    .get(&d.shard.sha256)
                    .and_then(|directory| directory.partition(d.first_partition, p))
                    .cloned()
                    .ok_or_else(|| Error::MissingShard { name: format!("{kind} partition {p} (not in its directory)") }),
            })
            .collect()
    }

    /// The directories these rows are in, each fetched once, concurrently, by shard hash.
    async fn directories_for(&self, located: &[RowLocation<'_>]) -> Result<BTreeMap<String, Arc<ManifestDirectory>>> {
        let mut needed: BTreeMap<&str, &DirectoryEntry> = BTreeMap::new();
        for location in located {
            if let RowLocation::InDirectory(d) = location {
                needed.insert(d.shard.sha256.as_str(), d);
            }
        }
        let loaded = join_all(needed.values().map(|d| self.directory(d))).await;
        needed.keys().zip(loaded).map(|(sha, directory)| Ok((sha.to_string(), directory?))).collect()
    }

    /// Every manifest row of `kind`, in partition order (its directories fetched concurrently).
    pub async fn entries_of(&self, kind: ShardKind) -> Result<Vec<ShardEntry>> {
        let listed = self.manifest.shards_of(kind).cloned();
        let directories: Vec<&DirectoryEntry> = self.manifest.directories_of(kind).collect();
        let loaded = join_all(directories.iter().map(|d| self.directory(d))).await.into_iter().collect::<Result<Vec<_>>>()?;
        let mut rows: Vec<ShardEntry> = listed.chain(loaded.iter().flat_map(|d| d.entries.iter().cloned())).collect();
        rows.sort_by_key(|s| s.partition);
        Ok(rows)
    }

    /// The manifest rows of the term partitions that would hold `terms` (`None` where none
    /// would), in the order asked; each directory they need is read once.
    pub async fn term_entries(&self, terms: &[String]) -> Result<Vec<Option<ShardEntry>>> {
        self.key_entries(ShardKind::Terms, terms).await
    }

    /// The manifest rows of the partitions of `kind` (a kind cut into key ranges) that would
    /// hold `keys` (`None` where none would), in the order asked; each directory read once.
    pub async fn key_entries(&self, kind: ShardKind, keys: &[String]) -> Result<Vec<Option<ShardEntry>>> {
        let located: Vec<Option<RowLocation<'_>>> = keys.iter().map(|k| self.manifest.locate_key(kind, k)).collect();
        let directories = self.directories_for(&located.iter().flatten().copied().collect::<Vec<_>>()).await?;
        Ok(keys
            .iter()
            .zip(&located)
            .map(|(key, location)| match location {
                None => None,
                Some(RowLocation::Listed(entry)) => Some((*entry).clone()),
                Some(RowLocation::InDirectory(d)) => directories.get(&d.shard.sha256).and_then(|dir| dir.term_partition(key)).cloned(),
            })
            .collect())
    }

    /// The `metadata-values` part that would hold `field`'s values; `Ok(None)` for indexes
    /// written before them (values are then read from the page table and the bodies).
    pub async fn metadata_part(&self, field: &str) -> Result<Option<Arc<wikantik_format::metadata::MetadataPart>>> {
        if self.manifest.count_of(ShardKind::MetadataValues) == 0 {
            return Ok(None);
        }
        match self.key_entries(ShardKind::MetadataValues, &[field.to_string()]).await?.into_iter().next().flatten() {
            Some(entry) => self.load(&entry).await.map(Some),
            None => Ok(Some(Arc::new(wikantik_format::metadata::MetadataPart::default()))),
        }
    }

    pub async fn pages(&self) -> Result<Arc<PageTable>> {
        self.load(self.manifest.single(ShardKind::Pages)?).await
    }

    /// The `page-records` shards numbered `groups` (the page table by part), fetched
    /// concurrently; see [`crate::page_catalog::PageCatalog`].
    pub async fn page_records_of(&self, groups: &[u32]) -> Result<Vec<Arc<PageTable>>> {
        let entries = self.entries(ShardKind::PageRecords, groups).await?;
        self.load_many(&entries.iter().collect::<Vec<_>>()).await
    }

    /// The `page-relations` shards numbered `groups` (related-page candidates by part),
    /// fetched concurrently; see [`crate::page_catalog::PageCatalog::related`].
    pub async fn page_relations_of(&self, groups: &[u32]) -> Result<Vec<Arc<wikantik_format::relations::PageRelationsPart>>> {
        let entries = self.entries(ShardKind::PageRelations, groups).await?;
        self.load_many(&entries.iter().collect::<Vec<_>>()).await
    }

    /// The `cluster-cards` shard numbered `part`.
    pub async fn cluster_cards(&self, part: u32) -> Result<Arc<wikantik_format::clusters::ClusterPart>> {
        let entry = self.entry(ShardKind::ClusterCards, part).await?;
        self.load(&entry).await
    }

    /// The compact page index (validated once per instance); `Ok(None)` for indexes written
    /// before it, which rank and hydrate from the page table.
    pub async fn page_index(&self) -> Result<Option<Arc<PageIndex>>> {
        let Some(entry) = self.manifest.find(ShardKind::PageIndex) else { return Ok(None) };
        let index = self
            .load_derived::<PageIndex, PageIndex>(entry, "page-index", |index| {
                index.validate()?;
                Ok(index)
            })
            .await?;
        Ok(Some(index))
    }

    pub async fn graph(&self) -> Result<Arc<GraphShard>> {
        self.load(self.manifest.single(ShardKind::Graph)?).await
    }

    pub async fn spine(&self) -> Result<Arc<SpineShard>> {
        self.load(self.manifest.single(ShardKind::Spine)?).await
    }

    /// For each facet key of `keys` (`wikantik_format::listing`), the `page-listing` parts
    /// that may hold a page carrying it, in the order asked; each `listing-facets` part read
    /// once. `Ok(None)` for indexes without facets.
    pub async fn listing_facets(&self, keys: &[String]) -> Result<Option<Vec<Vec<u32>>>> {
        if self.manifest.count_of(ShardKind::ListingFacets) == 0 {
            return Ok(None);
        }
        let entries = self.key_entries(ShardKind::ListingFacets, keys).await?;
        let distinct: BTreeMap<&str, &ShardEntry> = entries.iter().flatten().map(|e| (e.name.as_str(), e)).collect();
        let loaded: Vec<Arc<wikantik_format::listing::FacetPart>> = self.load_many(&distinct.values().copied().collect::<Vec<_>>()).await?;
        let by_name: BTreeMap<&str, &Arc<wikantik_format::listing::FacetPart>> = distinct.keys().copied().zip(&loaded).collect();
        Ok(Some(
            keys.iter()
                .zip(&entries)
                .map(|(key, entry)| entry.as_ref().and_then(|e| by_name.get(e.name.as_str())).map(|part| part.parts_of(key).to_vec()).unwrap_or_default())
                .collect(),
        ))
    }

    /// Every cluster tallied by ACL (`cluster-index`); `Ok(None)` for indexes written before
    /// it (listings then read the page table and the spine).
    pub async fn cluster_index(&self) -> Result<Option<Arc<wikantik_format::clusters::ClusterIndex>>> {
        self.load_optional(ShardKind::ClusterIndex).await
    }

    /// Every tag tallied by ACL (`tag-index`); `Ok(None)` for indexes written before it
    /// (`list_tags` then reads the page table).
    pub async fn tag_index(&self) -> Result<Option<Arc<wikantik_format::tags::TagIndex>>> {
        self.load_optional(ShardKind::TagIndex).await
    }

    pub async fn citations(&self) -> Result<Arc<CitationTable>> {
        self.load(self.manifest.single(ShardKind::Citations)?).await
    }

    /// The whole knowledge graph of an index written before the graph was split (newer
    /// indexes are read by part: [`crate::kg_catalog::KgCatalog`]).
    pub async fn kg(&self) -> Result<Arc<wikantik_format::kg::KnowledgeGraph>> {
        self.load(self.manifest.single(ShardKind::Kg)?).await
    }

    /// The whole mention index of an index written before the graph was split.
    pub async fn mentions(&self) -> Result<Arc<wikantik_format::kg::MentionIndex>> {
        self.load(self.manifest.single(ShardKind::Mentions)?).await
    }

    /// The whole RDF store (every triple partition and the whole dictionary, even one stored
    /// by part); see [`IndexReader::rdf_for`]. For tests and tools: queries read by part.
    pub async fn rdf(&self) -> Result<Arc<wikantik_sparql::Store>> {
        let store = self.rdf_for(None).await?;
        if store.terms_by_part.is_none() {
            return Ok(store);
        }
        let directory: Arc<wikantik_sparql::RdfDirectory> = self.load(self.manifest.single(ShardKind::Rdf)?).await?;
        let parts = self.rdf_term_parts(&directory, &(0..directory.term_parts.len()).collect::<Vec<_>>()).await?;
        let terms = parts.iter().flat_map(|p| p.terms.iter().cloned()).collect();
        let whole = wikantik_sparql::Store { terms, terms_by_part: None, ..(*store).clone() };
        whole.validate().map_err(|e| Error::Decode { name: "rdf-terms".into(), message: e.to_string() })?;
        Ok(Arc::new(whole))
    }

    /// The `rdf-terms` parts numbered `numbers` of the dictionary `directory` lists.
    async fn rdf_term_parts(&self, directory: &wikantik_sparql::RdfDirectory, numbers: &[usize]) -> Result<Vec<Arc<wikantik_sparql::TermPart>>> {
        let wanted: Vec<u32> = numbers.iter().filter(|&&n| n < directory.term_parts.len()).filter_map(|&n| u32::try_from(n).ok()).collect();
        let entries = self.entries(ShardKind::RdfTerms, &wanted).await?;
        self.load_many(&entries.iter().collect::<Vec<_>>()).await
    }

    /// Runs a SPARQL query (with the standard prefixes) over `store`, a store of
    /// [`IndexReader::rdf_for`], for a caller who may view the pages `can_view` allows. With
    /// the dictionary by part, it runs with the `rdf-terms` parts it looked in last time for
    /// this query (none, cold), loads the parts each run missed and runs again until a run
    /// misses none (`wikantik_sparql::dictionary`): the answer the whole dictionary gives.
    #[cfg(feature = "sparql")]
    pub async fn run_sparql(
        &self,
        store: &wikantik_sparql::Store,
        query: &str,
        can_view: &(dyn Fn(u32) -> bool + Sync),
    ) -> Result<std::result::Result<wikantik_sparql::QueryResults, wikantik_sparql::SparqlError>> {
        use wikantik_sparql::{ontology, RdfDirectory, TermParts};
        if store.terms_by_part.is_none() {
            return Ok(ontology::run_query(store, query, can_view));
        }
        let dir_entry = self.manifest.single(ShardKind::Rdf)?;
        let directory: Arc<RdfDirectory> = self.load(dir_entry).await?;
        let bad = |message: String| Error::Decode { name: "rdf-terms".into(), message };
        let memo = format!("rdf-terms-for:{}:{query}", dir_entry.sha256);
        let mut wanted: Vec<usize> = self.cache.get::<Vec<usize>>(&memo).map(|w| w.as_ref().clone()).unwrap_or_default();
        let mut parts = TermParts::new(directory.clone());
        // Every run but the last loads a part it did not have: at most one run per part, plus one.
        for _ in 0..=directory.term_parts.len() + 1 {
            wanted.retain(|&n| !parts.has(n));
            for (&n, part) in wanted.iter().zip(self.rdf_term_parts(&directory, &wanted).await?) {
                parts.add(n, part).map_err(|e| bad(e.to_string()))?;
            }
            let results = ontology::run_query_with_parts(store, &parts, query, can_view);
            wanted = parts.take_missing();
            if wanted.is_empty() {
                let loaded = parts.loaded();
                self.cache.insert(&memo, 8 * loaded.len() as u64 + memo.len() as u64, Arc::new(loaded));
                return Ok(results);
            }
        }
        Err(bad("a query kept missing dictionary parts it had loaded".into()))
    }

    /// The rules the index's RDF projection followed (`RdfDirectory::projection`), for
    /// [`crate::sparql_access::sparql_viewable_keys`].
    pub async fn rdf_projection(&self) -> Result<u32> {
        let directory: Arc<wikantik_sparql::RdfDirectory> = self.load(self.manifest.single(ShardKind::Rdf)?).await?;
        Ok(directory.projection)
    }

    /// An RDF store holding the dictionary and the triples of `predicates` (`None`: all):
    /// the `rdf` directory plus only the `rdf-triples` partitions those predicates live in.
    /// The assembled, validated store is cached per directory and partition set.
    pub async fn rdf_for(&self, predicates: Option<&[wikantik_sparql::Term]>) -> Result<Arc<wikantik_sparql::Store>> {
        use wikantik_sparql::{RdfDirectory, Store, TriplePartition};
        let bad = |message: String| Error::Decode { name: "rdf".into(), message };
        let dir_entry = self.manifest.single(ShardKind::Rdf)?;
        let directory: Arc<RdfDirectory> = self.load(dir_entry).await?;
        let wanted = directory.partitions_for(predicates);
        let key = format!("rdf-store:{}:{wanted:?}", dir_entry.sha256);
        if let Some(hit) = self.cache.get::<Store>(&key) {
            return Ok(hit);
        }
        let entries = self.entries(ShardKind::RdfTriples, &wanted).await?;
        let entries: Vec<&ShardEntry> = entries.iter().collect();
        let parts: Vec<Arc<TriplePartition>> = self.load_many(&entries).await?;
        for (&p, part) in wanted.iter().zip(&parts) {
            if directory.partitions.get(p as usize) != Some(&part.predicates) {
                return Err(bad(format!("rdf-triples partition {p} does not hold the predicates the directory lists")));
            }
        }
        let refs: Vec<&TriplePartition> = parts.iter().map(|p| p.as_ref()).collect();
        let store = Arc::new(Store::assemble(&directory, &refs).map_err(|e| bad(e.to_string()))?);
        let size = dir_entry.size + 3 * entries.iter().map(|e| e.size).sum::<u64>();
        self.cache.insert(&key, size, store.clone());
        Ok(store)
    }

    pub async fn sections(&self, partition: u32) -> Result<Arc<SectionPartition>> {
        self.load(&self.entry(ShardKind::Sections, partition).await?).await
    }

    /// The `sections` partitions numbered `partitions`, fetched concurrently (each manifest
    /// directory they need read once).
    pub async fn sections_of(&self, partitions: &[u32]) -> Result<Vec<Arc<SectionPartition>>> {
        let entries = self.entries(ShardKind::Sections, partitions).await?;
        self.load_many(&entries.iter().collect::<Vec<_>>()).await
    }

    /// Every `vectors` partition (empty when the index has no vectors).
    pub async fn vectors(&self) -> Result<Vec<Arc<wikantik_format::vectors::VectorPartition>>> {
        let entries = self.entries_of(ShardKind::Vectors).await?;
        self.load_many(&entries.iter().collect::<Vec<_>>()).await
    }

    /// The `vectors` partitions numbered `partitions` (vector lists), fetched concurrently.
    pub async fn vectors_of(&self, partitions: &[u32]) -> Result<Vec<Arc<wikantik_format::vectors::VectorPartition>>> {
        let entries = self.entries(ShardKind::Vectors, partitions).await?;
        self.load_many(&entries.iter().collect::<Vec<_>>()).await
    }

    /// The single shard of `kind`, decoded; `Ok(None)` when the manifest lists none (a kind
    /// only some indexes carry).
    async fn load_optional<T: DeserializeOwned + Send + Sync + 'static>(&self, kind: ShardKind) -> Result<Option<Arc<T>>> {
        match self.manifest.find(kind) {
            Some(entry) => self.load(entry).await.map(Some),
            None => Ok(None),
        }
    }

    /// The vector lists' directory; `Ok(None)` for indexes without one (exact scan of every
    /// `vectors` partition).
    pub async fn vector_lists(&self) -> Result<Option<Arc<wikantik_format::ivf::VectorLists>>> {
        self.load_optional(ShardKind::VectorLists).await
    }

    /// The `vector-groups` partitions numbered `groups` (grouped list centroids), fetched
    /// concurrently.
    pub async fn vector_groups(&self, groups: &[u32]) -> Result<Vec<Arc<wikantik_format::vectors::VectorPartition>>> {
        let entries = self.entries(ShardKind::VectorGroups, groups).await?;
        self.load_many(&entries.iter().collect::<Vec<_>>()).await
    }

    /// The page cards' shard; `Ok(None)` for indexes that keep cards inside `vectors`.
    pub async fn cards(&self) -> Result<Option<Arc<wikantik_format::vectors::VectorPartition>>> {
        self.load_optional(ShardKind::Cards).await
    }

    pub async fn bodies(&self, partition: u32) -> Result<Arc<BodyPartition>> {
        self.load(&self.entry(ShardKind::Bodies, partition).await?).await
    }

    /// The `bodies` partitions numbered `partitions`, fetched concurrently (each manifest
    /// directory they need read once).
    pub async fn bodies_of(&self, partitions: &[u32]) -> Result<Vec<Arc<BodyPartition>>> {
        let entries = self.entries(ShardKind::Bodies, partitions).await?;
        self.load_many(&entries.iter().collect::<Vec<_>>()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_evicts_least_recently_used_past_capacity() {
        let cache = ShardCache::new(100);
        cache.insert("a", 60, Arc::new(1u32));
        cache.insert("b", 30, Arc::new(2u32));
        assert_eq!(cache.get::<u32>("a").as_deref(), Some(&1)); // a is now newer than b
        cache.insert("c", 30, Arc::new(3u32));
        assert!(cache.get::<u32>("b").is_none(), "b was least recently used");
        assert!(cache.get::<u32>("a").is_some());
        assert_eq!(cache.usage(), (90, 2));
        assert!(cache.get::<String>("a").is_none(), "wrong type is a miss, not a panic");
    }

    /// A store with only `get`: ranges come from the default (whole object, sliced).
    struct WholeOnly(MemoryStore);

    impl ShardStore for WholeOnly {
        async fn get(&self, name: &str) -> Result<Option<Vec<u8>>> {
            self.0.get(name).await
        }
    }

    #[test]
    fn range_reads_return_exactly_the_range_or_an_error_naming_the_object() {
        let mut memory = MemoryStore::default();
        memory.put("shards/blob.bin", (0u8..50).collect());
        let ranged = |offset, len| {
            let a = pollster::block_on(memory.get_range("shards/blob.bin", offset, len));
            let b = pollster::block_on(WholeOnly(memory.clone()).get_range("shards/blob.bin", offset, len));
            assert_eq!(a, b, "MemoryStore and the default agree at {offset}+{len}");
            a
        };
        assert_eq!(ranged(3, 4), Ok(Some(vec![3, 4, 5, 6])));
        assert_eq!(ranged(46, 4), Ok(Some(vec![46, 47, 48, 49])));
        assert_eq!(ranged(50, 0), Ok(Some(vec![])));
        for (offset, len) in [(47, 4), (60, 1), (u64::MAX, 2)] {
            let err = ranged(offset, len).expect_err("past the end");
            assert!(matches!(&err, Error::StoreUnavailable { name, .. } if name == "shards/blob.bin"), "{err:?}");
        }
        assert_eq!(pollster::block_on(memory.get_range("shards/none.bin", 0, 1)), Ok(None));
    }
}

/// The current index for a long-lived host: re-reads the pointer at most every `ttl_ms`
/// (CONTRACT §3.11), swaps readers when the pointer moves, and keeps serving the previous
/// build when the new one cannot be opened. Each request takes one `Arc<IndexReader>` and
/// uses it throughout, so it never mixes builds.
pub struct IndexHandle<S> {
    store: S,
    cache: Arc<ShardCache>,
    ttl_ms: u64,
    current: Mutex<Option<(Arc<IndexReader<S>>, u64)>>,
}

impl<S: ShardStore + Clone> IndexHandle<S> {
    pub fn new(store: S, cache: Arc<ShardCache>, ttl_ms: u64) -> IndexHandle<S> {
        IndexHandle { store, cache, ttl_ms, current: Mutex::new(None) }
    }

    pub fn cache(&self) -> &Arc<ShardCache> {
        &self.cache
    }

    /// The reader to use for a request arriving at `now_ms` (any monotonic milliseconds).
    pub async fn reader(&self, now_ms: u64) -> Result<Arc<IndexReader<S>>> {
        let current = self.current.lock().ok().and_then(|c| c.clone());
        if let Some((reader, checked)) = &current {
            if now_ms.saturating_sub(*checked) < self.ttl_ms {
                return Ok(reader.clone());
            }
        }
        let fresh = self.refresh(current.as_ref().map(|(r, _)| r.clone())).await;
        match (fresh, current) {
            (Ok(reader), _) => {
                if let Ok(mut slot) = self.current.lock() {
                    *slot = Some((reader.clone(), now_ms));
                }
                Ok(reader)
            }
            // The new build is unreadable: keep serving the one we have, retry after the TTL.
            (Err(_), Some((reader, _))) => {
                if let Ok(mut slot) = self.current.lock() {
                    *slot = Some((reader.clone(), now_ms));
                }
                Ok(reader)
            }
            (Err(e), None) => Err(e),
        }
    }

    async fn refresh(&self, current: Option<Arc<IndexReader<S>>>) -> Result<Arc<IndexReader<S>>> {
        let bytes = fetch(&self.store, POINTER_NAME).await?.ok_or_else(|| Error::MissingShard { name: POINTER_NAME.into() })?;
        let pointer = Pointer::from_json(&bytes)?;
        if let Some(reader) = current {
            if reader.pointer().sha256 == pointer.sha256 {
                return Ok(reader);
            }
        }
        let reader = IndexReader::open_at(self.store.clone(), pointer, self.cache.clone()).await?;
        // Prove the new build is usable before switching to it.
        reader.pages().await?;
        Ok(Arc::new(reader))
    }
}

/// An index held in memory (tests, evaluation, WASM tests): object name → bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryStore {
    objects: Arc<BTreeMap<String, Vec<u8>>>,
}

impl MemoryStore {
    /// Every object of a compiled index, pointer included.
    pub fn from_compiled(index: &wikantik_format::payload::CompiledIndex) -> MemoryStore {
        let mut objects = BTreeMap::new();
        for shard in &index.shards {
            objects.insert(shard.entry.name.clone(), shard.bytes.clone());
        }
        objects.insert(index.manifest_name.clone(), index.manifest_bytes.clone());
        objects.insert(POINTER_NAME.to_string(), index.pointer.to_json());
        MemoryStore { objects: Arc::new(objects) }
    }

    /// A copy with one object replaced (or removed with `None`), for fault tests.
    pub fn with_object(&self, name: &str, bytes: Option<Vec<u8>>) -> MemoryStore {
        let mut objects = (*self.objects).clone();
        match bytes {
            Some(b) => objects.insert(name.to_string(), b),
            None => objects.remove(name),
        };
        MemoryStore { objects: Arc::new(objects) }
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.objects.keys().map(String::as_str)
    }

    /// Add or replace an object.
    pub fn put(&mut self, name: &str, bytes: Vec<u8>) {
        Arc::make_mut(&mut self.objects).insert(name.to_string(), bytes);
    }

    /// Remove an object, returning it.
    pub fn remove(&mut self, name: &str) -> Option<Vec<u8>> {
        Arc::make_mut(&mut self.objects).remove(name)
    }

    /// The bytes of an object.
    pub fn object(&self, name: &str) -> Option<&[u8]> {
        self.objects.get(name).map(Vec::as_slice)
    }
}

impl ShardStore for MemoryStore {
    async fn get(&self, name: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.objects.get(name).cloned())
    }

    async fn get_range(&self, name: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>> {
        self.objects.get(name).map(|bytes| slice_range(name, bytes, offset, len)).transpose()
    }
}
