//! The shard format: immutable, content-addressed CBOR files plus one manifest.
//!
//! Layout of an index directory (or object-store prefix), documented in `docs/SHARD-FORMAT.md`:
//!
//! ```text
//! current.json                                  pointer: the only object ever overwritten
//! manifests/manifest-<sha256[..20]>.cbor        one per build, immutable
//! shards/<kind>-<partition>-<sha256[..20]>.cbor immutable, shared between builds
//! ```
//!
//! Every shard is a CBOR map `{format, kind, partition, payload}`, stored gzip-compressed
//! (`.cbor.gz`) when that saves at least a tenth of its bytes. A reader checks, in order: the
//! SHA-256 of the stored bytes against the manifest entry (a flipped byte names the shard),
//! inflates them when they are a gzip member, then the `format` against [`FORMAT_VERSION`] (an
//! unknown version is refused with a clear error) and the `kind`/`partition` against the entry,
//! before it decodes the payload.

use std::borrow::Cow;
use std::io::{Read, Write};

use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::hashing::sha256_hex;

/// The version of the shard and manifest format this crate writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// Name of the pointer object at the root of an index.
pub const POINTER_NAME: &str = "current.json";

/// What a shard holds. The string form is used in file names and in the manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShardKind {
    /// Page table: metadata, ACL, version, cluster memberships of every page.
    Pages,
    /// Section (chunk) texts and heading paths, partitioned by page range.
    Sections,
    /// Raw page text and full frontmatter, partitioned by page range (briefing bodies).
    Bodies,
    /// BM25 term dictionary and postings, partitioned by term range.
    Terms,
    /// Page graph adjacency (CSR) with in-degrees.
    Graph,
    /// Cluster spine: clusters, hubs, members, conflicts.
    Spine,
    /// `cite://` citation edges with their staleness grade.
    Citations,
    /// The deterministic knowledge graph: nodes and typed edges (`kg::KnowledgeGraph`).
    Kg,
    /// Node mentions per section (`kg::MentionIndex`).
    Mentions,
    /// The RDF projection's dictionary and partition directory (`sparql::RdfDirectory`).
    Rdf,
    /// The RDF projection's triples of some predicates (`sparql::TriplePartition`), one shard
    /// per partition of the `rdf` directory.
    RdfTriples,
    /// Dense section vectors, int8 with per-dimension scales (present only when the build had
    /// an embedding model): one partition per vector list ([`crate::ivf`]) when the manifest
    /// has a `vector-lists` shard, each with the page cards nearest its centroid (indexes
    /// with a `cards` shard keep them there instead); in older indexes partitioned by page
    /// range like `sections`, with the page cards inside.
    Vectors,
    /// The vector lists' centroids and probe ([`crate::ivf::VectorLists`]), one shard.
    VectorLists,
    /// Every page's card vector ([`crate::vectors::VectorPartition`] with only cards), one
    /// shard: written by builds before the cards went into the vector lists, and still read.
    Cards,
    /// The query encoder's model (`encoder::ModelShard`), one shard (only with `vectors`
    /// and the `quality` profile).
    Model,
    /// HNSW graph over the `vectors` rows (`ann::AnnShard`), one shard; only in builds asked
    /// for one (`CompileOptions::ann_threshold`). Its presence switches dense retrieval from
    /// the probed lists to the graph search (which reads every `vectors` partition).
    Ann,
    /// The lite profile's query encoder, one shard (only with `vectors` and the `lite`
    /// profile): the table's head (`encoder::lite::StaticTableHead`: tokenizer, shape, block
    /// hashes) when the index also lists `static-rows`; in older indexes the whole table
    /// (`encoder::lite::StaticTableShard`).
    StaticEncoder,
    /// The lite table's rows as one raw blob (not CBOR, named `….bin`), read by block with
    /// range requests; its layout and block hashes are in the `static-encoder` head.
    StaticRows,
    /// What ranking and hydrating sections needs of every page, compactly
    /// (`catalog::PageIndex`: key, partition, section count, ACL), so a bundle does not read
    /// the page table (0.76 MB at 12k pages against about 0.06 MB). One shard; indexes
    /// without it are served from the page table.
    PageIndex,
    /// The list centroids of one group of vector lists (`vectors::VectorPartition` keyed by
    /// list number), in indexes of [`crate::ivf::GROUPED_FROM_LISTS`] lists or more; partition
    /// `g` is group `g` of the `vector-lists` shard.
    VectorGroups,
    /// Manifest rows of a run of partitions of one kind (`manifest::ManifestDirectory`), for
    /// kinds of more than [`crate::manifest::DIRECTORIES_FROM`] shards: the manifest names
    /// each directory and the partitions it lists, so a request reads only the rows it needs.
    Directory,
    /// The page table by part: shard `g` holds the records (`catalog::PageTable`) of the pages
    /// of page-range partitions `g * n .. (g + 1) * n` (`n` is the page index's
    /// `record_partitions`), so a request that needs a few pages' records reads those, not
    /// every page's. Indexes without it are served from the page table.
    PageRecords,
    /// Where the knowledge graph's parts start (`kg_parts::KgIndex`), one shard; indexes
    /// without it hold the whole graph in `kg` and `mentions`.
    KgIndex,
    /// A run of the knowledge graph's nodes with every edge touching them
    /// (`kg_parts::KgNodePart`).
    KgNodes,
    /// A run of node ids in id order (`kg_parts::KgIdPart`).
    KgIds,
    /// The mentions of a run of nodes (`kg_parts::MentionPart`, keyed by node).
    KgNodeMentions,
    /// The mentions in a run of pages (`kg_parts::MentionPart`, keyed by page).
    KgPageMentions,
    /// A run of the RDF dictionary (`sparql::TermPart`), one shard per part the `rdf`
    /// directory lists; indexes without it hold the whole dictionary in `rdf`.
    RdfTerms,
    /// A run of the knowledge graph's nodes without their edges (`kg_parts::KgCardPart`),
    /// what scans of the nodes read.
    KgCards,
    /// The related-page candidates (`relations::PageRelationsPart`) of the pages of the
    /// `page-records` shard with the same number; indexes without it rank related pages from
    /// the page table and the link graph.
    PageRelations,
    /// A run of canonical ids with their pages' positions (`catalog::PageIdPart`), located
    /// through the page index's `id_first`; indexes without it look ids up in the page table.
    PageIds,
    /// Cluster cards of consecutive clusters (`clusters::ClusterPart`), located through the
    /// page index's `cluster_first`; indexes without it read the spine, page table and graph.
    ClusterCards,
    /// Every cluster with its hub's record and its members tallied by ACL
    /// (`clusters::ClusterIndex`), one shard, what listings of all clusters read; indexes
    /// without it list clusters from the page table and the spine.
    ClusterIndex,
    /// Every tag with its pages tallied by ACL (`tags::TagIndex`), one shard, what listing
    /// the tags reads; indexes without it list tags from the page table.
    TagIndex,
    /// Frontmatter values by field (`metadata::MetadataPart`): consecutive fields by name with
    /// each value's pages tallied by ACL; an entry's `first_key` is its first field (none for
    /// partition 0). Indexes without them list values from the page table and the bodies.
    MetadataValues,
    /// The page records of one `page-ids` run, in canonical-id order
    /// (`listing::ListingPart`), located through the page index's `id_first` like the run;
    /// what filtered listings in canonical-id order read. Indexes without them scan the
    /// `page-records` shards (or the page table).
    PageListing,
    /// Facet keys (page type, top-level cluster, tag) with the `page-listing` parts holding a
    /// page that carries each (`listing::FacetPart`); an entry's `first_key` is its first key
    /// (none for partition 0).
    ListingFacets,
    /// The page links of the pages of the `page-records` shard with the same number
    /// (`graph::GraphLinksPart`); indexes without them follow links in the whole `graph`.
    GraphLinks,
    /// The low-impact rest of one long postings list (`lexical::TermTail`), named by the
    /// list's head in its `terms` partition (`lexical::PostingsTail`), never routed to.
    TermTails,
}

