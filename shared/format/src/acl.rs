//! Page ACLs as stored in the page table: actions, entries, the decision `permits`, and the
//! findings of the markup scanner (its parser lives with the text analysis, in
//! `wikantik-text`'s `acl_markup`, whose module docs state the grammar).

use serde::{Deserialize, Serialize};

/// A page permission action, as written in ACL markup. Serializes as the lower-case markup word.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    View,
    Comment,
    Edit,
    Modify,
    Rename,
    Upload,
    Delete,
}

impl Action {
    /// Every action, in a fixed order.
    pub const ALL: [Action; 7] = [
        Action::View,
        Action::Comment,
        Action::Edit,
        Action::Modify,
        Action::Rename,
        Action::Upload,
        Action::Delete,
    ];

    /// The markup word for this action (`"view"`, `"edit"`, …).
    pub fn as_str(&self) -> &'static str {
        match self {
            Action::View => "view",
            Action::Comment => "comment",
            Action::Edit => "edit",
            Action::Modify => "modify",
            Action::Rename => "rename",
            Action::Upload => "upload",
            Action::Delete => "delete",
        }
    }

    /// Parses a markup word; case-sensitive, like the reference's pattern.
    pub fn from_markup(word: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.as_str() == word)
    }

    /// The actions this one *directly* implies (one step of JSPWiki's `PagePermission`
    /// implication table).
    fn direct_implications(&self) -> &'static [Action] {
        match self {
            Action::Delete => &[Action::Modify],
            Action::Rename => &[Action::Edit],
            Action::Modify => &[Action::Edit, Action::Upload],
            Action::Edit => &[Action::Comment],
            Action::Comment => &[Action::View],
            Action::Upload => &[Action::View],
            Action::View => &[],
        }
    }

    /// Does holding `self` grant `other`? Reflexive and transitive over the table
    /// delete→modify, rename→edit, modify→edit+upload, edit→comment, comment→view, upload→view.
    /// Every action therefore implies `view`.
    pub fn implies(&self, other: Action) -> bool {
        if *self == other {
            return true;
        }
        // The table is a small DAG (depth ≤ 4), so plain recursion terminates quickly.
        self.direct_implications().iter().any(|a| a.implies(other))
    }
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One `[{ALLOW action p1,p2}]` directive.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, Hash)]
pub struct AclEntry {
    pub action: Action,
    /// Principal names, trimmed, in markup order; never empty.
    pub principals: Vec<String>,
}

/// All the directives of one page, in document order. No entries = no ACL.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Acl {
    pub entries: Vec<AclEntry>,
}

/// The distinct ACLs of a set of pages, numbered in first-use order: how shards that tally
/// pages by ACL name them (a page has exactly one ACL, so a caller's share of a tally is the
/// sum over the ACLs it may view).
#[derive(Debug, Default)]
pub struct AclNumbers {
    acls: Vec<Acl>,
    numbers: std::collections::HashMap<Acl, u32>,
}

impl AclNumbers {
    /// The number of `acl`, given it on first use.
    pub fn number(&mut self, acl: &Acl) -> u32 {
        if let Some(&n) = self.numbers.get(acl) {
            return n;
        }
        let n = self.acls.len() as u32;
        self.acls.push(acl.clone());
        self.numbers.insert(acl.clone(), n);
        n
    }

    /// The ACLs by number.
    pub fn into_acls(self) -> Vec<Acl> {
        self.acls
    }
}

/// For each of `acls` (numbered by [`AclNumbers`]), whether `may_view` allows pages under it:
/// what a caller's share of the tallies by ACL is summed over.
pub fn viewable_under(acls: &[Acl], may_view: impl Fn(&Acl) -> bool) -> Vec<bool> {
    acls.iter().map(may_view).collect()
}

/// Built-in role and principal names that compare case-insensitively.
const BUILT_IN: [&str; 6] = [
    "All",
    "Anonymous",
    "Asserted",
    "Authenticated",
    "Guest",
    "Admin",
];
/// Principals an anonymous caller holds.
const ANONYMOUS_PRINCIPALS: [&str; 3] = ["All", "Anonymous", "Guest"];

fn is_built_in(name: &str) -> bool {
    BUILT_IN.iter().any(|b| b.eq_ignore_ascii_case(name))
}

/// Compares two principal names: built-in names case-insensitively, everything else exactly.
fn same_principal(a: &str, b: &str) -> bool {
    if is_built_in(a) || is_built_in(b) {
        a.eq_ignore_ascii_case(b)
    } else {
        a == b
    }
}

/// `Anonymous` or `Guest`: the principals that mean "not logged in" (an anonymous caller
/// holds them, a key holder never does).
fn is_not_logged_in_principal(name: &str) -> bool {
    ["Anonymous", "Guest"]
        .iter()
        .any(|p| p.eq_ignore_ascii_case(name))
}

fn is_anonymous_principal(name: &str) -> bool {
    ANONYMOUS_PRINCIPALS
        .iter()
        .any(|p| p.eq_ignore_ascii_case(name))
}

