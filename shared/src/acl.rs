//! Page ACLs written in JSPWiki markup (REFERENCE §4.5, CONTRACT §3.5).
//!
//! A page restricts itself with one or more directives `[{ALLOW <action> <principal>,…}]`
//! anywhere in its text *outside Markdown code* (the corpus writes them as empty links,
//! `[{ALLOW view All}]()`). A page without a directive has no ACL and the static policy
//! decides, which at the edge means "everyone may read it".
//!
//! # Parsing rules
//!
//! * `ALLOW` is case-sensitive; ASCII whitespace (line breaks included, like the reference's
//!   `\s`) may separate `[{`, `ALLOW`, the action and the principal list; `ALLOW` must be
//!   followed by at least one. The action must be one of
//!   `view|comment|edit|modify|rename|upload|delete` (lower case) and must be a whole word
//!   (`[{ALLOW viewer X}]` is malformed).
//! * The principal list runs to the first `}]` on its line; it is split on commas, names are
//!   trimmed, empty names are dropped, inner spaces are kept (`Jane Doe`).
//! * A directive whose *opening* `[{` lies inside a code span, fenced block or indented block
//!   (found with [`crate::markdown::code_ranges`]) is documentation, not a rule, and is skipped.
//! * Malformed directives (unknown action, no principals, no closing `}]` on the line) are
//!   ignored, never fatal — the same outcome as the reference, which logs and skips them.
//! * The text is scanned as given. Pass the raw page text (frontmatter included) to match the
//!   reference, which scans the stored page source; the frontmatter cannot carry a valid ACL by
//!   design, but scanning it fails *closed* (a stray directive restricts rather than exposes).
//!
//! # Who is the caller?
//!
//! [`Acl::permits`] takes the principal names the caller holds — for an API key, the
//! principals configured with it (user name, groups, roles). The list is interpreted the way a
//! JSPWiki session is:
//!
//! * every caller implicitly holds the role `All`;
//! * a caller whose list names nothing but the anonymous principals (`All`, `Anonymous`,
//!   `Guest`) — including an empty list — is **anonymous** and holds `All`, `Anonymous` and
//!   `Guest`;
//! * any other caller is **authenticated** and holds its listed names plus `All` and
//!   `Authenticated`, but *not* `Anonymous`/`Guest` (as in JSPWiki, where the `Anonymous` role
//!   means "not logged in") — not even when its list names them;
//! * a caller holding `Admin` has `AllPermission` and bypasses every ACL.
//!
//! Names compare case-sensitively (`alice` is not `Alice`), except the built-in names `All`,
//! `Anonymous`, `Asserted`, `Authenticated`, `Guest` and `Admin`, which compare
//! case-insensitively on both sides.

use serde::{Deserialize, Serialize};

use crate::markdown;

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
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct AclEntry {
    pub action: Action,
    /// Principal names, trimmed, in markup order; never empty.
    pub principals: Vec<String>,
}

/// All the directives of one page, in document order. No entries = no ACL.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct Acl {
    pub entries: Vec<AclEntry>,
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
    /// True when the page carries no (valid) ACL directive.
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

/// Parses every ACL directive of `body` that lies outside Markdown code, in document order.
/// Malformed directives are skipped. See the module docs for the exact rules.
pub fn parse_acl(body: &str) -> Acl {
    const OPEN: &str = "[{";
    let mut entries = Vec::new();
    // Only pay for a CommonMark parse when the text could hold a directive at all.
    if !body.contains("ALLOW") {
        return Acl { entries };
    }
    let code = markdown::code_ranges(body);
    let mut scanner = DirectiveScanner {
        body,
        dead_until: 0,
    };
    let mut from = 0;
    while let Some(found) = body.get(from..).and_then(|rest| rest.find(OPEN)) {
        let start = from + found;
        from = start + OPEN.len();
        if markdown::is_inside(&code, start) {
            continue;
        }
        if let Some((entry, end)) = scanner.parse(start + OPEN.len()) {
            entries.push(entry);
            from = end;
        }
    }
    Acl { entries }
}

