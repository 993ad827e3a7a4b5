//! Expression evaluation: SPARQL operators, functions, effective boolean value, term order.
//!
//! Numbers are `xsd:integer` (and its derived types) as `i64`, `xsd:decimal` as a fixed-point
//! `i128` with 18 fractional digits (exact for sums and averages of the wiki's numbers), and
//! `xsd:float`/`xsd:double` as `f64`. A type error makes a `FILTER` false and leaves a `BIND` unbound, as
//! SPARQL says; only bounds and unsupported features abort a query.

use wikantik_format::dates::days_from_civil;
use super::solution::{get, term_of_literal, Ctx, Row};
use super::term::{Term, RDF_LANG_STRING, XSD, XSD_STRING};
use super::SparqlError;
use sha2::Digest;
use spargebra::algebra::{Expression, Function};
use std::cmp::Ordering;

/// Why an expression has no value.
#[derive(Debug)]
pub(crate) enum EvalError {
    /// A SPARQL type error (unbound variable, wrong argument type, …).
    Type,
    /// Stop the query.
    Fatal(SparqlError),
}

impl From<SparqlError> for EvalError {
    fn from(e: SparqlError) -> Self {
        EvalError::Fatal(e)
    }
}

type E<T> = Result<T, EvalError>;

const INTEGER_TYPES: &[&str] = &[
    "integer",
    "int",
    "long",
    "short",
    "byte",
    "nonNegativeInteger",
    "positiveInteger",
    "negativeInteger",
    "nonPositiveInteger",
    "unsignedLong",
    "unsignedInt",
    "unsignedShort",
    "unsignedByte",
];

fn xsd(local: &str) -> String {
    format!("{XSD}{local}")
}

fn xsd_local(datatype: &str) -> Option<&str> {
    datatype.strip_prefix(XSD)
}

/// A numeric value with its type rank (integer < decimal < float < double).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    Int(i64),
    /// Fixed point: value × 10^18.
    Dec(i128),
    Float(f64),
    Double(f64),
}

impl Num {
    fn rank(self) -> u8 {
        match self {
            Num::Int(_) => 0,
            Num::Dec(_) => 1,
            Num::Float(_) => 2,
            Num::Double(_) => 3,
        }
    }

    fn f(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Dec(d) => d as f64 / DEC_SCALE as f64,
            Num::Float(f) | Num::Double(f) => f,
        }
    }

    /// The value as a fixed-point decimal, for integers and decimals.
    fn dec(self) -> Option<i128> {
        match self {
            Num::Int(i) => i128::from(i).checked_mul(DEC_SCALE),
            Num::Dec(d) => Some(d),
            _ => None,
        }
    }

    fn with_rank(rank: u8, v: f64) -> Num {
        match rank {
            0 | 1 => Num::Dec(dec_from_f64(v)),
            2 => Num::Float(f64::from(v as f32)),
            _ => Num::Double(v),
        }
    }

    pub(crate) fn term(self) -> Term {
        match self {
            Num::Int(i) => Term::typed(i.to_string(), xsd("integer")),
            Num::Dec(d) => Term::typed(decimal_lexical(d), xsd("decimal")),
            Num::Float(f) => Term::typed(float_lexical(f as f32), xsd("float")),
            Num::Double(f) => Term::typed(double_lexical(f), xsd("double")),
        }
    }
}

/// 10^18: the fixed-point scale of decimals.
const DEC_SCALE: i128 = 1_000_000_000_000_000_000;

fn dec_from_f64(f: f64) -> i128 {
    if f.is_finite() && f.abs() < 1.0e20 {
        (f * DEC_SCALE as f64).round() as i128
    } else {
        0
    }
}

/// Canonical decimal lexical form: at least one digit on each side of the point.
fn decimal_lexical(d: i128) -> String {
    let int = d / DEC_SCALE;
    let frac = (d % DEC_SCALE).unsigned_abs();
    let mut f = format!("{frac:018}");
    while f.len() > 1 && f.ends_with('0') {
        f.pop();
    }
    let sign = if d < 0 && int == 0 { "-" } else { "" };
    format!("{sign}{int}.{f}")
}

fn num_cmp(a: Num, b: Num) -> Option<Ordering> {
    if let (Num::Int(i), Num::Int(j)) = (a, b) {
        return Some(i.cmp(&j));
    }
    if let (Some(x), Some(y)) = (a.dec(), b.dec()) {
        return Some(x.cmp(&y));
    }
    a.f().partial_cmp(&b.f())
}

fn double_lexical(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "INF".into() } else { "-INF".into() };
    }
    let s = format!("{f:E}");
    match s.split_once('E') {
        Some((m, e)) if !m.contains('.') => format!("{m}.0E{e}"),
        _ => s,
    }
}

fn float_lexical(f: f32) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "INF".into() } else { "-INF".into() };
    }
    let s = format!("{f:E}");
    match s.split_once('E') {
        Some((m, e)) if !m.contains('.') => format!("{m}.0E{e}"),
        _ => s,
    }
}

/// XPath's canonical string of a number (`xsd:string(?n)`): integers and integral decimals
/// without a fraction, other decimals in plain notation, floats and doubles in plain notation
/// between 1e-6 and 1e6 and in exponent notation outside.
fn number_string(n: Num) -> String {
    match n {
        Num::Int(i) => i.to_string(),
        Num::Dec(d) => {
            let s = decimal_lexical(d);
            s.strip_suffix(".0").map(str::to_owned).unwrap_or(s)
        }
        Num::Float(f) | Num::Double(f) => {
            let abs = f.abs();
            if f.is_finite() && (abs == 0.0 || (1e-6..1e6).contains(&abs)) {
                if f.fract() == 0.0 {
                    format!("{}", f as i64)
                } else if matches!(n, Num::Float(_)) {
                    format!("{}", f as f32)
                } else {
                    format!("{f}")
                }
            } else if matches!(n, Num::Float(_)) {
                float_lexical(f as f32)
            } else {
                double_lexical(f)
            }
        }
    }
}

