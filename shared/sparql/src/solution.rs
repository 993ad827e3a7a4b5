//! Solutions and the state of one evaluation: the rows that [`super::eval`] produces and
//! [`super::expr`] reads, and the context both evaluate in.

use super::dictionary::Dictionary;
use super::store::Store;
use super::term::Term;
use super::Budget;
use std::collections::HashMap;
use std::rc::Rc;

/// A bound value: a dictionary id, or a term computed by an expression that the store lacks.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Value {
    Id(u32),
    Computed(Rc<Term>),
}

/// One solution: a value per variable slot (missing or `None` = unbound).
pub(crate) type Row = Vec<Option<Value>>;

/// State of one query evaluation.
pub(crate) struct Ctx<'a> {
    pub(crate) store: &'a Store,
    /// Where terms are looked up (the store's whole dictionary, or the parts loaded).
    pub(crate) dictionary: Dictionary<'a>,
    /// The visibility groups the caller may view (decided once per query).
    pub(crate) groups: Vec<usize>,
    pub(crate) budget: Budget,
    /// Each variable's slot in a row.
    pub(crate) slots: HashMap<String, usize>,
    pub(crate) regexes: HashMap<(String, String), regex::Regex>,
    /// The query's base IRI, for `IRI()` of relative references.
    pub(crate) base: Option<oxiri::Iri<String>>,
}

/// The value bound in `slot`, if any.
pub(crate) fn get(row: &Row, slot: usize) -> Option<&Value> {
    row.get(slot).and_then(Option::as_ref)
}

/// Bind `slot` to `v`, growing the row as needed.
pub(crate) fn set(row: &mut Row, slot: usize, v: Value) {
    if row.len() <= slot {
        row.resize(slot + 1, None);
    }
    if let Some(cell) = row.get_mut(slot) {
        *cell = Some(v);
    }
}

/// The term a literal of the query stands for.
pub(crate) fn term_of_literal(l: &spargebra::term::Literal) -> Term {
    match l.language() {
        Some(lang) => Term::lang_string(l.value(), lang),
        None => Term::typed(l.value(), l.datatype().as_str()),
    }
}