impl Acl {
    /// The ACL of a page with a malformed directive: `[{ALLOW view Admin}]`, which only a
    /// caller holding `Admin` passes (and `Admin` bypasses every ACL). Written as an ordinary
    /// entry, so shards need no new field for it.
    pub fn admin_only() -> Acl {
        Acl {
            entries: vec![AclEntry {
                action: Action::View,
                principals: vec!["Admin".to_owned()],
            }],
        }
    }

    /// True when the page carries no ACL directive.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Can a caller holding `principals` perform `action`?
    ///
    /// No ACL → `true`: the static policy decides, and at the edge it grants everything the
    /// edge serves (reads) to the role `All`. With an ACL, some entry whose action implies
    /// `action` must name a principal the caller holds (see the module docs for how
    /// `principals` is interpreted). A caller holding `Admin` always passes.
    pub fn permits(&self, principals: &[String], action: Action) -> bool {
        if principals
            .iter()
            .any(|p| p.trim().eq_ignore_ascii_case("Admin"))
        {
            return true;
        }
        if self.is_empty() {
            return true;
        }
        let anonymous = principals.iter().all(|p| is_anonymous_principal(p.trim()));
        let implicit: &[&str] = if anonymous {
            &ANONYMOUS_PRINCIPALS
        } else {
            &["All", "Authenticated"]
        };
        // An authenticated caller never holds `Anonymous` or `Guest`, even when its list
        // names them: those principals mean "not logged in".
        let holds = |name: &str| {
            implicit.iter().any(|p| same_principal(p, name))
                || (!anonymous
                    && principals
                        .iter()
                        .map(|p| p.trim())
                        .filter(|p| !is_not_logged_in_principal(p))
                        .any(|p| same_principal(p, name)))
        };
        self.entries
            .iter()
            .filter(|e| e.action.implies(action))
            .any(|e| e.principals.iter().any(|p| holds(p)))
    }

    /// Does the ACL let an *anonymous* caller view the page? (Always true without an ACL.)
    ///
    /// Not the same as "everyone may view it": a page granted only to `Anonymous` or `Guest`
    /// is public in this sense, yet hidden from every key holder. Whatever is decided once for
    /// all callers (the SPARQL store's public group, the restricted-page count) must use
    /// [`Acl::is_open_to_everyone`].
    pub fn is_public(&self) -> bool {
        self.permits(&[], Action::View)
    }

    /// Does the ACL let **every** caller view the page — anonymous callers and every key
    /// holder alike, whatever its principals? True without an ACL, and with one when an entry
    /// implying `view` names `All`, or names both a not-logged-in principal (`Anonymous`,
    /// `Guest`) and `Authenticated`.
    ///
    /// Checking the two weakest callers suffices: an anonymous one, and a key holder with no
    /// principals of its own (every other key holder holds at least what it holds, and
    /// `permits` only grows with the names a key holder holds).
    pub fn is_open_to_everyone(&self) -> bool {
        self.permits(&[], Action::View) && self.permits(&["Authenticated".to_string()], Action::View)
    }
}

/// A directive-looking opener that does not follow the grammar (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MalformedDirective {
    /// 1-based line of its `[{` in the scanned text.
    pub line: usize,
    pub problem: AclProblem,
}

/// What is wrong with a [`MalformedDirective`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AclProblem {
    /// `allow`, `Allow`, …: the keyword is written `ALLOW`.
    KeywordCase,
    /// `[{DENY …}]`: JSPWiki ACLs only grant.
    Deny,
    /// `[{ALLOWview …}]`: `ALLOW` is not followed by whitespace.
    NoSpaceAfterAllow,
    /// `[{ALLOW}]`, `[{ALLOW ,Alice}]`: no action word.
    MissingAction,
    /// `[{ALLOW veiw Alice}]`, `[{ALLOW View Alice}]`: the word (cut to 40 characters) is not
    /// an action.
    UnknownAction(String),
    /// `[{ALLOW view}]`, `[{ALLOW view ,}]`: no principal names.
    NoPrincipals,
    /// No `}]` closes the principal list on its line.
    Unterminated,
}

impl std::fmt::Display for AclProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AclProblem::KeywordCase => f.write_str("the keyword must be written ALLOW"),
            AclProblem::Deny => {
                f.write_str("DENY is not supported (JSPWiki ACLs only grant, with ALLOW)")
            }
            AclProblem::NoSpaceAfterAllow => f.write_str("ALLOW must be followed by a space"),
            AclProblem::MissingAction => f.write_str("no action after ALLOW"),
            AclProblem::UnknownAction(word) => write!(
                f,
                "unknown action '{word}' (expected view, comment, edit, modify, rename, upload \
                 or delete, in lower case)"
            ),
            AclProblem::NoPrincipals => f.write_str("no principal names"),
            AclProblem::Unterminated => f.write_str("no '}]' closes the directive on its line"),
        }
    }
}

/// The directives found in one page's text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AclScan {
    /// Well-formed directives, in document order.
    pub entries: Vec<AclEntry>,
    /// Malformed directives, in document order.
    pub malformed: Vec<MalformedDirective>,
}

impl AclScan {
    /// The ACL the page gets: its directives, or [`Acl::admin_only`] when any directive is
    /// malformed (fail closed).
    pub fn into_acl(self) -> Acl {
        if self.malformed.is_empty() {
            Acl {
                entries: self.entries,
            }
        } else {
            Acl::admin_only()
        }
    }
}