fn parse_decimal(s: &str) -> Option<i128> {
    let neg = s.starts_with('-');
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty() && frac.is_empty() || !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut v: i128 = 0;
    for c in int.chars() {
        v = v.checked_mul(10)?.checked_add(i128::from(c.to_digit(10)?))?;
    }
    v = v.checked_mul(DEC_SCALE)?;
    let mut scale = DEC_SCALE / 10;
    for c in frac.chars().take(18) {
        v = v.checked_add(i128::from(c.to_digit(10)?) * scale)?;
        scale /= 10;
    }
    Some(if neg { -v } else { v })
}

fn parse_double(s: &str) -> Option<f64> {
    match s {
        "INF" | "+INF" => Some(f64::INFINITY),
        "-INF" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        _ => {
            let ok = !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'));
            if ok {
                s.parse().ok()
            } else {
                None
            }
        }
    }
}

fn parse_integer(s: &str) -> Option<i64> {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    if !body.is_empty() && body.chars().all(|c| c.is_ascii_digit()) {
        s.parse().ok()
    } else {
        None
    }
}

/// The numeric value of a well-formed numeric literal.
pub(crate) fn num(t: &Term) -> Option<Num> {
    let Term::Literal { value, datatype, language: None } = t else { return None };
    let local = xsd_local(datatype)?;
    if INTEGER_TYPES.contains(&local) {
        return parse_integer(value).map(Num::Int);
    }
    match local {
        "decimal" => parse_decimal(value).map(Num::Dec),
        "float" => parse_double(value).map(|f| Num::Float(f64::from(f as f32))),
        "double" => parse_double(value).map(Num::Double),
        _ => None,
    }
}

fn is_numeric_type(datatype: &str) -> bool {
    xsd_local(datatype).is_some_and(|l| INTEGER_TYPES.contains(&l) || matches!(l, "decimal" | "float" | "double"))
}

/// A simple or `xsd:string` literal's value.
fn simple_str(t: &Term) -> Option<&str> {
    match t {
        Term::Literal { value, datatype, language: None } if datatype == XSD_STRING => Some(value),
        _ => None,
    }
}

/// A string literal (simple, `xsd:string` or language-tagged): value and language.
fn string_lit(t: &Term) -> Option<(&str, Option<&str>)> {
    match t {
        Term::Literal { value, datatype, language } if datatype == XSD_STRING || datatype == RDF_LANG_STRING => Some((value, language.as_deref())),
        _ => None,
    }
}

