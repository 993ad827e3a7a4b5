//! The structural spine: the cluster taxonomy projected from page frontmatter.
//!
//! REFERENCE §4.3 (ADR-0009): the taxonomy is not a directory tree but a projection of two
//! frontmatter keys. A page with `type: hub` and `cluster: <path>` *declares* the cluster at
//! `<path>`; every page naming a path in `cluster` (scalar or list, first = primary) is a
//! *member* of it. Paths are kebab-case with at most one sub-level (`parent/child`), and
//! membership is transitive upward: members of `machine-learning/mlops` are members of
//! `machine-learning`, but never of `machine-learning-ops` (segment-aware matching).
//!
//! [`Spine::project`] turns a set of [`PageFacts`] into the sorted cluster list plus the
//! defects an operator should fix ([`Conflict`]). Nothing here panics on bad input: an
//! invalid path is a conflict, not an error. Every output order is deterministic and
//! independent of the order pages are given in.
//!
//! Decisions where the reference is silent:
//! - A cluster exists for every *referenced* valid path (declared by a hub or named by a
//!   member), and for the parent of every referenced sub-cluster path, so membership
//!   queries work on headless clusters (the checkout corpus's `computer-science`). A cluster
//!   without a declaring hub has `hub: None` and is reported once as `HEADLESS_CLUSTER`.
//! - A hub whose *primary* membership is an invalid path declares nothing (its later valid
//!   memberships are plain memberships); it is reported as `INVALID_CLUSTER_PATH` (and
//!   `MULTI_CLUSTER_HUB` when it names several), not as `CLUSTERLESS_HUB`.
//! - `clusters_of` lists a page's *valid* memberships only, primary first.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::graph::PageGraph;

/// What the spine needs to know about one page, read from its frontmatter by the caller.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct PageFacts {
    /// Page name (the file name without `.md`, decoded).
    pub slug: String,
    /// Frontmatter `type`, raw (compared case-insensitively to `hub`).
    pub page_type: Option<String>,
    /// Raw frontmatter `cluster` values in order; a scalar becomes one element.
    pub clusters: Vec<String>,
    /// Whether the page carries an authored `canonical_id`.
    pub has_canonical_id: bool,
    /// Page last-modified instant, unix seconds.
    pub updated: i64,
}

impl PageFacts {
    /// Whether the page's `type` is `hub` (ASCII case-insensitive, surrounding blanks ignored).
    pub fn is_hub(&self) -> bool {
        self.page_type
            .as_deref()
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("hub"))
    }
}

/// The character separating a cluster path's segments.
pub const SEPARATOR: char = '/';

/// A validated cluster path: `parent` or `parent/child`, each segment matching
/// `[a-z0-9]+(-[a-z0-9]+)*` (REFERENCE §4.2).
///
/// Serialized as its string form (`"parent/child"`); deserializing validates. Ordering is
/// the ordering of the string form, so sorted paths read like sorted names.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, Hash)]
#[serde(try_from = "String", into = "String")]
pub struct ClusterPath {
    /// The top-level segment.
    pub parent: String,
    /// The sub-cluster segment, if any.
    pub child: Option<String>,
}

/// Whether `segment` matches `[a-z0-9]+(-[a-z0-9]+)*`.
fn is_kebab_segment(segment: &str) -> bool {
    !segment.is_empty()
        && segment
            .split('-')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()))
}

impl ClusterPath {
    /// Parses and validates a cluster path. No trimming: callers normalise with
    /// [`memberships`] first.
    pub fn parse(raw: &str) -> Result<ClusterPath, Error> {
        let invalid = || {
            Error::Invalid(format!(
                "invalid cluster path '{raw}': expected kebab-case `parent` or `parent/child` \
                 (lowercase letters, digits, single hyphens inside a segment, one sub-level)"
            ))
        };
        let mut segments = raw.split(SEPARATOR);
        let parent = segments.next().filter(|s| is_kebab_segment(s)).ok_or_else(invalid)?;
        let child = match segments.next() {
            None => None,
            Some(child) if is_kebab_segment(child) => Some(child.to_owned()),
            Some(_) => return Err(invalid()),
        };
        if segments.next().is_some() {
            return Err(invalid());
        }
        Ok(ClusterPath { parent: parent.to_owned(), child })
    }

    /// Whether `raw` is a valid cluster path.
    pub fn is_valid(raw: &str) -> bool {
        ClusterPath::parse(raw).is_ok()
    }

    /// Whether this is a sub-cluster (`parent/child`).
    pub fn is_sub_cluster(&self) -> bool {
        self.child.is_some()
    }

