//! SPARQL-lite: a bounded SPARQL 1.1 query engine over a visibility-tagged RDF store
//! (CONTRACT §3.9, REFERENCE §5).
//!
//! * [`store`]: the dictionary-encoded triple store ([`Store`], [`StoreBuilder`]) with SPO/POS/OSP
//!   indexes split into partitions, per-triple [`Visibility`] and RDFS entailment at build time.
//! * [`execute`]: parses a query with Oxigraph's `spargebra` and evaluates it against the store,
//!   seeing only the triples `can_view` allows, within the work and size bounds of
//!   [`QueryOptions`].
//! * [`QueryResults`]: W3C SPARQL 1.1 Query Results JSON and the reference's `compact` form.
//!
//! # Use
//!
//! ```
//! # #[cfg(feature = "query")]
//! # fn main() -> Result<(), wikantik_sparql::SparqlError> {
//! use wikantik_sparql::{execute, QueryOptions, StoreBuilder, Term, Visibility};
//! let mut b = StoreBuilder::new();
//! let label = Term::iri("http://www.w3.org/2000/01/rdf-schema#label");
//! b.add(Term::iri("urn:p1"), label.clone(), Term::string("Deploy"), Visibility::Public);
//! b.add(Term::iri("urn:p2"), label, Term::string("Payroll"), Visibility::Page(42));
//! let store = b.build()?; // index-builder: serialise with `shard::to_cbor`/`encode_shard`
//! // Function: decode the shard, `store.validate()?`, then per request:
//! let anonymous = |_page: u32| false;
//! let r = execute(&store, "SELECT ?l WHERE { ?p <http://www.w3.org/2000/01/rdf-schema#label> ?l }", &anonymous, &QueryOptions::default())?;
//! assert_eq!(r.to_compact_json(), serde_json::json!([{"l": "Deploy"}]));
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "query"))]
//! # fn main() {}
//! ```
//!
//! # Supported subset
//!
//! `SELECT` (with `*`, expressions, `DISTINCT`, `REDUCED`), `ASK`, `CONSTRUCT` (template
//! instantiated per solution) and `DESCRIBE` (the viewable triples whose subject is a described
//! resource, following blank-node objects); basic graph patterns; group
//! graph patterns; `OPTIONAL`; `UNION`; `MINUS`; `FILTER` (with `EXISTS`/`NOT EXISTS`); `BIND`;
//! `VALUES`; subqueries; `GROUP BY` with `COUNT` (incl. `DISTINCT` and `*`), `SUM`, `MIN`, `MAX`,
//! `AVG`, `SAMPLE`, `GROUP_CONCAT` (with `SEPARATOR`); `HAVING`; `ORDER BY` (`ASC`/`DESC`, SPARQL
//! term order); `LIMIT`/`OFFSET`; property paths (`^`, `/`, `|`, `!`, `*`, `+`, `?`).
//! Operators: `||`, `&&`, `!`, `=`, `!=`, `<`, `>`, `<=`, `>=`, `+`, `-`, `*`, `/`, `IN`,
//! `NOT IN`. Functions: see [`eval`](self) — `BOUND`, `IF`, `COALESCE`, `sameTerm`, `isIRI`,
//! `isURI`, `isBlank`, `isLiteral`, `isNumeric`, `STR`, `LANG`, `LANGMATCHES`, `DATATYPE`, `IRI`,
//! `STRDT`, `STRLANG`, `REGEX` (flags `i`, `s`, `m`, `x`, `q`), `REPLACE`, `CONTAINS`,
//! `STRSTARTS`, `STRENDS`, `STRBEFORE`, `STRAFTER`, `LCASE`, `UCASE`, `STRLEN`, `CONCAT`,
//! `SUBSTR`, `ENCODE_FOR_URI`, `ABS`, `CEIL`, `FLOOR`, `ROUND`, `YEAR`…`SECONDS`, `TIMEZONE`,
//! `TZ`, `MD5`, `SHA1`, `SHA256`, `SHA384`, `SHA512`, and the XSD casts to
//! `xsd:string`, `xsd:integer`, `xsd:decimal`, `xsd:double`, `xsd:float`, `xsd:boolean`.
//!
//! Rejected with [`SparqlError::Unsupported`] naming the feature:
//! `FROM`/`FROM NAMED`/`GRAPH` (the store is one default graph, the union of all pages),
//! `SERVICE`, `LATERAL`, custom functions and aggregates, and the
//! non-deterministic or clock functions (`RAND`, `NOW`, `UUID`, `STRUUID`, `BNODE`).
//! SPARQL UPDATE is not a query: it fails with `invalid SPARQL query (note: UPDATE is not
//! allowed): …` like any other text that does not parse as a query.
//!
//! # Bounds
//!
//! The solution count is capped at [`QueryOptions::max_limit`] (10,000): a query without
//! `LIMIT` gets it, a larger `LIMIT` is lowered. A cap (the forced one, a `LIMIT`, or `ASK`'s
//! one solution) stops evaluation early where the operators allow it (basic graph patterns
//! evaluated depth first, projection, `BIND`, `UNION`, `REDUCED`), with exactly the solutions
//! the full evaluation would give first; so `SELECT * WHERE { ?s ?p ?o } LIMIT 10` is cheap
//! on any store, and a bare cartesian product returns its first 10,000 solutions, while the
//! same product under `DISTINCT`, `ORDER BY` or `COUNT` stops at the work limit. Every index entry scanned costs one step, every
//! solution and every pair compared in a join costs one step; past
//! [`QueryOptions::work_limit`] steps the query stops with
//! `query exceeded the work limit of N steps`. No intermediate solution sequence may exceed
//! [`QueryOptions::max_rows`] solutions, and no string built by an expression or
//! `GROUP_CONCAT` may exceed 1 MiB; building a string costs a step per 64 bytes and compiling
//! a regular expression 100 steps plus its length.
//!
//! # Order
//!
//! Without `ORDER BY`, solutions come in evaluation order, which is deterministic for a given
//! store and query: a triple pattern yields matches in the order of the index it scans (term ids
//! follow the dictionary, sorted by [`Term`]'s order), joins keep the left operand's order,
//! `UNION` gives its left side first, `GROUP BY` groups in order of first appearance.