impl ShardKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ShardKind::Pages => "pages",
            ShardKind::Sections => "sections",
            ShardKind::Bodies => "bodies",
            ShardKind::Terms => "terms",
            ShardKind::Graph => "graph",
            ShardKind::Spine => "spine",
            ShardKind::Citations => "citations",
            ShardKind::Kg => "kg",
            ShardKind::Mentions => "mentions",
            ShardKind::Rdf => "rdf",
            ShardKind::RdfTriples => "rdf-triples",
            ShardKind::Vectors => "vectors",
            ShardKind::VectorLists => "vector-lists",
            ShardKind::Cards => "cards",
            ShardKind::Model => "model",
            ShardKind::Ann => "ann",
            ShardKind::StaticEncoder => "static-encoder",
            ShardKind::StaticRows => "static-rows",
            ShardKind::PageIndex => "page-index",
            ShardKind::VectorGroups => "vector-groups",
            ShardKind::Directory => "directory",
            ShardKind::PageRecords => "page-records",
            ShardKind::KgIndex => "kg-index",
            ShardKind::KgNodes => "kg-nodes",
            ShardKind::KgIds => "kg-ids",
            ShardKind::KgNodeMentions => "kg-node-mentions",
            ShardKind::KgPageMentions => "kg-page-mentions",
            ShardKind::RdfTerms => "rdf-terms",
            ShardKind::KgCards => "kg-cards",
            ShardKind::PageRelations => "page-relations",
            ShardKind::PageIds => "page-ids",
            ShardKind::ClusterCards => "cluster-cards",
            ShardKind::ClusterIndex => "cluster-index",
            ShardKind::TagIndex => "tag-index",
            ShardKind::MetadataValues => "metadata-values",
            ShardKind::PageListing => "page-listing",
            ShardKind::ListingFacets => "listing-facets",
            ShardKind::GraphLinks => "graph-links",
            ShardKind::TermTails => "term-tails",
        }
    }
}

