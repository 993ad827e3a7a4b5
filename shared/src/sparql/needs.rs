//! Which predicates a query can match: the partitions of the split store a query must load.
//!
//! A triple pattern or path step with a constant predicate matches only triples of that
//! predicate; a variable predicate, a negated property set (`!`) or `DESCRIBE` can match any,
//! so they need every partition. Filters and `BIND`s are walked for `EXISTS`.

use std::collections::BTreeSet;

use spargebra::algebra::{AggregateExpression, Expression, GraphPattern, OrderExpression, PropertyPathExpression};
use spargebra::term::NamedNodePattern;
use spargebra::Query;

use super::Term;

/// The predicates `query` can match, or `None` when it can match any predicate.
pub fn needed_predicates(query: &Query) -> Option<Vec<Term>> {
    let mut out = BTreeSet::new();
    let complete = match query {
        Query::Select { pattern, .. } | Query::Construct { pattern, .. } | Query::Ask { pattern, .. } => pattern_needs(pattern, &mut out),
        Query::Describe { .. } => false,
    };
    complete.then(|| out.into_iter().map(Term::iri).collect())
}

/// Adds the predicates of `gp` to `out`; false when any predicate may match.
fn pattern_needs(gp: &GraphPattern, out: &mut BTreeSet<String>) -> bool {
    match gp {
        GraphPattern::Bgp { patterns } => patterns.iter().all(|t| match &t.predicate {
            NamedNodePattern::NamedNode(n) => out.insert(n.as_str().to_string()) || true,
            NamedNodePattern::Variable(_) => false,
        }),
        GraphPattern::Path { path, .. } => path_needs(path, out),
        GraphPattern::Join { left, right } | GraphPattern::Union { left, right } | GraphPattern::Minus { left, right } => {
            pattern_needs(left, out) && pattern_needs(right, out)
        }
        GraphPattern::LeftJoin { left, right, expression } => {
            pattern_needs(left, out) && pattern_needs(right, out) && expression.as_ref().is_none_or(|e| expression_needs(e, out))
        }
        GraphPattern::Filter { expr, inner } => expression_needs(expr, out) && pattern_needs(inner, out),
        GraphPattern::Extend { inner, expression, .. } => pattern_needs(inner, out) && expression_needs(expression, out),
        GraphPattern::Values { .. } => true,
        GraphPattern::OrderBy { inner, expression } => {
            pattern_needs(inner, out)
                && expression.iter().all(|o| match o {
                    OrderExpression::Asc(e) | OrderExpression::Desc(e) => expression_needs(e, out),
                })
        }
        GraphPattern::Project { inner, .. }
        | GraphPattern::Distinct { inner }
        | GraphPattern::Reduced { inner }
        | GraphPattern::Slice { inner, .. }
        | GraphPattern::Graph { inner, .. } => pattern_needs(inner, out),
        GraphPattern::Group { inner, aggregates, .. } => {
            pattern_needs(inner, out)
                && aggregates.iter().all(|(_, a)| match a {
                    AggregateExpression::CountSolutions { .. } => true,
                    AggregateExpression::FunctionCall { expr, .. } => expression_needs(expr, out),
                })
        }
        // SERVICE, LATERAL and anything newer: the evaluator rejects or we cannot tell.
        _ => false,
    }
}

fn path_needs(path: &PropertyPathExpression, out: &mut BTreeSet<String>) -> bool {
    match path {
        PropertyPathExpression::NamedNode(n) => out.insert(n.as_str().to_string()) || true,
        PropertyPathExpression::Reverse(p)
        | PropertyPathExpression::ZeroOrMore(p)
        | PropertyPathExpression::OneOrMore(p)
        | PropertyPathExpression::ZeroOrOne(p) => path_needs(p, out),
        PropertyPathExpression::Sequence(a, b) | PropertyPathExpression::Alternative(a, b) => path_needs(a, out) && path_needs(b, out),
        PropertyPathExpression::NegatedPropertySet(_) => false,
    }
}

fn expression_needs(e: &Expression, out: &mut BTreeSet<String>) -> bool {
    match e {
        Expression::NamedNode(_) | Expression::Literal(_) | Expression::Variable(_) | Expression::Bound(_) => true,
        Expression::Or(a, b)
        | Expression::And(a, b)
        | Expression::Equal(a, b)
        | Expression::SameTerm(a, b)
        | Expression::Greater(a, b)
        | Expression::GreaterOrEqual(a, b)
        | Expression::Less(a, b)
        | Expression::LessOrEqual(a, b)
        | Expression::Add(a, b)
        | Expression::Subtract(a, b)
        | Expression::Multiply(a, b)
        | Expression::Divide(a, b) => expression_needs(a, out) && expression_needs(b, out),
        Expression::In(a, list) => expression_needs(a, out) && list.iter().all(|x| expression_needs(x, out)),
        Expression::UnaryPlus(a) | Expression::UnaryMinus(a) | Expression::Not(a) => expression_needs(a, out),
        Expression::Exists(gp) => pattern_needs(gp, out),
        Expression::If(a, b, c) => expression_needs(a, out) && expression_needs(b, out) && expression_needs(c, out),
        Expression::Coalesce(list) | Expression::FunctionCall(_, list) => list.iter().all(|x| expression_needs(x, out)),
    }
}