// The query engine (parser, evaluator, expression functions) is the cargo feature `sparql`;
// the store, terms and results are shard data every build can decode.
// Without `query` the store and projection build alone; the evaluator's helpers are unused.
#![cfg_attr(not(feature = "query"), allow(dead_code))]

#[cfg(feature = "query")]
mod eval;
#[cfg(feature = "query")]
mod expr;
#[cfg(feature = "query")]
mod solution;
#[cfg(feature = "query")]
mod needs;
#[cfg(feature = "query")]
mod tree;
mod results;
pub mod dictionary;
pub mod ontology;
pub mod store;
pub mod term;
#[cfg(test)]
mod tests;

pub use results::QueryResults;
pub use store::{IdPattern, IndexOrder, PartitionSelection, RdfDirectory, Store, StoreBuilder, TriplePartition, TripleGroup, Visibility};
pub use dictionary::{TermPart, TermPartRef, TermParts};
pub use term::Term;

use thiserror::Error;

/// What can go wrong building a store or running a query.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SparqlError {
    /// The text is not a SPARQL query (this includes SPARQL UPDATE requests).
    #[error("invalid SPARQL query (note: UPDATE is not allowed): {0}")]
    Syntax(String),
    /// A valid query using a feature outside SPARQL-lite.
    #[error("unsupported SPARQL feature: {0}")]
    Unsupported(String),
    /// The query did more than [`QueryOptions::work_limit`] steps.
    #[error("query exceeded the work limit of {0} steps")]
    WorkLimit(u64),
    /// An intermediate solution sequence grew past [`QueryOptions::max_rows`].
    #[error("query exceeded the limit of {0} intermediate solutions")]
    RowLimit(usize),
    /// A store that cannot be built or used.
    #[error("invalid RDF store: {0}")]
    Store(String),
}

impl From<SparqlError> for wikantik_format::error::Error {
    fn from(e: SparqlError) -> Self {
        wikantik_format::error::Error::Sparql(e.to_string())
    }
}

/// Bounds of one query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryOptions {
    /// Steps (index entries scanned, join pairs compared, [`ROW_COST`] per solution produced)
    /// before the query is stopped. The default, 2,000,000, keeps a query well under a second
    /// natively and bounds the solutions a query can build to 250,000.
    pub work_limit: u64,
    /// Maximum number of solutions returned (the forced `LIMIT`); default 10,000.
    pub max_limit: usize,
    /// Maximum size of any intermediate solution sequence (a memory backstop); default 250,000.
    pub max_rows: usize,
}

