//! Evaluation of the SPARQL algebra produced by `spargebra`.
//!
//! Solutions are rows of optional [`Value`]s indexed by variable slots. Patterns that only
//! bind (basic graph patterns, paths, `VALUES`, and joins/unions of those) are evaluated with
//! their input solutions substituted in (index nested-loop joins); every other pattern is
//! evaluated on its own and joined, which keeps `FILTER`/`BIND` scoping exact.

use super::expr::{sort_key, EvalError, SortKey};
use super::solution::{get, set, term_of_literal, Ctx, Row, Value};
use super::store::{IdPattern, Store};
use super::term::{Term, XSD};
use super::tree::Node;
use super::{Budget, QueryOptions, QueryResults, SparqlError};
use spargebra::algebra::{AggregateExpression, AggregateFunction, GraphPattern, OrderExpression, PropertyPathExpression};
use spargebra::term::{GroundTerm, NamedNodePattern, TermPattern, TriplePattern};
use spargebra::Query;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

type R<T> = Result<T, SparqlError>;

/// A position of a triple pattern: a constant (`None` if the store lacks it) or a variable slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pos {
    Const(Option<u32>),
    Var(usize),
}

/// The row without its trailing unbound slots (for equality of solutions).
fn trimmed(row: &Row) -> &[Option<Value>] {
    let end = row.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
    row.get(..end).unwrap_or(&[])
}

/// Merges two compatible solutions.
fn merge(a: &Row, b: &Row) -> Option<Row> {
    let mut out = a.clone();
    for (i, v) in b.iter().enumerate() {
        if let Some(v) = v {
            match get(a, i) {
                Some(x) if x != v => return None,
                Some(_) => {}
                None => set(&mut out, i, v.clone()),
            }
        }
    }
    Some(out)
}

fn is_unit(rows: &[Row]) -> bool {
    rows.len() == 1 && rows.first().is_some_and(|r| r.iter().all(Option::is_none))
}

/// Patterns whose evaluation with input solutions substituted equals joining with them.
fn substitutable(gp: &GraphPattern) -> bool {
    match gp {
        GraphPattern::Bgp { .. } | GraphPattern::Path { .. } | GraphPattern::Values { .. } => true,
        GraphPattern::Join { left, right } | GraphPattern::Union { left, right } => substitutable(left) && substitutable(right),
        _ => false,
    }
}

fn unsupported<T>(what: &str) -> R<T> {
    Err(SparqlError::Unsupported(what.to_owned()))
}

impl<'a> Ctx<'a> {
    pub(crate) fn slot(&mut self, name: &str) -> usize {
        let next = self.slots.len();
        *self.slots.entry(name.to_owned()).or_insert(next)
    }

    pub(crate) fn slot_of(&self, name: &str) -> Option<usize> {
        self.slots.get(name).copied()
    }

    /// The value of a term: its id if the store has it, else the term itself.
    pub(crate) fn value_of(&self, term: Term) -> Value {
        match self.dictionary.id_of(&term) {
            Some(id) => Value::Id(id),
            None => Value::Computed(Rc::new(term)),
        }
    }

    /// The term of a value.
    pub(crate) fn term<'b>(&'b self, v: &'b Value) -> Option<&'b Term> {
        match v {
            Value::Id(id) => self.dictionary.term(*id),
            Value::Computed(t) => Some(t),
        }
    }

    fn check_rows(&self, n: usize) -> R<()> {
        self.budget.rows(n)
    }

    fn pos(&mut self, tp: &TermPattern) -> R<Pos> {
        Ok(match tp {
            TermPattern::NamedNode(n) => Pos::Const(self.dictionary.id_of(&Term::iri(n.as_str()))),
            TermPattern::Literal(l) => Pos::Const(self.dictionary.id_of(&term_of_literal(l))),
            TermPattern::BlankNode(b) => Pos::Var(self.slot(&format!("_:{}", b.as_str()))),
            TermPattern::Variable(v) => Pos::Var(self.slot(v.as_str())),
            #[allow(unreachable_patterns)]
            _ => return unsupported("RDF-star triple terms"),
        })
    }

    fn pred_pos(&mut self, np: &NamedNodePattern) -> Pos {
        match np {
            NamedNodePattern::NamedNode(n) => Pos::Const(self.dictionary.id_of(&Term::iri(n.as_str()))),
            NamedNodePattern::Variable(v) => Pos::Var(self.slot(v.as_str())),
        }
    }

    /// Resolves a position against a row: `Ok(Some(id))` bound, `Ok(None)` free, `Err(())`
    /// bound to something the store does not hold (nothing can match).
    fn resolve(p: Pos, row: &Row) -> Result<Option<u32>, ()> {
        match p {
            Pos::Const(Some(id)) => Ok(Some(id)),
            Pos::Const(None) => Err(()),
            Pos::Var(s) => match get(row, s) {
                None => Ok(None),
                Some(Value::Id(id)) => Ok(Some(*id)),
                Some(Value::Computed(_)) => Err(()),
            },
        }
    }

