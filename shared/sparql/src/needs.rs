//! Which predicates a query can match: the partitions of the split store a query must load.
//!
//! A triple pattern or path step with a constant predicate matches only triples of that
//! predicate; a variable predicate, a negated property set (`!`), `SERVICE` or `DESCRIBE` can
//! match any, so they need every partition. The walk ([`Node::children`], the same one the
//! evaluator's depth check uses) goes through filters, `BIND`s, ordering and aggregates, so
//! `EXISTS` patterns count too.

use std::collections::BTreeSet;

use spargebra::algebra::{GraphPattern, PropertyPathExpression};
use spargebra::term::NamedNodePattern;
use spargebra::Query;

use super::tree::Node;
use super::Term;

/// The predicates `query` can match, or `None` when it can match any predicate.
pub fn needed_predicates(query: &Query) -> Option<Vec<Term>> {
    let pattern = match query {
        Query::Select { pattern, .. } | Query::Construct { pattern, .. } | Query::Ask { pattern, .. } => pattern,
        Query::Describe { .. } => return None,
    };
    let mut out = BTreeSet::new();
    let mut stack = vec![Node::P(pattern)];
    while let Some(node) = stack.pop() {
        match &node {
            Node::P(GraphPattern::Bgp { patterns }) => {
                for t in patterns {
                    match &t.predicate {
                        NamedNodePattern::NamedNode(n) => out.insert(n.as_str().to_string()),
                        NamedNodePattern::Variable(_) => return None,
                    };
                }
            }
            Node::P(GraphPattern::Service { .. }) | Node::Path(PropertyPathExpression::NegatedPropertySet(_)) => return None,
            Node::Path(PropertyPathExpression::NamedNode(n)) => {
                out.insert(n.as_str().to_string());
            }
            _ => {}
        }
        // An operator the walker does not know may match anything.
        stack.extend(node.children()?);
    }
    Some(out.into_iter().map(Term::iri).collect())
}
