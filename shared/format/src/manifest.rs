//! The manifest: one small immutable object per build that lists every shard.
//!
//! A reader fetches the pointer, then the manifest it names (verifying its SHA-256), and from
//! then on uses only that manifest for the whole request, so a request never mixes shards of
//! two builds. The manifest also carries what a reader needs to interpret the shards: the
//! analyzer and chunker settings, corpus statistics for BM25, and the build's counts.
//!
//! Two levels: a kind of more than [`DIRECTORIES_FROM`] shards (term, section, body and
//! vector partitions of a large wiki) is not listed row by row but through directory shards
//! ([`ManifestDirectory`], about √n rows each) that the manifest names with the partitions
//! they cover ([`DirectoryEntry`]). The manifest then grows with √shards, and a request reads
//! only the directories of the partitions it opens. Manifests written before directories list
//! every row and are read as they are.

use serde::{Deserialize, Serialize};

use crate::analysis::AnalyzerConfig;
use crate::vectors::DenseInfo;
use crate::error::{Error, Result};
use crate::hashing::sha256_hex;
use crate::lexical::LexicalStats;
use crate::shard::{compress_if_worthwhile, encode_shard, from_cbor, inflate, to_cbor, verify_hash, EncodedShard, Pointer, ShardEntry, ShardKind, FORMAT_VERSION};

/// A kind of more shards than this is listed through directories (the default; builds may
/// choose another threshold, tests a small one).
pub const DIRECTORIES_FROM: usize = 256;

/// The fewest rows a directory holds (below √n for small kinds).
const MIN_DIRECTORY_ROWS: usize = 16;

/// Where the rows of partitions `first_partition..=last_partition` of `kind` are: one
/// directory shard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DirectoryEntry {
    pub kind: ShardKind,
    pub first_partition: u32,
    pub last_partition: u32,
    /// The first key of its first partition (`terms`: where term routing enters it; `None` =
    /// unbounded below, or a kind without keys).
    pub first_key: Option<String>,
    /// Bytes of the shards it lists (what `/health` counts without reading it).
    pub bytes: u64,
    /// The directory shard itself (kind `directory`).
    pub shard: ShardEntry,
}

impl DirectoryEntry {
    /// Partitions the directory lists.
    pub fn len(&self) -> u64 {
        u64::from(self.last_partition.saturating_sub(self.first_partition)) + 1
    }

    /// Never: a directory lists at least its first partition.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// The manifest rows of one run of partitions of one kind, sorted by partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestDirectory {
    pub entries: Vec<ShardEntry>,
}

impl ManifestDirectory {
    /// Check that the rows are those the manifest says the directory holds: every row of
    /// `entry.kind`, partitions exactly `first_partition..=last_partition` in order.
    pub fn validate(&self, entry: &DirectoryEntry) -> Result<()> {
        let name = &entry.shard.name;
        let expected = entry.last_partition.checked_sub(entry.first_partition).map(|n| n as usize + 1);
        if expected != Some(self.entries.len()) {
            return Err(Error::Decode {
                name: name.clone(),
                message: format!("lists {} rows for partitions {}..={}", self.entries.len(), entry.first_partition, entry.last_partition),
            });
        }
        for (row, partition) in self.entries.iter().zip(entry.first_partition..) {
            if row.kind != entry.kind || row.partition != partition {
                return Err(Error::Decode {
                    name: name.clone(),
                    message: format!("row {} partition {} where {} partition {partition} was expected", row.kind, row.partition, entry.kind),
                });
            }
        }
        Ok(())
    }

    /// The row of `partition` (the directory holds a contiguous run, checked by `validate`).
    pub fn partition(&self, first_partition: u32, partition: u32) -> Option<&ShardEntry> {
        partition.checked_sub(first_partition).and_then(|i| self.entries.get(i as usize))
    }

    /// The term partition of this directory whose key range would hold `term`.
    pub fn term_partition(&self, term: &str) -> Option<&ShardEntry> {
        term_partition_of(self.entries.iter(), term)
    }
}