    /// Joins `input` with the matches of one triple pattern; with `cap`, stops once `cap`
    /// solutions are produced (they are the first `cap` of the full result).
    fn match_triple(&mut self, pat: [Pos; 3], input: Vec<Row>, cap: Option<usize>) -> R<Vec<Row>> {
        let mut out: Vec<Row> = Vec::new();
        let max_rows = self.budget_rows();
        for row in input {
            if cap.is_some_and(|c| out.len() >= c) {
                break;
            }
            let (Ok(s), Ok(p), Ok(o)) = (Self::resolve(pat[0], &row), Self::resolve(pat[1], &row), Self::resolve(pat[2], &row)) else {
                continue;
            };
            let idp = IdPattern { subject: s, predicate: p, object: o };
            let free = [s.is_none(), p.is_none(), o.is_none()];
            let store = self.store;
            let before = out.len();
            store.scan(&self.groups, &idp, &mut self.budget, &mut |t: [u32; 3]| {
                let mut new = row.clone();
                for i in 0..3 {
                    if !free[i] {
                        continue;
                    }
                    if let Pos::Var(slot) = pat[i] {
                        match get(&new, slot) {
                            Some(Value::Id(x)) if *x != t[i] => return Ok(true),
                            Some(_) => {}
                            None => set(&mut new, slot, Value::Id(t[i])),
                        }
                    }
                }
                out.push(new);
                if out.len() > max_rows {
                    return Err(SparqlError::RowLimit(max_rows));
                }
                Ok(cap.is_none_or(|c| out.len() < c))
            })?;
            self.budget.produced(out.len() - before)?;
        }
        Ok(out)
    }

    fn budget_rows(&self) -> usize {
        self.budget.max_rows()
    }

    fn bgp(&mut self, patterns: &[TriplePattern], rows: Vec<Row>, cap: Option<usize>) -> R<Vec<Row>> {
        self.bgp_filtered(patterns, rows, cap, None)
    }

    /// A BGP's solutions (optionally only those passing `filter`), the first `cap` of them.
    fn bgp_filtered(&mut self, patterns: &[TriplePattern], mut rows: Vec<Row>, cap: Option<usize>, filter: Option<&spargebra::algebra::Expression>) -> R<Vec<Row>> {
        let mut pats: Vec<[Pos; 3]> = Vec::with_capacity(patterns.len());
        for tp in patterns {
            pats.push([self.pos(&tp.subject)?, self.pred_pos(&tp.predicate), self.pos(&tp.object)?]);
        }
        // Greedy order: cheapest pattern next. A pattern's cost is the number of entries its
        // constants select (an index range count over the viewable groups, so the order never
        // depends on what the caller cannot see), divided by 50 for each position bound by
        // an earlier pattern or the input. Ties keep the written order.
        let mut bound: HashSet<usize> = rows.first().map(|r| r.iter().enumerate().filter(|(_, v)| v.is_some()).map(|(i, _)| i).collect()).unwrap_or_default();
        let mut remaining: Vec<[Pos; 3]> = pats;
        let mut order: Vec<[Pos; 3]> = Vec::with_capacity(remaining.len());
        while !remaining.is_empty() {
            let mut best = 0usize;
            let mut best_cost = f64::INFINITY;
            for (i, p) in remaining.iter().enumerate() {
                let constant = |x: Pos| match x {
                    Pos::Const(id) => Some(id),
                    Pos::Var(_) => None,
                };
                let ids = [constant(p[0]), constant(p[1]), constant(p[2])];
                let est = if ids.iter().any(|c| matches!(c, Some(None))) {
                    0
                } else {
                    let idp = IdPattern { subject: ids[0].flatten(), predicate: ids[1].flatten(), object: ids[2].flatten() };
                    self.store.estimate(&self.groups, &idp)
                };
                let joined = p.iter().filter(|x| matches!(x, Pos::Var(s) if bound.contains(s))).count();
                let cost = est as f64 / 50f64.powi(i32::try_from(joined).unwrap_or(3));
                if cost < best_cost {
                    best = i;
                    best_cost = cost;
                }
            }
            let pat = remaining.remove(best);
            for p in pat {
                if let Pos::Var(s) = p {
                    bound.insert(s);
                }
            }
            order.push(pat);
        }
        match cap {
            // Breadth first: each pattern joined with all solutions so far.
            None => {
                for pat in order {
                    rows = self.match_triple(pat, rows, None)?;
                    if rows.is_empty() {
                        break;
                    }
                }
                if let Some(e) = filter {
                    let mut kept = Vec::with_capacity(rows.len());
                    for r in rows {
                        self.budget.step()?;
                        if self.ebv(e, &r)? {
                            kept.push(r);
                        }
                    }
                    rows = kept;
                }
                Ok(rows)
            }
            // Depth first, which yields the same sequence, stopping after `cap` solutions.
            Some(cap) => {
                let mut out = Vec::new();
                for row in rows {
                    if out.len() >= cap {
                        break;
                    }
                    self.bgp_first(&order, row, &mut out, cap, filter)?;
                }
                Ok(out)
            }
        }
    }