fn boolean(t: &Term) -> Option<bool> {
    match t {
        Term::Literal { value, datatype, language: None } if datatype == &xsd("boolean") => match value.as_str() {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

fn bool_term(b: bool) -> Term {
    Term::typed(if b { "true" } else { "false" }, xsd("boolean"))
}

/// A literal of the same kind (language or `xsd:string`) as `like`, with value `v`.
fn string_like(like: Option<&str>, v: String) -> Term {
    match like {
        Some(l) => Term::lang_string(v, l),
        None => Term::string(v),
    }
}

fn known_datatype(dt: &str) -> bool {
    dt == XSD_STRING || dt == RDF_LANG_STRING || is_numeric_type(dt) || xsd_local(dt).is_some_and(|l| matches!(l, "boolean" | "dateTime" | "date"))
}

/// `a = b` (RDFterm-equal with value comparison for known datatypes).
pub(crate) fn equals(a: &Term, b: &Term) -> E<bool> {
    if let (Some(x), Some(y)) = (num(a), num(b)) {
        return Ok(num_cmp(x, y) == Some(Ordering::Equal));
    }
    if let (Some(x), Some(y)) = (datetime(a), datetime(b)) {
        return match (x, y) {
            ((dx, _, _), (dy, _, _)) if dx != dy => Ok(false),
            ((_, vx, tx), (_, vy, ty)) => match datetime_cmp((vx, tx), (vy, ty)) {
                Some(o) => Ok(o == Ordering::Equal),
                None => Err(EvalError::Type),
            },
        };
    }
    if let (Some(x), Some(y)) = (boolean(a), boolean(b)) {
        return Ok(x == y);
    }
    if let (Some(x), Some(y)) = (simple_str(a), simple_str(b)) {
        return Ok(x == y);
    }
    if a == b {
        return Ok(true);
    }
    match (a, b) {
        (Term::Literal { language: la, .. }, Term::Literal { language: lb, .. }) if la.is_some() || lb.is_some() => Ok(false),
        (Term::Literal { datatype: da, language: la, .. }, Term::Literal { datatype: db, language: lb, .. }) => {
            let da_ok = known_datatype(da) && (num(a).is_some() || boolean(a).is_some() || !is_numeric_type(da) && xsd_local(da) != Some("boolean"));
            let db_ok = known_datatype(db) && (num(b).is_some() || boolean(b).is_some() || !is_numeric_type(db) && xsd_local(db) != Some("boolean"));
            if da_ok && db_ok && (da != db || la != lb || da == RDF_LANG_STRING) {
                Ok(false)
            } else {
                Err(EvalError::Type)
            }
        }
        _ => Ok(false),
    }
}

/// `a < b` style comparison; `Ok(None)` when unordered (NaN).
pub(crate) fn compare(a: &Term, b: &Term) -> E<Option<Ordering>> {
    if let (Some(x), Some(y)) = (num(a), num(b)) {
        return Ok(num_cmp(x, y));
    }
    if let (Some(x), Some(y)) = (simple_str(a), simple_str(b)) {
        return Ok(Some(x.cmp(y)));
    }
    if let (Some(x), Some(y)) = (boolean(a), boolean(b)) {
        return Ok(Some(x.cmp(&y)));
    }
    if let (Some((dx, vx, tx)), Some((dy, vy, ty))) = (datetime(a), datetime(b)) {
        if dx == dy {
            return datetime_cmp((vx, tx), (vy, ty)).map(Some).ok_or(EvalError::Type);
        }
    }
    Err(EvalError::Type)
}

/// Effective boolean value.
pub(crate) fn ebv(t: &Term) -> E<bool> {
    if let Term::Literal { value, datatype, .. } = t {
        if datatype == &xsd("boolean") {
            return Ok(boolean(t).unwrap_or(false));
        }
        if datatype == XSD_STRING || datatype == RDF_LANG_STRING {
            return Ok(!value.is_empty());
        }
        if is_numeric_type(datatype) {
            return Ok(num(t).is_some_and(|n| {
                let f = n.f();
                f != 0.0 && !f.is_nan()
            }));
        }
    }
    Err(EvalError::Type)
}

/// Parses an `xsd:dateTime` or `xsd:date` lexical form into seconds since the epoch (UTC
/// when a timezone is given) and whether a timezone was given.
pub(crate) fn parse_datetime(v: &str, date_only: bool) -> Option<(f64, bool)> {
    let (neg, body) = match v.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, v),
    };
    let (date, rest, tz_part) = if date_only {
        // yyyy-mm-dd, then an optional timezone.
        let end = body.find('-')?.checked_add(6)?;
        (body.get(..end)?, "", body.get(end..)?)
    } else {
        let (d, r) = body.split_once('T')?;
        (d, r, "")
    };
    let mut dp = date.split('-');
    let (ys, ms, ds) = (dp.next()?, dp.next()?, dp.next()?);
    if dp.next().is_some() || ys.len() < 4 || ys.len() > 9 || ms.len() != 2 || ds.len() != 2 || !ys.chars().chain(ms.chars()).chain(ds.chars()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    let (y, m, d): (i64, i64, i64) = (ys.parse().ok()?, ms.parse().ok()?, ds.parse().ok()?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let y = if neg { -y } else { y };
    let (mut secs, tz) = if date_only {
        (0.0, tz_part)
    } else {
        let split = rest.find(['Z', '+', '-']).unwrap_or(rest.len());
        let (time, tz) = (rest.get(..split)?, rest.get(split..)?);
        let mut tp = time.split(':');
        let (hs, mins, ss) = (tp.next()?, tp.next()?, tp.next()?);
        if tp.next().is_some() || hs.len() != 2 || mins.len() != 2 || ss.len() < 2 || !hs.chars().chain(mins.chars()).all(|c| c.is_ascii_digit()) || !ss.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return None;
        }
        let (h, mi, s): (f64, f64, f64) = (hs.parse().ok()?, mins.parse().ok()?, ss.parse().ok()?);
        if h > 24.0 || mi > 59.0 || s >= 60.0 {
            return None;
        }
        (h * 3600.0 + mi * 60.0 + s, tz)
    };
    secs += days_from_civil(y, m, d) as f64 * 86_400.0;
    let has_tz = !tz.is_empty();
    if tz == "Z" || tz.is_empty() {
        return Some((secs, has_tz));
    }
    let sign = if tz.starts_with('-') { -1.0 } else { 1.0 };
    let (th, tm) = tz.get(1..)?.split_once(':')?;
    if th.len() != 2 || tm.len() != 2 {
        return None;
    }
    let (th, tm): (f64, f64) = (th.parse().ok()?, tm.parse().ok()?);
    Some((secs - sign * (th * 3600.0 + tm * 60.0), true))
}

/// `(is_date, seconds, has_timezone)` of a well-formed `xsd:dateTime`/`xsd:date` literal.
fn datetime(t: &Term) -> Option<(bool, f64, bool)> {
    let Term::Literal { value, datatype, language: None } = t else { return None };
    let date_only = match xsd_local(datatype)? {
        "dateTime" => false,
        "date" => true,
        _ => return None,
    };
    let (v, tz) = parse_datetime(value, date_only)?;
    Some((date_only, v, tz))
}

/// XPath order of two date/time values (seconds, has timezone). A value without a timezone may
/// lie anywhere within ±14 h of its UTC reading, so against one with a timezone the order is
/// only known outside that window; `None` means indeterminate.
fn datetime_cmp(a: (f64, bool), b: (f64, bool)) -> Option<Ordering> {
    if a.1 == b.1 {
        return a.0.partial_cmp(&b.0);
    }
    let w = 14.0 * 3600.0;
    let range = |(v, tz): (f64, bool)| if tz { (v, v) } else { (v - w, v + w) };
    let ((alo, ahi), (blo, bhi)) = (range(a), range(b));
    if ahi < blo {
        Some(Ordering::Less)
    } else if alo > bhi {
        Some(Ordering::Greater)
    } else {
        None
    }
}

/// A totally ordered key realising SPARQL's ORDER BY order: unbound < blank nodes < IRIs <
/// literals; numbers by value, strings by code point, then other literals by lexical form.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum SortKey {
    Unbound,
    Blank(String),
    Iri(String),
    Bool(bool),
    Num(TotalF64, String, String),
    Str(String, String),
    DateTime(TotalF64, String),
    Other(String, String, String),
}

/// `f64` ordered by `total_cmp`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TotalF64(f64);
impl PartialEq for TotalF64 {
    fn eq(&self, o: &Self) -> bool {
        self.0.total_cmp(&o.0) == Ordering::Equal
    }
}
impl Eq for TotalF64 {}
impl PartialOrd for TotalF64 {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for TotalF64 {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.total_cmp(&o.0)
    }
}

pub(crate) fn sort_key(t: Option<&Term>) -> SortKey {
    match t {
        None => SortKey::Unbound,
        Some(Term::BlankNode(b)) => SortKey::Blank(b.clone()),
        Some(Term::Iri(i)) => SortKey::Iri(i.clone()),
        Some(t @ Term::Literal { value, datatype, language }) => {
            if let Some(n) = num(t) {
                return SortKey::Num(TotalF64(n.f()), datatype.clone(), value.clone());
            }
            if let Some(b) = boolean(t) {
                return SortKey::Bool(b);
            }
            if datatype == XSD_STRING || datatype == RDF_LANG_STRING {
                return SortKey::Str(value.clone(), language.clone().unwrap_or_default());
            }
            if let Some((_, secs, _)) = datetime(t) {
                return SortKey::DateTime(TotalF64(secs), value.clone());
            }
            SortKey::Other(datatype.clone(), value.clone(), language.clone().unwrap_or_default())
        }
    }
}

fn arith(a: Num, b: Num, op: char) -> E<Num> {
    if let (Num::Int(x), Num::Int(y)) = (a, b) {
        let r = match op {
            '+' => x.checked_add(y),
            '-' => x.checked_sub(y),
            '*' => x.checked_mul(y),
            _ => {
                if y == 0 {
                    return Err(EvalError::Type);
                }
                let q = i128::from(x).checked_mul(DEC_SCALE).and_then(|p| p.checked_div(i128::from(y))).ok_or(EvalError::Type)?;
                return Ok(Num::Dec(q));
            }
        };
        return r.map(Num::Int).ok_or(EvalError::Type);
    }
    let rank = a.rank().max(b.rank());
    if let (Some(x), Some(y)) = (a.dec(), b.dec()) {
        let exact = match op {
            '+' => x.checked_add(y),
            '-' => x.checked_sub(y),
            '*' => x.checked_mul(y).and_then(|p| p.checked_div(DEC_SCALE)),
            _ => {
                if y == 0 {
                    return Err(EvalError::Type);
                }
                x.checked_mul(DEC_SCALE).and_then(|p| p.checked_div(y))
            }
        };
        if let Some(v) = exact {
            return Ok(Num::Dec(v));
        }
    }
    let (x, y) = (a.f(), b.f());
    if op == '/' && y == 0.0 && rank <= 1 {
        return Err(EvalError::Type);
    }
    let v = match op {
        '+' => x + y,
        '-' => x - y,
        '*' => x * y,
        _ => x / y,
    };
    Ok(Num::with_rank(rank, v))
}

/// `SUM` of terms (all numeric, else `None`); 0 for none.
pub(crate) fn sum(ts: &[Term]) -> Option<Term> {
    let mut acc = Num::Int(0);
    for t in ts {
        acc = arith(acc, num(t)?, '+').ok()?;
    }
    Some(acc.term())
}

/// `AVG` of terms; 0 for none.
pub(crate) fn avg(ts: &[Term]) -> Option<Term> {
    if ts.is_empty() {
        return Some(Num::Int(0).term());
    }
    let mut acc = Num::Int(0);
    for t in ts {
        acc = arith(acc, num(t)?, '+').ok()?;
    }
    let n = i64::try_from(ts.len()).ok()?;
    arith(acc, Num::Int(n), '/').ok().map(Num::term)
}

/// Longest string an expression or aggregate may build (bytes).
pub const MAX_STRING_BYTES: usize = 1 << 20;

fn too_long() -> SparqlError {
    SparqlError::Unsupported(format!("strings longer than {MAX_STRING_BYTES} bytes"))
}

/// `GROUP_CONCAT` of literal values: a simple literal (`Ok(None)` if a value is not a literal).
pub(crate) fn group_concat(ts: &[Term], sep: &str) -> Result<Option<Term>, SparqlError> {
    let mut out = String::new();
    for (i, t) in ts.iter().enumerate() {
        let Term::Literal { value, .. } = t else { return Ok(None) };
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(value);
        if out.len() > MAX_STRING_BYTES {
            return Err(too_long());
        }
    }
    Ok(Some(Term::string(out)))
}

/// A `REPLACE` replacement: `$n` / `${n}` group references and literal text, expanded with a
/// bound on the output length so that no replacement can allocate without limit.
struct BoundedReplacer<'r> {
    template: &'r str,
    overflow: bool,
}

