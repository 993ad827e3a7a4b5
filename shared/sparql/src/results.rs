//! Query results and their JSON forms.

use super::term::{Term, XSD_STRING};
use serde_json::{json, Map, Value};

/// What a query returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryResults {
    /// `SELECT`: the projected variables (without `?`) and one row per solution, a value per
    /// variable (`None` = unbound).
    Solutions {
        /// Variable names, in projection order.
        variables: Vec<String>,
        /// Solutions, in result order.
        rows: Vec<Vec<Option<Term>>>,
    },
    /// `ASK`.
    Boolean(bool),
    /// `CONSTRUCT` or `DESCRIBE`: triples (subject, predicate, object), each once.
    Graph(Vec<[Term; 3]>),
}

fn term_json(term: &Term) -> Value {
    match term {
        Term::Iri(i) => json!({"type": "uri", "value": i}),
        Term::BlankNode(b) => json!({"type": "bnode", "value": b}),
        Term::Literal { value, datatype, language } => {
            let mut m = Map::new();
            m.insert("type".into(), Value::String("literal".into()));
            m.insert("value".into(), Value::String(value.clone()));
            if let Some(l) = language {
                m.insert("xml:lang".into(), Value::String(l.clone()));
            } else if datatype != XSD_STRING {
                m.insert("datatype".into(), Value::String(datatype.clone()));
            }
            Value::Object(m)
        }
    }
}

fn compact(t: &Term) -> String {
    match t {
        Term::BlankNode(b) => format!("_:{b}"),
        other => other.lexical().to_owned(),
    }
}

impl QueryResults {
    /// A `CONSTRUCT`/`DESCRIBE` graph as Turtle (one N-Triples statement per line, which is
    /// valid Turtle); `None` for `SELECT` and `ASK`.
    pub fn to_turtle(&self) -> Option<String> {
        match self {
            QueryResults::Graph(triples) => Some(triples.iter().map(|[s, p, o]| format!("{s} {p} {o} .\n")).collect()),
            _ => None,
        }
    }

    /// W3C SPARQL 1.1 Query Results JSON: `{"head":{"vars":[…]},"results":{"bindings":[…]}}`,
    /// or `{"head":{},"boolean":…}` for `ASK`. Unbound variables are omitted from a binding;
    /// simple literals carry no datatype. A graph (which that format cannot carry; see
    /// [`QueryResults::to_turtle`]) is given as the bindings of `?subject ?predicate ?object`.
    pub fn to_json(&self) -> Value {
        match self {
            QueryResults::Graph(triples) => QueryResults::Solutions {
                variables: vec!["subject".into(), "predicate".into(), "object".into()],
                rows: triples.iter().map(|t| t.iter().cloned().map(Some).collect()).collect(),
            }
            .to_json(),
            QueryResults::Boolean(b) => json!({"head": {}, "boolean": b}),
            QueryResults::Solutions { variables, rows } => {
                let bindings: Vec<Value> = rows
                    .iter()
                    .map(|row| {
                        let mut m = Map::new();
                        for (var, val) in variables.iter().zip(row) {
                            if let Some(t) = val {
                                m.insert(var.clone(), term_json(t));
                            }
                        }
                        Value::Object(m)
                    })
                    .collect();
                json!({"head": {"vars": variables}, "results": {"bindings": bindings}})
            }
        }
    }

    /// The reference's `compact` form: a JSON array of `{var: value}` objects, literals as their
    /// lexical form, IRIs as strings, blank nodes as `_:label`, unbound variables omitted.
    /// `ASK` has no compact form and gives the same object as [`QueryResults::to_json`].
    pub fn to_compact_json(&self) -> Value {
        match self {
            QueryResults::Boolean(_) => self.to_json(),
            QueryResults::Graph(triples) => Value::Array(
                triples.iter().map(|[s, p, o]| json!({"subject": compact(s), "predicate": compact(p), "object": compact(o)})).collect(),
            ),
            QueryResults::Solutions { variables, rows } => Value::Array(
                rows.iter()
                    .map(|row| {
                        let mut m = Map::new();
                        for (var, val) in variables.iter().zip(row) {
                            if let Some(t) = val {
                                m.insert(var.clone(), Value::String(compact(t)));
                            }
                        }
                        Value::Object(m)
                    })
                    .collect(),
            ),
        }
    }
}