    /// Appends to `out` the solutions of the patterns extending `row`, up to `cap` in all.
    fn bgp_first(&mut self, order: &[[Pos; 3]], row: Row, out: &mut Vec<Row>, cap: usize, filter: Option<&spargebra::algebra::Expression>) -> R<()> {
        let Some((first, rest)) = order.split_first() else {
            let keep = match filter {
                Some(e) => {
                    self.budget.step()?;
                    self.ebv(e, &row)?
                }
                None => true,
            };
            if keep {
                out.push(row);
            }
            return Ok(());
        };
        // Without a filter the last pattern can stop its scan as soon as the cap is reached.
        let room = if rest.is_empty() && filter.is_none() { Some(cap.saturating_sub(out.len())) } else { None };
        for next in self.match_triple(*first, vec![row], room)? {
            if out.len() >= cap {
                break;
            }
            self.bgp_first(rest, next, out, cap, filter)?;
        }
        Ok(())
    }

    /// `(start, end)` id pairs linked by `path`, with either end optionally fixed.
    fn path_pairs(&mut self, path: &PropertyPathExpression, s: Option<u32>, o: Option<u32>) -> R<Vec<(u32, u32)>> {
        Ok(match path {
            PropertyPathExpression::NamedNode(n) => {
                let Some(p) = self.dictionary.id_of(&Term::iri(n.as_str())) else { return Ok(Vec::new()) };
                let mut out = Vec::new();
                let store = self.store;
                let max_rows = self.budget_rows();
                store.scan(&self.groups, &IdPattern { subject: s, predicate: Some(p), object: o }, &mut self.budget, &mut |t| {
                    out.push((t[0], t[2]));
                    if out.len() > max_rows {
                        return Err(SparqlError::RowLimit(max_rows));
                    }
                    Ok(true)
                })?;
                out
            }
            PropertyPathExpression::Reverse(inner) => self.path_pairs(inner, o, s)?.into_iter().map(|(a, b)| (b, a)).collect(),
            PropertyPathExpression::Alternative(a, b) => {
                let mut v = self.path_pairs(a, s, o)?;
                v.extend(self.path_pairs(b, s, o)?);
                self.check_rows(v.len())?;
                v
            }
            PropertyPathExpression::Sequence(a, b) => {
                let mut out = Vec::new();
                for (x, m) in self.path_pairs(a, s, None)? {
                    for (_, y) in self.path_pairs(b, Some(m), o)? {
                        self.budget.step()?;
                        out.push((x, y));
                    }
                    self.check_rows(out.len())?;
                }
                out
            }
            PropertyPathExpression::NegatedPropertySet(iris) => {
                let excluded: HashSet<u32> = iris.iter().filter_map(|n| self.dictionary.id_of(&Term::iri(n.as_str()))).collect();
                let mut out = Vec::new();
                let store = self.store;
                let max_rows = self.budget_rows();
                store.scan(&self.groups, &IdPattern { subject: s, predicate: None, object: o }, &mut self.budget, &mut |t| {
                    if !excluded.contains(&t[1]) {
                        out.push((t[0], t[2]));
                        if out.len() > max_rows {
                            return Err(SparqlError::RowLimit(max_rows));
                        }
                    }
                    Ok(true)
                })?;
                out
            }
            PropertyPathExpression::ZeroOrMore(inner) | PropertyPathExpression::OneOrMore(inner) | PropertyPathExpression::ZeroOrOne(inner) => {
                let zero = !matches!(path, PropertyPathExpression::OneOrMore(_));
                let many = !matches!(path, PropertyPathExpression::ZeroOrOne(_));
                let mut out = Vec::new();
                match (s, o) {
                    (Some(s), _) => {
                        for y in self.reach(inner, s, true, zero, many)? {
                            if o.is_none_or(|o| o == y) {
                                out.push((s, y));
                            }
                        }
                    }
                    (None, Some(o)) => {
                        for x in self.reach(inner, o, false, zero, many)? {
                            out.push((x, o));
                        }
                    }
                    (None, None) => {
                        let mut nodes = std::collections::BTreeSet::new();
                        let store = self.store;
                        store.scan(&self.groups, &IdPattern::default(), &mut self.budget, &mut |t| {
                            nodes.insert(t[0]);
                            nodes.insert(t[2]);
                            Ok(true)
                        })?;
                        for n in nodes {
                            for y in self.reach(inner, n, true, zero, many)? {
                                out.push((n, y));
                            }
                            self.check_rows(out.len())?;
                        }
                    }
                }
                out
            }
        })
    }

