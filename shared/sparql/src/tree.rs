//! The query tree as one walkable shape: graph patterns, expressions and property paths.
//!
//! Shared by the evaluator's depth check and the predicate analysis that picks the store
//! partitions a query must load, so both see the same children of every operator.

use spargebra::algebra::{AggregateExpression, Expression, GraphPattern, OrderExpression, PropertyPathExpression};

/// A node of the query tree.
pub(super) enum Node<'q> {
    P(&'q GraphPattern),
    E(&'q Expression),
    Path(&'q PropertyPathExpression),
}

impl<'q> Node<'q> {
    /// The node's operands; `None` for a graph pattern this crate does not know (a newer
    /// spargebra variant), which callers treat as a leaf or as "anything may happen".
    pub(super) fn children(&self) -> Option<Vec<Node<'q>>> {
        use Expression as X;
        Some(match *self {
            Node::P(gp) => match gp {
                GraphPattern::Bgp { .. } | GraphPattern::Values { .. } => vec![],
                GraphPattern::Path { path, .. } => vec![Node::Path(path)],
                GraphPattern::Join { left, right } | GraphPattern::Union { left, right } | GraphPattern::Minus { left, right } => vec![Node::P(left), Node::P(right)],
                GraphPattern::LeftJoin { left, right, expression } => {
                    let mut v = vec![Node::P(left), Node::P(right)];
                    v.extend(expression.iter().map(Node::E));
                    v
                }
                GraphPattern::Filter { expr, inner } => vec![Node::E(expr), Node::P(inner)],
                GraphPattern::Extend { inner, expression, .. } => vec![Node::P(inner), Node::E(expression)],
                GraphPattern::OrderBy { inner, expression } => {
                    let mut v = vec![Node::P(inner)];
                    v.extend(expression.iter().map(|o| match o {
                        OrderExpression::Asc(e) | OrderExpression::Desc(e) => Node::E(e),
                    }));
                    v
                }
                GraphPattern::Group { inner, aggregates, .. } => {
                    let mut v = vec![Node::P(inner)];
                    v.extend(aggregates.iter().filter_map(|(_, a)| match a {
                        AggregateExpression::FunctionCall { expr, .. } => Some(Node::E(expr)),
                        AggregateExpression::CountSolutions { .. } => None,
                    }));
                    v
                }
                GraphPattern::Project { inner, .. }
                | GraphPattern::Distinct { inner }
                | GraphPattern::Reduced { inner }
                | GraphPattern::Slice { inner, .. }
                | GraphPattern::Graph { inner, .. }
                | GraphPattern::Service { inner, .. } => vec![Node::P(inner)],
                #[allow(unreachable_patterns)]
                _ => return None,
            },
            Node::E(e) => match e {
                X::NamedNode(_) | X::Literal(_) | X::Variable(_) | X::Bound(_) => vec![],
                X::Or(a, b)
                | X::And(a, b)
                | X::Equal(a, b)
                | X::SameTerm(a, b)
                | X::Greater(a, b)
                | X::GreaterOrEqual(a, b)
                | X::Less(a, b)
                | X::LessOrEqual(a, b)
                | X::Add(a, b)
                | X::Subtract(a, b)
                | X::Multiply(a, b)
                | X::Divide(a, b) => vec![Node::E(a), Node::E(b)],
                X::UnaryPlus(a) | X::UnaryMinus(a) | X::Not(a) => vec![Node::E(a)],
                X::In(a, list) => std::iter::once(Node::E(a)).chain(list.iter().map(Node::E)).collect(),
                X::Exists(gp) => vec![Node::P(gp)],
                X::If(a, b, c) => vec![Node::E(a), Node::E(b), Node::E(c)],
                X::Coalesce(list) | X::FunctionCall(_, list) => list.iter().map(Node::E).collect(),
            },
            Node::Path(p) => match p {
                PropertyPathExpression::NamedNode(_) | PropertyPathExpression::NegatedPropertySet(_) => vec![],
                PropertyPathExpression::Reverse(a) | PropertyPathExpression::ZeroOrMore(a) | PropertyPathExpression::OneOrMore(a) | PropertyPathExpression::ZeroOrOne(a) => vec![Node::Path(a)],
                PropertyPathExpression::Sequence(a, b) | PropertyPathExpression::Alternative(a, b) => vec![Node::Path(a), Node::Path(b)],
            },
        })
    }
}
