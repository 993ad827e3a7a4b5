//! Pieces shared by the page-level tools: instants, the two page shapes of the reference
//! (`RetrievedPage`, `PageDescriptor`), metadata filters, pagination and body loading.
//!
//! Serializer conventions (REFERENCE §3.1): these shapes are camelCase and **omit** absent
//! values (`Option::None` is skipped), as the reference's `KnowledgeMcpUtils.GSON` does. Instants
//! are ISO-8601 in UTC (`2026-11-29T21:07:04Z`), computed from unix seconds without a clock.
//! The reference's `RetrievedPage.lastModified` used Gson's US date format by accident; we send
//! ISO-8601 there too, so every date an agent sees parses the same way.

pub(crate) use wikantik_format::markup::path_segment;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{json, Value};

use wikantik_access::access::Caller;
use wikantik_format::catalog::{PageRecord, PageTable};
use wikantik_format::payload::{BodyPartition, PageBody};
use wikantik_format::dates::{civil_from_days, days_from_civil};
use wikantik_format::error::Result;
use crate::reader::{IndexReader, ShardStore};
use wikantik_format::spine::ClusterPath;

const SECONDS_PER_DAY: i64 = 86_400;

/// `unix` seconds as an ISO-8601 UTC instant, `YYYY-MM-DDTHH:MM:SSZ` (Java's `Instant.toString`
/// for whole seconds).
pub(crate) fn iso_instant(unix: i64) -> String {
    let (year, month, day) = civil_from_days(unix.div_euclid(SECONDS_PER_DAY));
    let secs = unix.rem_euclid(SECONDS_PER_DAY);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", secs / 3600, secs / 60 % 60, secs % 60)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A fixed-width run of ASCII digits.
fn digits(s: &str, range: std::ops::Range<usize>) -> Option<i64> {
    let part = s.get(range)?;
    if part.bytes().all(|b| b.is_ascii_digit()) {
        part.parse().ok()
    } else {
        None
    }
}

/// Unix seconds of `YYYY-MM-DD` at midnight UTC.
fn parse_date(s: &str) -> Option<i64> {
    if s.len() != 10 || s.as_bytes().get(4) != Some(&b'-') || s.as_bytes().get(7) != Some(&b'-') {
        return None;
    }
    let (year, month, day) = (digits(s, 0..4)?, digits(s, 5..7)?, digits(s, 8..10)?);
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    Some(days_from_civil(year, month, day) * SECONDS_PER_DAY)
}

/// Parse an ISO-8601 instant: `YYYY-MM-DDTHH:MM[:SS[.fraction]]` followed by `Z` or an offset
/// `±HH:MM` (what `Instant.parse` accepts). Fractions of a second are dropped (bounds compare in
/// whole seconds, like the index's timestamps). The error text is the reference's.
pub(crate) fn parse_instant(raw: &str) -> std::result::Result<i64, String> {
    let invalid = || format!("Invalid ISO-8601 instant: {raw}");
    let s = raw.trim();
    let date = s.get(..10).and_then(parse_date).ok_or_else(invalid)?;
    let rest = s.get(10..).ok_or_else(invalid)?;
    let rest = rest.strip_prefix(['T', 't']).ok_or_else(invalid)?;
    // Split off the zone designator.
    let (time, offset) = if let Some(t) = rest.strip_suffix(['Z', 'z']) {
        (t, 0)
    } else {
        let at = rest.rfind(['+', '-']).ok_or_else(invalid)?;
        let (t, zone) = rest.split_at(at);
        let sign = if zone.starts_with('-') { -1 } else { 1 };
        let zone = zone.get(1..).unwrap_or_default().replace(':', "");
        if zone.len() != 4 {
            return Err(invalid());
        }
        let (h, m) = (digits(&zone, 0..2).ok_or_else(invalid)?, digits(&zone, 2..4).ok_or_else(invalid)?);
        if h > 18 || m > 59 {
            return Err(invalid());
        }
        (t, sign * (h * 3600 + m * 60))
    };
    let (hms, fraction) = match time.split_once('.') {
        Some((hms, fraction)) => (hms, Some(fraction)),
        None => (time, None),
    };
    if fraction.is_some_and(|f| f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit())) {
        return Err(invalid());
    }
    let (hour, minute, second) = match hms.len() {
        5 if hms.as_bytes().get(2) == Some(&b':') && fraction.is_none() => (digits(hms, 0..2), digits(hms, 3..5), Some(0)),
        8 if hms.as_bytes().get(2) == Some(&b':') && hms.as_bytes().get(5) == Some(&b':') => {
            (digits(hms, 0..2), digits(hms, 3..5), digits(hms, 6..8))
        }
        _ => return Err(invalid()),
    };
    let (hour, minute, second) = (hour.ok_or_else(invalid)?, minute.ok_or_else(invalid)?, second.ok_or_else(invalid)?);
    if hour > 23 || minute > 59 || second > 59 {
        return Err(invalid());
    }
    Ok(date + hour * 3600 + minute * 60 + second - offset)
}