/// Where a manifest says a shard's row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowLocation<'a> {
    /// In the manifest itself.
    Listed(&'a ShardEntry),
    /// In this directory shard.
    InDirectory(&'a DirectoryEntry),
}

/// The partition among sorted, contiguous term ranges (the first unbounded below) that would
/// hold `term`.
fn term_partition_of<'a>(entries: impl Iterator<Item = &'a ShardEntry>, term: &str) -> Option<&'a ShardEntry> {
    last_starting_at_or_before(entries, |e| e.first_key.as_deref(), term)
}

/// The last of `items` (sorted by their first key, `None` = unbounded below) whose first key
/// is at most `term`: the range that would hold it.
fn last_starting_at_or_before<'a, T>(items: impl Iterator<Item = &'a T>, first_key: impl Fn(&T) -> Option<&str>, term: &str) -> Option<&'a T> {
    let mut found = None;
    for item in items {
        match first_key(item) {
            Some(first) if first > term => break,
            _ => found = Some(item),
        }
    }
    found
}

/// Counts reported by a build (and by `/health`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BuildStats {
    pub pages: u64,
    pub sections: u64,
    pub clusters: u64,
    pub hubs: u64,
    pub sub_clusters: u64,
    pub links: u64,
    pub citations: u64,
    /// Pages not every caller may view (`Acl::is_open_to_everyone` is false): a page granted
    /// only to `Anonymous` counts, as key holders may not view it.
    pub restricted_pages: u64,
    pub warnings: u64,
}

/// The manifest of one build.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub format: u32,
    /// Deterministic id of this build: a hash of everything else in the manifest.
    pub build_id: String,
    /// What wrote it, e.g. `wikantik-index-builder 0.1.0`.
    pub generator: String,
    pub stats: BuildStats,
    pub analyzer: AnalyzerConfig,
    pub chunker: ChunkerConfig,
    pub lexical: LexicalStats,
    /// Sorted by (kind, partition).
    pub shards: Vec<ShardEntry>,
    /// The dense side (encoder profile, model id, calibrated coverage thresholds); absent in
    /// a lexical-only build, whose manifest is then byte-identical to one written before
    /// vectors existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dense: Option<DenseInfo>,
    /// The directories of kinds too large to list here, sorted by (kind, first partition);
    /// absent when every kind is listed (a small wiki's manifest is then byte-identical to one
    /// written before directories existed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub directories: Vec<DirectoryEntry>,
}

impl Manifest {
    /// Assemble a manifest and compute its build id.
    pub fn new(
        generator: String,
        stats: BuildStats,
        analyzer: AnalyzerConfig,
        chunker: ChunkerConfig,
        lexical: LexicalStats,
        mut shards: Vec<ShardEntry>,
    ) -> Result<Manifest> {
        shards.sort_by_key(|s| (s.kind, s.partition));
        let mut manifest =
            Manifest { format: FORMAT_VERSION, build_id: String::new(), generator, stats, analyzer, chunker, lexical, shards, dense: None, directories: Vec::new() };
        manifest.build_id = manifest.compute_build_id()?;
        Ok(manifest)
    }

    /// The same manifest with the dense side recorded (the build id is recomputed).
    pub fn with_dense(mut self, dense: DenseInfo) -> Result<Manifest> {
        self.dense = Some(dense);
        self.build_id = self.compute_build_id()?;
        Ok(self)
    }

    /// The same manifest listing these rows (its directories kept; the build id recomputed).
    pub fn with_rows(mut self, mut shards: Vec<ShardEntry>) -> Result<Manifest> {
        shards.sort_by_key(|s| (s.kind, s.partition));
        self.shards = shards;
        self.build_id = self.compute_build_id()?;
        Ok(self)
    }

