//! Frontmatter values by field: every value of every frontmatter field with the pages carrying
//! it tallied by ACL, cut into `metadata-values` parts by field name, so listing one field's
//! values (`list_metadata_values`) reads one small part instead of the page table and every
//! page's body.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::acl::{Acl, AclNumbers};

/// A part is closed once its values reach this many bytes of text (a field is never split).
pub const PART_BYTES: usize = 32 * 1024;

/// Most parts a build cuts (larger wikis get larger parts), so their manifest rows stay few.
pub const MAX_PARTS: usize = 64;

/// A frontmatter value as the reference counts it: each element of a list on its own, scalars
/// by their text (`true`, `3`, `2026-10-05`), objects by their JSON text; nulls not at all.
pub fn values_of(value: &Value) -> Vec<String> {
    match value {
        Value::Null => Vec::new(),
        Value::Array(items) => items.iter().flat_map(values_of).collect(),
        Value::String(s) => vec![s.clone()],
        other => vec![other.to_string()],
    }
}

/// Payload of a `metadata-values` shard: consecutive fields (by name) with their values.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct MetadataPart {
    /// The distinct ACLs the tallies name, in first-use order.
    pub acls: Vec<Acl>,
    /// Ascending by name.
    pub fields: Vec<FieldValues>,
}

/// One frontmatter field's values.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct FieldValues {
    pub field: String,
    /// Ascending by value.
    pub values: Vec<ValueTally>,
}

/// The pages carrying one value (each page once), by ACL: `(acl, pages)` pairs ascending by
/// ACL number, indexing [`MetadataPart::acls`].
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct ValueTally {
    pub value: String,
    pub by_acl: Vec<(u32, u32)>,
}

impl MetadataPart {
    /// The values of `field` (`None` when no page of this part's fields has it).
    pub fn field(&self, field: &str) -> Option<&FieldValues> {
        self.fields.binary_search_by(|f| f.field.as_str().cmp(field)).ok().and_then(|i| self.fields.get(i))
    }

    /// `field`'s values on the pages under the ACLs `may_view` allows, with how many such
    /// pages carry each; most frequent first, then by value.
    pub fn viewable_values(&self, field: &str, may_view: impl Fn(&Acl) -> bool) -> Vec<(&str, usize)> {
        let viewable = crate::acl::viewable_under(&self.acls, may_view);
        let mut out: Vec<(&str, usize)> = self
            .field(field)
            .map(|f| {
                f.values
                    .iter()
                    .map(|v| (v.value.as_str(), v.by_acl.iter().filter(|(acl, _)| viewable.get(*acl as usize).copied().unwrap_or(false)).map(|&(_, n)| n as usize).sum()))
                    .filter(|&(_, n)| n > 0)
                    .collect()
            })
            .unwrap_or_default();
        out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        out
    }
}

/// Every field of `pages` (each page's frontmatter and ACL) cut into parts of about
/// [`PART_BYTES`] (at most [`MAX_PARTS`]), each with its first field's name.
pub fn parts<'a>(pages: impl Iterator<Item = (&'a Map<String, Value>, &'a Acl)>) -> Vec<(String, MetadataPart)> {
    parts_of(pages, PART_BYTES)
}