/// A frontmatter date or instant (`2026-11-18`, `2026-11-18T09:00:00Z`) as unix seconds.
pub(crate) fn parse_date_or_instant(raw: &str) -> Option<i64> {
    let s = raw.trim();
    parse_date(s).or_else(|| parse_instant(s).ok())
}

/// `type` as the reference's enum constant name: `HUB`, `ARTICLE`, `REFERENCE`, `RUNBOOK`,
/// `DESIGN`, or `UNKNOWN` for a missing or off-list value (compared case-insensitively).
pub(crate) fn type_enum(raw: Option<&str>) -> &'static str {
    match raw.map(|t| t.trim().to_ascii_lowercase()).as_deref() {
        Some("hub") => "HUB",
        Some("article") => "ARTICLE",
        Some("reference") => "REFERENCE",
        Some("runbook") => "RUNBOOK",
        Some("design") => "DESIGN",
        _ => "UNKNOWN",
    }
}

/// The reference's `PageDescriptor` (structural tools): camelCase, absent values omitted.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PageDescriptor {
    pub canonical_id: String,
    pub slug: String,
    pub title: String,
    #[serde(rename = "type")]
    pub page_type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    pub clusters: Vec<String>,
    pub tags: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    pub updated: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kg_include: Option<bool>,
    pub derived: bool,
}

impl PageDescriptor {
    pub fn of(page: &PageRecord) -> PageDescriptor {
        PageDescriptor {
            canonical_id: page.canonical_id.clone(),
            slug: page.slug.clone(),
            title: if page.title.is_empty() { page.slug.clone() } else { page.title.clone() },
            page_type: type_enum(page.page_type.as_deref()),
            cluster: page.clusters.first().cloned(),
            clusters: page.clusters.clone(),
            tags: page.tags.clone(),
            summary: non_empty(&page.summary),
            updated: iso_instant(page.updated),
            kg_include: page.kg_include,
            derived: page.derived,
        }
    }
}

/// One chunk that made a page match (`retrieve_context`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ContributingChunk {
    pub heading_path: Vec<String>,
    pub text: String,
    pub chunk_score: f64,
    pub matched_terms: Vec<String>,
}

/// A page related to a retrieved page, with why.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RelatedPage {
    pub name: String,
    pub reason: String,
}

/// The reference's `RetrievedPage` (retrieval tools): camelCase, absent values omitted.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RetrievedPage {
    pub name: String,
    pub url: String,
    pub score: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    pub tags: Vec<String>,
    pub contributing_chunks: Vec<ContributingChunk>,
    pub related_pages: Vec<RelatedPage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    pub last_modified: String,
    pub derived: bool,
}

impl RetrievedPage {
    /// The page's metadata with score 0 and no chunks or related pages (`get_page`, `list_pages`).
    pub fn of(page: &PageRecord) -> RetrievedPage {
        RetrievedPage {
            name: page.slug.clone(),
            url: format!("/wiki/{}", path_segment(&page.slug)),
            score: 0.0,
            summary: non_empty(&page.summary),
            cluster: page.clusters.first().cloned(),
            tags: page.tags.clone(),
            contributing_chunks: Vec::new(),
            related_pages: Vec::new(),
            author: page.author.clone(),
            last_modified: iso_instant(page.updated),
            derived: page.derived,
        }
    }
}