impl Default for QueryOptions {
    fn default() -> Self {
        QueryOptions { work_limit: 2_000_000, max_limit: 10_000, max_rows: 250_000 }
    }
}

/// Steps charged for each solution produced (an index entry examined costs one).
pub const ROW_COST: u64 = 8;

/// Counts a query's work against its bounds.
#[derive(Debug, Clone)]
pub(crate) struct Budget {
    used: u64,
    limit: u64,
    max_rows: usize,
}

impl Budget {
    pub(crate) fn new(opts: &QueryOptions) -> Self {
        Budget { used: 0, limit: opts.work_limit, max_rows: opts.max_rows }
    }

    /// One unit of work.
    pub(crate) fn step(&mut self) -> Result<(), SparqlError> {
        self.used = self.used.saturating_add(1);
        if self.used > self.limit {
            Err(SparqlError::WorkLimit(self.limit))
        } else {
            Ok(())
        }
    }

    /// Charges `n` solutions produced: materialising a solution (clone, allocation) costs
    /// [`ROW_COST`] steps, so the work limit also bounds the total number of solutions built.
    pub(crate) fn produced(&mut self, n: usize) -> Result<(), SparqlError> {
        let cost = u64::try_from(n).unwrap_or(u64::MAX).saturating_mul(ROW_COST);
        self.used = self.used.saturating_add(cost);
        if self.used > self.limit {
            Err(SparqlError::WorkLimit(self.limit))
        } else {
            Ok(())
        }
    }

    /// Checks the size of an intermediate solution sequence.
    pub(crate) fn rows(&self, n: usize) -> Result<(), SparqlError> {
        if n > self.max_rows {
            Err(SparqlError::RowLimit(self.max_rows))
        } else {
            Ok(())
        }
    }

    /// Charges `n` steps of work.
    pub(crate) fn charge(&mut self, n: u64) -> Result<(), SparqlError> {
        self.used = self.used.saturating_add(n);
        if self.used > self.limit {
            Err(SparqlError::WorkLimit(self.limit))
        } else {
            Ok(())
        }
    }

    /// The largest allowed intermediate solution sequence.
    pub(crate) fn max_rows(&self) -> usize {
        self.max_rows
    }
}

/// Longest query text accepted (bytes).
pub const MAX_QUERY_BYTES: usize = 32 * 1024;
/// Deepest bracket nesting accepted in the query text (checked before parsing).
pub const MAX_BRACKET_NESTING: usize = 64;
/// Deepest algebra tree accepted (checked iteratively after parsing).
pub const MAX_ALGEBRA_DEPTH: usize = 128;

/// Longest run of prefix operators (`!`, `-`, `+`, `^`) accepted, e.g. `!!!?x`.
pub const MAX_OPERATOR_RUN: usize = 32;

/// Rejects texts whose size, bracket nesting or runs of prefix operators could exhaust the
/// parser's or evaluator's stack (a WASM function has about 1 MiB). The scan skips string
/// literals, IRIs and comments, so their content never counts.
#[cfg(feature = "query")]
fn check_shape(query: &str) -> Result<(), SparqlError> {
    if query.len() > MAX_QUERY_BYTES {
        return Err(SparqlError::Unsupported(format!("queries longer than {MAX_QUERY_BYTES} bytes")));
    }
    let bytes = query.as_bytes();
    let (mut i, mut depth, mut run) = (0usize, 0usize, 0usize);
    while let Some(&c) = bytes.get(i) {
        i += 1;
        match c {
            b'#' => {
                while bytes.get(i).is_some_and(|&c| c != b'\n') {
                    i += 1;
                }
            }
            b'"' | b'\'' => {
                let long = bytes.get(i) == Some(&c) && bytes.get(i + 1) == Some(&c);
                if long {
                    i += 2;
                }
                loop {
                    match bytes.get(i) {
                        None => break,
                        Some(b'\\') => i += 2,
                        Some(&d) if d == c && (!long || (bytes.get(i + 1) == Some(&c) && bytes.get(i + 2) == Some(&c))) => {
                            i += if long { 3 } else { 1 };
                            break;
                        }
                        Some(_) => i += 1,
                    }
                }
                run = 0;
            }
            b'<' => {
                // An IRI reference runs to '>' with no whitespace; otherwise it is "less than".
                let end = bytes.get(i..).and_then(|rest| rest.iter().position(|&d| d == b'>' || d.is_ascii_whitespace()));
                if let Some(e) = end {
                    if bytes.get(i + e) == Some(&b'>') {
                        i += e + 1;
                    }
                }
                run = 0;
            }
            b'(' | b'{' | b'[' => {
                depth += 1;
                if depth > MAX_BRACKET_NESTING {
                    return Err(SparqlError::Unsupported(format!("brackets nested deeper than {MAX_BRACKET_NESTING} levels")));
                }
                run = 0;
            }
            b')' | b'}' | b']' => {
                depth = depth.saturating_sub(1);
                run = 0;
            }
            b'!' | b'-' | b'+' | b'^' => {
                run += 1;
                if run > MAX_OPERATOR_RUN {
                    return Err(SparqlError::Unsupported(format!("more than {MAX_OPERATOR_RUN} prefix operators in a row")));
                }
            }
            c if c.is_ascii_whitespace() => {}
            _ => run = 0,
        }
    }
    Ok(())
}

