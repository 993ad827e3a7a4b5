//! The manifest: one small immutable object per build that lists every shard.
//!
//! A reader fetches the pointer, then the manifest it names (verifying its SHA-256), and from
//! then on uses only that manifest for the whole request, so a request never mixes shards of
//! two builds. The manifest also carries what a reader needs to interpret the shards: the
//! analyzer and chunker settings, corpus statistics for BM25, and the build's counts.

use serde::{Deserialize, Serialize};

use crate::analysis::AnalyzerConfig;
use crate::vectors::DenseInfo;
use crate::error::{Error, Result};
use crate::hashing::sha256_hex;
use crate::lexical::LexicalStats;
use crate::shard::{compress_if_worthwhile, from_cbor, inflate, to_cbor, verify_hash, Pointer, ShardEntry, ShardKind, FORMAT_VERSION};

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
            Manifest { format: FORMAT_VERSION, build_id: String::new(), generator, stats, analyzer, chunker, lexical, shards, dense: None };
        manifest.build_id = manifest.compute_build_id()?;
        Ok(manifest)
    }

    /// The same manifest with the dense side recorded (the build id is recomputed).
    pub fn with_dense(mut self, dense: DenseInfo) -> Result<Manifest> {
        self.dense = Some(dense);
        self.build_id = self.compute_build_id()?;
        Ok(self)
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

    /// All shards of `kind`, in partition order.
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
    pub fn term_partition(&self, term: &str) -> Option<&ShardEntry> {
        let mut found = None;
        for entry in self.shards_of(ShardKind::Terms) {
            match &entry.first_key {
                Some(first) if first.as_str() > term => break,
                _ => found = Some(entry),
            }
        }
        found
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