/// [`parts`] with parts of about `part_bytes`.
fn parts_of<'a>(pages: impl Iterator<Item = (&'a Map<String, Value>, &'a Acl)>, part_bytes: usize) -> Vec<(String, MetadataPart)> {
    // Tallies by the ACL's number among every page's; each part numbers its own.
    let mut every_acl = AclNumbers::default();
    let mut fields: BTreeMap<&str, BTreeMap<String, BTreeMap<u32, u32>>> = BTreeMap::new();
    for (frontmatter, acl) in pages {
        let acl = every_acl.number(acl);
        for (field, value) in frontmatter {
            let distinct: BTreeSet<String> = values_of(value).into_iter().collect();
            let values = fields.entry(field.as_str()).or_default();
            for v in distinct {
                *values.entry(v).or_default().entry(acl).or_default() += 1;
            }
        }
    }
    let every_acl = every_acl.into_acls();
    let size = |values: &BTreeMap<String, BTreeMap<u32, u32>>| values.keys().map(|v| v.len() + 8).sum::<usize>();
    let total: usize = fields.values().map(size).sum();
    let per_part = part_bytes.max(total.div_ceil(MAX_PARTS));
    let mut out: Vec<(String, MetadataPart)> = Vec::new();
    let mut numbers = AclNumbers::default();
    let mut open: Vec<FieldValues> = Vec::new();
    let mut bytes = 0;
    let mut close = |open: &mut Vec<FieldValues>, numbers: &mut AclNumbers| {
        if let Some(first) = open.first() {
            let name = first.field.clone();
            out.push((name, MetadataPart { acls: std::mem::take(numbers).into_acls(), fields: std::mem::take(open) }));
        }
    };
    for (field, values) in fields {
        bytes += size(&values);
        let values = values
            .into_iter()
            .map(|(value, by_acl)| {
                let mut by_acl: Vec<(u32, u32)> =
                    by_acl.into_iter().filter_map(|(acl, n)| every_acl.get(acl as usize).map(|acl| (numbers.number(acl), n))).collect();
                by_acl.sort_unstable();
                ValueTally { value, by_acl }
            })
            .collect();
        open.push(FieldValues { field: field.to_string(), values });
        if bytes >= per_part {
            close(&mut open, &mut numbers);
            bytes = 0;
        }
    }
    close(&mut open, &mut numbers);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn frontmatter(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn values_are_tallied_per_page_and_acl_and_found_in_the_part_their_field_routes_to() {
        let open = Acl::default();
        let restricted = Acl::admin_only();
        let pages = [
            (frontmatter(json!({ "type": "article", "tags": ["a", "b", "a"], "draft": true })), &open),
            (frontmatter(json!({ "type": "article", "tags": ["b"], "owner": null })), &restricted),
            (frontmatter(json!({ "type": "hub", "tags": "c", "meta": { "k": 1 } })), &open),
        ];
        // A part per byte of values (a field without values shares the next one's): every field
        // is found through the first keys.
        let parts = parts_of(pages.iter().map(|(f, a)| (f, *a)), 1);
        let names: Vec<&str> = parts.iter().map(|(first, _)| first.as_str()).collect();
        assert_eq!(names, ["draft", "meta", "owner", "type"]);
        let route = |field: &str| parts.iter().rev().find(|(first, _)| first.as_str() <= field).map(|(_, part)| part);
        let everyone = |acl: &Acl| acl.is_open_to_everyone();
        let all = |_: &Acl| true;
        let tags = route("tags").expect("tags part");
        assert_eq!(tags.viewable_values("tags", all), [("b", 2), ("a", 1), ("c", 1)], "a page counts a value once");
        assert_eq!(tags.viewable_values("tags", everyone), [("a", 1), ("b", 1), ("c", 1)]);
        assert_eq!(route("type").expect("type").viewable_values("type", everyone), [("article", 1), ("hub", 1)]);
        assert_eq!(route("draft").expect("draft").viewable_values("draft", all), [("true", 1)]);
        assert_eq!(route("meta").expect("meta").viewable_values("meta", all), [(r#"{"k":1}"#, 1)]);
        assert!(route("owner").expect("owner").viewable_values("owner", all).is_empty(), "nulls are not values");
        assert!(route("tagz").expect("a part").viewable_values("tagz", all).is_empty());
        // Together in one part, the same answers.
        let one = parts_of(pages.iter().map(|(f, a)| (f, *a)), usize::MAX);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].1.viewable_values("tags", everyone), tags.viewable_values("tags", everyone));
    }
}