    /// Nodes reachable from `start` through `inner` (forward or backward): including `start`
    /// when `zero`, one step only unless `many`. Each node once, in discovery order.
    fn reach(&mut self, inner: &PropertyPathExpression, start: u32, forward: bool, zero: bool, many: bool) -> R<Vec<u32>> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        if zero {
            seen.insert(start);
            out.push(start);
        }
        let mut frontier = vec![start];
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for n in frontier {
                let pairs = if forward { self.path_pairs(inner, Some(n), None)? } else { self.path_pairs(inner, None, Some(n))? };
                for (x, y) in pairs {
                    let m = if forward { y } else { x };
                    self.budget.step()?;
                    if seen.insert(m) {
                        out.push(m);
                        next.push(m);
                    }
                }
            }
            self.check_rows(out.len())?;
            if !many {
                break;
            }
            frontier = next;
        }
        Ok(out)
    }

    /// A constant of a pattern that the store does not hold.
    fn absent_constant(&self, tp: &TermPattern) -> Option<Term> {
        let t = match tp {
            TermPattern::NamedNode(n) => Term::iri(n.as_str()),
            TermPattern::Literal(l) => term_of_literal(l),
            _ => return None,
        };
        self.dictionary.id_of(&t).is_none().then_some(t)
    }

    fn path(&mut self, subject: &TermPattern, path: &PropertyPathExpression, object: &TermPattern, input: Vec<Row>) -> R<Vec<Row>> {
        let sp = self.pos(subject)?;
        let op = self.pos(object)?;
        if matches!(path, PropertyPathExpression::ZeroOrMore(_) | PropertyPathExpression::ZeroOrOne(_)) {
            // A constant the store lacks has no edges: only the zero-length path matches it.
            let absent = match (self.absent_constant(subject), self.absent_constant(object)) {
                (Some(t), None) => Some((t, op)),
                (None, Some(t)) => Some((t, sp)),
                (Some(a), Some(b)) if a == b => Some((a, Pos::Const(None))),
                (Some(_), Some(_)) => return Ok(Vec::new()),
                (None, None) => None,
            };
            if let Some((t, other)) = absent {
                let v = Value::Computed(Rc::new(t));
                let mut out = Vec::new();
                for mut row in input {
                    self.budget.step()?;
                    match other {
                        Pos::Var(slot) => match get(&row, slot) {
                            None => {
                                set(&mut row, slot, v.clone());
                                out.push(row);
                            }
                            Some(x) if *x == v => out.push(row),
                            Some(_) => {}
                        },
                        Pos::Const(None) => out.push(row),
                        Pos::Const(Some(_)) => {}
                    }
                }
                return Ok(out);
            }
        }
        let mut out = Vec::new();
        for row in input {
            let (Ok(s), Ok(o)) = (Self::resolve(sp, &row), Self::resolve(op, &row)) else { continue };
            for (x, y) in self.path_pairs(path, s, o)? {
                let mut new = row.clone();
                let mut ok = true;
                for (p, v) in [(sp, x), (op, y)] {
                    if let Pos::Var(slot) = p {
                        match get(&new, slot) {
                            Some(Value::Id(z)) if *z != v => ok = false,
                            Some(_) => {}
                            None => set(&mut new, slot, Value::Id(v)),
                        }
                    }
                }
                if ok {
                    self.budget.produced(1)?;
                    out.push(new);
                }
            }
            self.check_rows(out.len())?;
        }
        Ok(out)
    }

    /// Join of two solution sequences: a hash join on the variables bound in every solution of
    /// both sides when there are any, else a nested loop. Output keeps the left side's order
    /// (and, for each left solution, the right side's order).
    fn join(&mut self, left: Vec<Row>, right: Vec<Row>) -> R<Vec<Row>> {
        if is_unit(&left) {
            return Ok(right);
        }
        if is_unit(&right) {
            return Ok(left);
        }
        let always_bound = |rows: &[Row]| -> HashSet<usize> {
            let width = rows.iter().map(Vec::len).max().unwrap_or(0);
            (0..width).filter(|&i| rows.iter().all(|r| get(r, i).is_some())).collect()
        };
        let (lb, rb) = (always_bound(&left), always_bound(&right));
        let mut keys: Vec<usize> = lb.intersection(&rb).copied().collect();
        keys.sort_unstable();
        let mut out = Vec::new();
        if keys.is_empty() {
            for l in &left {
                for r in &right {
                    self.budget.step()?;
                    if let Some(m) = merge(l, r) {
                        self.budget.produced(1)?;
                        out.push(m);
                    }
                }
                self.check_rows(out.len())?;
            }
            return Ok(out);
        }
        let key_of = |row: &Row| -> Vec<Option<Value>> { keys.iter().map(|&k| get(row, k).cloned()).collect() };
        let mut table: HashMap<Vec<Option<Value>>, Vec<usize>> = HashMap::new();
        for (i, r) in right.iter().enumerate() {
            self.budget.step()?;
            table.entry(key_of(r)).or_default().push(i);
        }
        for l in &left {
            self.budget.step()?;
            let Some(matches) = table.get(&key_of(l)) else { continue };
            for &i in matches {
                self.budget.step()?;
                if let Some(m) = right.get(i).and_then(|r| merge(l, r)) {
                    self.budget.produced(1)?;
                    out.push(m);
                }
            }
            self.check_rows(out.len())?;
        }
        Ok(out)
    }

    fn values(&mut self, variables: &[spargebra::term::Variable], bindings: &[Vec<Option<GroundTerm>>]) -> R<Vec<Row>> {
        let slots: Vec<usize> = variables.iter().map(|v| self.slot(v.as_str())).collect();
        let mut out = Vec::with_capacity(bindings.len());
        for b in bindings {
            let mut row: Row = Vec::new();
            for (slot, val) in slots.iter().zip(b) {
                let term = match val {
                    None => continue,
                    Some(GroundTerm::NamedNode(n)) => Term::iri(n.as_str()),
                    Some(GroundTerm::Literal(l)) => term_of_literal(l),
                    #[allow(unreachable_patterns)]
                    Some(_) => return unsupported("RDF-star triple terms"),
                };
                let v = self.value_of(term);
                set(&mut row, *slot, v);
            }
            self.budget.produced(1)?;
            out.push(row);
        }
        Ok(out)
    }

    /// Solutions of `gp` joined with `input`.
    pub(crate) fn eval_in(&mut self, gp: &GraphPattern, input: Vec<Row>) -> R<Vec<Row>> {
        if input.is_empty() {
            return Ok(input);
        }
        match gp {
            GraphPattern::Bgp { patterns } => self.bgp(patterns, input, None),
            GraphPattern::Path { subject, path, object } => self.path(subject, path, object, input),
            GraphPattern::Join { left, right } if substitutable(gp) => {
                let l = self.eval_in(left, input)?;
                self.eval_in(right, l)
            }
            GraphPattern::Union { left, right } if substitutable(gp) => {
                let mut a = self.eval_in(left, input.clone())?;
                a.extend(self.eval_in(right, input)?);
                self.check_rows(a.len())?;
                Ok(a)
            }
            _ => {
                let r = self.eval(gp)?;
                self.join(input, r)
            }
        }
    }

    /// The first `cap` solutions of `gp` (exactly those `eval` would give first), computing
    /// no more than needed where the operator allows: BGPs (also under a `FILTER`) are
    /// evaluated depth first and stop early, and projection, `BIND`, `UNION`, `REDUCED` and
    /// `LIMIT` pass the cap through.
    pub(crate) fn eval_capped(&mut self, gp: &GraphPattern, cap: usize) -> R<Vec<Row>> {
        let mut rows = match gp {
            GraphPattern::Bgp { patterns } => self.bgp(patterns, vec![Vec::new()], Some(cap))?,
            GraphPattern::Project { inner, variables } => {
                let rows = self.eval_capped(inner, cap)?;
                self.project(rows, variables)
            }
            GraphPattern::Extend { inner, variable, expression } => {
                let rows = self.eval_capped(inner, cap)?;
                self.extend(rows, variable, expression)?
            }
            GraphPattern::Reduced { inner } => self.eval_capped(inner, cap)?,
            GraphPattern::Filter { expr, inner } => match inner.as_ref() {
                GraphPattern::Bgp { patterns } => self.bgp_filtered(patterns, vec![Vec::new()], Some(cap), Some(expr))?,
                _ => self.eval(gp)?,
            },
            GraphPattern::Union { left, right } => {
                let mut rows = self.eval_capped(left, cap)?;
                if rows.len() < cap {
                    rows.extend(self.eval_capped(right, cap - rows.len())?);
                }
                rows
            }
            GraphPattern::Slice { inner, start, length } => {
                let want = length.map_or(cap, |n| n.min(cap));
                let rows = self.eval_capped(inner, start.saturating_add(want))?;
                rows.into_iter().skip(*start).take(want).collect()
            }
            _ => self.eval(gp)?,
        };
        rows.truncate(cap);
        Ok(rows)
    }

    fn project(&mut self, rows: Vec<Row>, variables: &[spargebra::term::Variable]) -> Vec<Row> {
        let slots: Vec<usize> = variables.iter().map(|v| self.slot(v.as_str())).collect();
        rows.into_iter()
            .map(|r| {
                let mut new: Row = Vec::new();
                for s in &slots {
                    if let Some(v) = get(&r, *s) {
                        set(&mut new, *s, v.clone());
                    }
                }
                new
            })
            .collect()
    }

    fn extend(&mut self, rows: Vec<Row>, variable: &spargebra::term::Variable, expression: &spargebra::algebra::Expression) -> R<Vec<Row>> {
        let slot = self.slot(variable.as_str());
        let mut out = Vec::with_capacity(rows.len());
        for mut r in rows {
            self.budget.step()?;
            match self.expr(expression, &r) {
                Ok(t) => {
                    let v = self.value_of(t);
                    set(&mut r, slot, v);
                }
                Err(EvalError::Type) => {}
                Err(EvalError::Fatal(e)) => return Err(e),
            }
            out.push(r);
        }
        Ok(out)
    }

    /// Solutions of `gp` on its own.
    pub(crate) fn eval(&mut self, gp: &GraphPattern) -> R<Vec<Row>> {
        let unit = vec![Vec::new()];
        match gp {
            GraphPattern::Bgp { .. } | GraphPattern::Path { .. } => self.eval_in(gp, unit),
            GraphPattern::Join { left, right } => {
                let l = self.eval(left)?;
                self.eval_in(right, l)
            }
            GraphPattern::LeftJoin { left, right, expression } => {
                let lrows = self.eval(left)?;
                let rrows = if substitutable(right) { None } else { Some(self.eval(right)?) };
                let mut out = Vec::new();
                for l in lrows {
                    let candidates = match &rrows {
                        None => self.eval_in(right, vec![l.clone()])?,
                        Some(r) => {
                            let mut c = Vec::new();
                            for r in r {
                                self.budget.step()?;
                                if let Some(m) = merge(&l, r) {
                                    c.push(m);
                                }
                            }
                            c
                        }
                    };
                    let mut matched = false;
                    for c in candidates {
                        let keep = match expression {
                            None => true,
                            Some(e) => self.ebv(e, &c)?,
                        };
                        if keep {
                            matched = true;
                            self.budget.produced(1)?;
                            out.push(c);
                        }
                    }
                    if !matched {
                        self.budget.produced(1)?;
                        out.push(l);
                    }
                    self.check_rows(out.len())?;
                }
                Ok(out)
            }
            GraphPattern::Filter { expr, inner } => {
                let rows = self.eval(inner)?;
                let mut out = Vec::with_capacity(rows.len());
                for r in rows {
                    self.budget.step()?;
                    if self.ebv(expr, &r)? {
                        out.push(r);
                    }
                }
                Ok(out)
            }
            GraphPattern::Union { left, right } => {
                let mut a = self.eval(left)?;
                a.extend(self.eval(right)?);
                self.check_rows(a.len())?;
                Ok(a)
            }
            GraphPattern::Extend { inner, variable, expression } => {
                let rows = self.eval(inner)?;
                self.extend(rows, variable, expression)
            }
            GraphPattern::Minus { left, right } => {
                let l = self.eval(left)?;
                let r = self.eval(right)?;
                let mut out = Vec::new();
                for a in l {
                    let mut removed = false;
                    for b in &r {
                        self.budget.step()?;
                        let mut shared = false;
                        let mut compatible = true;
                        for (i, v) in b.iter().enumerate() {
                            if let (Some(v), Some(x)) = (v, get(&a, i)) {
                                shared = true;
                                if x != v {
                                    compatible = false;
                                    break;
                                }
                            }
                        }
                        if shared && compatible {
                            removed = true;
                            break;
                        }
                    }
                    if !removed {
                        out.push(a);
                    }
                }
                Ok(out)
            }
            GraphPattern::Values { variables, bindings } => self.values(variables, bindings),
            GraphPattern::OrderBy { inner, expression } => {
                let rows = self.eval(inner)?;
                let mut keyed: Vec<(Vec<SortKey>, Row)> = Vec::with_capacity(rows.len());
                for r in rows {
                    self.budget.step()?;
                    let mut keys = Vec::with_capacity(expression.len());
                    for oe in expression {
                        let e = match oe {
                            OrderExpression::Asc(e) | OrderExpression::Desc(e) => e,
                        };
                        let k = match self.expr(e, &r) {
                            Ok(t) => sort_key(Some(&t)),
                            Err(EvalError::Type) => sort_key(None),
                            Err(EvalError::Fatal(e)) => return Err(e),
                        };
                        keys.push(k);
                    }
                    keyed.push((keys, r));
                }
                keyed.sort_by(|(a, _), (b, _)| {
                    for ((x, y), oe) in a.iter().zip(b).zip(expression) {
                        let ord = x.cmp(y);
                        let ord = if matches!(oe, OrderExpression::Desc(_)) { ord.reverse() } else { ord };
                        if ord != std::cmp::Ordering::Equal {
                            return ord;
                        }
                    }
                    std::cmp::Ordering::Equal
                });
                Ok(keyed.into_iter().map(|(_, r)| r).collect())
            }
            GraphPattern::Project { inner, variables } => {
                let rows = self.eval(inner)?;
                Ok(self.project(rows, variables))
            }
            // REDUCED permits, but does not require, eliminating duplicates: keep them all.
            GraphPattern::Reduced { inner } => self.eval(inner),
            GraphPattern::Distinct { inner } => {
                let rows = self.eval(inner)?;
                let mut seen: HashSet<Vec<Option<Value>>> = HashSet::new();
                let mut out = Vec::new();
                for r in rows {
                    if seen.insert(trimmed(&r).to_vec()) {
                        out.push(r);
                    }
                }
                Ok(out)
            }
            GraphPattern::Slice { inner, start, length } => {
                let rows = match length {
                    Some(n) => self.eval_capped(inner, start.saturating_add(*n))?,
                    None => self.eval(inner)?,
                };
                let it = rows.into_iter().skip(*start);
                Ok(match length {
                    Some(n) => it.take(*n).collect(),
                    None => it.collect(),
                })
            }
            GraphPattern::Group { inner, variables, aggregates } => self.group(inner, variables, aggregates),
            GraphPattern::Graph { .. } => unsupported("GRAPH (named graphs; the store is one default graph)"),
            GraphPattern::Service { .. } => unsupported("SERVICE"),
            #[allow(unreachable_patterns)]
            _ => unsupported("LATERAL"),
        }
    }

    fn group(
        &mut self,
        inner: &GraphPattern,
        variables: &[spargebra::term::Variable],
        aggregates: &[(spargebra::term::Variable, AggregateExpression)],
    ) -> R<Vec<Row>> {
        let rows = self.eval(inner)?;
        let key_slots: Vec<Option<usize>> = variables.iter().map(|v| self.slot_of(v.as_str())).collect();
        let mut index: HashMap<Vec<Option<Value>>, usize> = HashMap::new();
        let mut groups: Vec<(Vec<Option<Value>>, Vec<Row>)> = Vec::new();
        for r in rows {
            self.budget.step()?;
            let key: Vec<Option<Value>> = key_slots.iter().map(|s| s.and_then(|s| get(&r, s).cloned())).collect();
            match index.get(&key) {
                Some(&i) => {
                    if let Some(g) = groups.get_mut(i) {
                        g.1.push(r);
                    }
                }
                None => {
                    index.insert(key.clone(), groups.len());
                    groups.push((key, vec![r]));
                }
            }
        }
        if groups.is_empty() && variables.is_empty() {
            groups.push((Vec::new(), Vec::new()));
        }
        let out_slots: Vec<usize> = variables.iter().map(|v| self.slot(v.as_str())).collect();
        let agg_slots: Vec<usize> = aggregates.iter().map(|(v, _)| self.slot(v.as_str())).collect();
        let mut out = Vec::with_capacity(groups.len());
        for (key, members) in groups {
            let mut row: Row = Vec::new();
            for (slot, v) in out_slots.iter().zip(key) {
                if let Some(v) = v {
                    set(&mut row, *slot, v);
                }
            }
            for ((_, agg), slot) in aggregates.iter().zip(&agg_slots) {
                if let Some(v) = self.aggregate(agg, &members)? {
                    set(&mut row, *slot, v);
                }
            }
            out.push(row);
        }
        Ok(out)
    }

    fn aggregate(&mut self, agg: &AggregateExpression, rows: &[Row]) -> R<Option<Value>> {
        let integer = |n: usize| Term::typed(n.to_string(), format!("{XSD}integer"));
        match agg {
            AggregateExpression::CountSolutions { distinct } => {
                let n = if *distinct { rows.iter().map(trimmed).collect::<HashSet<_>>().len() } else { rows.len() };
                Ok(Some(self.value_of(integer(n))))
            }
            AggregateExpression::FunctionCall { name: AggregateFunction::Count, expr: spargebra::algebra::Expression::Variable(v), distinct } => {
                // Counting a variable needs whether it is bound, not its term (ids are
                // canonical, so distinct values are distinct terms).
                let slot = self.slot_of(v.as_str());
                let mut bound = Vec::with_capacity(rows.len());
                for r in rows {
                    self.budget.step()?;
                    bound.extend(slot.and_then(|s| get(r, s)));
                }
                let n = if *distinct { bound.into_iter().collect::<HashSet<_>>().len() } else { bound.len() };
                Ok(Some(self.value_of(integer(n))))
            }
            AggregateExpression::FunctionCall { name, expr, distinct } => {
                let mut vals: Vec<Result<Term, ()>> = Vec::with_capacity(rows.len());
                for r in rows {
                    self.budget.step()?;
                    match self.expr(expr, r) {
                        Ok(t) => vals.push(Ok(t)),
                        Err(EvalError::Type) => vals.push(Err(())),
                        Err(EvalError::Fatal(e)) => return Err(e),
                    }
                }
                if *distinct {
                    let mut seen = HashSet::new();
                    vals.retain(|v| match v {
                        Ok(t) => seen.insert(t.clone()),
                        Err(()) => true,
                    });
                }
                let ok: Vec<Term> = vals.iter().filter_map(|v| v.as_ref().ok().cloned()).collect();
                let any_err = vals.iter().any(Result::is_err);
                let t = match name {
                    AggregateFunction::Count => Some(integer(ok.len())),
                    AggregateFunction::Sum => if any_err { None } else { super::expr::sum(&ok) },
                    AggregateFunction::Avg => if any_err { None } else { super::expr::avg(&ok) },
                    AggregateFunction::Min => ok.iter().min_by_key(|t| sort_key(Some(t))).cloned(),
                    AggregateFunction::Max => ok.iter().max_by_key(|t| sort_key(Some(t))).cloned(),
                    AggregateFunction::Sample => ok.first().cloned(),
                    AggregateFunction::GroupConcat { separator } => {
                        if any_err {
                            None
                        } else {
                            super::expr::group_concat(&ok, separator.as_deref().unwrap_or(" "))?
                        }
                    }
                    AggregateFunction::Custom(n) => return unsupported(&format!("custom aggregate <{}>", n.as_str())),
                };
                Ok(t.map(|t| self.value_of(t)))
            }
        }
    }
}

