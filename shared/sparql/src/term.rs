//! RDF terms as the store keeps them: IRIs, literals (with datatype or language) and blank nodes.

use serde::{Deserialize, Serialize};
use std::fmt;

/// `xsd:` namespace.
pub const XSD: &str = "http://www.w3.org/2001/XMLSchema#";
/// `xsd:string`, the datatype of simple literals.
pub const XSD_STRING: &str = "http://www.w3.org/2001/XMLSchema#string";
/// `rdf:langString`, the datatype of language-tagged literals.
pub const RDF_LANG_STRING: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString";
/// `rdf:type`.
pub const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";
/// `rdfs:subClassOf`.
pub const RDFS_SUB_CLASS_OF: &str = "http://www.w3.org/2000/01/rdf-schema#subClassOf";
/// `rdfs:subPropertyOf`.
pub const RDFS_SUB_PROPERTY_OF: &str = "http://www.w3.org/2000/01/rdf-schema#subPropertyOf";
/// `rdfs:domain`.
pub const RDFS_DOMAIN: &str = "http://www.w3.org/2000/01/rdf-schema#domain";
/// `rdfs:range`.
pub const RDFS_RANGE: &str = "http://www.w3.org/2000/01/rdf-schema#range";

/// One RDF term.
///
/// The derived order (blank nodes, then IRIs, then literals; each by its strings) is the order
/// of the store's dictionary, hence of term ids, hence of index scans: it is what makes query
/// output deterministic when a query has no `ORDER BY`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Term {
    /// A blank node, by its label (without `_:`).
    #[serde(rename = "b")]
    BlankNode(String),
    /// An absolute IRI.
    #[serde(rename = "i")]
    Iri(String),
    /// A literal: lexical form, datatype IRI and, for `rdf:langString`, a lower-case language tag.
    #[serde(rename = "l")]
    Literal {
        /// Lexical form.
        value: String,
        /// Datatype IRI (`xsd:string` for simple literals, `rdf:langString` with a language).
        datatype: String,
        /// Language tag (lower case), only for `rdf:langString`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        language: Option<String>,
    },
}

impl Term {
    /// An IRI term.
    pub fn iri(iri: impl Into<String>) -> Self {
        Term::Iri(iri.into())
    }

    /// A blank node term.
    pub fn blank(label: impl Into<String>) -> Self {
        Term::BlankNode(label.into())
    }

    /// A simple literal (`xsd:string`).
    pub fn string(value: impl Into<String>) -> Self {
        Term::Literal { value: value.into(), datatype: XSD_STRING.to_owned(), language: None }
    }

    /// A typed literal. `rdf:langString` without a language is not a valid term; use
    /// [`Term::lang_string`].
    pub fn typed(value: impl Into<String>, datatype: impl Into<String>) -> Self {
        Term::Literal { value: value.into(), datatype: datatype.into(), language: None }
    }

    /// A language-tagged literal; the tag is stored in lower case (tags are case-insensitive).
    pub fn lang_string(value: impl Into<String>, language: &str) -> Self {
        Term::Literal {
            value: value.into(),
            datatype: RDF_LANG_STRING.to_owned(),
            language: Some(language.to_ascii_lowercase()),
        }
    }

    /// Whether this term is a literal.
    pub fn is_literal(&self) -> bool {
        matches!(self, Term::Literal { .. })
    }

    /// The lexical form of a literal, the IRI of an IRI, the label of a blank node.
    pub fn lexical(&self) -> &str {
        match self {
            Term::BlankNode(s) | Term::Iri(s) => s,
            Term::Literal { value, .. } => value,
        }
    }
}

impl fmt::Display for Term {
    /// N-Triples-like rendering, used in messages and tests.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Term::BlankNode(b) => write!(f, "_:{b}"),
            Term::Iri(i) => write!(f, "<{i}>"),
            Term::Literal { value, datatype, language } => {
                write!(f, "\"")?;
                for c in value.chars() {
                    match c {
                        '"' => write!(f, "\\\"")?,
                        '\\' => write!(f, "\\\\")?,
                        '\n' => write!(f, "\\n")?,
                        '\r' => write!(f, "\\r")?,
                        c => write!(f, "{c}")?,
                    }
                }
                write!(f, "\"")?;
                if let Some(l) = language {
                    write!(f, "@{l}")
                } else if datatype != XSD_STRING {
                    write!(f, "^^<{datatype}>")
                } else {
                    Ok(())
                }
            }
        }
    }
}