impl std::fmt::Display for ShardKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One row of the manifest: where a shard is and what it must hash to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardEntry {
    pub kind: ShardKind,
    pub partition: u32,
    /// Object name relative to the index root, e.g. `shards/terms-3-0a1b….cbor`.
    pub name: String,
    pub size: u64,
    pub sha256: String,
    /// First key covered (the first term of a `terms` partition; `None` = unbounded); other
    /// kinds carry none (page-range kinds carried slugs before the page index).
    pub first_key: Option<String>,
    /// Last key covered, inclusive.
    pub last_key: Option<String>,
}

/// A shard encoded and named, ready to be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedShard {
    pub entry: ShardEntry,
    pub bytes: Vec<u8>,
}

#[derive(Serialize)]
struct EnvelopeOut<'a, T: Serialize> {
    format: u32,
    kind: ShardKind,
    partition: u32,
    payload: &'a T,
}

#[derive(Deserialize)]
struct EnvelopeHeader {
    format: u32,
    kind: ShardKind,
    partition: u32,
    #[allow(dead_code)]
    payload: IgnoredAny,
}

#[derive(Deserialize)]
struct EnvelopeIn<T> {
    payload: T,
}

/// The first two bytes of a gzip member. A CBOR envelope or manifest never starts with them
/// (both begin with a map header, `0xa0..=0xbf`), so a reader can tell the two apart.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The most a stored object may inflate to: far above any real shard, low enough that a
/// hostile gzip member cannot exhaust a 128 MB isolate.
pub const MAX_INFLATED_BYTES: u64 = 96 << 20;

/// Gzip `raw` (best compression, no name, mtime 0: the same input always gives the same bytes)
/// when that saves at least a tenth of it; otherwise `raw` itself. Returns the bytes to store
/// and whether they are compressed.
pub fn compress_if_worthwhile(raw: Vec<u8>) -> Result<(Vec<u8>, bool)> {
    let mut encoder = flate2::GzBuilder::new().mtime(0).write(Vec::with_capacity(raw.len() / 2), flate2::Compression::best());
    encoder.write_all(&raw).map_err(|e| Error::Invalid(format!("cannot compress: {e}")))?;
    let packed = encoder.finish().map_err(|e| Error::Invalid(format!("cannot compress: {e}")))?;
    if packed.len() * 10 <= raw.len() * 9 {
        Ok((packed, true))
    } else {
        Ok((raw, false))
    }
}

