//! The dictionary by part: the sorted terms of a store cut into `rdf-terms` parts, so a query
//! reads the parts holding the terms it names and returns, not the whole dictionary (at 120k
//! pages the whole dictionary is 3 MB compressed and about 90 MB decoded).
//!
//! Ids are unchanged: part `i` holds the ids from its `start` up to the next part's. The
//! `rdf` directory lists each part's first term and first id ([`TermPartRef`]), which is
//! enough to say which part holds an id, or would hold a term.
//!
//! A query over a store whose dictionary is by part runs with the parts loaded so far
//! ([`TermParts`]). Every lookup that falls in a part not loaded is recorded as missing and
//! answers "absent"; such a run's results are discarded, the missing parts are loaded and the
//! query runs again, until a run misses nothing. Only that run's results (or error) count, and
//! it saw exactly the terms the whole dictionary would have given it. Each repeated run loads
//! at least one part it did not have, so the runs are at most the parts plus one.

use super::store::{RdfDirectory, Store};
use super::term::Term;
use super::SparqlError;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

/// One `rdf-terms` part, as the `rdf` directory lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TermPartRef {
    /// Its first (smallest) term.
    pub first: Term,
    /// The id of that term.
    pub start: u32,
}

/// Payload of an `rdf-terms` shard: consecutive terms of the dictionary, sorted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TermPart {
    /// The id of the first term.
    pub start: u32,
    /// The terms, id `start + i` at position `i`.
    pub terms: Vec<Term>,
}

/// Cuts a sorted dictionary into parts of `per_part` terms (at least one).
pub fn cut_terms(terms: Vec<Term>, per_part: usize) -> (Vec<TermPartRef>, Vec<TermPart>) {
    let per_part = per_part.max(1);
    let mut refs = Vec::new();
    let mut parts = Vec::new();
    let mut rest = terms.into_iter().peekable();
    let mut start = 0u32;
    while rest.peek().is_some() {
        let terms: Vec<Term> = rest.by_ref().take(per_part).collect();
        let Some(first) = terms.first().cloned() else { break };
        let count = u32::try_from(terms.len()).unwrap_or(u32::MAX);
        refs.push(TermPartRef { first, start });
        parts.push(TermPart { start, terms });
        start = start.saturating_add(count);
    }
    (refs, parts)
}

/// The parts of a dictionary by part that one query has loaded, and those its last run missed.
#[derive(Debug)]
pub struct TermParts {
    directory: Arc<RdfDirectory>,
    loaded: BTreeMap<usize, Arc<TermPart>>,
    missing: Mutex<BTreeSet<usize>>,
}

impl TermParts {
    /// No part loaded yet, of the dictionary `directory` lists.
    pub fn new(directory: Arc<RdfDirectory>) -> Self {
        TermParts { directory, loaded: BTreeMap::new(), missing: Mutex::new(BTreeSet::new()) }
    }

    fn refs(&self) -> &[TermPartRef] {
        &self.directory.term_parts
    }

    /// Adds part `number` after checking it is the part the directory lists there: its start,
    /// its first term, its length up to the next part's start, and its order.
    pub fn add(&mut self, number: usize, part: Arc<TermPart>) -> Result<(), SparqlError> {
        let bad = |what: &str| Err(SparqlError::Store(format!("rdf-terms part {number} {what}")));
        let Some(listed) = self.refs().get(number) else { return bad("is not in the directory") };
        let end = self.refs().get(number + 1).map_or(self.count(), |next| next.start);
        if part.start != listed.start || part.terms.first() != Some(&listed.first) {
            return bad("does not start where the directory says");
        }
        if u32::try_from(part.terms.len()).ok() != end.checked_sub(part.start) {
            return bad("does not hold the terms up to the next part");
        }
        if part.terms.windows(2).any(|w| w.first() >= w.get(1)) || self.refs().get(number + 1).is_some_and(|next| part.terms.last() >= Some(&next.first)) {
            return bad("is not sorted and distinct");
        }
        self.loaded.insert(number, part);
        Ok(())
    }

    /// The parts the last run looked in without having them, ascending; clears the record.
    pub fn take_missing(&self) -> Vec<usize> {
        self.missing.lock().map(|mut m| std::mem::take(&mut *m).into_iter().collect()).unwrap_or_default()
    }

    /// Whether part `number` is loaded.
    pub fn has(&self, number: usize) -> bool {
        self.loaded.contains_key(&number)
    }

    /// The parts loaded, ascending.
    pub fn loaded(&self) -> Vec<usize> {
        self.loaded.keys().copied().collect()
    }

    /// Number of terms of the whole dictionary.
    pub fn count(&self) -> u32 {
        self.directory.term_count
    }

    fn miss(&self, part: usize) {
        if let Ok(mut m) = self.missing.lock() {
            m.insert(part);
        }
    }

    /// The id of `term` if the dictionary has it (a part not loaded: recorded, and `None`).
    pub fn id_of(&self, term: &Term) -> Option<u32> {
        let number = self.refs().partition_point(|r| r.first <= *term).checked_sub(1)?;
        let Some(part) = self.loaded.get(&number) else {
            self.miss(number);
            return None;
        };
        let at = part.terms.binary_search(term).ok()?;
        part.start.checked_add(u32::try_from(at).ok()?)
    }

    /// The term of `id` (a part not loaded: recorded, and `None`).
    pub fn term(&self, id: u32) -> Option<&Term> {
        if id >= self.count() {
            return None;
        }
        let number = self.refs().partition_point(|r| r.start <= id).checked_sub(1)?;
        let Some(part) = self.loaded.get(&number) else {
            self.miss(number);
            return None;
        };
        part.terms.get(usize::try_from(id.checked_sub(part.start)?).ok()?)
    }
}

/// Where one evaluation looks terms up.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Dictionary<'a> {
    /// The store's whole dictionary.
    Whole(&'a Store),
    /// A dictionary by part, with the parts loaded so far.
    Parts(&'a TermParts),
}

impl<'a> Dictionary<'a> {
    pub(crate) fn id_of(self, term: &Term) -> Option<u32> {
        match self {
            Dictionary::Whole(store) => store.id_of(term),
            Dictionary::Parts(parts) => parts.id_of(term),
        }
    }

    pub(crate) fn term(self, id: u32) -> Option<&'a Term> {
        match self {
            Dictionary::Whole(store) => store.term(id),
            Dictionary::Parts(parts) => parts.term(id),
        }
    }
}