impl regex::Replacer for BoundedReplacer<'_> {
    /// Expands `$n`, `${n}` (group n), `$$` and `\$` (a dollar), `\\` (a backslash).
    fn replace_append(&mut self, caps: &regex::Captures<'_>, dst: &mut String) {
        if self.overflow {
            return;
        }
        let mut chars = self.template.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    if let Some(n) = chars.next() {
                        dst.push(n);
                    }
                }
                '$' => match chars.peek() {
                    Some('$') => {
                        chars.next();
                        dst.push('$');
                    }
                    Some('{') => {
                        chars.next();
                        let name: String = chars.by_ref().take_while(|&c| c != '}').collect();
                        if let Some(m) = name.parse::<usize>().ok().and_then(|n| caps.get(n)) {
                            dst.push_str(m.as_str());
                        }
                    }
                    Some(d) if d.is_ascii_digit() => {
                        let mut n = 0usize;
                        while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                            chars.next();
                            n = n.saturating_mul(10).saturating_add(d as usize);
                        }
                        if let Some(m) = caps.get(n) {
                            dst.push_str(m.as_str());
                        }
                    }
                    _ => dst.push('$'),
                },
                c => dst.push(c),
            }
            if dst.len() > MAX_STRING_BYTES {
                self.overflow = true;
                return;
            }
        }
    }
}

/// Whether two string arguments are compatible (SPARQL 17.4.3.1.1).
fn compatible(a: Option<&str>, b: Option<&str>) -> bool {
    b.is_none() || a == b
}