/// Parses single directives, remembering where a search for `}]` already hit a line end so
/// that a long line full of unterminated `[{ALLOW view …` openers is scanned once, not once
/// per opener.
struct DirectiveScanner<'a> {
    body: &'a str,
    /// A principal list starting before this offset has no `}]` before its line ends.
    dead_until: usize,
}

impl DirectiveScanner<'_> {
    /// Parses `\s*ALLOW\s+<action>\s*<principals>}]` starting at byte `at` (just after `[{`).
    /// Returns the entry and the byte offset just past `}]`, or `None` when malformed.
    fn parse(&mut self, at: usize) -> Option<(AclEntry, usize)> {
        let body = self.body;
        let offset = |s: &str| body.len() - s.len();
        let rest = body.get(at..)?;
        let after_ws = rest.trim_start_matches(|c: char| c.is_ascii_whitespace());
        let after_allow = after_ws.strip_prefix("ALLOW")?;
        let at_action = after_allow.trim_start_matches(|c: char| c.is_ascii_whitespace());
        if at_action.len() == after_allow.len() {
            return None; // `ALLOW` must be followed by whitespace (`[{ALLOWview …}]` is malformed)
        }
        let word_end = at_action
            .find(|c: char| c.is_whitespace() || c == ',' || c == '}')
            .unwrap_or(at_action.len());
        let action = Action::from_markup(at_action.get(..word_end)?)?;
        let list = at_action
            .get(word_end..)?
            .trim_start_matches(|c: char| c.is_ascii_whitespace());
        let list_start = offset(list);
        if list_start < self.dead_until {
            return None;
        }
        // The principal list ends at the first `}]` on its line.
        let close = match find_close_on_line(list) {
            Ok(close) => close,
            Err(line_end) => {
                self.dead_until = list_start + line_end;
                return None;
            }
        };
        let principals: Vec<String> = list
            .get(..close)?
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect();
        if principals.is_empty() {
            return None;
        }
        Some((
            AclEntry { action, principals },
            list_start + close + "}]".len(),
        ))
    }
}

