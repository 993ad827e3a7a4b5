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
        && segment.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
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
        let parent = segments
            .next()
            .filter(|s| is_kebab_segment(s))
            .ok_or_else(invalid)?;
        let child = match segments.next() {
            None => None,
            Some(child) if is_kebab_segment(child) => Some(child.to_owned()),
            Some(_) => return Err(invalid()),
        };
        if segments.next().is_some() {
            return Err(invalid());
        }
        Ok(ClusterPath {
            parent: parent.to_owned(),
            child,
        })
    }

    /// Whether `raw` is a valid cluster path.
    pub fn is_valid(raw: &str) -> bool {
        ClusterPath::parse(raw).is_ok()
    }

    /// Whether this is a sub-cluster (`parent/child`).
    pub fn is_sub_cluster(&self) -> bool {
        self.child.is_some()
    }

    /// The parent cluster of a sub-cluster; `None` for a top-level cluster.
    pub fn parent_cluster(&self) -> Option<ClusterPath> {
        self.child.as_ref().map(|_| self.top_level())
    }

    /// The top-level cluster this path belongs to (itself when top-level).
    pub fn top_level(&self) -> ClusterPath {
        ClusterPath {
            parent: self.parent.clone(),
            child: None,
        }
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
        self.parent
            .bytes()
            .chain(separator.iter().copied())
            .chain(child.iter().copied())
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

/// The primary membership of raw `cluster` values: the first normalised entry, if any.
pub fn primary(raw: &[String]) -> Option<String> {
    memberships(raw).into_iter().next()
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
                                "hub '{slug}' names {} clusters; it declares only '{first}' \
                                 and is a plain member of {}",
                                rest.len() + 1,
                                quoted_list(rest)
                            ),
                        });
                    }
                }
            }

            for (position, name) in names.iter().enumerate() {
                let Ok(path) = ClusterPath::parse(name) else {
                    invalid
                        .entry(name.clone())
                        .or_default()
                        .insert(slug.clone());
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
        let parents: Vec<ClusterPath> = paths
            .keys()
            .filter(|p| p.is_sub_cluster())
            .map(ClusterPath::top_level)
            .collect();
        for parent in parents {
            paths.entry(parent).or_default();
        }

        // Sub-cluster lists, keyed by parent name.
        let mut subs: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for path in paths.keys().filter(|p| p.is_sub_cluster()) {
            subs.entry(path.parent.clone())
                .or_default()
                .push(path.to_string());
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
                        "cluster '{name}' is already declared by '{}'; exactly one hub \
                         may declare a cluster (the lowest slug wins)",
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
                let parent_has_hub = paths
                    .get(&path.top_level())
                    .is_some_and(|parent| !parent.hubs.is_empty());
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

        Spine {
            clusters,
            conflicts: conflicts.into_iter().collect(),
            page_clusters,
        }
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

    /// The pages that make the cluster `name` visible: a caller sees the cluster — in listings,
    /// as a knowledge-graph concept, and its edges to its parent or sub-clusters — iff it may
    /// view one of them. They are its hub and its transitive members (the hub is a member, as
    /// it names the cluster), so a parent is visible whenever one of its sub-clusters is.
    /// Sorted by slug; unknown cluster ⇒ empty.
    pub fn visibility_pages(&self, name: &str) -> Vec<String> {
        let mut pages = self.members(name);
        if let Some(hub) = self.cluster(name).and_then(|c| c.hub.as_ref()) {
            if let Err(at) = pages.binary_search(hub) {
                pages.insert(at, hub.clone());
            }
        }
        pages
    }

    /// Does a caller who may view the pages `visible` accepts see the cluster `name`? (See
    /// [`Spine::visibility_pages`].)
    pub fn is_visible(&self, name: &str, visible: &dyn Fn(&str) -> bool) -> bool {
        self.visibility_pages(name).iter().any(|slug| visible(slug))
    }

    /// Number of clusters with a declaring hub.
    pub fn hubs(&self) -> usize {
        self.clusters.iter().filter(|c| c.hub.is_some()).count()
    }

    /// Number of sub-clusters (`parent/child` paths).
    pub fn sub_cluster_count(&self) -> usize {
        self.clusters
            .iter()
            .filter(|c| c.name.contains(SEPARATOR))
            .count()
    }

    /// Number of top-level clusters.
    pub fn top_level_count(&self) -> usize {
        self.clusters.len() - self.sub_cluster_count()
    }

    /// Names of the clusters without a declaring hub, sorted.
    pub fn headless(&self) -> Vec<String> {
        self.clusters
            .iter()
            .filter(|c| c.hub.is_none())
            .map(|c| c.name.clone())
            .collect()
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
    items
        .into_iter()
        .map(|s| format!("'{s}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The product's briefing order for a cluster's members (CONTRACT §3.1): the declaring hub
/// first, then the other transitive members by intra-cluster in-degree descending (distinct
/// referrers that are themselves transitive members of `cluster`, the hub included), then
/// `updated` descending, then slug ascending. Members absent from `graph` have in-degree 0.
/// Only members for which `visible` holds take part — in the list and as referrers — so a
/// caller's view never depends on pages it may not see. Unknown cluster ⇒ empty.
pub fn briefing_member_order(
    spine: &Spine,
    graph: &PageGraph,
    cluster: &str,
    updated: &dyn Fn(&str) -> i64,
    visible: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    let Some(found) = spine.cluster(cluster) else {
        return Vec::new();
    };
    let members: Vec<String> = spine.members(cluster).into_iter().filter(|m| visible(m)).collect();
    let member_nodes = graph.nodes_of(members.iter().map(String::as_str));
    let hub = found.hub.as_deref().filter(|h| visible(h));

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

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    fn page(slug: &str, page_type: Option<&str>, clusters: &[&str]) -> PageFacts {
        PageFacts {
            slug: slug.to_owned(),
            page_type: page_type.map(str::to_owned),
            clusters: strings(clusters),
            has_canonical_id: true,
            updated: 0,
        }
    }

    fn hub(slug: &str, cluster: &str) -> PageFacts {
        page(slug, Some("hub"), &[cluster])
    }

    fn member(slug: &str, clusters: &[&str]) -> PageFacts {
        page(slug, Some("article"), clusters)
    }

    fn path(raw: &str) -> ClusterPath {
        ClusterPath::parse(raw).unwrap_or_else(|e| panic!("{raw} should parse: {e}"))
    }

    fn kinds(spine: &Spine) -> Vec<ConflictKind> {
        spine.conflicts.iter().map(|c| c.kind).collect()
    }

    // ---- ClusterPath -------------------------------------------------------------------

    #[test]
    fn parses_top_level_and_sub_cluster_paths() {
        assert_eq!(
            path("machine-learning"),
            ClusterPath {
                parent: "machine-learning".into(),
                child: None
            }
        );
        assert_eq!(
            path("machine-learning/mlops"),
            ClusterPath {
                parent: "machine-learning".into(),
                child: Some("mlops".into())
            }
        );
        assert_eq!(path("a1-b2/c3").to_string(), "a1-b2/c3");
        assert_eq!(path("x").to_string(), "x");
        assert_eq!("k8s/ops".parse::<ClusterPath>(), Ok(path("k8s/ops")));
    }

    #[test]
    fn rejects_paths_outside_the_kebab_pattern() {
        for bad in [
            "",
            " ",
            "Machine-Learning",
            "machine_learning",
            "-ml",
            "ml-",
            "ml--ops",
            "a/b/c",
            "/a",
            "a/",
            "a//b",
            " ml",
            "ml ",
            "ml/Ops",
            "émile",
            "a b",
            "a/-b",
        ] {
            assert!(!ClusterPath::is_valid(bad), "{bad:?} must be rejected");
            let err = ClusterPath::parse(bad);
            assert!(matches!(err, Err(Error::Invalid(m)) if m.contains("invalid cluster path")));
        }
    }

    #[test]
    fn descendant_test_is_segment_aware() {
        let ml = path("machine-learning");
        assert!(ml.is_self_or_descendant_of(&ml));
        assert!(path("machine-learning/mlops").is_self_or_descendant_of(&ml));
        assert!(!path("machine-learning-ops").is_self_or_descendant_of(&ml));
        assert!(!path("machine-learning-ops/x").is_self_or_descendant_of(&ml));
        assert!(!ml.is_self_or_descendant_of(&path("machine-learning/mlops")));
        assert!(
            !path("machine-learning/mlops").is_self_or_descendant_of(&path("machine-learning/ml"))
        );
        assert!(path("machine-learning/mlops")
            .is_self_or_descendant_of(&path("machine-learning/mlops")));
    }

    #[test]
    fn parent_of_a_sub_cluster_is_its_leading_segment() {
        assert_eq!(
            path("machine-learning/mlops").parent_cluster(),
            Some(path("machine-learning"))
        );
        assert_eq!(path("machine-learning").parent_cluster(), None);
        assert!(path("a/b").is_sub_cluster());
        assert!(!path("a").is_sub_cluster());
    }

    #[test]
    fn orders_like_the_string_form_and_serializes_as_a_string() {
        let mut paths = [path("a-b"), path("a/x"), path("a"), path("ab"), path("a/b")];
        paths.sort();
        let names: Vec<String> = paths.iter().map(ToString::to_string).collect();
        let mut expected = names.clone();
        expected.sort();
        assert_eq!(names, expected);
        assert_eq!(names, ["a", "a-b", "a/b", "a/x", "ab"]);

        let json = serde_json::to_string(&path("ml/ops")).ok();
        assert_eq!(json.as_deref(), Some("\"ml/ops\""));
        assert_eq!(
            serde_json::from_str::<ClusterPath>("\"ml/ops\"").ok(),
            Some(path("ml/ops"))
        );
        assert!(serde_json::from_str::<ClusterPath>("\"ML\"").is_err());
    }

    // ---- memberships -------------------------------------------------------------------

    #[test]
    fn memberships_are_trimmed_deduplicated_in_first_position_blanks_dropped() {
        assert_eq!(
            memberships(&strings(&[" b ", "", "a", "   ", "b", "c", "a"])),
            strings(&["b", "a", "c"])
        );
        assert!(memberships(&[]).is_empty());
        assert_eq!(primary(&strings(&["  ", " b", "a"])), Some("b".to_owned()));
        assert_eq!(primary(&strings(&[""])), None);
        assert!(memberships(&strings(&["", "  "])).is_empty());
        assert_eq!(memberships(&strings(&["solo"])), strings(&["solo"]));
    }

    // ---- projection --------------------------------------------------------------------

    #[test]
    fn hub_declares_its_cluster_and_is_a_member() {
        let spine = Spine::project(&[
            hub("MLHub", "machine-learning"),
            member("Backprop", &["machine-learning"]),
        ]);
        let ml = spine.cluster("machine-learning").cloned();
        assert_eq!(
            ml,
            Some(Cluster {
                name: "machine-learning".into(),
                hub: Some("MLHub".into()),
                direct_members: strings(&["Backprop", "MLHub"]),
                sub_clusters: vec![],
            })
        );
        assert_eq!(
            spine.members("machine-learning"),
            strings(&["Backprop", "MLHub"])
        );
        assert_eq!(spine.hubs(), 1);
        assert!(spine.conflicts.is_empty());
        assert!(spine.headless().is_empty());
        assert_eq!(spine.cluster("unknown"), None);
        assert!(spine.members("unknown").is_empty());
    }

    #[test]
    fn a_cluster_is_visible_through_its_hub_or_any_member() {
        let spine = Spine::project(&[
            hub("MlHub", "ml"),
            member("Aardvark", &["ml/ops"]),
            member("Beaver", &["ml/ops"]),
            hub("VaultHub", "ml/vault"),
        ]);
        assert_eq!(spine.visibility_pages("ml/ops"), strings(&["Aardvark", "Beaver"]));
        assert_eq!(spine.visibility_pages("ml/vault"), strings(&["VaultHub"]));
        assert_eq!(
            spine.visibility_pages("ml"),
            strings(&["Aardvark", "Beaver", "MlHub", "VaultHub"])
        );
        assert!(spine.visibility_pages("unknown").is_empty());
        let only = |slug: &'static str| move |s: &str| s == slug;
        assert!(spine.is_visible("ml/ops", &only("Beaver")), "not only through the first member");
        assert!(spine.is_visible("ml", &only("Beaver")), "a parent through a sub-cluster's member");
        assert!(spine.is_visible("ml/vault", &only("VaultHub")), "through the hub alone");
        assert!(!spine.is_visible("ml/vault", &only("MlHub")));
        assert!(!spine.is_visible("unknown", &|_| true));
    }

    #[test]
    fn hub_type_is_case_insensitive() {
        let spine = Spine::project(&[
            page("A", Some(" HUB "), &["x"]),
            page("B", Some("Hub"), &["y"]),
        ]);
        assert_eq!(spine.hubs(), 2);
        assert!(!page("C", Some("hubs"), &["z"]).is_hub());
        assert!(!page("D", None, &["z"]).is_hub());
    }

    #[test]
    fn lowest_slug_wins_a_duplicate_declaration_whatever_the_input_order() {
        let pages = vec![
            hub("ZetaHub", "ml"),
            hub("AlphaHub", "ml"),
            hub("MidHub", "ml"),
        ];
        let mut reversed = pages.clone();
        reversed.reverse();
        let spine = Spine::project(&pages);
        assert_eq!(
            spine,
            Spine::project(&reversed),
            "projection must not depend on input order"
        );
        assert_eq!(
            spine.cluster("ml").and_then(|c| c.hub.clone()),
            Some("AlphaHub".into())
        );
        let losers: Vec<&Conflict> = spine
            .conflicts_of(ConflictKind::DuplicateClusterDeclaration)
            .collect();
        assert_eq!(losers.len(), 2);
        assert_eq!(
            losers.iter().map(|c| c.slugs.clone()).collect::<Vec<_>>(),
            [strings(&["MidHub"]), strings(&["ZetaHub"])]
        );
        assert!(losers
            .iter()
            .all(|c| c.cluster.as_deref() == Some("ml") && c.message.contains("AlphaHub")));
        // The losing hubs remain members of the cluster.
        assert_eq!(
            spine.members("ml"),
            strings(&["AlphaHub", "MidHub", "ZetaHub"])
        );
    }

    #[test]
    fn clusterless_hub_is_reported() {
        let spine = Spine::project(&[
            page("LonelyHub", Some("hub"), &[]),
            page("BlankHub", Some("hub"), &["  "]),
        ]);
        assert_eq!(
            kinds(&spine),
            [ConflictKind::ClusterlessHub, ConflictKind::ClusterlessHub]
        );
        assert_eq!(
            spine.conflicts.first().map(|c| c.slugs.clone()),
            Some(strings(&["BlankHub"]))
        );
        assert!(spine.clusters.is_empty());
    }

    #[test]
    fn multi_cluster_hub_declares_only_its_first_and_joins_the_rest() {
        let spine = Spine::project(&[page(
            "MLHub",
            Some("hub"),
            &["machine-learning", "quantitative-finance"],
        )]);
        assert_eq!(
            spine
                .cluster("machine-learning")
                .and_then(|c| c.hub.clone()),
            Some("MLHub".into())
        );
        let qf = spine.cluster("quantitative-finance");
        assert_eq!(
            qf.map(|c| c.hub.clone()),
            Some(None),
            "a secondary membership never declares"
        );
        assert_eq!(spine.members("quantitative-finance"), strings(&["MLHub"]));
        let multi: Vec<&Conflict> = spine.conflicts_of(ConflictKind::MultiClusterHub).collect();
        assert_eq!(multi.len(), 1);
        assert_eq!(
            multi.first().map(|c| (c.cluster.clone(), c.slugs.clone())),
            Some((Some("machine-learning".into()), strings(&["MLHub"])))
        );
        assert_eq!(spine.headless(), strings(&["quantitative-finance"]));
    }

    #[test]
    fn headless_cluster_exists_for_membership_queries() {
        let spine = Spine::project(&[
            member("Lisp", &["computer-science"]),
            member("Prolog", &["computer-science"]),
        ]);
        let cs = spine.cluster("computer-science").cloned();
        assert_eq!(cs.as_ref().map(|c| c.hub.clone()), Some(None));
        assert_eq!(
            spine.members("computer-science"),
            strings(&["Lisp", "Prolog"])
        );
        assert_eq!(spine.headless(), strings(&["computer-science"]));
        assert_eq!(
            spine.conflicts,
            [Conflict {
                kind: ConflictKind::HeadlessCluster,
                cluster: Some("computer-science".into()),
                slugs: strings(&["Lisp", "Prolog"]),
                message: "cluster 'computer-science' has 2 member(s) but no hub declaring it"
                    .into(),
            }]
        );
    }

    #[test]
    fn sub_cluster_under_an_undeclared_parent_is_reported() {
        let spine = Spine::project(&[hub("OpsHub", "ml/ops"), member("Serving", &["ml/ops"])]);
        assert_eq!(
            kinds(&spine),
            [
                ConflictKind::HeadlessCluster,
                ConflictKind::UndeclaredCluster
            ]
        );
        let undeclared = spine
            .conflicts_of(ConflictKind::UndeclaredCluster)
            .next()
            .cloned();
        assert_eq!(
            undeclared.map(|c| (c.cluster, c.slugs)),
            Some((Some("ml/ops".into()), strings(&["OpsHub", "Serving"])))
        );
        // The implied parent exists, headless, and reaches the sub-cluster's members.
        assert_eq!(
            spine
                .cluster("ml")
                .map(|c| (c.hub.clone(), c.sub_clusters.clone())),
            Some((None, strings(&["ml/ops"])))
        );
        assert_eq!(spine.members("ml"), strings(&["OpsHub", "Serving"]));
        assert_eq!(spine.headless(), strings(&["ml"]));
        assert_eq!(
            (
                spine.hubs(),
                spine.sub_cluster_count(),
                spine.top_level_count()
            ),
            (1, 1, 1)
        );
    }

    #[test]
    fn invalid_paths_are_conflicts_not_crashes() {
        let spine = Spine::project(&[
            member("A", &["Machine Learning", "ml"]),
            member("B", &["Machine Learning"]),
            page("BadHub", Some("hub"), &["a/b/c", "ml"]),
        ]);
        let invalid: Vec<(Option<String>, Vec<String>)> = spine
            .conflicts_of(ConflictKind::InvalidClusterPath)
            .map(|c| (c.cluster.clone(), c.slugs.clone()))
            .collect();
        assert_eq!(
            invalid,
            [
                (Some("Machine Learning".into()), strings(&["A", "B"])),
                (Some("a/b/c".into()), strings(&["BadHub"]))
            ]
        );
        // Only valid paths become clusters; a hub with an invalid primary declares nothing.
        assert_eq!(
            spine
                .clusters
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>(),
            ["ml"]
        );
        assert_eq!(spine.cluster("ml").map(|c| c.hub.clone()), Some(None));
        assert_eq!(spine.clusters_of("A"), strings(&["ml"]));
        assert_eq!(spine.clusters_of("B"), Vec::<String>::new());
        assert!(spine
            .conflicts_of(ConflictKind::ClusterlessHub)
            .next()
            .is_none());
    }

    #[test]
    fn missing_canonical_id_is_reported_per_page() {
        let mut orphan = member("News", &["ml"]);
        orphan.has_canonical_id = false;
        let mut other = member("ArtHistory", &[]);
        other.has_canonical_id = false;
        let spine = Spine::project(&[hub("MLHub", "ml"), orphan, other]);
        let missing: Vec<Vec<String>> = spine
            .conflicts_of(ConflictKind::MissingCanonicalId)
            .map(|c| c.slugs.clone())
            .collect();
        assert_eq!(missing, [strings(&["ArtHistory"]), strings(&["News"])]);
        assert_eq!(
            spine.members("ml"),
            strings(&["MLHub", "News"]),
            "still a member"
        );
    }

    #[test]
    fn every_conflict_kind_serializes_screaming_snake_case() {
        let names: Vec<String> = [
            ConflictKind::MissingCanonicalId,
            ConflictKind::DuplicateClusterDeclaration,
            ConflictKind::ClusterlessHub,
            ConflictKind::MultiClusterHub,
            ConflictKind::HeadlessCluster,
            ConflictKind::UndeclaredCluster,
            ConflictKind::InvalidClusterPath,
        ]
        .iter()
        .filter_map(|k| serde_json::to_string(k).ok())
        .collect();
        assert_eq!(
            names,
            [
                "\"MISSING_CANONICAL_ID\"",
                "\"DUPLICATE_CLUSTER_DECLARATION\"",
                "\"CLUSTERLESS_HUB\"",
                "\"MULTI_CLUSTER_HUB\"",
                "\"HEADLESS_CLUSTER\"",
                "\"UNDECLARED_CLUSTER\"",
                "\"INVALID_CLUSTER_PATH\"",
            ]
        );
    }

    #[test]
    fn sub_cluster_membership_is_transitive_upward_only() {
        let spine = Spine::project(&[
            hub("MLHub", "machine-learning"),
            hub("OpsHub", "machine-learning/mlops"),
            member("Backprop", &["machine-learning"]),
            member("Serving", &["machine-learning/mlops"]),
            member("Unrelated", &["machine-learning-ops"]),
        ]);
        assert_eq!(
            spine.members("machine-learning"),
            strings(&["Backprop", "MLHub", "OpsHub", "Serving"])
        );
        assert_eq!(
            spine.members("machine-learning/mlops"),
            strings(&["OpsHub", "Serving"]),
            "child excludes parent's pages"
        );
        assert_eq!(
            spine.members("machine-learning-ops"),
            strings(&["Unrelated"])
        );
        assert_eq!(
            spine
                .cluster("machine-learning")
                .map(|c| c.sub_clusters.clone()),
            Some(strings(&["machine-learning/mlops"]))
        );
        assert_eq!(
            spine
                .cluster("machine-learning")
                .map(|c| c.direct_members.clone()),
            Some(strings(&["Backprop", "MLHub"]))
        );
        assert_eq!(
            spine
                .clusters
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>(),
            [
                "machine-learning",
                "machine-learning-ops",
                "machine-learning/mlops"
            ]
        );
        assert_eq!(
            (
                spine.hubs(),
                spine.sub_cluster_count(),
                spine.top_level_count()
            ),
            (2, 1, 2)
        );
        assert_eq!(spine.headless(), strings(&["machine-learning-ops"]));
    }

    #[test]
    fn a_page_naming_parent_and_child_is_counted_once() {
        let spine = Spine::project(&[
            hub("MLHub", "machine-learning"),
            hub("OpsHub", "machine-learning/mlops"),
            member(
                "InferenceServing",
                &["machine-learning", "machine-learning/mlops"],
            ),
        ]);
        assert_eq!(
            spine.members("machine-learning"),
            strings(&["InferenceServing", "MLHub", "OpsHub"])
        );
        assert_eq!(
            spine.clusters_of("InferenceServing"),
            strings(&["machine-learning", "machine-learning/mlops"])
        );
    }

    #[test]
    fn a_page_is_a_member_of_every_cluster_it_names() {
        let spine = Spine::project(&[
            hub("MLHub", "machine-learning"),
            hub("FinanceHub", "quantitative-finance"),
            member(
                "PortfolioOptimization",
                &[
                    "quantitative-finance",
                    " machine-learning",
                    "quantitative-finance",
                ],
            ),
            member(
                "RiskModels",
                &["quantitative-finance", "machine-learning/mlops"],
            ),
            hub("OpsHub", "machine-learning/mlops"),
        ]);
        assert_eq!(
            spine.members("machine-learning"),
            strings(&["MLHub", "OpsHub", "PortfolioOptimization", "RiskModels"])
        );
        assert_eq!(
            spine.members("quantitative-finance"),
            strings(&["FinanceHub", "PortfolioOptimization", "RiskModels"])
        );
        assert_eq!(
            spine.clusters_of("PortfolioOptimization"),
            strings(&["quantitative-finance", "machine-learning"])
        );
        assert!(spine.clusters_of("Nobody").is_empty());
        assert!(spine.conflicts.is_empty());
    }

    #[test]
    fn duplicate_slug_records_merge() {
        let spine = Spine::project(&[member("P", &["a"]), member("P", &["b", "a"])]);
        assert_eq!(spine.members("a"), strings(&["P"]));
        assert_eq!(spine.members("b"), strings(&["P"]));
        assert_eq!(spine.clusters_of("P"), strings(&["a", "b"]));
    }

    #[test]
    fn spine_round_trips_through_json() {
        let spine = Spine::project(&[
            hub("H", "a"),
            member("M", &["a/b"]),
            member("X", &["Bad Path"]),
        ]);
        let json = serde_json::to_string(&spine).unwrap_or_default();
        assert_eq!(serde_json::from_str::<Spine>(&json).ok(), Some(spine));
    }

    // ---- briefing order ----------------------------------------------------------------

    #[test]
    fn briefing_order_is_hub_then_intra_cluster_in_degree_then_updated_then_slug() {
        let pages = [
            hub("Hub", "c"),
            member("Popular", &["c"]),
            member("Linked", &["c/sub"]),
            member("NewA", &["c"]),
            member("NewB", &["c"]),
            member("Old", &["c"]),
            member("Outsider", &["other"]),
        ];
        let spine = Spine::project(&pages);
        let slugs: Vec<String> = pages.iter().map(|p| p.slug.clone()).collect();
        let links = vec![
            strings(&["Popular", "Linked"]),          // Hub
            strings(&["Linked"]),                     // Popular
            strings(&["Popular"]), // Linked (sub-cluster member counts for the parent)
            strings(&[]),          // NewA
            strings(&[]),          // NewB
            strings(&["Hub"]),     // Old
            strings(&["Old", "Old", "NewA", "NewB"]), // Outsider: links from outside do not count
        ];
        let graph = PageGraph::build(&slugs, &links);
        let updated = |slug: &str| match slug {
            "NewA" | "NewB" => 300,
            "Old" => 100,
            _ => 200,
        };
        let order = briefing_member_order(&spine, &graph, "c", &updated, &|_| true);
        // Popular: Hub + Linked = 2; Linked: Hub + Popular = 2 (tie, same updated → slug);
        // NewA, NewB, Old: 0 intra-cluster referrers → updated desc, then slug.
        assert_eq!(
            order,
            strings(&["Hub", "Linked", "Popular", "NewA", "NewB", "Old"])
        );
        assert!(briefing_member_order(&spine, &graph, "missing", &updated, &|_| true).is_empty());
        // A headless cluster has no hub to put first.
        assert_eq!(
            briefing_member_order(&spine, &graph, "other", &updated, &|_| true),
            strings(&["Outsider"])
        );
        // The sub-cluster only ranks its own members.
        assert_eq!(
            briefing_member_order(&spine, &graph, "c/sub", &updated, &|_| true),
            strings(&["Linked"])
        );
    }

    #[test]
    fn briefing_order_tolerates_members_missing_from_the_graph() {
        let spine = Spine::project(&[hub("Hub", "c"), member("B", &["c"]), member("A", &["c"])]);
        let graph = PageGraph::build(&[], &[]);
        let order = briefing_member_order(&spine, &graph, "c", &|_| 0, &|_| true);
        assert_eq!(order, strings(&["Hub", "A", "B"]));
    }
}