fn substr(s: &str, start: f64, len: Option<f64>) -> String {
    // XPath fn:substring: characters at 1-based positions p with round(start) <= p < round(start) + round(len).
    let round = |f: f64| (f + 0.5).floor();
    let first = round(start);
    let end = len.map(|l| first + round(l));
    s.chars()
        .enumerate()
        .filter(|(i, _)| {
            let p = (*i + 1) as f64;
            p >= first && end.is_none_or(|e| p < e)
        })
        .map(|(_, c)| c)
        .collect()
}

impl Ctx<'_> {
    /// Effective boolean value of an expression; type errors are `false`.
    pub(crate) fn ebv(&mut self, e: &Expression, row: &Row) -> Result<bool, SparqlError> {
        match self.expr_ebv(e, row) {
            Ok(b) => Ok(b),
            Err(EvalError::Type) => Ok(false),
            Err(EvalError::Fatal(f)) => Err(f),
        }
    }

    fn expr_ebv(&mut self, e: &Expression, row: &Row) -> E<bool> {
        let t = self.expr(e, row)?;
        ebv(&t)
    }

    fn regex(&mut self, pattern: &str, flags: &str) -> E<regex::Regex> {
        let key = (pattern.to_owned(), flags.to_owned());
        if let Some(r) = self.regexes.get(&key) {
            return Ok(r.clone());
        }
        let mut quoted = false;
        let mut b = regex::RegexBuilder::new(pattern);
        for f in flags.chars() {
            match f {
                'i' => b.case_insensitive(true),
                's' => b.dot_matches_new_line(true),
                'm' => b.multi_line(true),
                'x' => b.ignore_whitespace(true),
                'q' => {
                    quoted = true;
                    &mut b
                }
                other => return Err(SparqlError::Unsupported(format!("REGEX flag '{other}'")).into()),
            };
        }
        let escaped;
        if quoted {
            escaped = regex::escape(pattern);
            let mut nb = regex::RegexBuilder::new(&escaped);
            nb.case_insensitive(flags.contains('i'));
            b = nb;
        }
        b.size_limit(1 << 20).dfa_size_limit(1 << 20);
        // Compiling costs work in proportion to the pattern (a pattern per solution is possible).
        self.budget.charge(100 + u64::try_from(pattern.len()).unwrap_or(u64::MAX))?;
        let r = b.build().map_err(|_| EvalError::Type)?;
        if self.regexes.len() < 64 {
            self.regexes.insert(key, r.clone());
        }
        Ok(r)
    }

    /// The value of an expression on a solution.
    pub(crate) fn expr(&mut self, e: &Expression, row: &Row) -> E<Term> {
        self.budget.step()?;
        Ok(match e {
            Expression::NamedNode(n) => Term::iri(n.as_str()),
            Expression::Literal(l) => term_of_literal(l),
            Expression::Variable(v) => {
                let slot = self.slot_of(v.as_str()).ok_or(EvalError::Type)?;
                let val = get(row, slot).ok_or(EvalError::Type)?;
                self.term(val).cloned().ok_or(EvalError::Type)?
            }
            Expression::Or(a, b) => match self.expr_ebv(a, row) {
                Ok(true) => bool_term(true),
                Ok(false) => bool_term(self.expr_ebv(b, row)?),
                Err(EvalError::Type) => match self.expr_ebv(b, row)? {
                    true => bool_term(true),
                    false => return Err(EvalError::Type),
                },
                Err(f) => return Err(f),
            },
            Expression::And(a, b) => match self.expr_ebv(a, row) {
                Ok(false) => bool_term(false),
                Ok(true) => bool_term(self.expr_ebv(b, row)?),
                Err(EvalError::Type) => match self.expr_ebv(b, row)? {
                    false => bool_term(false),
                    true => return Err(EvalError::Type),
                },
                Err(f) => return Err(f),
            },
            Expression::Not(a) => bool_term(!self.expr_ebv(a, row)?),
            Expression::Equal(a, b) => {
                let (x, y) = (self.expr(a, row)?, self.expr(b, row)?);
                bool_term(equals(&x, &y)?)
            }
            Expression::SameTerm(a, b) => {
                let (x, y) = (self.expr(a, row)?, self.expr(b, row)?);
                bool_term(x == y)
            }
            Expression::Greater(a, b) => self.cmp_op(a, b, row, |o| o == Ordering::Greater)?,
            Expression::GreaterOrEqual(a, b) => self.cmp_op(a, b, row, |o| o != Ordering::Less)?,
            Expression::Less(a, b) => self.cmp_op(a, b, row, |o| o == Ordering::Less)?,
            Expression::LessOrEqual(a, b) => self.cmp_op(a, b, row, |o| o != Ordering::Greater)?,
            Expression::In(a, list) => {
                let x = self.expr(a, row)?;
                let mut err = false;
                for item in list {
                    match self.expr(item, row).and_then(|y| equals(&x, &y)) {
                        Ok(true) => return Ok(bool_term(true)),
                        Ok(false) => {}
                        Err(EvalError::Type) => err = true,
                        Err(f) => return Err(f),
                    }
                }
                if err {
                    return Err(EvalError::Type);
                }
                bool_term(false)
            }
            Expression::Add(a, b) => self.arith_op(a, b, row, '+')?,
            Expression::Subtract(a, b) => self.arith_op(a, b, row, '-')?,
            Expression::Multiply(a, b) => self.arith_op(a, b, row, '*')?,
            Expression::Divide(a, b) => self.arith_op(a, b, row, '/')?,
            Expression::UnaryPlus(a) => {
                let x = self.expr(a, row)?;
                num(&x).ok_or(EvalError::Type)?.term()
            }
            Expression::UnaryMinus(a) => {
                let x = self.expr(a, row)?;
                match num(&x).ok_or(EvalError::Type)? {
                    Num::Int(i) => Num::Int(i.checked_neg().ok_or(EvalError::Type)?),
                    Num::Dec(d) => Num::Dec(d.checked_neg().ok_or(EvalError::Type)?),
                    Num::Float(f) => Num::Float(-f),
                    Num::Double(f) => Num::Double(-f),
                }
                .term()
            }
            Expression::Exists(gp) => {
                let rows = self.eval_in(gp, vec![row.clone()])?;
                bool_term(!rows.is_empty())
            }
            Expression::Bound(v) => bool_term(self.slot_of(v.as_str()).and_then(|s| get(row, s)).is_some()),
            Expression::If(c, a, b) => {
                if self.expr_ebv(c, row)? {
                    self.expr(a, row)?
                } else {
                    self.expr(b, row)?
                }
            }
            Expression::Coalesce(list) => {
                for item in list {
                    match self.expr(item, row) {
                        Ok(t) => return Ok(t),
                        Err(EvalError::Type) => {}
                        Err(f) => return Err(f),
                    }
                }
                return Err(EvalError::Type);
            }
            Expression::FunctionCall(f, args) => {
                let t = self.call(f, args, row)?;
                // Building a string costs work in proportion to its length, and is bounded.
                let len = t.lexical().len();
                if len > MAX_STRING_BYTES {
                    return Err(too_long().into());
                }
                self.budget.charge(u64::try_from(len / 64).unwrap_or(u64::MAX))?;
                t
            }
        })
    }

    fn cmp_op(&mut self, a: &Expression, b: &Expression, row: &Row, pred: fn(Ordering) -> bool) -> E<Term> {
        let (x, y) = (self.expr(a, row)?, self.expr(b, row)?);
        if let (Some((va, la)), Some((vb, lb))) = (string_lit(&x), string_lit(&y)) {
            if la.is_some() || lb.is_some() {
                // Language-tagged strings are only comparable for (in)equality.
                if la == lb {
                    let o = va.cmp(vb);
                    if o == Ordering::Equal {
                        return Ok(bool_term(pred(o)));
                    }
                }
                return Err(EvalError::Type);
            }
        }
        Ok(bool_term(compare(&x, &y)?.is_some_and(pred)))
    }

    fn arith_op(&mut self, a: &Expression, b: &Expression, row: &Row, op: char) -> E<Term> {
        let (x, y) = (self.expr(a, row)?, self.expr(b, row)?);
        let (x, y) = (num(&x).ok_or(EvalError::Type)?, num(&y).ok_or(EvalError::Type)?);
        Ok(arith(x, y, op)?.term())
    }

    fn args(&mut self, args: &[Expression], row: &Row) -> E<Vec<Term>> {
        args.iter().map(|a| self.expr(a, row)).collect()
    }

    fn call(&mut self, f: &Function, args: &[Expression], row: &Row) -> E<Term> {
        let unsupported = |what: &str| Err(EvalError::Fatal(SparqlError::Unsupported(format!("function {what}"))));
        match f {
            Function::BNode => return unsupported("BNODE"),
            Function::Rand => return unsupported("RAND"),
            Function::Now => return unsupported("NOW"),
            Function::Uuid => return unsupported("UUID"),
            Function::StrUuid => return unsupported("STRUUID"),
            _ => {}
        }
        let a = self.args(args, row)?;
        let arg = |i: usize| a.get(i).ok_or(EvalError::Type);
        let str_arg = |i: usize| -> E<(&str, Option<&str>)> { string_lit(arg(i)?).ok_or(EvalError::Type) };
        let num_arg = |i: usize| -> E<Num> { num(arg(i)?).ok_or(EvalError::Type) };
        Ok(match f {
            Function::Str => match arg(0)? {
                Term::Iri(i) => Term::string(i.clone()),
                Term::Literal { value, .. } => Term::string(value.clone()),
                Term::BlankNode(_) => return Err(EvalError::Type),
            },
            Function::Lang => match arg(0)? {
                Term::Literal { language, .. } => Term::string(language.clone().unwrap_or_default()),
                _ => return Err(EvalError::Type),
            },
            Function::LangMatches => {
                let tag = simple_str(arg(0)?).ok_or(EvalError::Type)?.to_ascii_lowercase();
                let range = simple_str(arg(1)?).ok_or(EvalError::Type)?.to_ascii_lowercase();
                let m = if range == "*" { !tag.is_empty() } else { tag == range || tag.starts_with(&format!("{range}-")) };
                bool_term(m)
            }
            Function::Datatype => match arg(0)? {
                Term::Literal { datatype, .. } => Term::iri(datatype.clone()),
                _ => return Err(EvalError::Type),
            },
            Function::Iri => match arg(0)? {
                Term::Iri(i) => Term::iri(i.clone()),
                t => {
                    let s = simple_str(t).ok_or(EvalError::Type)?;
                    match &self.base {
                        Some(base) => Term::iri(base.resolve(s).map_err(|_| EvalError::Type)?.into_inner()),
                        None => Term::iri(oxiri::Iri::parse(s.to_owned()).map_err(|_| EvalError::Type)?.into_inner()),
                    }
                }
            },
            Function::Abs | Function::Ceil | Function::Floor | Function::Round => {
                let n = num_arg(0)?;
                let op = |x: f64| match f {
                    Function::Abs => x.abs(),
                    Function::Ceil => x.ceil(),
                    Function::Floor => x.floor(),
                    _ => (x + 0.5).floor(),
                };
                match n {
                    Num::Int(i) => Num::Int(if matches!(f, Function::Abs) { i.checked_abs().ok_or(EvalError::Type)? } else { i }),
                    Num::Dec(x) => Num::Dec(
                        match f {
                            Function::Abs => x.checked_abs(),
                            Function::Floor => x.div_euclid(DEC_SCALE).checked_mul(DEC_SCALE),
                            Function::Ceil => x.checked_neg().and_then(|n| n.div_euclid(DEC_SCALE).checked_mul(DEC_SCALE)).and_then(i128::checked_neg),
                            _ => x.checked_add(DEC_SCALE / 2).and_then(|y| y.div_euclid(DEC_SCALE).checked_mul(DEC_SCALE)),
                        }
                        .ok_or(EvalError::Type)?,
                    ),
                    Num::Float(x) => Num::Float(op(x)),
                    Num::Double(x) => Num::Double(op(x)),
                }
                .term()
            }
            Function::Concat => {
                let mut out = String::new();
                let mut lang: Option<Option<&str>> = None;
                for i in 0..a.len() {
                    let (v, l) = str_arg(i)?;
                    out.push_str(v);
                    lang = match lang {
                        None => Some(l),
                        Some(p) if p == l => Some(p),
                        Some(_) => Some(None),
                    };
                }
                string_like(lang.flatten(), out)
            }
            Function::SubStr => {
                let (s, l) = str_arg(0)?;
                let start = num_arg(1)?.f();
                let len = if a.len() > 2 { Some(num_arg(2)?.f()) } else { None };
                string_like(l, substr(s, start, len))
            }
            Function::StrLen => Num::Int(i64::try_from(str_arg(0)?.0.chars().count()).map_err(|_| EvalError::Type)?).term(),
            Function::UCase => {
                let (s, l) = str_arg(0)?;
                string_like(l, s.to_uppercase())
            }
            Function::LCase => {
                let (s, l) = str_arg(0)?;
                string_like(l, s.to_lowercase())
            }
            Function::EncodeForUri => {
                let (s, _) = str_arg(0)?;
                let mut out = String::new();
                for b in s.bytes() {
                    if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
                        out.push(char::from(b));
                    } else {
                        out.push_str(&format!("%{b:02X}"));
                    }
                }
                Term::string(out)
            }
            Function::Contains | Function::StrStarts | Function::StrEnds | Function::StrBefore | Function::StrAfter => {
                let (x, lx) = str_arg(0)?;
                let (y, ly) = str_arg(1)?;
                if !compatible(lx, ly) {
                    return Err(EvalError::Type);
                }
                match f {
                    Function::Contains => bool_term(x.contains(y)),
                    Function::StrStarts => bool_term(x.starts_with(y)),
                    Function::StrEnds => bool_term(x.ends_with(y)),
                    Function::StrBefore => match x.find(y) {
                        Some(i) => string_like(lx, x.get(..i).unwrap_or_default().to_owned()),
                        None => Term::string(""),
                    },
                    _ => match x.find(y) {
                        Some(i) => string_like(lx, x.get(i + y.len()..).unwrap_or_default().to_owned()),
                        None => Term::string(""),
                    },
                }
            }
            Function::Year | Function::Month | Function::Day | Function::Hours | Function::Minutes | Function::Seconds | Function::Timezone | Function::Tz => {
                let t = arg(0)?;
                let Term::Literal { value, datatype, language: None } = t else { return Err(EvalError::Type) };
                if !matches!(xsd_local(datatype), Some("dateTime" | "date")) {
                    return Err(EvalError::Type);
                }
                date_part(f, value).ok_or(EvalError::Type)?
            }
            Function::Md5 | Function::Sha1 | Function::Sha256 | Function::Sha384 | Function::Sha512 => {
                let s = simple_str(arg(0)?).ok_or(EvalError::Type)?;
                let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
                Term::string(match f {
                    Function::Md5 => hex(&md5::Md5::digest(s.as_bytes())),
                    Function::Sha1 => hex(&sha1::Sha1::digest(s.as_bytes())),
                    Function::Sha256 => hex(&sha2::Sha256::digest(s.as_bytes())),
                    Function::Sha384 => hex(&sha2::Sha384::digest(s.as_bytes())),
                    _ => hex(&sha2::Sha512::digest(s.as_bytes())),
                })
            }
            Function::StrLang => {
                let s = simple_str(arg(0)?).ok_or(EvalError::Type)?;
                let l = simple_str(arg(1)?).ok_or(EvalError::Type)?;
                if l.is_empty() {
                    return Err(EvalError::Type);
                }
                Term::lang_string(s, l)
            }
            Function::StrDt => {
                let s = simple_str(arg(0)?).ok_or(EvalError::Type)?;
                let Term::Iri(dt) = arg(1)? else { return Err(EvalError::Type) };
                Term::typed(s, dt.clone())
            }
            Function::IsIri => bool_term(matches!(arg(0)?, Term::Iri(_))),
            Function::IsBlank => bool_term(matches!(arg(0)?, Term::BlankNode(_))),
            Function::IsLiteral => bool_term(arg(0)?.is_literal()),
            Function::IsNumeric => bool_term(num(arg(0)?).is_some()),
            Function::Regex | Function::Replace => {
                let (text, lt) = str_arg(0)?;
                let pattern = simple_str(arg(1)?).ok_or(EvalError::Type)?.to_owned();
                let flag_at = if matches!(f, Function::Regex) { 2 } else { 3 };
                let flags = match a.get(flag_at) {
                    Some(t) => simple_str(t).ok_or(EvalError::Type)?.to_owned(),
                    None => String::new(),
                };
                let text = text.to_owned();
                let lt = lt.map(str::to_owned);
                if matches!(f, Function::Regex) {
                    let re = self.regex(&pattern, &flags)?;
                    bool_term(re.is_match(&text))
                } else {
                    let repl = simple_str(a.get(2).ok_or(EvalError::Type)?).ok_or(EvalError::Type)?.to_owned();
                    let re = self.regex(&pattern, &flags)?;
                    if re.is_match("") {
                        return Err(EvalError::Type);
                    }
                    let mut replacer = BoundedReplacer { template: &repl, overflow: false };
                    let out = re.replace_all(&text, regex::Replacer::by_ref(&mut replacer)).into_owned();
                    if replacer.overflow {
                        return Err(too_long().into());
                    }
                    string_like(lt.as_deref(), out)
                }
            }
            Function::Custom(name) => self.cast(name.as_str(), arg(0)?)?,
            _ => return unsupported(&format!("{f}")),
        })
    }

    /// XSD constructor functions (`xsd:integer(?x)`, …).
    fn cast(&self, name: &str, t: &Term) -> E<Term> {
        let Some(target) = xsd_local(name) else {
            return Err(SparqlError::Unsupported(format!("function <{name}>")).into());
        };
        let lexical = match t {
            Term::Literal { value, language: None, .. } => value.trim().to_owned(),
            Term::Iri(i) if target == "string" => i.clone(),
            _ => return Err(EvalError::Type),
        };
        let n = num(t);
        let b = boolean(t);
        Ok(match target {
            "string" => match (n, b) {
                (Some(n), _) => Term::string(number_string(n)),
                (None, Some(b)) => Term::string(if b { "true" } else { "false" }),
                _ => Term::string(lexical),
            },
            "integer" => match (n, b) {
                (Some(Num::Int(i)), _) => Num::Int(i),
                (Some(n), _) => {
                    let f = n.f().trunc();
                    if !f.is_finite() || f.abs() > 9.2e18 {
                        return Err(EvalError::Type);
                    }
                    Num::Int(f as i64)
                }
                (None, Some(b)) => Num::Int(i64::from(b)),
                _ => Num::Int(parse_integer(&lexical).ok_or(EvalError::Type)?),
            }
            .term(),
            "decimal" => match (n, b) {
                (Some(n), _) => match n.dec() {
                    Some(d) => Num::Dec(d),
                    None if n.f().is_finite() => Num::Dec(dec_from_f64(n.f())),
                    None => return Err(EvalError::Type),
                },
                (None, Some(b)) => Num::Dec(if b { DEC_SCALE } else { 0 }),
                _ => Num::Dec(parse_decimal(&lexical).ok_or(EvalError::Type)?),
            }
            .term(),
            "double" | "float" => {
                let v = match (n, b) {
                    (Some(n), _) => n.f(),
                    (None, Some(b)) => f64::from(u8::from(b)),
                    _ => parse_double(&lexical).ok_or(EvalError::Type)?,
                };
                if target == "double" { Num::Double(v) } else { Num::Float(f64::from(v as f32)) }.term()
            }
            "boolean" => match (n, b) {
                (Some(n), _) => bool_term(n.f() != 0.0 && !n.f().is_nan()),
                (None, Some(b)) => bool_term(b),
                _ => match lexical.as_str() {
                    "true" | "1" => bool_term(true),
                    "false" | "0" => bool_term(false),
                    _ => return Err(EvalError::Type),
                },
            },
            "dateTime" | "date" if n.is_none() && b.is_none() && parse_datetime(&lexical, target == "date").is_some() => Term::typed(lexical, name),
            _ => return Err(EvalError::Type),
        })
    }
}