    /// Move the rows of every kind of more than `from` shards (`page-records`,
    /// `page-relations`, `page-ids`, `page-listing`, `graph-links` and `cluster-cards`: more than [`MIN_DIRECTORY_ROWS`]) into
    /// directory shards of about √n rows each; returns the manifest naming them and the
    /// directory shards to write beside the others. `None` (or a manifest that already has directories) keeps every row
    /// listed.
    pub fn with_directories(mut self, from: Option<usize>) -> Result<(Manifest, Vec<EncodedShard>)> {
        let Some(from) = from else { return Ok((self, Vec::new())) };
        if !self.directories.is_empty() {
            return Ok((self, Vec::new()));
        }
        let mut counts: std::collections::BTreeMap<ShardKind, usize> = std::collections::BTreeMap::new();
        for s in &self.shards {
            *counts.entry(s.kind).or_default() += 1;
        }
        // The page table by part (and its related pages) is read only by requests that look
        // pages up, but its rows would be in every request's manifest: listed through
        // directories from a few.
        let by_page = |kind: ShardKind| matches!(kind, ShardKind::PageRecords | ShardKind::PageRelations | ShardKind::PageIds | ShardKind::PageListing | ShardKind::GraphLinks | ShardKind::ClusterCards);
        let threshold = |kind: ShardKind| if by_page(kind) { from.min(MIN_DIRECTORY_ROWS) } else { from };
        let large: Vec<(ShardKind, usize)> = counts.into_iter().filter(|&(kind, n)| n > threshold(kind)).collect();
        if large.is_empty() {
            return Ok((self, Vec::new()));
        }
        let (moved, kept): (Vec<ShardEntry>, Vec<ShardEntry>) =
            std::mem::take(&mut self.shards).into_iter().partition(|s| large.iter().any(|&(k, _)| k == s.kind));
        self.shards = kept;
        let mut written = Vec::new();
        for (kind, n) in large {
            let rows: Vec<&ShardEntry> = moved.iter().filter(|s| s.kind == kind).collect();
            let per_directory = n.isqrt().max(MIN_DIRECTORY_ROWS);
            for chunk in rows.chunks(per_directory) {
                let (Some(first), Some(last)) = (chunk.first(), chunk.last()) else { continue };
                // A directory covers a run of consecutive partitions; rows with gaps between
                // them stay listed here.
                if chunk.iter().zip(first.partition..).any(|(s, p)| s.partition != p) {
                    self.shards.extend(chunk.iter().map(|s| (*s).clone()));
                    continue;
                }
                let directory = ManifestDirectory { entries: chunk.iter().map(|s| (*s).clone()).collect() };
                let shard = encode_shard(ShardKind::Directory, written.len() as u32, &directory, None, None)?;
                self.directories.push(DirectoryEntry {
                    kind,
                    first_partition: first.partition,
                    last_partition: last.partition,
                    first_key: first.first_key.clone(),
                    bytes: chunk.iter().map(|s| s.size).sum(),
                    shard: shard.entry.clone(),
                });
                written.push(shard);
            }
        }
        self.shards.sort_by_key(|s| (s.kind, s.partition));
        self.build_id = self.compute_build_id()?;
        Ok((self, written))
    }