/// `Ok(index of the first "}]")` when it comes before any line break, else `Err(index of the
/// line break or end of text)`.
fn find_close_on_line(s: &str) -> Result<usize, usize> {
    let bytes = s.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'\n' | b'\r' => return Err(i),
            b'}' if bytes.get(i + 1) == Some(&b']') => return Ok(i),
            _ => {}
        }
    }
    Err(bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn implication_table() {
        use Action::*;
        let expected: &[(Action, &[Action])] = &[
            (View, &[View]),
            (Comment, &[Comment, View]),
            (Upload, &[Upload, View]),
            (Edit, &[Edit, Comment, View]),
            (Modify, &[Modify, Edit, Upload, Comment, View]),
            (Rename, &[Rename, Edit, Comment, View]),
            (Delete, &[Delete, Modify, Edit, Upload, Comment, View]),
        ];
        for (held, granted) in expected {
            for other in Action::ALL {
                assert_eq!(
                    held.implies(other),
                    granted.contains(&other),
                    "{held} implies {other}?"
                );
            }
        }
    }

    #[test]
    fn corpus_theme_page_pattern() {
        let acl = parse_acl("# Theme\n\n[{ALLOW edit Admin}]()[{ALLOW view All}]()\n\nbody");
        assert_eq!(
            acl.entries,
            vec![
                AclEntry {
                    action: Action::Edit,
                    principals: names(&["Admin"])
                },
                AclEntry {
                    action: Action::View,
                    principals: names(&["All"])
                },
            ]
        );
        assert!(acl.is_public());
        assert!(!acl.permits(&[], Action::Edit));
        assert!(!acl.permits(&names(&["Bob"]), Action::Edit));
        assert!(acl.permits(&names(&["Bob"]), Action::View));
        assert!(
            acl.permits(&names(&["admin"]), Action::Delete),
            "Admin bypasses"
        );
    }

    #[test]
    fn restricted_page() {
        let acl = parse_acl("[{ALLOW view Alice,Engineering}]()\nSecret.");
        assert_eq!(acl.entries.len(), 1);
        assert_eq!(acl.entries[0].principals, names(&["Alice", "Engineering"]));
        assert!(!acl.is_empty());
        assert!(!acl.is_public());
        assert!(acl.permits(&names(&["Alice"]), Action::View));
        assert!(acl.permits(&names(&["Carol", "Engineering"]), Action::View));
        assert!(
            !acl.permits(&names(&["alice"]), Action::View),
            "user names are case-sensitive"
        );
        assert!(
            !acl.permits(&names(&["Alice"]), Action::Edit),
            "view does not imply edit"
        );
        assert!(!acl.permits(&names(&["Anonymous"]), Action::View));
        assert!(!acl.permits(&names(&["Authenticated"]), Action::View));
    }

    #[test]
    fn principals_with_spaces_and_odd_commas() {
        let acl = parse_acl("[{ALLOW   edit  Jane Doe , ,Editors,}]");
        assert_eq!(acl.entries.len(), 1);
        assert_eq!(acl.entries[0].action, Action::Edit);
        assert_eq!(acl.entries[0].principals, names(&["Jane Doe", "Editors"]));
        assert!(
            acl.permits(&names(&["Jane Doe"]), Action::Comment),
            "edit implies comment"
        );
        assert!(acl.permits(&names(&["Jane Doe"]), Action::View));
        assert!(!acl.permits(&names(&["Jane"]), Action::View));
    }

    #[test]
    fn built_in_roles() {
        let anon = parse_acl("[{ALLOW view anonymous}]");
        assert!(anon.is_public(), "built-in names match case-insensitively");
        assert!(anon.permits(&names(&["Guest"]), Action::View));
        assert!(
            !anon.permits(&names(&["Alice"]), Action::View),
            "logged-in callers are not Anonymous"
        );

        let auth = parse_acl("[{ALLOW upload Authenticated}]");
        assert!(!auth.is_public());
        assert!(auth.permits(&names(&["Alice"]), Action::View));
        assert!(auth.permits(&names(&["Alice"]), Action::Upload));
        assert!(!auth.permits(&names(&["Alice"]), Action::Edit));

        let guest = parse_acl("[{ALLOW comment Guest}]");
        assert!(guest.is_public());
        assert!(guest.permits(&names(&["All", "Guest"]), Action::Comment));
    }

    #[test]
    fn no_acl_permits_everything() {
        let acl = parse_acl("# Plain page\n\nNo directives. ALLOW is just a word.");
        assert!(acl.is_empty());
        assert!(acl.is_public());
        assert!(acl.permits(&[], Action::Edit));
        assert_eq!(parse_acl(""), Acl::default());
    }

    #[test]
    fn acl_in_code_is_ignored() {
        let span = "Write `[{ALLOW view Admin}]` to restrict a page.";
        assert!(parse_acl(span).is_empty());
        let double = "Or ``[{ALLOW view Admin}]()`` in double ticks.";
        assert!(parse_acl(double).is_empty());
        let fenced = "Example:\n\n```markdown\n[{ALLOW view Admin}]()\n```\n";
        assert!(parse_acl(fenced).is_empty());
        let tilde = "~~~\n[{ALLOW edit Admin}]\n~~~\n";
        assert!(parse_acl(tilde).is_empty());
        let indented = "Example:\n\n    [{ALLOW view Admin}]()\n\nafter";
        assert!(parse_acl(indented).is_empty());
        let in_list = "- item\n\n  ```\n  [{ALLOW view Admin}]\n  ```\n";
        assert!(parse_acl(in_list).is_empty());
        // A table cell written as code (the corpus's TextFormattingRules does this).
        let table = "| **ACLs** | `[{ALLOW view All}]` | perms |\n|---|---|---|\n";
        assert!(parse_acl(table).is_empty());
        // Code elsewhere does not hide a real directive.
        let mixed = "`[{ALLOW view Admin}]`\n\n[{ALLOW view Alice}]()";
        let acl = parse_acl(mixed);
        assert_eq!(acl.entries.len(), 1);
        assert_eq!(acl.entries[0].principals, names(&["Alice"]));
    }

    #[test]
    fn malformed_directives_are_ignored() {
        for text in [
            "[{ALLOW}]",
            "[{ALLOW view}]",
            "[{ALLOW view }]",
            "[{ALLOW view ,, }]",
            "[{ALLOW fly Alice}]",
            "[{ALLOW View Alice}]",
            "[{allow view Alice}]",
            "[{ALLOWview Alice}]",
            "[{ALLOW viewer Alice}]",
            "[{ALLOW view Alice",
            "[{ALLOW view Alice}\n]",
            "[{ALLOW view Alice\n}]",
            "[{ALLOW view\n}]",
            "[{DENY view Alice}]",
            "[{",
            "[{ ALLOW",
        ] {
            assert!(parse_acl(text).is_empty(), "{text:?} should not parse");
        }
        // A malformed directive does not swallow a good one after it.
        let acl = parse_acl("[{ALLOW fly Alice}] [{ALLOW view Bob}]");
        assert_eq!(acl.entries.len(), 1);
        assert_eq!(acl.entries[0].principals, names(&["Bob"]));
    }

    #[test]
    fn whitespace_variants() {
        // Like the reference's `\s`, line breaks may separate `[{`, `ALLOW`, the action and
        // the principals; the principal list itself must end on its line.
        let acl = parse_acl("[{\nALLOW\nview\nAll}]");
        assert_eq!(acl.entries.len(), 1);
        assert_eq!(acl.entries[0].principals, names(&["All"]));
        let acl = parse_acl("[{ALLOW view,Alice}]");
        assert_eq!(acl.entries[0].principals, names(&["Alice"]));
        let acl = parse_acl("[{ ALLOW\tview\tAll }]");
        assert_eq!(acl.entries.len(), 1);
        assert_eq!(acl.entries[0].principals, names(&["All"]));
        let acl = parse_acl("[{ALLOW delete Ops}][{ALLOW rename Ops,  Jane Doe}]");
        assert_eq!(acl.entries.len(), 2);
        assert!(
            acl.permits(&names(&["Ops"]), Action::Upload),
            "delete→modify→upload"
        );
        assert!(
            !acl.permits(&names(&["Jane Doe"]), Action::Upload),
            "rename does not imply upload"
        );
    }

    #[test]
    fn serde_round_trip() {
        let acl = parse_acl("[{ALLOW modify Alice}]");
        let json = serde_json::to_string(&acl).unwrap_or_default();
        assert_eq!(
            json,
            r#"{"entries":[{"action":"modify","principals":["Alice"]}]}"#
        );
        let back: Acl = serde_json::from_str(&json).unwrap_or_default();
        assert_eq!(back, acl);
    }

    #[test]
    fn nasty_inputs_do_not_panic() {
        for text in [
            "",
            "[",
            "[{",
            "[{ALLOW",
            "[{ALLOW view",
            "[{ALLOW view é}]",
            "[{ALLOW view 名前}]",
            "[{ALLOW view 👩‍💻,ü}]",
            "[[[[[[[[[[{{{{{{ALLOW view x}]]]]]]]",
            "`[{ALLOW view x}]",
            "```\n[{ALLOW view x}]",
            "    ",
            "\u{0}[{ALLOW\u{0}view\u{0}x}]",
            "é[{ALLOW view x}]é",
        ] {
            let _ = parse_acl(text).is_public();
        }
        // Many unterminated openers on one long line: must stay fast (linear scan).
        let long_line = "[{ALLOW view x ".repeat(50_000);
        assert!(parse_acl(&long_line).is_empty());
        let deep = "[".repeat(5000) + "{ALLOW view X}]" + &"]".repeat(5000);
        assert_eq!(parse_acl(&deep).entries.len(), 1);
        let unicode = parse_acl("[{ALLOW view 名前}]");
        assert_eq!(unicode.entries[0].principals, names(&["名前"]));
    }
}