/// Depth of the query tree, computed without recursion, capped at `max + 1`.
fn depth(root: &GraphPattern, max: usize) -> usize {
    let mut stack = vec![(Node::P(root), 1usize)];
    let mut deepest = 0;
    while let Some((node, d)) = stack.pop() {
        deepest = deepest.max(d);
        if deepest > max {
            break;
        }
        stack.extend(node.children().unwrap_or_default().into_iter().map(|c| (c, d + 1)));
    }
    deepest
}

/// Variables projected by a SELECT pattern (the outermost projection).
fn head(gp: &GraphPattern) -> Vec<String> {
    match gp {
        GraphPattern::Project { variables, .. } => variables.iter().map(|v| v.as_str().to_owned()).collect(),
        GraphPattern::Slice { inner, .. } | GraphPattern::Distinct { inner } | GraphPattern::Reduced { inner } | GraphPattern::OrderBy { inner, .. } => head(inner),
        _ => Vec::new(),
    }
}

/// Runs a parsed query.
/// What to do with the solutions.
enum Form<'q> {
    Select,
    Ask,
    Construct(&'q [TriplePattern]),
    Describe,
}

/// Runs a parsed query.
pub(crate) fn run(store: &Store, dictionary: super::dictionary::Dictionary<'_>, query: &Query, can_view: &dyn Fn(u32) -> bool, opts: &QueryOptions) -> R<QueryResults> {
    let (pattern, dataset, base, form) = match query {
        Query::Select { pattern, dataset, base_iri } => (pattern, dataset, base_iri, Form::Select),
        Query::Ask { pattern, dataset, base_iri } => (pattern, dataset, base_iri, Form::Ask),
        Query::Construct { template, pattern, dataset, base_iri } => (pattern, dataset, base_iri, Form::Construct(template)),
        Query::Describe { pattern, dataset, base_iri } => (pattern, dataset, base_iri, Form::Describe),
    };
    if dataset.is_some() {
        return unsupported("FROM / FROM NAMED (the store is one default graph)");
    }
    if depth(pattern, super::MAX_ALGEBRA_DEPTH) > super::MAX_ALGEBRA_DEPTH {
        return unsupported(&format!("queries nested deeper than {} operators", super::MAX_ALGEBRA_DEPTH));
    }
    let mut ctx = Ctx { store, dictionary, groups: store.viewable_groups(can_view), budget: Budget::new(opts), slots: HashMap::new(), regexes: HashMap::new(), base: base.clone() };
    // The forced LIMIT (and ASK's single solution) is a cap on the whole evaluation.
    let cap = if matches!(form, Form::Ask) { 1 } else { opts.max_limit };
    let mut rows = ctx.eval_capped(pattern, cap)?;
    if matches!(form, Form::Ask) {
        return Ok(QueryResults::Boolean(!rows.is_empty()));
    }
    rows.truncate(opts.max_limit);
    match form {
        Form::Construct(template) => return ctx.construct(template, &rows),
        Form::Describe => {
            let vars = head(pattern);
            return ctx.describe(&vars, &rows);
        }
        Form::Select | Form::Ask => {}
    }
    let variables = head(pattern);
    let slots: Vec<Option<usize>> = variables.iter().map(|v| ctx.slot_of(v)).collect();
    let rows = rows
        .iter()
        .map(|r| slots.iter().map(|s| s.and_then(|s| get(r, s)).and_then(|v| ctx.term(v)).cloned()).collect())
        .collect();
    Ok(QueryResults::Solutions { variables, rows })
}