    /// Where the row of `kind` partition `partition` is: listed here, or in a directory.
    pub fn locate(&self, kind: ShardKind, partition: u32) -> Result<RowLocation<'_>> {
        if let Some(entry) = self.shards_of(kind).find(|s| s.partition == partition) {
            return Ok(RowLocation::Listed(entry));
        }
        self.directories_of(kind)
            .find(|d| (d.first_partition..=d.last_partition).contains(&partition))
            .map(RowLocation::InDirectory)
            .ok_or_else(|| Error::MissingShard { name: format!("{kind} partition {partition} (not in manifest)") })
    }

    /// Where the row of the term partition that would hold `term` is.
    pub fn locate_term(&self, term: &str) -> Option<RowLocation<'_>> {
        self.locate_key(ShardKind::Terms, term)
    }

    /// Where the row of the partition of `kind` whose key range would hold `key` is, for
    /// kinds cut into contiguous key ranges (`terms`, `metadata-values`; the first unbounded
    /// below).
    pub fn locate_key(&self, kind: ShardKind, key: &str) -> Option<RowLocation<'_>> {
        if self.directories_of(kind).next().is_none() {
            return term_partition_of(self.shards_of(kind), key).map(RowLocation::Listed);
        }
        last_starting_at_or_before(self.directories_of(kind), |d| d.first_key.as_deref(), key).map(RowLocation::InDirectory)
    }

    /// Every shard of the build — the rows listed here, each directory shard and the rows it
    /// lists — for tools that hold a whole build (publishing, collecting old builds):
    /// `directory_bytes` reads a directory shard, which is verified and checked against its
    /// entry. (Serving reads only the directories a request needs.)
    pub fn every_shard(&self, mut directory_bytes: impl FnMut(&ShardEntry) -> Result<Vec<u8>>) -> Result<Vec<ShardEntry>> {
        let mut rows = self.shards.clone();
        for d in &self.directories {
            let directory: ManifestDirectory = crate::shard::decode_shard(&d.shard, &directory_bytes(&d.shard)?)?;
            directory.validate(d)?;
            rows.push(d.shard.clone());
            rows.extend(directory.entries);
        }
        Ok(rows)
    }

    /// The directories of `kind`, in partition order.
    pub fn directories_of(&self, kind: ShardKind) -> impl Iterator<Item = &DirectoryEntry> {
        self.directories.iter().filter(move |d| d.kind == kind)
    }

    /// Shards of `kind`, listed here or through directories.
    pub fn count_of(&self, kind: ShardKind) -> u64 {
        self.shards_of(kind).count() as u64 + self.directories_of(kind).map(DirectoryEntry::len).sum::<u64>()
    }

    /// Bytes of every shard of `kind`, listed here or through directories.
    pub fn bytes_of(&self, kind: ShardKind) -> u64 {
        self.shards_of(kind).map(|s| s.size).sum::<u64>() + self.directories_of(kind).map(|d| d.bytes).sum::<u64>()
    }

    /// Shards of the build, the directory shards included.
    pub fn shard_count(&self) -> u64 {
        // Each directory: the shards it lists and itself.
        self.shards.len() as u64 + self.directories.iter().map(|d| d.len() + 1).sum::<u64>()
    }

    /// Bytes of every shard of the build, the directory shards included.
    pub fn shard_bytes(&self) -> u64 {
        self.shards.iter().map(|s| s.size).sum::<u64>() + self.directories.iter().map(|d| d.bytes + d.shard.size).sum::<u64>()
    }

    fn compute_build_id(&self) -> Result<String> {
        let mut unnamed = self.clone();
        unnamed.build_id = String::new();
        Ok(sha256_hex(&to_cbor(&unnamed)?)[..16].to_string())
    }

    /// Encode: the bytes (gzip-compressed when worthwhile, like shards), the object name
    /// (`manifests/manifest-<sha256[..20]>.cbor[.gz]`) and the pointer that names it.
    pub fn encode(&self) -> Result<(String, Vec<u8>, Pointer)> {
        let (bytes, compressed) = compress_if_worthwhile(to_cbor(self)?)?;
        let sha256 = sha256_hex(&bytes);
        let suffix = if compressed { ".cbor.gz" } else { ".cbor" };
        let name = format!("manifests/manifest-{}{suffix}", &sha256[..20]);
        let pointer = Pointer { format: FORMAT_VERSION, build_id: self.build_id.clone(), manifest: name.clone(), sha256 };
        Ok((name, bytes, pointer))
    }

    /// Decode a manifest fetched through `pointer`, verifying hash and format version.
    pub fn decode(pointer: &Pointer, bytes: &[u8]) -> Result<Manifest> {
        verify_hash(&pointer.manifest, &pointer.sha256, bytes)?;
        Manifest::from_stored(&pointer.manifest, bytes)
    }

    /// Decode a stored manifest object named `name` (inflating it when compressed) and check
    /// its format version, without a pointer to verify its hash against (a writer listing the
    /// builds it keeps).
    pub fn from_stored(name: &str, bytes: &[u8]) -> Result<Manifest> {
        let bytes = inflate(name, bytes)?;
        let bytes = bytes.as_ref();
        #[derive(Deserialize)]
        struct Head {
            format: u32,
        }
        let head: Head = from_cbor(name, bytes)?;
        if head.format != FORMAT_VERSION {
            return Err(Error::UnsupportedFormat { name: name.to_string(), found: head.format, supported: FORMAT_VERSION });
        }
        from_cbor(name, bytes)
    }

    /// The shards of `kind` listed here, in partition order (a kind listed through
    /// directories has none here: see [`Manifest::locate`]).
    pub fn shards_of(&self, kind: ShardKind) -> impl Iterator<Item = &ShardEntry> {
        self.shards.iter().filter(move |s| s.kind == kind)
    }

    /// The single shard of a kind that is not partitioned (pages, graph, spine, …).
    pub fn single(&self, kind: ShardKind) -> Result<&ShardEntry> {
        self.find(kind).ok_or_else(|| Error::MissingShard { name: format!("{kind} (not in manifest)") })
    }

    /// The (first) shard of `kind`, if the build has one: for kinds only some indexes carry
    /// (`model`, `static-encoder`, `static-rows`, `ann`, `vector-lists`, `cards`).
    pub fn find(&self, kind: ShardKind) -> Option<&ShardEntry> {
        self.shards_of(kind).next()
    }

    /// The shard of `kind` with this partition number.
    pub fn partition(&self, kind: ShardKind, partition: u32) -> Result<&ShardEntry> {
        self.shards_of(kind)
            .find(|s| s.partition == partition)
            .ok_or_else(|| Error::MissingShard { name: format!("{kind} partition {partition} (not in manifest)") })
    }

    /// The term partition whose key range would hold `term` (partitions are contiguous,
    /// sorted ranges; the first is unbounded below).
    /// Only rows listed here: see [`Manifest::locate_term`] for a manifest with directories.
    pub fn term_partition(&self, term: &str) -> Option<&ShardEntry> {
        term_partition_of(self.shards_of(ShardKind::Terms), term)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::encode_shard;

    fn manifest() -> Manifest {
        let t0 = encode_shard(ShardKind::Terms, 0, &1u8, None, Some("f".into())).unwrap();
        let t1 = encode_shard(ShardKind::Terms, 1, &2u8, Some("g".into()), Some("z".into())).unwrap();
        let p = encode_shard(ShardKind::Pages, 0, &3u8, None, None).unwrap();
        Manifest::new(
            "test".into(),
            BuildStats::default(),
            AnalyzerConfig::default(),
            ChunkerConfig::default(),
            LexicalStats::default(),
            vec![t1.entry, p.entry, t0.entry],
        )
        .unwrap()
    }

    #[test]
    fn round_trip_through_pointer() {
        let m = manifest();
        assert_eq!(m.build_id.len(), 16);
        let (name, bytes, pointer) = m.encode().unwrap();
        assert!(name.starts_with("manifests/manifest-"));
        assert_eq!(pointer.manifest, name);
        assert_eq!(Manifest::decode(&pointer, &bytes).unwrap(), m);
        assert_eq!(manifest().encode().unwrap().1, bytes, "deterministic");
    }

    #[test]
    fn tampered_manifest_is_refused() {
        let (_, mut bytes, pointer) = manifest().encode().unwrap();
        bytes[10] ^= 0x20;
        assert!(matches!(Manifest::decode(&pointer, &bytes), Err(Error::ShardHashMismatch { .. })));
    }

    #[test]
    fn a_lexical_only_manifest_has_no_dense_key_and_unknown_kinds_are_refused() {
        let m = manifest();
        let (_, bytes, _) = m.encode().unwrap();
        let value: ciborium::Value = ciborium::from_reader(&inflate("manifest", &bytes).unwrap()[..]).unwrap();
        let keys: Vec<String> =
            value.as_map().unwrap().iter().filter_map(|(k, _)| k.as_text().map(str::to_string)).collect();
        assert!(!keys.contains(&"dense".to_string()), "{keys:?}");
        // A kind this reader does not know (as `vectors` is to a reader older than it) makes
        // the manifest undecodable: the build is refused, never served without it.
        let mut value = value;
        for (k, v) in value.as_map_mut().unwrap() {
            if k.as_text() == Some("shards") {
                let first = &mut v.as_array_mut().unwrap()[0];
                for (fk, fv) in first.as_map_mut().unwrap() {
                    if fk.as_text() == Some("kind") {
                        *fv = ciborium::Value::Text("a-future-kind".into());
                    }
                }
            }
        }
        let mut tampered = Vec::new();
        ciborium::into_writer(&value, &mut tampered).unwrap();
        let pointer = Pointer {
            format: FORMAT_VERSION,
            build_id: m.build_id.clone(),
            manifest: "manifests/x.cbor".into(),
            sha256: sha256_hex(&tampered),
        };
        assert!(matches!(Manifest::decode(&pointer, &tampered), Err(Error::Decode { .. })));
    }

    /// A manifest of 40 term partitions (first keys "t00".."t39") and 40 section partitions.
    fn large_manifest() -> Manifest {
        let mut shards = Vec::new();
        for p in 0..40u32 {
            let first = if p == 0 { None } else { Some(format!("t{p:02}")) };
            shards.push(encode_shard(ShardKind::Terms, p, &p, first, Some(format!("t{p:02}z"))).unwrap().entry);
            shards.push(encode_shard(ShardKind::Sections, p, &(p + 100), None, None).unwrap().entry);
        }
        shards.push(encode_shard(ShardKind::Pages, 0, &3u8, None, None).unwrap().entry);
        Manifest::new("test".into(), BuildStats::default(), AnalyzerConfig::default(), ChunkerConfig::default(), LexicalStats::default(), shards)
            .unwrap()
    }

    #[test]
    fn large_kinds_are_listed_through_directories_of_about_root_n_rows() {
        let flat = large_manifest();
        let (m, written) = flat.clone().with_directories(Some(32)).unwrap();
        // 40 rows per kind, 16 per directory (√40 is below the minimum): 3 directories each.
        assert_eq!(m.directories.len(), 6);
        assert_eq!(written.len(), 6);
        assert_eq!(m.shards.iter().map(|s| s.kind).collect::<Vec<_>>(), vec![ShardKind::Pages]);
        assert_ne!(m.build_id, flat.build_id, "the directories are part of what the id hashes");
        assert_eq!(m.count_of(ShardKind::Terms), 40);
        assert_eq!(m.bytes_of(ShardKind::Sections), flat.bytes_of(ShardKind::Sections));
        assert_eq!(m.shard_bytes(), flat.shard_bytes() + written.iter().map(|s| s.entry.size).sum::<u64>());
        // Every row is found through its directory, and the directory checks out.
        for kind in [ShardKind::Terms, ShardKind::Sections] {
            for p in 0..40 {
                let RowLocation::InDirectory(d) = m.locate(kind, p).unwrap() else { panic!("{kind} {p} listed") };
                let shard = written.iter().find(|s| s.entry == d.shard).unwrap();
                let directory: ManifestDirectory = crate::shard::decode_shard(&shard.entry, &shard.bytes).unwrap();
                directory.validate(d).unwrap();
                assert_eq!(directory.partition(d.first_partition, p), flat.partition(kind, p).ok());
            }
        }
        assert!(m.locate(ShardKind::Terms, 40).is_err());
        assert!(matches!(m.locate(ShardKind::Pages, 0), Ok(RowLocation::Listed(_))));
        // Terms route to the directory, then to the partition, as a flat manifest routes them.
        for term in ["a", "t00", "t15z", "t16", "t31", "t32", "zzz"] {
            let Some(RowLocation::InDirectory(d)) = m.locate_term(term) else { panic!("{term}") };
            let shard = written.iter().find(|s| s.entry == d.shard).unwrap();
            let directory: ManifestDirectory = crate::shard::decode_shard(&shard.entry, &shard.bytes).unwrap();
            assert_eq!(directory.term_partition(term), flat.term_partition(term), "{term}");
        }
        // Round trip, and small kinds stay listed (no directories: the manifest is unchanged).
        let (_, bytes, pointer) = m.encode().unwrap();
        assert_eq!(Manifest::decode(&pointer, &bytes).unwrap(), m);
        assert_eq!(flat.clone().with_directories(Some(40)).unwrap().0, flat);
        assert_eq!(flat.clone().with_directories(None).unwrap().0, flat);
    }

    #[test]
    fn a_directory_that_does_not_hold_what_the_manifest_says_is_refused() {
        let (m, written) = large_manifest().with_directories(Some(32)).unwrap();
        let d = &m.directories[0];
        let directory: ManifestDirectory = crate::shard::decode_shard(&written[0].entry, &written[0].bytes).unwrap();
        let mut short = directory.clone();
        short.entries.pop();
        assert!(matches!(short.validate(d), Err(Error::Decode { .. })));
        let mut swapped = directory.clone();
        swapped.entries.swap(0, 1);
        assert!(matches!(swapped.validate(d), Err(Error::Decode { .. })));
        let mut other_kind = directory;
        other_kind.entries[3].kind = ShardKind::Bodies;
        assert!(other_kind.validate(d).is_err());
    }

    #[test]
    fn page_records_go_through_directories_from_a_few_rows() {
        let with = |n: u32| {
            let shards = (0..n).map(|p| encode_shard(ShardKind::PageRecords, p, &p, None, None).unwrap().entry).collect();
            Manifest::new("t".into(), BuildStats::default(), AnalyzerConfig::default(), ChunkerConfig::default(), LexicalStats::default(), shards).unwrap()
        };
        let (few, _) = with(MIN_DIRECTORY_ROWS as u32).with_directories(Some(DIRECTORIES_FROM)).unwrap();
        assert!(few.directories.is_empty(), "a few rows stay listed");
        let (more, written) = with(40).with_directories(Some(DIRECTORIES_FROM)).unwrap();
        assert_eq!((more.shards_of(ShardKind::PageRecords).count(), written.len()), (0, 3));
        for p in 0..40 {
            assert!(matches!(more.locate(ShardKind::PageRecords, p), Ok(RowLocation::InDirectory(_))), "{p}");
        }
    }

    #[test]
    fn rows_with_gaps_stay_listed() {
        let mut shards = Vec::new();
        for p in (0..80u32).filter(|p| *p != 5) {
            shards.push(encode_shard(ShardKind::Bodies, p, &p, None, None).unwrap().entry);
        }
        let flat = Manifest::new("t".into(), BuildStats::default(), AnalyzerConfig::default(), ChunkerConfig::default(), LexicalStats::default(), shards)
            .unwrap();
        let (m, _) = flat.clone().with_directories(Some(32)).unwrap();
        assert_eq!(m.count_of(ShardKind::Bodies), 79);
        assert!(m.locate(ShardKind::Bodies, 5).is_err());
        for p in (0..80).filter(|p| *p != 5) {
            assert!(m.locate(ShardKind::Bodies, p).is_ok(), "{p}");
        }
        assert!(m.shards_of(ShardKind::Bodies).count() > 0, "the run with the gap is listed");
    }

    #[test]
    fn routes_terms_to_partitions() {
        let m = manifest();
        assert_eq!(m.shards[0].kind, ShardKind::Pages, "sorted by kind");
        assert_eq!(m.term_partition("apple").unwrap().partition, 0);
        assert_eq!(m.term_partition("0").unwrap().partition, 0);
        assert_eq!(m.term_partition("g").unwrap().partition, 1);
        assert_eq!(m.term_partition("zzz").unwrap().partition, 1);
        assert!(m.single(ShardKind::Graph).is_err());
    }
}

/// Tuning of the chunker (recorded in the manifest: a reader must know how sections were cut); the defaults are the reference's production values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkerConfig {
    /// Upper bound, in estimated tokens, of a chunk of prose (atomic blocks may exceed it).
    pub max_tokens: usize,
    /// A section's buffer smaller than this is held at the end of the section instead of
    /// being emitted right away.
    pub merge_forward_tokens: usize,
    /// A held buffer smaller than this at a heading boundary is a fragment: it merges into
    /// the next section and adopts its heading path.
    pub fragment_floor_tokens: usize,
    /// Tokens of the previous chunk's tail prepended to the next chunk of the same
    /// section (`× 4` UTF-16 units). `0` disables overlap.
    pub overlap_tokens: usize,
}

impl Default for ChunkerConfig {
    fn default() -> Self {
        Self {
            max_tokens: 512,
            merge_forward_tokens: 150,
            fragment_floor_tokens: 24,
            overlap_tokens: 40,
        }
    }
}