    /// The top-level cluster this path belongs to (itself when top-level).
    pub fn top_level(&self) -> ClusterPath {
        ClusterPath { parent: self.parent.clone(), child: None }
    }

    /// `true` when `self` is `other` or lies beneath it. Segment-aware:
    /// `machine-learning/mlops` is under `machine-learning`, `machine-learning-ops` is not.
    pub fn is_self_or_descendant_of(&self, other: &ClusterPath) -> bool {
        self == other || (other.child.is_none() && self.parent == other.parent)
    }

    /// The bytes of the string form, without allocating it.
    fn string_bytes(&self) -> impl Iterator<Item = u8> + '_ {
        let child = self.child.as_deref().map(str::as_bytes).unwrap_or_default();
        let separator: &[u8] = if self.child.is_some() { b"/" } else { b"" };
        self.parent.bytes().chain(separator.iter().copied()).chain(child.iter().copied())
    }
}

impl fmt::Display for ClusterPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.child {
            Some(child) => write!(f, "{}{SEPARATOR}{child}", self.parent),
            None => f.write_str(&self.parent),
        }
    }
}

impl FromStr for ClusterPath {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ClusterPath::parse(s)
    }
}

impl TryFrom<String> for ClusterPath {
    type Error = Error;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        ClusterPath::parse(&s)
    }
}

impl From<ClusterPath> for String {
    fn from(path: ClusterPath) -> String {
        path.to_string()
    }
}

impl Ord for ClusterPath {
    fn cmp(&self, other: &Self) -> Ordering {
        self.string_bytes().cmp(other.string_bytes())
    }
}

impl PartialOrd for ClusterPath {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Normalises raw `cluster` values into memberships: trimmed, blanks dropped, duplicates
/// collapsed to their first position. The first entry is the primary membership.
/// Values are not validated here (see [`ClusterPath::parse`]).
pub fn memberships(raw: &[String]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for value in raw {
        let trimmed = value.trim();
        if !trimmed.is_empty() && seen.insert(trimmed) {
            out.push(trimmed.to_owned());
        }
    }
    out
}

/// The kinds of structural defect the projection reports (REFERENCE §4.3), in the order
/// conflicts are listed.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ConflictKind {
    /// The page has no authored `canonical_id`.
    MissingCanonicalId,
    /// A second (or later) hub declares a cluster already declared by a lower slug.
    DuplicateClusterDeclaration,
    /// A `type: hub` page names no cluster.
    ClusterlessHub,
    /// A hub names several clusters; only the first is declared.
    MultiClusterHub,
    /// A cluster has members but no declaring hub.
    HeadlessCluster,
    /// A sub-cluster whose parent cluster has no declaring hub.
    UndeclaredCluster,
    /// A `cluster` value that is not a valid cluster path.
    InvalidClusterPath,
}

/// One structural defect. `cluster` names the path involved (if any), `slugs` the pages
/// involved (sorted), `message` explains it for a human.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Conflict {
    pub kind: ConflictKind,
    pub cluster: Option<String>,
    pub slugs: Vec<String>,
    pub message: String,
}

/// One cluster of the spine.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// The cluster path, e.g. `machine-learning` or `machine-learning/mlops`.
    pub name: String,
    /// Slug of the declaring hub; `None` for a headless cluster.
    pub hub: Option<String>,
    /// Sorted slugs of the pages naming exactly this path (the hub included).
    pub direct_members: Vec<String>,
    /// Sorted names of the sub-clusters (full paths); always empty for a sub-cluster.
    pub sub_clusters: Vec<String>,
}

/// The projected cluster taxonomy plus its conflicts.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct Spine {
    /// Every cluster, sorted by name.
    pub clusters: Vec<Cluster>,
    /// Every defect, sorted by kind, then cluster, then slugs.
    pub conflicts: Vec<Conflict>,
    /// Valid memberships of each page that names at least one, primary first.
    pub page_clusters: BTreeMap<String, Vec<String>>,
}

/// Per-path accumulator used while projecting.
#[derive(Default)]
struct PathState {
    hubs: BTreeSet<String>,
    members: BTreeSet<String>,
}