#[cfg(feature = "query")]
/// Parses and runs `query` over `store`, seeing only public triples and those of pages for
/// which `can_view(page_key)` is true.
pub fn execute(
    store: &Store,
    query: &str,
    can_view: &dyn Fn(u32) -> bool,
    opts: &QueryOptions,
) -> Result<QueryResults, SparqlError> {
    if store.terms_by_part.is_some() {
        return Err(SparqlError::Store("the dictionary is stored by part: run the query with its parts (execute_with_parts)".into()));
    }
    check_shape(query)?;
    let parsed = spargebra::SparqlParser::new().parse_query(query).map_err(|e| SparqlError::Syntax(e.to_string()))?;
    eval::run(store, dictionary::Dictionary::Whole(store), &parsed, can_view, opts)
}

#[cfg(feature = "query")]
/// [`execute`] over a store whose dictionary is by part, with the parts in `parts`. A lookup
/// in a part not loaded records it ([`TermParts::take_missing`]): when any is recorded the
/// result means nothing, and the caller loads those parts and runs the query again
/// ([`crate::dictionary`]).
pub fn execute_with_parts(
    store: &Store,
    parts: &TermParts,
    query: &str,
    can_view: &dyn Fn(u32) -> bool,
    opts: &QueryOptions,
) -> Result<QueryResults, SparqlError> {
    if store.terms_by_part != Some(parts.count()) {
        return Err(SparqlError::Store("the dictionary parts are not this store's".into()));
    }
    check_shape(query)?;
    let parsed = spargebra::SparqlParser::new().parse_query(query).map_err(|e| SparqlError::Syntax(e.to_string()))?;
    eval::run(store, dictionary::Dictionary::Parts(parts), &parsed, can_view, opts)
}

#[cfg(feature = "query")]
/// [`execute_with_parts`] until it misses no part, taking the parts from `all` (every part of
/// the dictionary, in memory: tests and tools; a reader loads them instead). Also returns the
/// parts the last run had.
pub fn execute_over_parts(
    store: &Store,
    directory: std::sync::Arc<RdfDirectory>,
    all: &[TermPart],
    query: &str,
    can_view: &dyn Fn(u32) -> bool,
    opts: &QueryOptions,
) -> Result<(Result<QueryResults, SparqlError>, Vec<usize>), SparqlError> {
    let mut parts = TermParts::new(directory);
    for _ in 0..=all.len() + 1 {
        let result = execute_with_parts(store, &parts, query, can_view, opts);
        let missing = parts.take_missing();
        if missing.is_empty() {
            return Ok((result, parts.loaded()));
        }
        for n in missing {
            let part = all.get(n).cloned().ok_or_else(|| SparqlError::Store(format!("no dictionary part {n}")))?;
            parts.add(n, std::sync::Arc::new(part))?;
        }
    }
    Err(SparqlError::Store("a query kept missing dictionary parts it had loaded".into()))
}

#[cfg(feature = "query")]
/// The predicates `query` can match (`Ok(None)`: any — a variable predicate, `!`, `DESCRIBE`),
/// so a reader of the split store loads only their partitions. Errors as [`execute`] would
/// report them.
pub fn query_predicates(query: &str) -> Result<Option<Vec<Term>>, SparqlError> {
    check_shape(query)?;
    let parsed = spargebra::SparqlParser::new().parse_query(query).map_err(|e| SparqlError::Syntax(e.to_string()))?;
    Ok(needs::needed_predicates(&parsed))
}