pub(crate) fn non_empty(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// Whether a page's memberships put it in `filter`: self-or-descendant, segment-aware, over
/// every membership (REFERENCE §4.3). A filter that is not a valid cluster path can only match
/// a membership spelled exactly like it.
pub(crate) fn in_cluster(memberships: &[String], filter: &str) -> bool {
    let filter = filter.trim();
    match ClusterPath::parse(filter) {
        Ok(wanted) => memberships
            .iter()
            .any(|m| ClusterPath::parse(m.trim()).is_ok_and(|path| path.is_self_or_descendant_of(&wanted))),
        Err(_) => memberships.iter().any(|m| m.trim() == filter),
    }
}

/// The metadata filters of `list_pages` and `retrieve_context`'s `filters`.
#[derive(Debug, Clone, Default)]
pub(crate) struct PageFilter {
    pub cluster: Option<String>,
    /// The page must carry all of these.
    pub tags: Vec<String>,
    /// Exact, case-sensitive frontmatter `type`.
    pub page_type: Option<String>,
    pub author: Option<String>,
    /// Inclusive bounds on the page's last change, unix seconds.
    pub modified_after: Option<i64>,
    pub modified_before: Option<i64>,
}

impl PageFilter {
    /// Read the filter keys from an argument object; bad instants are the reference's error.
    pub fn from_args(args: &Value) -> std::result::Result<PageFilter, String> {
        let instant = |name: &str| super::text_arg(args, name).map(|s| parse_instant(&s)).transpose();
        Ok(PageFilter {
            cluster: super::text_arg(args, "cluster"),
            tags: super::list_arg(args, "tags"),
            page_type: super::text_arg(args, "type"),
            author: super::text_arg(args, "author"),
            modified_after: instant("modifiedAfter")?,
            modified_before: instant("modifiedBefore")?,
        })
    }

    /// No filter key was given: every viewable page matches.
    pub fn is_empty(&self) -> bool {
        self.cluster.is_none() && self.tags.is_empty() && self.page_type.is_none() && self.author.is_none() && self.modified_after.is_none() && self.modified_before.is_none()
    }

    pub fn matches(&self, page: &PageRecord) -> bool {
        self.cluster.as_deref().is_none_or(|c| in_cluster(&page.clusters, c))
            && self.tags.iter().all(|t| page.tags.iter().any(|pt| pt == t))
            && self.page_type.as_deref().is_none_or(|t| page.page_type.as_deref().map(str::trim) == Some(t))
            && self.author.as_deref().is_none_or(|a| page.author.as_deref().map(str::trim) == Some(a))
            && self.modified_after.is_none_or(|after| page.updated >= after)
            && self.modified_before.is_none_or(|before| page.updated <= before)
    }
}

/// An integer argument: JSON integers, or numbers truncated toward zero.
pub(crate) fn int_arg(args: &Value, name: &str) -> Option<i64> {
    let value = args.get(name)?;
    value.as_i64().or_else(|| value.as_f64().filter(|f| f.is_finite()).map(|f| f.trunc().clamp(i64::MIN as f64, i64::MAX as f64) as i64))
}

/// The reference's `McpToolUtils.paginate` envelope: `{<key>: page, count (total), returned,
/// offset, limit, hasMore}`.
pub(crate) fn paginate(key: &str, items: Vec<Value>, offset: usize, limit: usize) -> Value {
    let count = items.len();
    let page: Vec<Value> = items.into_iter().skip(offset).take(limit).collect();
    paginated(key, page, count, offset, limit)
}

/// [`paginate`] for a listing that made only the `page` its window shows, of `count` items.
pub(crate) fn paginated(key: &str, page: Vec<Value>, count: usize, offset: usize, limit: usize) -> Value {
    let returned = page.len();
    json!({
        key: page,
        "count": count,
        "returned": returned,
        "offset": offset,
        "limit": limit,
        "hasMore": offset.saturating_add(returned) < count,
    })
}

/// The pages the caller may view, in slug order.
pub(crate) fn viewable<'t>(table: &'t PageTable, caller: &Caller) -> Vec<&'t PageRecord> {
    table.pages.iter().filter(|p| caller.can_view(p)).collect()
}

/// The `bodies` partitions holding some pages, loaded once each.
pub(crate) struct Bodies {
    partitions: BTreeMap<u32, Arc<BodyPartition>>,
}

impl Bodies {
    /// Load the partitions of `pages` (callers pass only pages the caller may view).
    pub async fn load<S: ShardStore>(reader: &IndexReader<S>, pages: &[&PageRecord]) -> Result<Bodies> {
        let mut wanted: Vec<u32> = pages.iter().map(|p| p.partition).collect();
        wanted.sort_unstable();
        wanted.dedup();
        let loaded = reader.bodies_of(&wanted).await?;
        Ok(Bodies { partitions: wanted.into_iter().zip(loaded).collect() })
    }

    pub fn get(&self, page: &PageRecord) -> Option<&PageBody> {
        self.partitions.get(&page.partition).and_then(|part| part.page(page.key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_round_trip_through_the_civil_calendar() {
        assert_eq!(iso_instant(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso_instant(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso_instant(1_795_900_024), "2026-11-28T21:07:04Z");
        assert_eq!(iso_instant(-1), "1969-12-31T23:59:59Z");
        for t in [0, 951_782_400, 1_795_900_024, -86_401, 4_102_444_800] {
            assert_eq!(parse_instant(&iso_instant(t)), Ok(t));
        }
    }

    #[test]
    fn instant_parsing_accepts_offsets_and_rejects_garbage() {
        assert_eq!(parse_instant("1970-01-01T01:00:00+01:00"), Ok(0));
        assert_eq!(parse_instant("1970-01-01T00:00:00.999Z"), Ok(0));
        assert_eq!(parse_instant("1970-01-01T00:01Z"), Ok(60));
        for bad in ["2026-02-30T00:00:00Z", "2026-11-29", "yesterday", "2026-11-29T25:00:00Z", "2026-11-29T10:00:00", "é"] {
            assert_eq!(parse_instant(bad), Err(format!("Invalid ISO-8601 instant: {bad}")), "{bad}");
        }
        assert_eq!(parse_date_or_instant("2026-11-18"), Some(days_from_civil(2026, 11, 18) * 86_400));
    }

    #[test]
    fn cluster_matching_is_segment_aware() {
        let m = vec!["operations/runbooks".to_string(), "retrieval".to_string()];
        assert!(in_cluster(&m, "operations"));
        assert!(in_cluster(&m, "operations/runbooks"));
        assert!(in_cluster(&m, "retrieval"));
        assert!(!in_cluster(&m, "operations-extra"));
        assert!(!in_cluster(&["operations".to_string()], "operations/runbooks"));
    }

    #[test]
    fn path_segments_are_percent_encoded() {
        assert_eq!(path_segment("Runbooks Hub"), "Runbooks%20Hub");
        assert_eq!(path_segment("Q&A"), "Q%26A");
        assert_eq!(path_segment("ShardFormat"), "ShardFormat");
    }
}