impl Spine {
    /// Projects the cluster taxonomy from page facts (REFERENCE §4.3). Input order does not
    /// matter; a slug given twice is treated as one page with the union of both records'
    /// memberships.
    pub fn project(pages: &[PageFacts]) -> Spine {
        let mut sorted: Vec<&PageFacts> = pages.iter().collect();
        sorted.sort_by(|a, b| a.slug.cmp(&b.slug));

        let mut paths: BTreeMap<ClusterPath, PathState> = BTreeMap::new();
        let mut invalid: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut page_clusters: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut conflicts: BTreeSet<Conflict> = BTreeSet::new();

        for page in sorted {
            let slug = &page.slug;
            if !page.has_canonical_id {
                conflicts.insert(Conflict {
                    kind: ConflictKind::MissingCanonicalId,
                    cluster: None,
                    slugs: vec![slug.clone()],
                    message: format!("page '{slug}' has no canonical_id"),
                });
            }

            let names = memberships(&page.clusters);
            let is_hub = page.is_hub();
            if is_hub {
                match names.as_slice() {
                    [] => {
                        conflicts.insert(Conflict {
                            kind: ConflictKind::ClusterlessHub,
                            cluster: None,
                            slugs: vec![slug.clone()],
                            message: format!("hub '{slug}' declares no cluster"),
                        });
                    }
                    [_] => {}
                    [first, rest @ ..] => {
                        conflicts.insert(Conflict {
                            kind: ConflictKind::MultiClusterHub,
                            cluster: Some(first.clone()),
                            slugs: vec![slug.clone()],
                            message: format!(
                                "hub '{slug}' names {} clusters; it declares only '{first}' and is a \
                                 plain member of {}",
                                rest.len() + 1,
                                rest.iter().map(|r| format!("'{r}'")).collect::<Vec<_>>().join(", ")
                            ),
                        });
                    }
                }
            }

            for (position, name) in names.iter().enumerate() {
                let Ok(path) = ClusterPath::parse(name) else {
                    invalid.entry(name.clone()).or_default().insert(slug.clone());
                    continue;
                };
                let state = paths.entry(path).or_default();
                state.members.insert(slug.clone());
                if is_hub && position == 0 {
                    state.hubs.insert(slug.clone());
                }
                let valid = page_clusters.entry(slug.clone()).or_default();
                if !valid.contains(name) {
                    valid.push(name.clone());
                }
            }
        }

        for (name, slugs) in invalid {
            conflicts.insert(Conflict {
                kind: ConflictKind::InvalidClusterPath,
                message: format!(
                    "'{name}' is not a valid cluster path (kebab-case `parent` or `parent/child`); \
                     named by {}",
                    quoted_list(&slugs)
                ),
                cluster: Some(name),
                slugs: slugs.into_iter().collect(),
            });
        }

        // Every parent of a referenced sub-cluster exists too, even if nothing names it.
        let parents: Vec<ClusterPath> =
            paths.keys().filter(|p| p.is_sub_cluster()).map(ClusterPath::top_level).collect();
        for parent in parents {
            paths.entry(parent).or_default();
        }

        // Sub-cluster lists, keyed by parent name.
        let mut subs: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for path in paths.keys().filter(|p| p.is_sub_cluster()) {
            subs.entry(path.parent.clone()).or_default().push(path.to_string());
        }

        let mut clusters = Vec::with_capacity(paths.len());
        for (path, state) in &paths {
            let name = path.to_string();
            let mut hubs = state.hubs.iter();
            let hub = hubs.next().cloned();
            for loser in hubs {
                conflicts.insert(Conflict {
                    kind: ConflictKind::DuplicateClusterDeclaration,
                    cluster: Some(name.clone()),
                    slugs: vec![loser.clone()],
                    message: format!(
                        "cluster '{name}' is already declared by '{}'; exactly one hub may declare a \
                         cluster (the lowest slug wins)",
                        hub.as_deref().unwrap_or_default()
                    ),
                });
            }
            if hub.is_none() {
                conflicts.insert(Conflict {
                    kind: ConflictKind::HeadlessCluster,
                    cluster: Some(name.clone()),
                    slugs: state.members.iter().cloned().collect(),
                    message: if state.members.is_empty() {
                        format!("cluster '{name}' has sub-clusters but no hub declaring it")
                    } else {
                        format!(
                            "cluster '{name}' has {} member(s) but no hub declaring it",
                            state.members.len()
                        )
                    },
                });
            }
            if path.is_sub_cluster() {
                let parent_has_hub =
                    paths.get(&path.top_level()).is_some_and(|parent| !parent.hubs.is_empty());
                if !parent_has_hub {
                    conflicts.insert(Conflict {
                        kind: ConflictKind::UndeclaredCluster,
                        cluster: Some(name.clone()),
                        slugs: state.members.iter().cloned().collect(),
                        message: format!(
                            "sub-cluster '{name}' sits under '{}', which no hub declares",
                            path.parent
                        ),
                    });
                }
            }
            clusters.push(Cluster {
                sub_clusters: if path.is_sub_cluster() {
                    Vec::new()
                } else {
                    subs.get(&path.parent).cloned().unwrap_or_default()
                },
                hub,
                direct_members: state.members.iter().cloned().collect(),
                name,
            });
        }
        // BTreeMap<ClusterPath> order is string order already; sort anyway to make the
        // invariant local and explicit.
        clusters.sort_by(|a, b| a.name.cmp(&b.name));

        Spine { clusters, conflicts: conflicts.into_iter().collect(), page_clusters }
    }