impl Ctx<'_> {
    /// CONSTRUCT: the template instantiated with each solution; triples with an unbound or
    /// ill-placed term are left out; blank nodes are fresh per solution; each triple once.
    fn construct(&mut self, template: &[TriplePattern], rows: &[Row]) -> R<QueryResults> {
        let mut seen = HashSet::new();
        let mut triples = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            for tp in template {
                self.budget.produced(1)?;
                let term = |ctx: &Self, p: &TermPattern| -> Option<Term> {
                    match p {
                        TermPattern::NamedNode(n) => Some(Term::iri(n.as_str())),
                        TermPattern::Literal(l) => Some(term_of_literal(l)),
                        TermPattern::BlankNode(b) => Some(Term::blank(format!("c{i}_{}", b.as_str()))),
                        TermPattern::Variable(v) => ctx.slot_of(v.as_str()).and_then(|s| get(row, s)).and_then(|v| ctx.term(v)).cloned(),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                };
                let predicate = match &tp.predicate {
                    NamedNodePattern::NamedNode(n) => Some(Term::iri(n.as_str())),
                    NamedNodePattern::Variable(v) => self.slot_of(v.as_str()).and_then(|s| get(row, s)).and_then(|v| self.term(v)).cloned(),
                };
                let (Some(s), Some(p @ Term::Iri(_)), Some(o)) = (term(self, &tp.subject), predicate, term(self, &tp.object)) else { continue };
                if s.is_literal() {
                    continue;
                }
                let t = [s, p, o];
                if seen.insert(t.clone()) {
                    triples.push(t);
                }
            }
        }
        Ok(QueryResults::Graph(triples))
    }

    /// DESCRIBE: for each IRI or blank node bound to a projected variable, the viewable triples
    /// it is the subject of, following blank-node objects (a concise bounded description).
    fn describe(&mut self, vars: &[String], rows: &[Row]) -> R<QueryResults> {
        let slots: Vec<usize> = vars.iter().filter_map(|v| self.slot_of(v)).collect();
        let mut queue: Vec<u32> = Vec::new();
        let mut queued = HashSet::new();
        for row in rows {
            for &s in &slots {
                if let Some(Value::Id(id)) = get(row, s) {
                    if !matches!(self.dictionary.term(*id), Some(Term::Literal { .. })) && queued.insert(*id) {
                        queue.push(*id);
                    }
                }
            }
        }
        let mut triples = Vec::new();
        let mut next = 0;
        while let Some(&subject) = queue.get(next) {
            next += 1;
            let mut found = Vec::new();
            let store = self.store;
            store.scan(&self.groups, &IdPattern { subject: Some(subject), ..IdPattern::default() }, &mut self.budget, &mut |t| {
                found.push(t);
                Ok(true)
            })?;
            self.budget.produced(found.len())?;
            for [s, p, o] in found {
                let terms = self.dictionary;
                if matches!(terms.term(o), Some(Term::BlankNode(_))) && queued.insert(o) {
                    queue.push(o);
                }
                if let (Some(s), Some(p), Some(o)) = (terms.term(s), terms.term(p), terms.term(o)) {
                    triples.push([s.clone(), p.clone(), o.clone()]);
                }
            }
        }
        Ok(QueryResults::Graph(triples))
    }
}