/// YEAR/MONTH/DAY/HOURS/MINUTES/SECONDS/TIMEZONE/TZ of an `xsd:dateTime` or `xsd:date` lexical form.
fn date_part(f: &Function, v: &str) -> Option<Term> {
    let neg = v.starts_with('-');
    let body = v.strip_prefix('-').unwrap_or(v);
    let (date, rest) = match body.split_once('T') {
        Some((d, r)) => (d, r),
        None => (body, ""),
    };
    let mut dp = date.splitn(3, '-');
    let year: i64 = dp.next()?.parse().ok()?;
    let month: i64 = dp.next()?.parse().ok()?;
    let day_and_tz = dp.next()?;
    let day: i64 = day_and_tz.get(..2)?.parse().ok()?;
    let tail = if rest.is_empty() { day_and_tz.get(2..)? } else { rest };
    // Split time from timezone.
    let tz_at = if rest.is_empty() { Some(0) } else { tail.find(['Z', '+', '-']) };
    let (time, tz) = match tz_at {
        Some(i) => (tail.get(..i)?, tail.get(i..)?),
        None => (tail, ""),
    };
    let mut tp = time.splitn(3, ':');
    let hours = tp.next().and_then(|h| h.parse::<i64>().ok());
    let minutes = tp.next().and_then(|m| m.parse::<i64>().ok());
    let seconds = tp.next();
    Some(match f {
        Function::Year => Num::Int(if neg { -year } else { year }).term(),
        Function::Month => Num::Int(month).term(),
        Function::Day => Num::Int(day).term(),
        Function::Hours => Num::Int(hours?).term(),
        Function::Minutes => Num::Int(minutes?).term(),
        Function::Seconds => Term::typed(decimal_lexical(parse_decimal(seconds?)?), xsd("decimal")),
        Function::Tz => Term::string(tz),
        _ => {
            if tz.is_empty() {
                return None;
            }
            if tz == "Z" {
                return Some(Term::typed("PT0S", xsd("dayTimeDuration")));
            }
            let sign = if tz.starts_with('-') { "-" } else { "" };
            let (h, m) = tz.get(1..)?.split_once(':')?;
            let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
            let mut s = format!("{sign}PT");
            if h > 0 {
                s.push_str(&format!("{h}H"));
            }
            if m > 0 {
                s.push_str(&format!("{m}M"));
            }
            if h == 0 && m == 0 {
                s = "PT0S".into();
            }
            Term::typed(s, xsd("dayTimeDuration"))
        }
    })
}
