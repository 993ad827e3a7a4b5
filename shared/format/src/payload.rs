//! The payloads of the page-level shards a build writes and every reader decodes: sections,
//! bodies, citations, graph and spine, and the build's result ([`CompiledIndex`]).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::graph::PageGraph;
use crate::manifest::Manifest;
use crate::shard::{EncodedShard, Pointer};
use crate::spine::Spine;

/// The grade of a citation against the target's current text.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum CitationStatus {
    Current,
    Stale,
    TargetMissing,
}

impl CitationStatus {
    /// The tool's wire form: `"current"`, `"stale"`, `"target_missing"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            CitationStatus::Current => "current",
            CitationStatus::Stale => "stale",
            CitationStatus::TargetMissing => "target_missing",
        }
    }

    /// The Java enum-constant form used by the for-agent projection: `"STALE"`, ….
    pub fn enum_name(&self) -> &'static str {
        match self {
            CitationStatus::Current => "CURRENT",
            CitationStatus::Stale => "STALE",
            CitationStatus::TargetMissing => "TARGET_MISSING",
        }
    }
}

/// A data-quality finding. Builds go on; the index-builder prints these.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildWarning {
    /// SCREAMING_SNAKE_CASE kind, e.g. `MISSING_CANONICAL_ID`, `HEADLESS_CLUSTER`.
    pub kind: String,
    /// File the finding is about, when it is about one.
    pub file: Option<String>,
    /// 1-based line, when known.
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for BuildWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{file}:{line}: {}: {}", self.kind, self.message),
            (Some(file), None) => write!(f, "{file}: {}: {}", self.kind, self.message),
            _ => write!(f, "{}: {}", self.kind, self.message),
        }
    }
}

/// The stage a build is in, for progress reporting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Parse,
    Chunk,
    Index,
    /// Embedding sections (only with vectors): reported as 0/1 then 1/1.
    Embed,
    Encode,
}

/// A section as stored in a `sections` shard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectionRecord {
    pub heading_path: Vec<String>,
    pub text: String,
    pub content_hash: String,
    pub tokens: u32,
}

/// The sections of one page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageSections {
    pub key: u32,
    pub slug: String,
    pub sections: Vec<SectionRecord>,
    /// The page's canonical id and version, as in its page record, so a section is cited
    /// from its own partition without the page table; absent in older indexes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
}

/// Payload of a `sections` shard: pages sorted by slug.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectionPartition {
    pub pages: Vec<PageSections>,
}

impl SectionPartition {
    pub fn page(&self, key: u32) -> Option<&PageSections> {
        self.pages.iter().find(|p| p.key == key)
    }
}

/// The raw text and full frontmatter of one page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageBody {
    pub key: u32,
    pub slug: String,
    /// The raw page text, frontmatter included (what briefings and `read_pages` return).
    pub text: String,
    /// Every frontmatter key, as JSON.
    pub frontmatter: Map<String, Value>,
}

/// Payload of a `bodies` shard: pages sorted by slug.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BodyPartition {
    pub pages: Vec<PageBody>,
}

impl BodyPartition {
    pub fn page(&self, key: u32) -> Option<&PageBody> {
        self.pages.iter().find(|p| p.key == key)
    }
}

/// A `cite://` citation edge with its grade (REFERENCE §6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CitationEdge {
    pub source_slug: String,
    pub source_canonical_id: String,
    pub target_canonical_id: String,
    /// Heading path joined with ` > ` (empty = page-level).
    pub target_heading_path: String,
    pub span_text: Option<String>,
    pub span_sha256: Option<String>,
    pub claim_text: String,
    pub ordinal: u32,
    pub status: CitationStatus,
    /// The target's version at build time (when the target exists).
    pub pinned_target_version: Option<u32>,
}

/// Payload of the `citations` shard.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CitationTable {
    pub citations: Vec<CitationEdge>,
}

/// Payload of the `graph` shard: the page graph plus per-page in-degree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphShard {
    pub graph: PageGraph,
}

/// Payload of the `spine` shard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpineShard {
    pub spine: Spine,
}

/// Everything a build produces.
#[derive(Debug, Clone)]
pub struct CompiledIndex {
    pub manifest: Manifest,
    pub manifest_name: String,
    pub manifest_bytes: Vec<u8>,
    pub pointer: Pointer,
    pub shards: Vec<EncodedShard>,
    pub warnings: Vec<BuildWarning>,
}