/// [`compress_if_worthwhile`] of `value`'s CBOR, the CBOR streamed into the compressor instead
/// of held whole first (the same bytes: deflate's output does not depend on how its input is
/// split): a whole-wiki shard's CBOR is hundreds of megabytes at 100k pages, and the growing
/// buffer held it up to twice. Encoded again, uncompressed, in the rare case gzip does not pay.
fn cbor_compressed_if_worthwhile<T: Serialize>(value: &T) -> Result<(Vec<u8>, bool)> {
    /// Counts the bytes written through it.
    struct Counted<W> {
        inner: W,
        count: usize,
    }
    impl<W: Write> Write for Counted<W> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let written = self.inner.write(buf)?;
            self.count += written;
            Ok(written)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            self.inner.flush()
        }
    }
    let cannot = |e: &dyn std::fmt::Display| Error::Invalid(format!("cannot compress: {e}"));
    let encoder = flate2::GzBuilder::new().mtime(0).write(Vec::new(), flate2::Compression::best());
    let mut buffered = std::io::BufWriter::with_capacity(1 << 16, Counted { inner: encoder, count: 0 });
    ciborium::into_writer(value, &mut buffered).map_err(|e| Error::Invalid(format!("cannot encode CBOR: {e}")))?;
    let counted = buffered.into_inner().map_err(|e| cannot(e.error()))?;
    let raw_len = counted.count;
    let packed = counted.inner.finish().map_err(|e| cannot(&e))?;
    if packed.len() * 10 <= raw_len * 9 {
        Ok((packed, true))
    } else {
        Ok((to_cbor(value)?, false))
    }
}

/// The CBOR inside a stored object: inflated when it is a gzip member, as is otherwise (every
/// object written before compression existed). `name` is used in errors.
pub fn inflate<'a>(name: &str, stored: &'a [u8]) -> Result<Cow<'a, [u8]>> {
    if !stored.starts_with(&GZIP_MAGIC) {
        return Ok(Cow::Borrowed(stored));
    }
    let mut raw = Vec::with_capacity(stored.len().saturating_mul(3));
    flate2::read::GzDecoder::new(stored)
        .take(MAX_INFLATED_BYTES + 1)
        .read_to_end(&mut raw)
        .map_err(|e| Error::Decode { name: name.to_string(), message: format!("cannot inflate: {e}") })?;
    if raw.len() as u64 > MAX_INFLATED_BYTES {
        return Err(Error::Decode { name: name.to_string(), message: format!("inflates to more than {MAX_INFLATED_BYTES} bytes") });
    }
    Ok(Cow::Owned(raw))
}

/// Encode `payload` as a shard of `kind`/`partition` (compressed when worthwhile) and name it
/// by its content hash.
pub fn encode_shard<T: Serialize>(
    kind: ShardKind,
    partition: u32,
    payload: &T,
    first_key: Option<String>,
    last_key: Option<String>,
) -> Result<EncodedShard> {
    let (bytes, compressed) = cbor_compressed_if_worthwhile(&EnvelopeOut { format: FORMAT_VERSION, kind, partition, payload })?;
    let suffix = if compressed { "cbor.gz" } else { "cbor" };
    Ok(named(kind, partition, bytes, suffix, first_key, last_key))
}

/// A raw blob object of `kind`/`partition` (no CBOR envelope, never compressed: readers fetch
/// byte ranges of it), named `shards/<kind>-<partition>-<sha256[..20]>.bin` and listed in the
/// manifest with its whole-object hash and size like any shard.
pub fn encode_blob(kind: ShardKind, partition: u32, bytes: Vec<u8>) -> EncodedShard {
    named(kind, partition, bytes, "bin", None, None)
}

/// `bytes` as the object `shards/<kind>-<partition>-<sha256[..20]>.<extension>` with its
/// manifest entry.
fn named(kind: ShardKind, partition: u32, bytes: Vec<u8>, extension: &str, first_key: Option<String>, last_key: Option<String>) -> EncodedShard {
    let sha256 = sha256_hex(&bytes);
    let name = format!("shards/{}-{}-{}.{extension}", kind.as_str(), partition, &sha256[..20]);
    EncodedShard { entry: ShardEntry { kind, partition, name, size: bytes.len() as u64, sha256, first_key, last_key }, bytes }
}