    /// The cluster named exactly `name` (headless clusters included), if any.
    pub fn cluster(&self, name: &str) -> Option<&Cluster> {
        self.clusters
            .binary_search_by(|c| c.name.as_str().cmp(name))
            .ok()
            .and_then(|i| self.clusters.get(i))
    }

    /// Transitive members: the cluster's own members plus members of its sub-clusters (one
    /// level), each slug once, hub included; sorted by slug. Unknown cluster ⇒ empty.
    pub fn members(&self, name: &str) -> Vec<String> {
        let Some(cluster) = self.cluster(name) else {
            return Vec::new();
        };
        let mut out: BTreeSet<&str> = cluster.direct_members.iter().map(String::as_str).collect();
        for sub in cluster.sub_clusters.iter().filter_map(|s| self.cluster(s)) {
            out.extend(sub.direct_members.iter().map(String::as_str));
        }
        out.into_iter().map(str::to_owned).collect()
    }

    /// Number of clusters with a declaring hub.
    pub fn hubs(&self) -> usize {
        self.clusters.iter().filter(|c| c.hub.is_some()).count()
    }

    /// Number of sub-clusters (`parent/child` paths).
    pub fn sub_cluster_count(&self) -> usize {
        self.clusters.iter().filter(|c| c.name.contains(SEPARATOR)).count()
    }

    /// Number of top-level clusters.
    pub fn top_level_count(&self) -> usize {
        self.clusters.len() - self.sub_cluster_count()
    }

    /// Names of the clusters without a declaring hub, sorted.
    pub fn headless(&self) -> Vec<String> {
        self.clusters.iter().filter(|c| c.hub.is_none()).map(|c| c.name.clone()).collect()
    }

    /// The valid memberships of a page in declared order (primary first); empty when the
    /// page is unknown or names no valid cluster.
    pub fn clusters_of(&self, slug: &str) -> Vec<String> {
        self.page_clusters.get(slug).cloned().unwrap_or_default()
    }

    /// Conflicts of one kind, in their listed order.
    pub fn conflicts_of(&self, kind: ConflictKind) -> impl Iterator<Item = &Conflict> {
        self.conflicts.iter().filter(move |c| c.kind == kind)
    }
}

/// `'a', 'b'` for diagnostics.
fn quoted_list<'a>(items: impl IntoIterator<Item = &'a String>) -> String {
    items.into_iter().map(|s| format!("'{s}'")).collect::<Vec<_>>().join(", ")
}

/// The product's briefing order for a cluster's members (CONTRACT §3.1): the declaring hub
/// first, then the other transitive members by intra-cluster in-degree descending (distinct
/// referrers that are themselves transitive members of `cluster`, the hub included), then
/// `updated` descending, then slug ascending. Members absent from `graph` have in-degree 0.
/// Unknown cluster ⇒ empty.
pub fn briefing_member_order(
    spine: &Spine,
    graph: &PageGraph,
    cluster: &str,
    updated: &dyn Fn(&str) -> i64,
) -> Vec<String> {
    let Some(found) = spine.cluster(cluster) else {
        return Vec::new();
    };
    let members = spine.members(cluster);
    let member_nodes = graph.nodes_of(members.iter().map(String::as_str));
    let hub = found.hub.as_deref();

    let mut ranked: Vec<(u32, i64, &str)> = members
        .iter()
        .map(String::as_str)
        .filter(|slug| Some(*slug) != hub)
        .map(|slug| {
            let degree = graph
                .node(slug)
                .map_or(0, |node| graph.intra_cluster_in_degree(node, &member_nodes));
            (degree, updated(slug), slug)
        })
        .collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(b.2)));

    hub.into_iter()
        .chain(ranked.into_iter().map(|(_, _, slug)| slug))
        .map(str::to_owned)
        .collect()
}