/// Verify `bytes` against `entry` (hash, format version, kind, partition) and decode the payload.
pub fn decode_shard<T: DeserializeOwned>(entry: &ShardEntry, bytes: &[u8]) -> Result<T> {
    decode_shard_sized(entry, bytes).map(|(payload, _)| payload)
}

/// [`decode_shard`], also returning the size of the CBOR it decoded (after inflating): what a
/// cache should count the decoded value as.
pub fn decode_shard_sized<T: DeserializeOwned>(entry: &ShardEntry, bytes: &[u8]) -> Result<(T, u64)> {
    verify_hash(&entry.name, &entry.sha256, bytes)?;
    let bytes = inflate(&entry.name, bytes)?;
    let bytes = bytes.as_ref();
    let header: EnvelopeHeader = from_cbor(&entry.name, bytes)?;
    if header.format != FORMAT_VERSION {
        return Err(Error::UnsupportedFormat { name: entry.name.clone(), found: header.format, supported: FORMAT_VERSION });
    }
    if header.kind != entry.kind || header.partition != entry.partition {
        return Err(Error::Decode {
            name: entry.name.clone(),
            message: format!(
                "holds {} partition {}, but the manifest lists it as {} partition {}",
                header.kind, header.partition, entry.kind, entry.partition
            ),
        });
    }
    let envelope: EnvelopeIn<T> = from_cbor(&entry.name, bytes)?;
    Ok((envelope.payload, bytes.len() as u64))
}

/// Fail with [`Error::ShardHashMismatch`] unless `bytes` hash to `expected`.
pub fn verify_hash(name: &str, expected: &str, bytes: &[u8]) -> Result<()> {
    let actual = sha256_hex(bytes);
    if actual != expected {
        return Err(Error::ShardHashMismatch { name: name.to_string(), expected: expected.to_string(), actual });
    }
    Ok(())
}

/// Serialize to CBOR bytes.
pub fn to_cbor<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    ciborium::into_writer(value, &mut out).map_err(|e| Error::Invalid(format!("cannot encode CBOR: {e}")))?;
    Ok(out)
}

/// Deserialize CBOR bytes; `name` is used in the error.
pub fn from_cbor<T: DeserializeOwned>(name: &str, bytes: &[u8]) -> Result<T> {
    // Bound the decoder's recursion so hostile input cannot blow the stack.
    ciborium::de::from_reader_with_recursion_limit(bytes, 128)
        .map_err(|e| Error::Decode { name: name.to_string(), message: e.to_string() })
}

/// The small mutable object that says which manifest is current.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pointer {
    pub format: u32,
    pub build_id: String,
    /// Object name of the manifest, e.g. `manifests/manifest-….cbor`.
    pub manifest: String,
    pub sha256: String,
}

impl Pointer {
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).unwrap_or_default();
        out.push(b'\n');
        out
    }

    pub fn from_json(bytes: &[u8]) -> Result<Pointer> {
        let pointer: Pointer = serde_json::from_slice(bytes)
            .map_err(|e| Error::Decode { name: POINTER_NAME.to_string(), message: e.to_string() })?;
        if pointer.format != FORMAT_VERSION {
            return Err(Error::UnsupportedFormat {
                name: POINTER_NAME.to_string(),
                found: pointer.format,
                supported: FORMAT_VERSION,
            });
        }
        Ok(pointer)
    }
}

/// Content-defined partitioning: a key opens a new partition when its hash falls on a
/// boundary (probability `1 / average`), so inserting or removing one key changes at most
/// the partition it falls in (and merges/splits one neighbour when it is itself a boundary).
/// The first key always opens partition 0. Keys must be sorted.
pub fn content_defined_partitions<K: AsRef<str>>(sorted_keys: &[K], average: u32) -> Vec<std::ops::Range<usize>> {
    let average = average.max(1);
    let mut ranges = Vec::new();
    let mut start = 0usize;
    for (i, key) in sorted_keys.iter().enumerate() {
        if i > start && is_boundary(key.as_ref(), average) {
            ranges.push(start..i);
            start = i;
        }
    }
    if start < sorted_keys.len() {
        ranges.push(start..sorted_keys.len());
    }
    ranges
}

fn is_boundary(key: &str, average: u32) -> bool {
    // FNV-1a: tiny, stable across platforms and versions.
    let mut h: u32 = 0x811c_9dc5;
    for b in key.as_bytes() {
        h ^= u32::from(*b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h.is_multiple_of(average)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Payload {
        words: Vec<String>,
        n: u64,
    }

    #[test]
    fn compressible_shards_are_stored_gzipped_and_read_back() {
        let p = Payload { words: vec!["the same words again".into(); 200], n: 9 };
        let shard = encode_shard(ShardKind::Sections, 1, &p, None, None).unwrap();
        assert!(shard.entry.name.ends_with(".cbor.gz"), "{}", shard.entry.name);
        assert!(shard.bytes.starts_with(&GZIP_MAGIC));
        assert_eq!(shard.entry.sha256, sha256_hex(&shard.bytes), "the hash is over the stored bytes");
        assert_eq!(decode_shard::<Payload>(&shard.entry, &shard.bytes).unwrap(), p);
        let (_, raw_size) = decode_shard_sized::<Payload>(&shard.entry, &shard.bytes).unwrap();
        assert!(raw_size > shard.entry.size, "the cache counts the inflated size");
        // Deterministic: the same payload gives the same object.
        assert_eq!(encode_shard(ShardKind::Sections, 1, &p, None, None).unwrap(), shard);
    }

    /// Streaming the CBOR into the compressor stores the bytes compressing it whole did, for
    /// shards of every size (the build streams; the pinned manifests were written whole).
    #[test]
    fn streamed_compression_gives_the_bytes_of_whole_compression() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut word = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            format!("w{}", state % 5000)
        };
        for n in [0, 1, 200, 20_000, 400_000] {
            let p = Payload { words: (0..n).map(|_| word()).collect(), n: n as u64 };
            let envelope = EnvelopeOut { format: FORMAT_VERSION, kind: ShardKind::Sections, partition: 1, payload: &p };
            let whole = compress_if_worthwhile(to_cbor(&envelope).unwrap()).unwrap();
            assert_eq!(cbor_compressed_if_worthwhile(&envelope).unwrap(), whole, "{n} words");
        }
    }

    #[test]
    fn incompressible_shards_stay_plain_cbor() {
        let shard = sample();
        assert!(shard.entry.name.ends_with(".cbor"), "{}", shard.entry.name);
        assert!(!shard.bytes.starts_with(&GZIP_MAGIC));
    }

    /// Objects written before compression existed (plain CBOR under `.cbor`) still decode.
    #[test]
    fn plain_objects_from_older_builds_still_decode() {
        let p = Payload { words: vec!["the same words again".into(); 200], n: 9 };
        let raw = to_cbor(&EnvelopeOut { format: FORMAT_VERSION, kind: ShardKind::Sections, partition: 1, payload: &p }).unwrap();
        let sha256 = sha256_hex(&raw);
        let entry = ShardEntry {
            kind: ShardKind::Sections,
            partition: 1,
            name: format!("shards/sections-1-{}.cbor", &sha256[..20]),
            size: raw.len() as u64,
            sha256,
            first_key: None,
            last_key: None,
        };
        assert_eq!(decode_shard::<Payload>(&entry, &raw).unwrap(), p);
    }

    #[test]
    fn broken_or_oversized_gzip_is_a_decode_error() {
        let p = Payload { words: vec!["the same words again".into(); 200], n: 9 };
        let shard = encode_shard(ShardKind::Sections, 1, &p, None, None).unwrap();
        let mut truncated = shard.bytes.clone();
        truncated.truncate(truncated.len() / 2);
        assert!(matches!(inflate("x", &truncated), Err(Error::Decode { .. })));
        // A bomb: far more zeros than any shard may inflate to.
        let zeros = vec![0u8; (MAX_INFLATED_BYTES + 1024) as usize];
        let (bomb, compressed) = compress_if_worthwhile(zeros).unwrap();
        assert!(compressed);
        match inflate("bomb", &bomb) {
            Err(Error::Decode { name, message }) => assert!(name == "bomb" && message.contains("more than"), "{message}"),
            other => panic!("expected a decode error, got {:?}", other.map(|b| b.len())),
        }
    }

    fn sample() -> EncodedShard {
        let p = Payload { words: vec!["a".into(), "b".into()], n: 7 };
        encode_shard(ShardKind::Terms, 3, &p, Some("a".into()), Some("b".into())).unwrap()
    }

    #[test]
    fn round_trip_and_content_addressed_name() {
        let shard = sample();
        assert!(shard.entry.name.starts_with("shards/terms-3-"));
        assert!(shard.entry.name.contains(&shard.entry.sha256[..20]));
        assert_eq!(shard.entry.size as usize, shard.bytes.len());
        let back: Payload = decode_shard(&shard.entry, &shard.bytes).unwrap();
        assert_eq!(back, Payload { words: vec!["a".into(), "b".into()], n: 7 });
        assert_eq!(sample().bytes, shard.bytes, "encoding is deterministic");
    }

    #[test]
    fn a_flipped_byte_is_detected_and_named() {
        let shard = sample();
        let mut bytes = shard.bytes.clone();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x01;
        let err = decode_shard::<Payload>(&shard.entry, &bytes).unwrap_err();
        assert!(matches!(err, Error::ShardHashMismatch { .. }));
        assert!(err.to_string().contains(&shard.entry.name), "{err}");
    }

    #[test]
    fn unknown_format_version_is_refused() {
        let bytes = to_cbor(&EnvelopeOut { format: 99, kind: ShardKind::Terms, partition: 0, payload: &1u8 }).unwrap();
        let entry = ShardEntry {
            kind: ShardKind::Terms,
            partition: 0,
            name: "shards/terms-0-x.cbor".into(),
            size: bytes.len() as u64,
            sha256: sha256_hex(&bytes),
            first_key: None,
            last_key: None,
        };
        let err = decode_shard::<u8>(&entry, &bytes).unwrap_err();
        assert_eq!(err, Error::UnsupportedFormat { name: entry.name.clone(), found: 99, supported: FORMAT_VERSION });
        assert!(err.to_string().contains("format version 99"));
    }

    #[test]
    fn wrong_kind_is_refused() {
        let shard = sample();
        let mut entry = shard.entry.clone();
        entry.kind = ShardKind::Pages;
        assert!(matches!(decode_shard::<Payload>(&entry, &shard.bytes), Err(Error::Decode { .. })));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for bytes in [&b""[..], b"\xff\xff\xff", b"\x9f\x9f\x9f\x9f", &[0xbf; 4096][..]] {
            let entry = ShardEntry {
                kind: ShardKind::Terms,
                partition: 0,
                name: "shards/x.cbor".into(),
                size: bytes.len() as u64,
                sha256: sha256_hex(bytes),
                first_key: None,
                last_key: None,
            };
            assert!(decode_shard::<Payload>(&entry, bytes).is_err());
        }
    }

    #[test]
    fn pointer_round_trip_and_version_check() {
        let p = Pointer { format: FORMAT_VERSION, build_id: "b".into(), manifest: "manifests/m.cbor".into(), sha256: "00".into() };
        assert_eq!(Pointer::from_json(&p.to_json()).unwrap(), p);
        let bad = br#"{"format":7,"buildId":"b","manifest":"m","sha256":"0"}"#;
        assert!(matches!(Pointer::from_json(bad), Err(Error::UnsupportedFormat { found: 7, .. })));
        assert!(Pointer::from_json(b"not json").is_err());
    }

    #[test]
    fn content_defined_partitions_are_local() {
        let keys: Vec<String> = (0..2000).map(|i| format!("page{i:05}")).collect();
        let before = content_defined_partitions(&keys, 32);
        assert!(before.len() > 20 && before.len() < 200, "{}", before.len());
        assert_eq!(before.iter().map(|r| r.len()).sum::<usize>(), keys.len());
        // Insert one key: every partition not containing it keeps the same key set.
        let mut after_keys = keys.clone();
        after_keys.insert(1000, "page01000a".to_string());
        let after = content_defined_partitions(&after_keys, 32);
        let sets = |ks: &[String], rs: &[std::ops::Range<usize>]| -> Vec<Vec<String>> {
            rs.iter().map(|r| ks[r.clone()].to_vec()).collect()
        };
        let (b, a) = (sets(&keys, &before), sets(&after_keys, &after));
        let changed = a.iter().filter(|p| !b.contains(p)).count();
        assert!(changed <= 2, "{changed} partitions changed");
    }
}
